/**
 * `service`: LoadBalancer Services as NodeBalancers. Service, Node and Secret events enqueue Service keys;
 * `--concurrent-service-syncs` workers sync them (`reconcileService`: the cleanup path of `cleanup.ts`, or the
 * read → decide → apply stages of `apply.ts`) with a per-key backoff of 5 s doubling to 5 min, as the upstream
 * service controller. Every read of Linode state comes from the cache, so a resync of unchanged Services costs
 * no Linode call; a 429 slows every worker through the shared client.
 *
 * A failed sync is reported with the Warning Events of upstream's service controller, in its words (the Go CCM
 * runs it, and operators and its end-to-end tests match them): `SyncLoadBalancerFailed` "Error syncing load
 * balancer: failed to ensure load balancer: <error>" (or `failed to delete load balancer`, `failed to add load
 * balancer cleanup finalizer`, ... as the failing step), the error as linodego prints it for an API answer
 * (`[400] IPv4 address is not reserved`); `UnAvailableLoadBalancer` beside it when no Node can back it, and
 * `UpdateLoadBalancerFailed` beside it when a Node change only moved backends (upstream's failed host update).
 * The log line keeps this CCM's own, fuller description of the error.
 */
import type { CoreV1Api, V1Node, V1Service } from "@kubernetes/client-node";
import type { Clock } from "../../common/clock.ts";
import type { Logger } from "../../common/log.ts";
import type { Registry } from "../../common/metrics.ts";
import { type EventSink, refFor, warnEvent } from "../../kube/events.ts";
import { LinodeApiError } from "../../linode/errors.ts";
import { objectKey } from "../../kube/keys.ts";
import { mergePatchServiceStatus, patchServiceFinalizers } from "../../kube/patch.ts";
import { isConflict } from "../../kube/requests.ts";
import {
  type ControllerSpec,
  describeError,
  RetryAfterError,
  type TermContext,
  type WriteContext,
} from "../loop/runtime.ts";
import { InvalidServiceError, ServicePlanError } from "./annotations/spec.ts";
import { SECRET_REFRESH_MS, type SecretReader, TlsSecrets } from "./tls/secrets.ts";
import { hasFinalizer, needsCleanup, syncFields, upstreamSyncs, wantsLoadBalancer } from "./read.ts";
import { PlanMemo } from "./decide.ts";
import {
  ensureLoadBalancer,
  hostsUpdateOf,
  Notices,
  type ServiceWrites,
  stageOf,
  type SyncContext,
  type SyncDeps,
  type SyncStage,
} from "./apply.ts";
import { ensureLoadBalancerDeleted, type ReservedIps } from "./cleanup.ts";

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
export interface ServiceControllerDeps extends Omit<SyncDeps, "nodes" | "tls" | "notices" | "plans"> {
  services: ServiceLister;
  reservedIps?: ReservedIps;
  nodes: NodeLister;
  /** Reads the TLS Secrets Services name (one `get` each; nothing lists or watches Secrets). */
  secrets: SecretReader;
  metrics: Registry;
  clock: Clock;
  /**
   * The orphaned NodeBalancer check (`cleanup.ts`), run at the start of a term and every `ORPHAN_CHECK_MS` (1 h); its
   * listing also shows the service controller which NodeBalancers others changed (see `NodeBalancerCache`).
   */
  orphans?: { check(writes: WriteContext): Promise<void> };
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
  // A Service that stopped wanting a load balancer is cleaned up as upstream does, finalizer or not.
  const stopped = ctx.announce === true && !wantsLoadBalancer(svc);
  try {
    if (needsCleanup(svc) || stopped) await ensureLoadBalancerDeleted(deps, svc, ctx);
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

/** What a service controller remembers for one term. */
export interface ServiceMemory {
  /** Listings from before this term may miss NodeBalancers the other replica created (see read.ts). */
  readonly termStart: number;
  readonly tls: TlsSecrets;
  readonly plans: PlanMemo;
  readonly notices: Notices;
  /**
   * The keys whose next sync is one upstream's service controller would make (see `SyncContext.announce`): every
   * Service as the term starts, a Service that changed, one whose last sync failed.
   */
  readonly announce: Set<string>;
  /** The sync deps of this term: the Linode writers bound to the term's signal. */
  readonly sync: SyncDeps & { services: ServiceLister; reservedIps?: ReservedIps };
}

function watchChanges(deps: ServiceControllerDeps, ctx: TermContext<ServiceMemory>): (() => void)[] {
  const { tls, plans, announce } = ctx.memory;
  const offServices = deps.services.onChange((kind, svc, old) => {
    const key = objectKey(svc);
    if (kind === "delete") {
      tls.forget(key);
      plans.forget(key);
      announce.delete(key);
      return;
    }
    // A sync upstream would make says its Events (a Service that stopped wanting a load balancer included).
    const upstream = upstreamSyncs(old, svc);
    if (upstream) announce.add(key);
    if (upstream || (isRelevant(svc) && (!old || syncFields(old) !== syncFields(svc)))) ctx.enqueue(key);
  });
  const offNodes = deps.nodes.onChange((kind, node, old) => {
    if (kind === "update" && old && nodeBackendFields(old) === nodeBackendFields(node)) return;
    plans.nodesChanged();
    for (const key of relevantKeys(deps)) ctx.enqueue(key);
  });
  return [offServices, offNodes];
}

/** The term's memory, with the Linode writers bound to its signal. */
function termMemory(deps: ServiceControllerDeps, signal: AbortSignal): ServiceMemory {
  const tls = new TlsSecrets(deps.secrets);
  const plans = new PlanMemo();
  const notices = new Notices();
  const sync = { ...deps, ...deps.forTerm?.(signal), tls, notices, plans };
  const announce = new Set(relevantKeys(deps));
  return { termStart: deps.clock.monotonic(), tls, plans, notices, announce, sync };
}

/**
 * The `service` controller: Service keys, enqueued by Service changes (their sync fields), by Node changes
 * that can move a backend (every LoadBalancer Service), by a Secret in use that changed, and by a resync every
 * `SERVICE_RESYNC_MS`; `--concurrent-service-syncs` workers with upstream's backoff (5 s doubling to 5 min). Its
 * side loops: the orphaned NodeBalancer check (at start when there are LoadBalancer Services, then hourly) and
 * the refresh of the TLS Secrets in use.
 */
export function serviceController(
  deps: ServiceControllerDeps,
  options: ServiceControllerOptions = {},
): ControllerSpec<ServiceMemory> {
  return {
    name: "service",
    workers: options.workers ?? 1,
    retry: { baseMs: RETRY_BASE_MS, maxMs: RETRY_MAX_MS },
    memory: (ctx) => termMemory(deps, ctx.signal),
    sources: (ctx) => watchChanges(deps, ctx),
    initialKeys: () => relevantKeys(deps),
    resync: { periodMs: SERVICE_RESYNC_MS, keys: () => relevantKeys(deps) },
    reconcile: async (key, ctx) => {
      const syncCtx: SyncContext = {
        maxAgeMs: () => deps.clock.monotonic() - ctx.memory.termStart,
        writes: ctx,
        announce: ctx.memory.announce.delete(key),
      };
      await reconcileService(ctx.memory.sync, key, syncCtx);
    },
    onError: (key, error, outcome, ctx) => {
      // Upstream syncs a failed Service again, with its Events: a retry is announced too. A bad input waits for
      // a change of the Service, which is announced anyway.
      if (outcome === "rate-limited" || outcome === "retry-after") ctx.memory.announce.add(key);
      if (!(error instanceof ServiceChangedError)) reportFailure(deps, key, error);
    },
    loops: [
      {
        // Its one NodeBalancer listing is shared with the first syncs: a cluster without any costs no call.
        name: "orphaned NodeBalancer check",
        periodMs: ORPHAN_CHECK_MS,
        atStart: () => deps.services.list().some(isRelevant),
        run: (ctx) => checkOrphans(deps, ctx),
      },
      {
        name: "TLS Secret refresh",
        periodMs: SECRET_REFRESH_MS,
        run: async (ctx) => {
          for (const key of await ctx.memory.tls.refresh()) ctx.enqueue(key);
        },
      },
    ],
  };
}

/** Finds (and, when allowed, deletes) orphaned NodeBalancers; a failure waits for the next check. */
async function checkOrphans(deps: ServiceControllerDeps, ctx: TermContext<ServiceMemory>): Promise<void> {
  const orphans = deps.orphans;
  if (!orphans) return;
  await ctx.within("orphans", (writes) => orphans.check(writes));
}

function nameOf(svc: V1Service): { namespace: string; name: string } {
  return { namespace: svc.metadata?.namespace ?? "", name: svc.metadata?.name ?? "" };
}

/** The Service writes over client-node, both to `services/status` (fenced by the clients). */
export function kubeServiceWriter(core: CoreV1Api): ServiceWrites {
  return {
    setFinalizers: (svc, finalizers) =>
      patchServiceFinalizers(core, nameOf(svc), finalizers, svc.metadata?.resourceVersion),
    patchIngress: (svc, ingress) =>
      mergePatchServiceStatus(core, nameOf(svc), {
        status: { loadBalancer: { ingress: ingress.length ? ingress : null } },
      }),
  };
}

// ---------------------------------------------------------------------------------------------------------
// The Warning Events of a failed sync.

/** What reporting a failure needs. */
export interface FailureDeps {
  services: { get(key: string): V1Service | undefined };
  events: EventSink;
  log: Logger;
}

/** How many Node names an `UpdateLoadBalancerFailed` message lists (upstream's `maxNodeNamesToLog`). */
const HOSTS_LISTED = 20;

/** Upstream's `loggableNodeNames` as Go prints a `[]string`: sorted, at most 20, then `<N more>`. */
function hostsText(hosts: readonly string[]): string {
  const sorted = [...new Set(hosts)].sort();
  const listed = sorted.slice(0, HOSTS_LISTED);
  if (sorted.length > HOSTS_LISTED) listed.push(`<${sorted.length - HOSTS_LISTED} more>`);
  return `[${listed.join(" ")}]`;
}

/** True when the planner found no Node to put behind the NodeBalancer. */
function hasNoNodes(error: unknown): boolean {
  return error instanceof InvalidServiceError &&
    error.errors.some((e) => e instanceof ServicePlanError && e.problem === "NoEligibleNodes");
}

/** An error as the Go CCM's Events show it: a Linode API answer as linodego prints it, else its message. */
export function goErrorText(error: unknown): string {
  if (error instanceof LinodeApiError) return error.goText;
  return error instanceof Error ? error.message : String(error);
}

/** Upstream's wording of each step of `syncLoadBalancerIfNeeded` that can fail. */
const STAGE_TEXT: Readonly<Record<SyncStage, string>> = {
  "ensure": "failed to ensure load balancer",
  "add-finalizer": "failed to add load balancer cleanup finalizer",
  "status": "failed to update load balancer status",
  "check-exists": "failed to check if load balancer exists before cleanup",
  "delete": "failed to delete load balancer",
  "remove-finalizer": "failed to remove load balancer cleanup finalizer",
};

/** Upstream's Warnings, in its words: a failed sync, no Nodes to serve, a failed backends update. */
export function reportFailure(deps: FailureDeps, key: string, error: unknown): void {
  const svc = deps.services.get(key);
  if (!svc) return;
  const text = goErrorText(error);
  const ref = refFor(svc, "Service");
  // The log line keeps this CCM's fuller description of the error.
  const props = { service: key, detail: describeError(error) };
  if (hasNoNodes(error)) {
    const message = "There are no available nodes for LoadBalancer";
    warnEvent(deps, { ref, reason: "UnAvailableLoadBalancer", message, props });
  }
  const hosts = hostsUpdateOf(error);
  if (hosts !== undefined) {
    warnEvent(deps, {
      ref,
      reason: "UpdateLoadBalancerFailed",
      message:
        "Error updating load balancer with new hosts {hosts} [node names limited, total number of nodes: {count}], error: {error}",
      props: { ...props, hosts: hostsText(hosts), count: new Set(hosts).size, error: text },
    });
  }
  const stage = stageOf(error) ?? (needsCleanup(svc) || !wantsLoadBalancer(svc) ? "delete" : "ensure");
  warnEvent(deps, {
    ref,
    reason: "SyncLoadBalancerFailed",
    message: "Error syncing load balancer: {step}: {error}",
    props: { ...props, step: STAGE_TEXT[stage], error: text },
  });
}
