/** Lists with selectors, `limit`/`continue` paging over a consistent snapshot, and `resourceVersionMatch`. */
import { apiVersionOf, type KubeObject, objectKey } from "./resources.ts";
import type { ResourceRoute } from "./routing.ts";
import { compileSelector } from "./selectors.ts";
import { badRequest, expired, StatusError } from "./status.ts";
import type { KubeStore } from "./store.ts";

interface ContinueToken {
  rv: number;
  start: string;
}

function encodeContinue(token: ContinueToken): string {
  return btoa(JSON.stringify({ v: "sim/1", rv: token.rv, start: token.start }))
    .replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function decodeContinue(text: string): ContinueToken {
  try {
    const padded = text.replaceAll("-", "+").replaceAll("_", "/");
    const parsed: unknown = JSON.parse(atob(padded + "=".repeat((4 - (padded.length % 4)) % 4)));
    if (
      typeof parsed === "object" && parsed !== null && "rv" in parsed && "start" in parsed &&
      typeof parsed.rv === "number" && typeof parsed.start === "string"
    ) return { rv: parsed.rv, start: parsed.start };
  } catch {
    // Fall through to the 400 below.
  }
  throw badRequest("continue key is not valid: incorrect encoded start resourceVersion (version sim/1)");
}

const TOO_OLD_CONTINUE = "The provided continue parameter is too old to display a consistent list result. " +
  "You can start a new list without the continue parameter.";

/** The resourceVersion the list is served at: current, or an exact older one rebuilt from history. */
function snapshotRv(store: KubeStore, query: URLSearchParams, token: ContinueToken | undefined): number {
  const current = Number(store.resourceVersion);
  if (token) {
    if (token.rv < store.compactedRv()) throw expired(TOO_OLD_CONTINUE);
    return token.rv;
  }
  const rvParam = query.get("resourceVersion");
  if (query.get("resourceVersionMatch") === "Exact" && rvParam) {
    const rv = Number(rvParam);
    if (!Number.isInteger(rv)) throw badRequest(`resourceVersion: Invalid value: "${rvParam}"`);
    if (rv < store.compactedRv()) throw expired(`too old resource version: ${rv} (${store.compactedRv()})`);
    if (rv > current) {
      throw new StatusError(504, "Timeout", `Too large resource version: ${rv}, current: ${current}`, {
        retryAfterSeconds: 1,
      });
    }
    return rv;
  }
  return current;
}

function parseLimit(query: URLSearchParams): number | undefined {
  const text = query.get("limit");
  if (text === null || text === "" || text === "0") return undefined;
  const limit = Number(text);
  if (!Number.isInteger(limit) || limit < 0) throw badRequest(`limit: Invalid value: "${text}"`);
  return limit;
}

/** Builds the `<Kind>List` body for a collection GET. */
export function listResponse(
  store: KubeStore,
  route: ResourceRoute,
  query: URLSearchParams,
): Record<string, unknown> {
  const { def } = route;
  const selector = compileSelector(def, query.get("labelSelector"), query.get("fieldSelector"));
  const continueText = query.get("continue");
  const token = continueText ? decodeContinue(continueText) : undefined;
  const limit = parseLimit(query);
  const rv = snapshotRv(store, query, token);
  const source = rv === Number(store.resourceVersion) ? store.objects(def) : store.objectsAt(def, rv);
  const keyOf = (o: KubeObject) => objectKey(def, o.metadata.name ?? "", o.metadata.namespace);
  let items = store.select(def, route.namespace, selector, source);
  if (token) items = items.filter((o) => keyOf(o) > token.start);
  const metadata: Record<string, unknown> = { resourceVersion: String(rv) };
  if (limit !== undefined && items.length > limit) {
    const page = items.slice(0, limit);
    metadata.continue = encodeContinue({ rv, start: keyOf(page[page.length - 1]!) });
    if (selector.empty) metadata.remainingItemCount = items.length - limit;
    items = page;
  }
  return { kind: `${def.kind}List`, apiVersion: apiVersionOf(def), metadata, items };
}
