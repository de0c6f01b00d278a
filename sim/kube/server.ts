/** The Kubernetes API emulator: `startKubeSim()` serves the store over HTTP(S) on 127.0.0.1. */
import { type Clock, systemClock } from "../../common/clock.ts";
import { handleAdmin } from "./admin.ts";
import { type AuditEntry, auditEntryOf, AuditLog } from "./audit.ts";
import { Calls, type FaultRule, Faults } from "./faults.ts";
import { handleResource, json } from "./handlers.ts";
import { kubeconfigYaml } from "./kubeconfig.ts";
import { handleReview, REVIEW_RESOURCES, SimIdentities } from "./reviews.ts";
import { Listener } from "./listener.ts";
import { handleMeta } from "./meta_routes.ts";
import { authorizeRequest, type RbacUser } from "./rbac_eval.ts";
import { parseRoute, verbOf } from "./routing.ts";
import { failureStatus, StatusError, type StatusReason } from "./status.ts";
import { KubeStore } from "./store.ts";
import { generateCertificates, type SimCertificates } from "./tls.ts";
import { WatchHub } from "./watch.ts";

/** Options of `startKubeSim`. */
export interface KubeSimOptions {
  /** Bearer token to accept; a random one by default. */
  token?: string;
  /** Serve HTTPS with a generated CA (its data goes into the kubeconfig). */
  tls?: boolean;
  /** How long watch history (and continue tokens) stay valid; default 120 s. */
  watchHistoryMs?: number;
  /** Upper bound of a watch's server-side lifetime (randomised between half and all of it); default 5 min. */
  watchMaxMs?: number;
  /** Interval of BOOKMARK events for watches that allow them; default 60 s. */
  bookmarkIntervalMs?: number;
  /** Clock for timestamps, history expiry, bookmarks and watch lifetimes (tests pass a `FakeClock`). */
  clock?: Clock;
  /** Authenticate every token of `identities` and authorise API requests by RBAC (default false). */
  enforceRbac?: boolean;
}

const FAULT_REASONS: Record<number, StatusReason> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  409: "Conflict",
  410: "Expired",
  429: "TooManyRequests",
  500: "InternalError",
  503: "ServiceUnavailable",
  504: "Timeout",
};

/** A running emulator. */
export class KubeSim {
  /** The bearer token it accepts. */
  readonly token: string;
  /** Direct object access with apiserver semantics. */
  readonly store: KubeStore;
  /** Fault injection. */
  readonly faults: Faults;
  /** Request counters keyed by `VERB /route/{template}`. */
  readonly calls: Calls;
  /** Every request with its RBAC attributes (verb, group, resource, subresource, namespace, name). */
  readonly audit: AuditLog = new AuditLog();
  /**
   * The tokens TokenReview authenticates: its own (a `system:masters` admin) and those a test adds. Only its own
   * token may call the API itself.
   */
  readonly identities: SimIdentities = new SimIdentities();
  /**
   * Off (the default): only the emulator's own token may call the API, and it may do anything. On: every token
   * of `identities` authenticates, and a request is served only when the stored (Cluster)Roles and bindings
   * allow it (`system:masters`, the own token's group, always), else answered 403 as the apiserver does.
   * Non-resource paths (discovery, `/version`) stay open to every authenticated user.
   */
  enforceRbac = false;
  readonly #listener: Listener;
  readonly #watches: WatchHub;
  readonly #certs: SimCertificates | undefined;
  readonly #shutdown = new AbortController();

  /** Use `startKubeSim()`. */
  constructor(parts: {
    token: string;
    store: KubeStore;
    watches: WatchHub;
    certs: SimCertificates | undefined;
  }) {
    this.token = parts.token;
    this.identities.add(parts.token, { username: "kube-sim-admin", groups: ["system:masters"] });
    this.store = parts.store;
    this.#watches = parts.watches;
    this.#listener = new Listener((req) => this.handle(req), parts.certs);
    this.#certs = parts.certs;
    this.calls = new Calls();
    this.faults = new Faults({
      closeWatches: (reset) => this.#watches.closeAll(reset),
      lagWatches: (lag) => (this.#watches.lag = lag),
      refuse: (ms) => this.#listener.refuse(ms, () => this.#watches.closeAll(false)),
      reopen: () => this.#listener.reopen(),
      whenListening: () => this.#listener.whenListening(),
      compact: () => this.store.compact(),
    });
  }

  /** Base URL, `http(s)://127.0.0.1:PORT`. */
  get url(): string {
    return `${this.#certs ? "https" : "http"}://127.0.0.1:${this.#listener.port}`;
  }

  /** Binds the port (called once by `startKubeSim`). */
  listen(): Promise<void> {
    return this.#listener.listen();
  }

  /** Number of open watch streams. */
  get openWatches(): number {
    return this.#watches.size;
  }

  /** A kubeconfig (YAML) pointing at this emulator with its token, or with `token` (e.g. a ServiceAccount's). */
  kubeconfig(token: string = this.token): string {
    return kubeconfigYaml({ server: this.url, token, caPem: this.#certs?.caPem });
  }

  /** Writes `kubeconfig(token)` to a file (mode 0600). */
  async writeKubeconfig(path: string, token?: string): Promise<void> {
    await Deno.writeTextFile(path, this.kubeconfig(token), { mode: 0o600 });
  }

  /** Serves one request (the listener's handler). */
  async handle(req: Request): Promise<Response> {
    const url = new URL(req.url);
    const path = url.pathname;
    if (path.startsWith("/__admin/")) {
      return handleAdmin(
        {
          store: this.store,
          faults: this.faults,
          calls: this.calls,
          audit: this.audit,
          watches: this.#watches,
        },
        req,
        path,
      );
    }
    const route = parseRoute(path);
    const verb = verbOf(req.method, route, url.searchParams);
    const record = this.calls.record(`${verb} ${route.template}`, path, req.headers.get("user-agent") ?? "");
    const audited = this.audit.record(auditEntryOf(req.method, verb, route, url));
    const response = await this.#serve(req, url, { verb, route, entry: audited });
    this.calls.answered(record, response.status);
    audited.status = response.status;
    return response;
  }

  async #serve(req: Request, url: URL, request: ServedRequest): Promise<Response> {
    const fault = this.faults.match(request.verb, request.route.template, url.pathname);
    if (fault) {
      const injected = await this.#applyFault(fault);
      if (injected) return injected;
    }
    const response = await this.#answer(req, url, request);
    return fault?.stallBody ? await this.#stalled(response) : response;
  }

  /** `response` with its headers and the first half of its body; the rest never comes before `close()`. */
  async #stalled(response: Response): Promise<Response> {
    const bytes = new Uint8Array(await response.arrayBuffer());
    const shutdown = this.#shutdown.signal;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.slice(0, Math.floor(bytes.length / 2)));
      },
      // Asked for more once the first half is sent: answers only when the emulator closes.
      async pull(controller) {
        await new Promise((resolve) => {
          if (shutdown.aborted) resolve(undefined);
          else shutdown.addEventListener("abort", resolve, { once: true });
        });
        controller.close();
      },
    });
    const headers = new Headers(response.headers);
    headers.delete("content-length"); // sent chunked: a length would let the server cut the stream short
    return new Response(body, { status: response.status, headers });
  }

  /** Who the request's bearer token is: the own token's admin, or (enforcing RBAC) a known identity. */
  #authenticate(req: Request): RbacUser | undefined {
    const token = /^Bearer (.+)$/.exec(req.headers.get("authorization") ?? "")?.[1];
    if (token === undefined) return undefined;
    if (token === this.token) return { user: "kube-sim-admin", groups: ["system:masters"] };
    const known = this.enforceRbac ? this.identities.lookup(token) : undefined;
    if (!known) return undefined;
    return { user: known.username, groups: [...(known.groups ?? []), "system:authenticated"] };
  }

  async #answer(req: Request, url: URL, request: ServedRequest): Promise<Response> {
    const { verb, route } = request;
    try {
      const user = this.#authenticate(req);
      if (!user) return json(failureStatus(401, "Unauthorized", "Unauthorized"), 401);
      const denied = this.enforceRbac ? authorizeRequest(this.store, user, request.entry) : undefined;
      if (denied) throw denied;
      if (route.kind === "resource" && REVIEW_RESOURCES.has(route.def.key)) {
        const body = req.method === "POST" ? await req.json().catch(() => undefined) : undefined;
        return json(
          handleReview({ store: this.store, identities: this.identities }, req.method, route, body),
          201,
        );
      }
      if (route.kind === "resource") {
        return await handleResource(
          { store: this.store, watches: this.#watches },
          req,
          route,
          url.searchParams,
          verb,
        );
      }
      const meta = handleMeta(url.pathname, `127.0.0.1:${this.#listener.port}`, req);
      if (meta) return meta;
      throw new StatusError(404, "NotFound", "the server could not find the requested resource");
    } catch (e) {
      if (e instanceof StatusError) return json(e.toStatus(), e.code, retryHeaders(e));
      const message = e instanceof Error ? e.message : String(e);
      return json(failureStatus(500, "InternalError", `Internal error occurred: ${message}`), 500);
    }
  }

  async #applyFault(fault: FaultRule): Promise<Response | undefined> {
    if (fault.latencyMs) await systemClock.sleep(fault.latencyMs, this.#shutdown.signal).catch(() => {});
    if (fault.status === undefined) return undefined;
    const reason = FAULT_REASONS[fault.status] ?? (fault.status >= 500 ? "InternalError" : "BadRequest");
    const message = fault.message ?? `injected fault: ${fault.status}`;
    const details = fault.retryAfterSec === undefined
      ? undefined
      : { retryAfterSeconds: fault.retryAfterSec };
    const headers: Record<string, string> = fault.retryAfterSec === undefined
      ? {}
      : { "retry-after": String(fault.retryAfterSec) };
    return json(failureStatus(fault.status, reason, message, details), fault.status, headers);
  }

  /** Ends all watches, stops listening and releases every timer. */
  async close(): Promise<void> {
    this.#shutdown.abort();
    this.#watches.closeAll(false);
    await this.#listener.close();
  }

  /** `await using kube = await startKubeSim()`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/** One request as `handle` parsed it: its counter verb, its route and its authorization attributes. */
interface ServedRequest {
  readonly verb: string;
  readonly route: ReturnType<typeof parseRoute>;
  readonly entry: AuditEntry;
}

function retryHeaders(e: StatusError): Record<string, string> {
  const after = e.details?.retryAfterSeconds;
  return after === undefined ? {} : { "retry-after": String(after) };
}

/** Starts the emulator on 127.0.0.1 (random port). */
export async function startKubeSim(options: KubeSimOptions = {}): Promise<KubeSim> {
  const certs = options.tls ? await generateCertificates() : undefined;
  const store = new KubeStore({ historyMs: options.watchHistoryMs ?? 120_000, clock: options.clock });
  const watches = new WatchHub(store, {
    maxMs: options.watchMaxMs ?? 300_000,
    bookmarkIntervalMs: options.bookmarkIntervalMs ?? 60_000,
    clock: options.clock,
  });
  const sim = new KubeSim({ token: options.token ?? `sim-${crypto.randomUUID()}`, store, watches, certs });
  sim.enforceRbac = options.enforceRbac ?? false;
  await sim.listen();
  return sim;
}
