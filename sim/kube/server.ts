/** The Kubernetes API emulator: `startKubeSim()` serves the store over HTTP(S) on 127.0.0.1. */
import { type Clock, systemClock } from "../../common/clock.ts";
import { handleAdmin } from "./admin.ts";
import { auditEntryOf, AuditLog } from "./audit.ts";
import { Calls, type FaultRule, Faults } from "./faults.ts";
import { handleResource, json } from "./handlers.ts";
import { kubeconfigYaml } from "./kubeconfig.ts";
import { handleReview, REVIEW_RESOURCES, SimIdentities } from "./reviews.ts";
import { Listener } from "./listener.ts";
import { handleMeta } from "./meta_routes.ts";
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

  /** A kubeconfig (YAML) pointing at this emulator with its token. */
  kubeconfig(): string {
    return kubeconfigYaml({ server: this.url, token: this.token, caPem: this.#certs?.caPem });
  }

  /** Writes `kubeconfig()` to a file (mode 0600). */
  async writeKubeconfig(path: string): Promise<void> {
    await Deno.writeTextFile(path, this.kubeconfig(), { mode: 0o600 });
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
    const response = await this.#serve(req, url, verb, route);
    this.calls.answered(record, response.status);
    audited.status = response.status;
    return response;
  }

  async #serve(
    req: Request,
    url: URL,
    verb: string,
    route: ReturnType<typeof parseRoute>,
  ): Promise<Response> {
    try {
      const fault = this.faults.match(verb, route.template, url.pathname);
      if (fault) {
        const injected = await this.#applyFault(fault);
        if (injected) return injected;
      }
      if (req.headers.get("authorization") !== `Bearer ${this.token}`) {
        return json(failureStatus(401, "Unauthorized", "Unauthorized"), 401);
      }
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
  await sim.listen();
  return sim;
}
