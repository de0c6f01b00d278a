/**
 * `service`: LoadBalancer Services as NodeBalancers. Service, Node and Secret events enqueue Service keys;
 * `--concurrent-service-syncs` workers sync them (`sync.ts`) with a per-key backoff of 5 s doubling to
 * 5 min, as the upstream service controller. Every read of Linode state comes from the cache, so a resync
 * of unchanged Services costs no Linode call; a 429 slows every worker through the shared client.
 */
import type { CoreV1Api, V1Node, V1Service } from "@kubernetes/client-node";
import type { Clock } from "../../common/clock.ts";
import { isAbort } from "../../common/clock.ts";
import { objectKey } from "../../kube/keys.ts";
import { mergePatchServiceStatus, patchServiceFinalizers } from "../../kube/patch.ts";
import type { Registry } from "../../common/metrics.ts";
import { isConflict } from "../../kube/requests.ts";
import { describeError, RetryAfterError, runWorkers } from "../loop/run_queue.ts";
import { runResync } from "../loop/resync.ts";
import { WorkQueue } from "../loop/work_queue.ts";
import { type PlanRecorder, type PlanScope, runWithin } from "../loop/plan.ts";
import { ensureLoadBalancerDeleted, type ReservedIps } from "./cleanup.ts";
import { ensureLoadBalancer } from "./ensure.ts";
import { reportFailure } from "./failures.ts";
import {
  hasFinalizer,
  needsCleanup,
  Notices,
  type ServiceWriter,
  type SyncContext,
  type SyncDeps,
  wantsLoadBalancer,
} from "./sync.ts";
import { PlanMemo, syncFields } from "./plan_memo.ts";
import { SECRET_REFRESH_MS, type SecretReader, TlsSecrets } from "./tls/secrets.ts";

/** A change handler as informers call it. */
type Handler<T> = (kind: "add" | "update" | "delete", obj: T, old?: T) => void;

/** Services as the informer holds them. `Informer<V1Service>` implements it. */
export interface ServiceLister {
  get(key: string): V1Service | undefined;
  list(): readonly V1Service[];
  onChange(handler: Handler<V1Service>): () => void;
}

/** Nodes as the informer holds them. `Informer<V1Node>` implements it. */
export interface NodeLister {
  list(): readonly V1Node[];
  onChange(handler: Handler<V1Node>): () => void;
}

/** What the service controller needs. */
export interface ServiceControllerDeps extends Omit<SyncDeps, "nodes" | "tls" | "notices"> {
  services: ServiceLister;
  reservedIps?: ReservedIps;
  nodes: NodeLister;
  /** Reads the TLS Secrets Services name (one `get` each; nothing lists or watches Secrets). */
  secrets: SecretReader;
  metrics: Registry;
  clock: Clock;
  /** Where each sync names its writes (`--dry-run` holds them); default: every write goes ahead. */
  plan?: PlanRecorder;
  /**
   * The orphaned NodeBalancer check (`orphans.ts`), run at the start of a term and every `ORPHAN_CHECK_MS` (1 h); its
   * listing also shows the service controller which NodeBalancers others changed (see `NodeBalancerCache`).
   */
  orphans?: { check(plan: PlanScope): Promise<void> };
  /**
   * The Linode writers bound to a term's signal (`LinodeClient.withSignal`), so a hand-over aborts the term's
   * requests in flight; without it the deps' own are used.
   */
  forTerm?: (term: AbortSignal) => Pick<ServiceControllerDeps, "nodeBalancers" | "firewalls" | "reservedIps">;
}

/** Options of the service controller. */
export interface ServiceControllerOptions {
  /** `--concurrent-service-syncs` (default 1). */
  workers?: number;
}

/** Per-Service backoff after the first failure, as upstream: 5 s doubling to 5 min. */
export const RETRY_BASE_MS = 5_000;
/** The longest per-Service backoff. */
export const RETRY_MAX_MS = 300_000;
/** Every Service is synced again this often, as a safety net (no call when unchanged). */
export const SERVICE_RESYNC_MS = 300_000;
/**
 * Period of the orphan check: its one NodeBalancer listing is the only Linode call a quiet cluster's service
 * controller makes, and an orphan is deleted (opt-in) only when two checks a period apart find it.
 */
export const ORPHAN_CHECK_MS = 3_600_000;

/** The Service changed while it was being written (409): synced again shortly, without a Warning. */
export class ServiceChangedError extends RetryAfterError {
  override name = "ServiceChangedError";
  readonly quiet = true;
}

/** How soon a Service that changed under a write is synced again (the informer has the new version by then). */
const CONFLICT_RETRY_MS = 200;

/** Syncs one Service by key: cleanup, ensure, or nothing. Throws to be retried. */
export async function reconcileService(
  deps: SyncDeps & { services: ServiceLister; reservedIps?: ReservedIps },
  key: string,
  ctx: SyncContext,
): Promise<void> {
  const cached = deps.services.get(key);
  if (!cached) {
    deps.tls.forget(key);
    deps.notices.forget(key);
    return;
  }
  // Never change what the informer holds.
  const svc = structuredClone(cached);
  try {
    if (needsCleanup(svc)) await ensureLoadBalancerDeleted(deps, svc, ctx);
    else if (wantsLoadBalancer(svc) && !svc.metadata?.deletionTimestamp) {
      await ensureLoadBalancer(deps, svc, ctx);
    }
  } catch (e) {
    if (!isConflict(e)) throw e;
    throw new ServiceChangedError(`Service ${key} changed while being written`, CONFLICT_RETRY_MS, {
      cause: e,
    });
  }
}

function isRelevant(svc: V1Service): boolean {
  return wantsLoadBalancer(svc) || hasFinalizer(svc);
}

/** The Node fields backends depend on: deletion, exclusion, deletion taint, addresses, Linode annotations. */
export function nodeBackendFields(node: V1Node): string {
  const m = node.metadata ?? {};
  const annotations = Object.entries(m.annotations ?? {}).filter(([k]) => k.includes("linode"));
  return JSON.stringify([
    m.name,
    node.spec?.providerID,
    m.deletionTimestamp !== undefined && m.deletionTimestamp !== null,
    m.labels?.["node.kubernetes.io/exclude-from-external-load-balancers"],
    (node.spec?.taints ?? []).map((t) => t.key).filter((k) => k === "ToBeDeletedByClusterAutoscaler"),
    node.status?.addresses,
    annotations,
  ]);
}

function relevantKeys(deps: ServiceControllerDeps): string[] {
  return deps.services.list().filter(isRelevant).map(objectKey);
}

function enqueueAll(deps: ServiceControllerDeps, queue: WorkQueue<string>): void {
  for (const key of relevantKeys(deps)) queue.add(key);
}

function watchChanges(
  deps: ServiceControllerDeps,
  queue: WorkQueue<string>,
  term: { tls: TlsSecrets; plans: PlanMemo },
): () => void {
  const offServices = deps.services.onChange((kind, svc, old) => {
    const key = objectKey(svc);
    if (kind === "delete") {
      term.tls.forget(key);
      term.plans.forget(key);
    } else if (isRelevant(svc) && (!old || syncFields(old) !== syncFields(svc))) queue.add(key);
  });
  const offNodes = deps.nodes.onChange((kind, node, old) => {
    if (kind === "update" && old && nodeBackendFields(old) === nodeBackendFields(node)) return;
    term.plans.nodesChanged();
    enqueueAll(deps, queue);
  });
  return () => {
    offServices();
    offNodes();
  };
}

/** Reads the Secrets in use every `periodMs` and syncs the Services whose Secret changed. */
async function secretRefreshLoop(
  deps: ServiceControllerDeps,
  tls: TlsSecrets,
  queue: WorkQueue<string>,
  signal: AbortSignal,
) {
  while (!signal.aborted) {
    try {
      await deps.clock.sleep(SECRET_REFRESH_MS, signal);
    } catch (e) {
      if (isAbort(e, signal) || signal.aborted) return;
      throw e;
    }
    for (const key of await tls.refresh()) queue.add(key);
  }
}

/**
 * The orphan check every `periodMs`, and at once when LoadBalancer Services' first syncs list NodeBalancers
 * anyway (the check shares that listing); a cluster without any costs no call at start.
 */
async function orphanLoop(deps: ServiceControllerDeps, periodMs: number, signal: AbortSignal) {
  let due = deps.services.list().some(isRelevant);
  while (!signal.aborted) {
    if (due) await checkOrphans(deps);
    due = true;
    try {
      await deps.clock.sleep(periodMs, signal);
    } catch (e) {
      if (isAbort(e, signal) || signal.aborted) return;
      throw e;
    }
  }
}

/** Finds (and, when allowed, deletes) orphaned NodeBalancers; a failure waits for the next resync. */
async function checkOrphans(deps: ServiceControllerDeps): Promise<void> {
  const orphans = deps.orphans;
  if (!orphans) return;
  try {
    await runWithin(deps.plan, { controller: "service", scope: "orphans" }, (plan) => orphans.check(plan));
  } catch (e) {
    deps.log.warning("orphaned NodeBalancer check failed: {error}", { error: describeError(e) });
  }
}

/** The `service` controller: run it for one leadership term. */
export function startServiceController(
  deps: ServiceControllerDeps,
  options: ServiceControllerOptions = {},
): { run(signal: AbortSignal): Promise<void> } {
  return {
    async run(signal: AbortSignal): Promise<void> {
      // Listings from before this term may miss NodeBalancers the other replica created (see nodebalancer/find.ts).
      const termStart = deps.clock.monotonic();
      const tls = new TlsSecrets(deps.secrets);
      const plans = new PlanMemo();
      const syncDeps = { ...deps, ...deps.forTerm?.(signal), tls, notices: new Notices(), plans };
      const ctx: SyncContext = { maxAgeMs: () => deps.clock.monotonic() - termStart };
      const queue = new WorkQueue<string>({
        name: "service",
        clock: deps.clock,
        metrics: deps.metrics,
        baseDelayMs: RETRY_BASE_MS,
        maxDelayMs: RETRY_MAX_MS,
      });
      const unwatch = watchChanges(deps, queue, { tls, plans });
      enqueueAll(deps, queue);
      try {
        await Promise.all([
          runWorkers(queue, {
            concurrency: options.workers ?? 1,
            signal,
            log: deps.log,
            metrics: deps.metrics,
            clock: deps.clock,
            handle: (key) =>
              runWithin(
                deps.plan,
                { controller: "service", scope: key },
                (scope) => reconcileService(syncDeps, key, { ...ctx, scope }),
              ),
            onError: (key, error) => {
              if (!(error instanceof ServiceChangedError)) reportFailure(deps, key, error);
            },
          }),
          runResync(queue, {
            clock: deps.clock,
            periodMs: SERVICE_RESYNC_MS,
            signal,
            keys: () => relevantKeys(deps),
          }),
          orphanLoop(deps, ORPHAN_CHECK_MS, signal),
          secretRefreshLoop(deps, tls, queue, signal),
        ]);
      } finally {
        unwatch();
        queue.shutDown();
      }
    },
  };
}

function nameOf(svc: V1Service): { namespace: string; name: string } {
  return { namespace: svc.metadata?.namespace ?? "", name: svc.metadata?.name ?? "" };
}

/** The Service writes over client-node, both to `services/status` (fenced by the clients). */
export function kubeServiceWriter(core: CoreV1Api): ServiceWriter {
  return {
    setFinalizers: (svc, finalizers) =>
      patchServiceFinalizers(core, nameOf(svc), finalizers, svc.metadata?.resourceVersion),
    patchIngress: (svc, ingress) =>
      mergePatchServiceStatus(core, nameOf(svc), {
        status: { loadBalancer: { ingress: ingress.length ? ingress : null } },
      }),
  };
}
