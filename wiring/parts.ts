/**
 * The parts of one CCM process, built from a validated Config: fence → clients → caches → informers → Event
 * recorder. Nothing is started here. `runCcm` (ccm.ts) builds them this way and no other, so the scenario
 * tests, the demo and the bench, which all start the CCM through `runCcm`, run the production wiring.
 */
import type { KubeConfig, V1Node, V1Service } from "@kubernetes/client-node";
import { InstanceCache } from "../cache/instances.ts";
import { NodeBalancerCache } from "../cache/nodebalancers.ts";
import { VpcIpCache } from "../cache/vpc_ips.ts";
import { VpcCache } from "../cache/vpcs.ts";
import { VpcIpv6Cache } from "../cache/vpc_ipv6.ts";
import type { Clock } from "../common/clock.ts";
import { componentLogger } from "../common/log.ts";
import type { Config } from "../config/config.ts";
import { VERSION } from "../config/version.ts";
import { type KubeClients, makeKubeClients, nodeSource, serviceSource } from "../kube/clients.ts";
import { type KubeConfigSource, kubeSecretsSource, loadKubeConfig } from "../kube/config.ts";
import { EventRecorder, type ObjectRef, refFor } from "../kube/events.ts";
import { MissingPermissions } from "../kube/permissions.ts";
import { type ChangeKind, Informer, type KubeObject } from "../kube/informer.ts";
import { trimNode } from "../kube/trim.ts";
import { ALWAYS_LEADING, DryRunGuard, type Fence, SwitchFence } from "../common/write_guard.ts";
import { newIdentity } from "../lease/lease.ts";
import { LinodeClient } from "../linode/client.ts";
import { ClusterIdentity } from "../controllers/service/ownership.ts";
import { OrphanCheck } from "../controllers/service/cleanup.ts";
import { type Executors, newExecutors, ShadowRecorder } from "../controllers/loop/shadow.ts";
import { currentReconcile } from "../controllers/loop/runtime.ts";
import { type NodeSource, ProjectedNodes } from "../controllers/node/projected_nodes.ts";
import { fileToken, staticToken, type TokenSource } from "../linode/token.ts";
import type { Registry } from "../common/metrics.ts";
import type { RequestAuthorizer } from "../server/auth.ts";
import { delegatedAuth, reviewKubeConfigs } from "./serve_auth.ts";
import { assertKubeServersAllowed } from "./net_check.ts";

/** What the process provides to the wiring: time, metrics, identity. */
export interface PartsDeps {
  clock: Clock;
  metrics: Registry;
  /** This machine's hostname: the first half of the Lease holder identity. */
  hostname: string;
  /** Service-account folder for in-cluster config (tests point it elsewhere). */
  serviceAccountDir?: string;
}

/** Everything one CCM process is made of, wired but not started. */
export interface CcmParts {
  readonly config: Config;
  readonly clock: Clock;
  readonly metrics: Registry;
  /** The Lease holder identity: `<hostname>_<random>`. */
  readonly identity: string;
  /**
   * Closed until this process leads (with `--leader-elect=false` or `--dry-run`, always open). Every write
   * asks it.
   */
  readonly fence: Fence;
  readonly kube: KubeClients;
  readonly linode: LinodeClient;
  readonly vpcs: VpcCache;
  /** The configured VPCs' addresses and routed ranges: node addresses and routes share one listing. */
  readonly vpcIps: VpcIpCache;
  readonly instances: InstanceCache;
  /** The IPv6 ranges of Linodes' VPC interfaces (node IPAM's IPv6 side), read once per Linode. */
  readonly vpcIpv6: VpcIpv6Cache;
  readonly nodes: Informer<V1Node>;
  /**
   * The Nodes the route and service controllers decide from: the informer's, or in dry run a view with the
   * held `cloud-node` updates applied (so the plan shows what initialising a Node leads to).
   */
  readonly plannedNodes: NodeSource;
  /** The view of `plannedNodes` that `cloud-node` feeds in dry run. */
  readonly projection: ProjectedNodes | undefined;
  readonly events: EventRecorder;
  /** What the controllers would do (`--dry-run`: served on `/plan`) or recently did. */
  readonly shadow: ShadowRecorder;
  /** One executor per API: every write of every controller goes through them. */
  readonly executors: Executors;
  /** The Services (only when the `service` controller is enabled): a term waits for it, `/readyz` checks it. */
  readonly services: Informer<V1Service> | undefined;
  /** The NodeBalancer listing and details (only with the `service` controller). */
  readonly nodeBalancers: NodeBalancerCache | undefined;
  /** This cluster's identity in the Linode account (the `kube-system` Namespace UID). */
  readonly clusterIdentity: ClusterIdentity;
  /** The orphaned NodeBalancers, as the last check found them (for `/plan`, across terms). */
  readonly orphanCheck: OrphanCheck;
  /** The secrets to keep out of logs and Events: every Linode token read, the kube credentials. */
  readonly secrets: () => readonly string[];
  /** Who may read the secure port's `/metrics` and `/plan` (TokenReview and SubjectAccessReview). */
  readonly auth: RequestAuthorizer;
  /** Every request the apiserver refused for want of an RBAC permission, counted and reported. */
  readonly permissions: MissingPermissions;
}

function tokenSource(config: Config, clock: Clock): TokenSource {
  const t = config.linode.token;
  return t.kind === "env"
    ? staticToken(t.token.reveal())
    : fileToken(t.path, { clock, minCheckIntervalMs: t.cacheTtlMs });
}

function kubeSource(config: Config, serviceAccountDir?: string): KubeConfigSource {
  const k = config.kube;
  if (k.kind === "kubeconfig") return { kubeconfig: k.kubeconfig, master: k.master };
  if (k.kind === "in-cluster") {
    return { serviceHost: k.serviceHost, servicePort: k.servicePort, master: k.master, serviceAccountDir };
  }
  return { master: k.master, serviceAccountDir };
}

/**
 * Asked per log line or Event: every Linode token handed out so far (rotated ones too) and the kube credentials
 * (token files re-read at most once a minute, by `kubeSecretsSource`).
 */
function secretsOf(tokens: TokenSource, kcs: readonly KubeConfig[], clock: Clock): () => readonly string[] {
  const kube = [...new Set(kcs)].map((kc) => kubeSecretsSource(kc, { clock }));
  return () => [...tokens.seen(), ...kube.flatMap((source) => source())];
}

/**
 * The `User-Agent` of every request, Linode and Kubernetes: it names this process's Lease identity, so API-side
 * audit logs (and the emulators of the fault suite) tell which replica sent a write.
 */
export function userAgentOf(identity: string): string {
  return `linode-cloud-controller-manager/${VERSION} (${identity})`;
}

/**
 * Under leader election, a write attempt lasts at most lease duration minus renew deadline: the fence closes
 * at the renew deadline at the latest, so a write sent just before ends before a standby can take the Lease.
 */
export function writeTimeoutMs(config: Config): number | undefined {
  const le = config.leaderElection;
  if (!le.enabled || config.dryRun) return undefined;
  return le.leaseDurationMs - le.renewDeadlineMs;
}

function linodeClient(
  config: Config,
  deps: PartsDeps,
  tokens: TokenSource,
  guards: { fence: Fence; writeGuard: DryRunGuard | undefined; userAgent: string },
): LinodeClient {
  return new LinodeClient({
    baseUrl: config.linode.url,
    token: tokens,
    timeoutMs: config.linode.requestTimeoutMs,
    writeTimeoutMs: writeTimeoutMs(config),
    ...guards,
    metrics: deps.metrics,
    log: componentLogger("linode"),
    clock: deps.clock,
    logRequests: config.linode.debug,
  });
}

/** The subnets `--subnet-names`/`--subnet-ids` resolved to (none while the VPCs are not yet resolved). */
function selectedSubnetIds(vpcs: VpcCache): ReadonlySet<number> {
  return new Set((vpcs.peek()?.data ?? []).flatMap((vpc) => vpc.subnets.map((s) => s.id)));
}

/** The Linode caches every loop reads: VPCs, their addresses (only with `--vpc-*`), instances. */
function caches(config: Config, deps: PartsDeps, linode: LinodeClient) {
  const { clock, metrics } = deps;
  const v = config.vpc;
  const selection = { vpcNames: v.names, vpcIds: v.ids, subnetNames: v.subnetNames, subnetIds: v.subnetIds };
  const vpcTtlMs = config.linode.routesCacheTtlMs;
  const vpcs = new VpcCache(linode.vpcs, selection, { clock, metrics, ttlMs: vpcTtlMs });
  // The listing is re-read to find changes made by others once per status period (the drift period), not
  // per LINODE_ROUTES_CACHE_TTL_SECONDS: this CCM records its own writes, and reads a new Linode's interfaces
  // directly. The TTL is how soon the route controller re-reads it while a write failed (docs/freshness.md).
  const vpcIps = new VpcIpCache(linode.vpcs, vpcs, {
    clock,
    metrics,
    ttlMs: config.nodes.statusUpdateFrequencyMs,
    interfaces: linode,
  });
  const instances = new InstanceCache(linode.instances, {
    clock,
    metrics,
    tagFilter: config.linode.tagFilter ?? undefined,
    ttlMs: config.linode.instanceCacheTtlMs,
    vpcIps: vpcs.configured ? vpcIps : undefined,
    subnetIds: v.subnetNames.length + v.subnetIds.length > 0 ? () => selectedSubnetIds(vpcs) : undefined,
  });
  return { vpcs, vpcIps, instances };
}

/**
 * Builds the parts of one CCM process from `config`. Loading the kubeconfig may throw `KubeConfigError`;
 * nothing else touches the network or starts a timer until the caller starts the informers and controllers.
 */
export function buildParts(config: Config, deps: PartsDeps): CcmParts {
  const { clock, metrics } = deps;
  // In dry-run the fence stays open (controllers decide as a leader would); the guard refuses every write.
  const fence = config.leaderElection.enabled && !config.dryRun ? new SwitchFence(false) : ALWAYS_LEADING;
  const writeGuard = config.dryRun
    ? new DryRunGuard({ log: componentLogger("dry-run"), metrics })
    : undefined;
  const identity = newIdentity(deps.hostname);
  const userAgent = userAgentOf(identity);
  const kc = loadKubeConfig(kubeSource(config, deps.serviceAccountDir));
  const permissions = new MissingPermissions({ log: componentLogger("kube"), metrics });
  const kube = makeKubeClients(kc, { metrics, fence, writeGuard, userAgent, permissions });
  const tokens = tokenSource(config, clock);
  const reviewKcs = reviewKubeConfigs(config, kc);
  assertKubeServersAllowed(config, { main: kc, ...reviewKcs });
  const auth = delegatedAuth(config, reviewKcs, { clock, metrics, userAgent, permissions });
  const secrets = secretsOf(tokens, [kc, reviewKcs.authn, reviewKcs.authz], clock);
  const linode = linodeClient(config, deps, tokens, { fence, writeGuard, userAgent });
  const { vpcs, vpcIps, instances } = caches(config, deps, linode);
  const vpcIpv6 = new VpcIpv6Cache({
    listConfigs: (id) => linode.instances.listConfigs(id),
    listInterfaces: (id) => linode.interfaces.list(id),
  }, { metrics });
  const nodes = new Informer(kc, nodeSource(kube.core), {
    log: componentLogger("informer"),
    metrics,
    clock,
    permissions,
    transform: trimNode,
  });
  const events = new EventRecorder(kube.core, {
    log: componentLogger("events"),
    clock,
    host: deps.hostname,
    secrets,
    dryRun: config.dryRun,
  });
  const projection = config.dryRun ? new ProjectedNodes(nodes) : undefined;
  const shadow = new ShadowRecorder({ dryRun: config.dryRun, log: componentLogger("plan"), metrics, clock });
  const withServices = config.controllers.has("service");
  const informerOptions = { log: componentLogger("informer"), metrics, clock, permissions };
  const services = withServices ? new Informer(kc, serviceSource(kube.core), informerOptions) : undefined;
  const nodeBalancers = withServices
    ? new NodeBalancerCache(linode.nodeBalancers, {
      clock,
      metrics,
      region: config.linode.region,
      ttlMs: config.linode.instanceCacheTtlMs,
    })
    : undefined;
  const clusterIdentity = new ClusterIdentity({
    namespaceUid: async (name) => (await kube.core.readNamespace({ name })).metadata?.uid ?? "",
  });
  const orphanCheck = new OrphanCheck({
    clusterName: config.clusterName,
    cleanup: config.services.cleanupOrphanedNodeBalancers,
  });
  // A deleted Node's or Service's Event bookkeeping goes with it.
  const forgetEvents = (kind: ChangeKind, obj: { metadata?: { uid?: string } }) => {
    if (kind === "delete") events.forget(obj.metadata?.uid);
  };
  nodes.onChange(forgetEvents);
  services?.onChange(forgetEvents);
  permissions.attach({
    events,
    secrets,
    subject: () => reconcileSubject(currentReconcile(), { nodes, services }),
  });
  return {
    config,
    clock,
    metrics,
    identity,
    fence,
    kube,
    linode,
    vpcs,
    vpcIps,
    instances,
    vpcIpv6,
    nodes,
    plannedNodes: projection ?? nodes,
    projection,
    events,
    shadow,
    executors: newExecutors(metrics),
    services,
    nodeBalancers,
    clusterIdentity,
    orphanCheck,
    secrets,
    auth,
    permissions,
  };
}

/** The controllers whose keys are Node names; the service controller's are Service `namespace/name` keys. */
const NODE_CONTROLLERS: ReadonlySet<string> = new Set(["cloud-node", "cloud-node-lifecycle", "nodeipam"]);

/** The Service or Node a reconcile is about (for a missing permission's Event); undefined for other keys. */
function reconcileSubject(
  reconcile: { controller: string; key: string } | undefined,
  informers: { nodes: Informer<V1Node>; services: Informer<V1Service> | undefined },
): ObjectRef | undefined {
  if (!reconcile) return undefined;
  const { controller, key } = reconcile;
  if (NODE_CONTROLLERS.has(controller)) {
    const node = informers.nodes.get(key);
    return node ? refFor(node, "Node") : { kind: "Node", apiVersion: "v1", name: key };
  }
  if (controller !== "service") return undefined;
  const svc = informers.services?.get(key);
  if (svc) return refFor(svc, "Service");
  const [namespace = "", name = ""] = key.split("/");
  return { kind: "Service", apiVersion: "v1", namespace, name };
}

/**
 * Called as a leadership term starts: every Linode cache turns stale (and the NodeBalancer details, which never
 * expire, are dropped), so the term decides from what the API says now, not from what this process saw in an
 * earlier term while another leader wrote.
 */
export function expireLinodeCaches(parts: CcmParts): void {
  parts.vpcs.expire();
  parts.vpcIps.expire();
  parts.instances.expire();
  parts.nodeBalancers?.expire();
}

/**
 * The informers a term's controllers need synced: `runInformers` starts them, `waitForInformers` awaits
 * them and `/readyz` checks them (synced and watching).
 */
export function informersOf(parts: CcmParts): readonly Informer<KubeObject>[] {
  return parts.services ? [parts.nodes, parts.services] : [parts.nodes];
}

/** Runs every informer of `parts` until `signal` aborts (each restarts itself after failures). */
export async function runInformers(parts: CcmParts, signal: AbortSignal): Promise<void> {
  await Promise.all(informersOf(parts).map((informer) => informer.start(signal)));
}

/** Resolves once every informer of `informersOf(parts)` has synced; rejects when `signal` aborts first. */
export async function waitForInformers(parts: CcmParts, signal: AbortSignal): Promise<void> {
  await Promise.all(informersOf(parts).map((informer) => informer.waitForSync(signal)));
}
