/**
 * The shape of the validated settings: the `Config` every module reads, its sections, and what
 * `parseConfig` returns. Types and the controller names only: parsing lives in `config.ts`, `sections.ts`
 * and `controllers.ts`.
 */
import type { LogFormat, LogLevel } from "../common/log.ts";
import type { Env, KubeSource, LinodeEnv, Secret } from "./env.ts";

/** The controllers this CCM runs: upstream's four by their short names (`--controllers`), and node IPAM. */
export type ControllerName = "cloud-node" | "cloud-node-lifecycle" | "route" | "service" | "nodeipam";

/** Every controller, in start order. */
export const CONTROLLER_NAMES: readonly ControllerName[] = Object.freeze([
  "cloud-node",
  "cloud-node-lifecycle",
  "route",
  "service",
  "nodeipam",
]);

/** `--leader-elect*`. */
export interface LeaderElectionConfig {
  readonly enabled: boolean;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  readonly resourceLock: "leases";
  readonly namespace: string;
  readonly name: string;
}

/** The VPCs and subnets whose addresses the CCM manages (`--vpc-names`/`--vpc-ids`, `--subnet-*`). */
export interface VpcConfig {
  readonly names: readonly string[];
  readonly ids: readonly number[];
  /** Empty when `subnetIds` is given (the Go CCM resolves the IDs to names at start). */
  readonly subnetNames: readonly string[];
  readonly subnetIds: readonly number[];
}

/** The cloud-node and cloud-node-lifecycle controllers. */
export interface NodeConfig {
  /** `--node-monitor-period`: lifecycle check period. */
  readonly monitorPeriodMs: number;
  /** `--node-status-update-frequency`: address refresh period. */
  readonly statusUpdateFrequencyMs: number;
  readonly concurrentSyncs: number;
  /**
   * Always `true`: the Go CCM's node controller keeps each Node's `node.k8s.linode.com/host-uuid` label and
   * `private-ip`/`public-ipv6` annotations up to date whatever `--controllers` says (its cloud's `Initialize`
   * starts it), so excluding `cloud-node` does not stop these updates.
   */
  readonly metadataUpdates: true;
}

/** The route controller and node IPAM. */
export interface RouteConfig {
  readonly enableRouteController: boolean;
  readonly configureCloudRoutes: boolean;
  readonly reconciliationPeriodMs: number;
  /** `--cluster-cidr`, split: one IPv4 and/or one IPv6 CIDR. */
  readonly clusterCidrs: readonly string[];
  readonly allocateNodeCidrs: boolean;
  readonly nodeCidrMaskSizeIpv4: number;
  readonly nodeCidrMaskSizeIpv6: number;
  readonly allocateIpv6NodeCidrs: boolean;
}

/** The NodeBalancer plan types the API takes. */
export const NODEBALANCER_TYPES = ["common", "premium", "premium_40gb"] as const;

/** A NodeBalancer plan type. */
export type NodeBalancerType = typeof NODEBALANCER_TYPES[number];

/** The service controller (NodeBalancers). */
export interface ServiceConfig {
  readonly concurrentSyncs: number;
  /** Always `nodebalancer`: `--load-balancer-type=cilium-bgp` is accepted with a warning, as the Go CCM does. */
  readonly loadBalancerType: "nodebalancer";
  readonly defaultNodeBalancerType: NodeBalancerType;
  readonly nodeBalancerTags: readonly string[];
  readonly nodeBalancerPrefix: string;
  readonly backendIpv4Subnet: string | null;
  readonly backendIpv4SubnetId: number | null;
  readonly backendIpv4SubnetName: string | null;
  readonly disableVpcBackends: boolean;
  readonly enableIpv6ForLoadBalancers: boolean;
  readonly enableIpv6ForNodeBalancerBackends: boolean;
  /** `--cleanup-orphaned-nodebalancers` (ours): delete NodeBalancers of this cluster no Service is tied to. */
  readonly cleanupOrphanedNodeBalancers: boolean;
  /**
   * `--nodebalancer-id-adopts-any` (ours): `nodebalancer-id` adopts any NodeBalancer without ownership tags, as
   * the Go CCM, even one whose backends or Services show it serves someone else.
   */
  readonly nodeBalancerIdAdoptsAny: boolean;
}

/**
 * Delegated authentication and authorisation of the secure port, as upstream's `DelegatingAuthenticationOptions`
 * and `DelegatingAuthorizationOptions`: bearer token → TokenReview, request → SubjectAccessReview.
 */
export interface DelegatedAuthConfig {
  /** `--authentication-kubeconfig`; `null`: the CCM's own kubeconfig (in-cluster or `--kubeconfig`). */
  readonly authenticationKubeconfig: string | null;
  /** `--authorization-kubeconfig`; `null`: the CCM's own kubeconfig. */
  readonly authorizationKubeconfig: string | null;
  /** `--authorization-always-allow-paths`, each with a leading `/`; a trailing `*` matches a prefix. */
  readonly alwaysAllowPaths: readonly string[];
  /** `--authentication-token-webhook-cache-ttl`. */
  readonly tokenCacheTtlMs: number;
  /** `--authorization-webhook-cache-authorized-ttl`. */
  readonly allowCacheTtlMs: number;
  /** `--authorization-webhook-cache-unauthorized-ttl`. */
  readonly denyCacheTtlMs: number;
}

/** The HTTPS health and metrics server. */
export interface ServeConfig {
  readonly auth: DelegatedAuthConfig;
  readonly bindAddress: string;
  /** `--secure-port`; `null` when 0 (serving disabled). */
  readonly securePort: number | null;
  readonly tlsCertFile: string | null;
  readonly tlsPrivateKeyFile: string | null;
}

/** Logging. */
export interface LogConfig {
  readonly format: LogFormat;
  /** `--v`. */
  readonly verbosity: number;
  readonly level: LogLevel;
}

/** The settings every module reads. Durations are milliseconds; the token prints as `***`. */
export interface Config {
  /** `--dev`: running against the built-in emulators. */
  readonly dev: boolean;
  /**
   * `--dry-run` (ours): shadow mode. Every enabled controller decides as usual and records its actions in the
   * plan instead of writing; both clients refuse writes; no leader election (the Lease stays the running CCM's).
   */
  readonly dryRun: boolean;
  readonly clusterName: string;
  /**
   * The controllers to run, as the Go CCM decides: upstream's four as `--controllers` enables them (`route` only
   * with `--enable-route-controller` and `--configure-cloud-routes`), and `nodeipam` with `--allocate-node-cidrs`
   * whatever `--controllers` says. Node metadata updates run regardless too (`nodes.metadataUpdates`).
   */
  readonly controllers: ReadonlySet<ControllerName>;
  readonly leaderElection: LeaderElectionConfig;
  readonly kube: KubeSource;
  readonly linode: LinodeConfig;
  readonly vpc: VpcConfig;
  readonly nodes: NodeConfig;
  readonly routes: RouteConfig;
  readonly services: ServiceConfig;
  readonly serve: ServeConfig;
  readonly log: LogConfig;
  /** Flags given that change nothing here (for one startup log line), e.g. `--cloud-config`. */
  readonly ignoredFlags: readonly string[];
  /** Sentry reporting, or `null` when `SENTRY_DSN` (and `SENTRY_ENVIRONMENT`) are not set. */
  readonly sentry: SentryConfig | null;
  /** Things worth a warning at startup (deprecated flags, a requested controller that will not run). */
  readonly warnings: readonly string[];
}

/** Linode API settings: environment plus the Linode-wide flags. */
export interface LinodeConfig extends LinodeEnv {
  /** `--linodego-debug`: log each Linode API request (method, route, status, duration). */
  readonly debug: boolean;
  /** `--enable-token-health-checker`. */
  readonly tokenHealthCheck: boolean;
  /** `--linode-tag-filter`, or `null`. */
  readonly tagFilter: string | null;
}

/** What `main.ts` should do. */
export type ParseResult =
  | { readonly kind: "run"; readonly config: Config }
  | { readonly kind: "help"; readonly text: string }
  | { readonly kind: "version"; readonly text: string }
  | {
    readonly kind: "dev";
    /** Builds the config once the emulators run, from their `LINODE_URL`, token, region and `KUBECONFIG`. */
    resolve(emulatorEnv: Env): Config;
  };

/** `SENTRY_DSN`, `SENTRY_ENVIRONMENT`, `SENTRY_RELEASE`, read as the Go CCM reads them (`config.ts`). */
export interface SentryConfig {
  readonly dsn: Secret;
  readonly environment: string;
  readonly release: string;
}
