/** `/__admin/` endpoints (no token): counters, faults, watches and objects, for tools outside the process. */
import type { AuditLog } from "./audit.ts";
import type { Calls, FaultRule, Faults } from "./faults.ts";
import { json } from "./handlers.ts";
import { isRecord } from "./resources.ts";
import type { KubeStore } from "./store.ts";
import type { WatchHub } from "./watch.ts";

/** What the admin endpoints expose. */
export interface AdminContext {
  store: KubeStore;
  faults: Faults;
  calls: Calls;
  audit: AuditLog;
  watches: WatchHub;
}

function ruleFrom(body: unknown): FaultRule {
  if (!isRecord(body)) throw new TypeError("fault rule must be an object");
  const num = (v: unknown) => (typeof v === "number" ? v : undefined);
  return {
    method: typeof body.method === "string" ? body.method : undefined,
    route: typeof body.route === "string" ? body.route : undefined,
    status: num(body.status),
    retryAfterSec: num(body.retryAfterSec),
    latencyMs: num(body.latencyMs),
    stallBody: body.stallBody === true ? true : undefined,
    times: num(body.times),
    message: typeof body.message === "string" ? body.message : undefined,
  };
}

async function bodyOf(req: Request): Promise<unknown> {
  const text = await req.text();
  return text.trim() === "" ? {} : JSON.parse(text);
}

/** Serves one `/__admin/...` request. */
export async function handleAdmin(ctx: AdminContext, req: Request, path: string): Promise<Response> {
  const rest = path.slice("/__admin/".length);
  const op = `${req.method} ${rest}`;
  try {
    if (op === "GET calls") return json({ total: ctx.calls.total(), counts: ctx.calls.snapshot() });
    if (op === "POST calls/reset") {
      ctx.calls.reset();
      return json({ ok: true });
    }
    if (op === "GET audit") return json({ entries: ctx.audit.entries, distinct: ctx.audit.distinct() });
    if (op === "POST audit/reset") {
      ctx.audit.reset();
      return json({ ok: true });
    }
    if (op === "GET faults") {
      return json({ rules: ctx.faults.rules.map((r) => ({ ...r, route: String(r.route) })) });
    }
    if (op === "POST faults") {
      ctx.faults.add(ruleFrom(await bodyOf(req)));
      return json({ ok: true }, 201);
    }
    if (op === "DELETE faults") {
      ctx.faults.clear();
      return json({ ok: true });
    }
    if (op === "POST faults/drop-watches") {
      const body = await bodyOf(req);
      const reset = isRecord(body) && body.reset === true;
      return json({ dropped: ctx.faults.dropWatches({ reset }) });
    }
    if (op === "POST faults/refuse") {
      const body = await bodyOf(req);
      const ms = isRecord(body) && typeof body.ms === "number" ? body.ms : 1000;
      // Answer first: this very connection goes away with the listener.
      setTimeout(() => ctx.faults.refuseConnections(ms).catch(() => {}), 10);
      return json({ refusingMs: ms }, 202);
    }
    if (op === "GET watches") return json({ open: ctx.watches.size });
    if (req.method === "GET" && rest.startsWith("objects/")) {
      const resource = decodeURIComponent(rest.slice("objects/".length));
      return json({ resourceVersion: ctx.store.resourceVersion, items: ctx.store.list(resource) });
    }
  } catch (e) {
    return json({ error: e instanceof Error ? e.message : String(e) }, 400);
  }
  return json({ error: `unknown admin endpoint: ${op}` }, 404);
}
