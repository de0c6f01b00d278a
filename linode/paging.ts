/**
 * Walks every page of a Linode list. A partial list must never look complete (controllers delete
 * what is absent), so any sign that the listing moved under us fails the whole walk.
 */
import type { ResourcePage } from "@linode/api-v4";

/** Items per page requested on every list (the API maximum). */
export const PAGE_SIZE = 500;

/** Fetches page number `page` (1-based) at `PAGE_SIZE`. */
export type PageFetcher<T> = (page: number) => Promise<ResourcePage<T>>;

/** Why a walk was abandoned; `detail` says what moved, never any item content. */
export class PagingError extends Error {
  override name = "PagingError";
}

function checkPage<T>(got: ResourcePage<T>, want: number, first: ResourcePage<T>): void {
  if (got.page !== want) throw new PagingError(`asked for page ${want}, got page ${got.page}`);
  if (got.pages !== first.pages) {
    throw new PagingError(`page count changed from ${first.pages} to ${got.pages}`);
  }
  if (got.results !== first.results) {
    throw new PagingError(`result count changed from ${first.results} to ${got.results}`);
  }
  if (!Array.isArray(got.data)) throw new PagingError(`page ${want} has no data`);
}

function checkShape<T>(page: ResourcePage<T>): void {
  const ok = Number.isInteger(page.pages) && Number.isInteger(page.results) && Array.isArray(page.data);
  if (!ok) throw new PagingError("page without data, pages or results");
}

/**
 * Returns every item, in order, stopping at `page >= pages`. Fails with `PagingError` when a page
 * number, `pages` or `results` changes mid-walk, when a non-final page is short or long, or when the
 * item count does not add up to `results`.
 */
export async function collectPages<T>(fetchPage: PageFetcher<T>): Promise<T[]> {
  const first = await fetchPage(1);
  checkShape(first);
  checkPage(first, 1, first);
  const items = [...first.data];
  // The server may cap page_size below what we asked; the first full page tells us what it uses.
  const pageSize = first.pages > 1 ? first.data.length : PAGE_SIZE;
  if (first.pages > 1 && pageSize === 0) throw new PagingError("page 1 is empty but more pages follow");
  for (let page = 2; page <= first.pages; page++) {
    const got = await fetchPage(page);
    checkShape(got);
    checkPage(got, page, first);
    if (page < first.pages && got.data.length !== pageSize) {
      throw new PagingError(`page ${page} of ${first.pages} held ${got.data.length} of ${pageSize} items`);
    }
    items.push(...got.data);
  }
  if (items.length !== first.results) {
    throw new PagingError(`collected ${items.length} items, expected ${first.results}`);
  }
  return items;
}
