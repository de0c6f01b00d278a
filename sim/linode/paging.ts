/** Linode list paging: `page` (1-based) and `page_size` (25..500, default 100). */
import { fieldError } from "./http.ts";

/** Default `page_size`, as documented. */
const PAGE_SIZE_DEFAULT = 100;
/** Smallest accepted `page_size`. */
const PAGE_SIZE_MIN = 25;
/** Largest accepted `page_size`. */
const PAGE_SIZE_MAX = 500;

/** The requested page. */
export interface PageParams {
  page: number;
  pageSize: number;
}

/** The list envelope every collection returns. */
export interface PageBody<T> {
  data: T[];
  page: number;
  pages: number;
  results: number;
}

function parseIntParam(url: URL, name: string): number | undefined {
  const raw = url.searchParams.get(name);
  if (raw === null || raw === "") return undefined;
  if (!/^\d+$/.test(raw)) throw fieldError(name, `${name} must be an integer`);
  return Number(raw);
}

/** Reads `page`/`page_size`; out-of-range values are a 400 on the field, like the API. */
export function parsePaging(url: URL): PageParams {
  const page = parseIntParam(url, "page") ?? 1;
  const pageSize = parseIntParam(url, "page_size") ?? PAGE_SIZE_DEFAULT;
  if (page < 1) throw fieldError("page", "page must be a value greater than or equal to 1");
  if (pageSize < PAGE_SIZE_MIN || pageSize > PAGE_SIZE_MAX) {
    throw fieldError("page_size", `page_size must be between ${PAGE_SIZE_MIN} and ${PAGE_SIZE_MAX}`);
  }
  return { page, pageSize };
}

/** Slices one page; `pages` is at least 1 even for an empty collection. */
export function paginate<T>(items: readonly T[], params: PageParams): PageBody<T> {
  const start = (params.page - 1) * params.pageSize;
  return {
    data: items.slice(start, start + params.pageSize),
    page: params.page,
    pages: Math.max(1, Math.ceil(items.length / params.pageSize)),
    results: items.length,
  };
}
