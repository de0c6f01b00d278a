/** What the demo view shows at one instant: plain data, so rendering is a pure function of it. */

/** One Node as the view lists it. */
export interface NodeRow {
  readonly name: string;
  readonly ready: boolean;
  /** No `uninitialized` taint and a providerID: the CCM has done its part. */
  readonly initialised: boolean;
  readonly providerID: string | undefined;
  readonly internalIp: string | undefined;
  readonly externalIp: string | undefined;
  /** Taint keys without the `node.cloudprovider.kubernetes.io/` prefix (`shutdown`, `uninitialized`). */
  readonly taints: readonly string[];
  /** `spec.podCIDRs`, comma-separated. */
  readonly podCidr?: string;
  /** What `NetworkUnavailable` says: the route controller programmed (`routed`) or failed (`failed`) it. */
  readonly route?: "routed" | "failed";
}

/** Where a replica stands in the election. */
export type ReplicaState = "leading" | "standby" | "stopped";

/** One in-process CCM replica. */
export interface ReplicaRow {
  /** Short label: `A`, `B`. */
  readonly label: string;
  readonly identity: string;
  readonly state: ReplicaState;
  /** Linode calls counted by this replica's own client. */
  readonly linodeCalls: number;
}

/** The Lease as the apiserver holds it, plus the replicas competing for it. */
export interface LeaderInfo {
  readonly holder: string | undefined;
  readonly acquiredAtMs: number | undefined;
  readonly transitions: number;
  readonly replicas: readonly ReplicaRow[];
}

/** Linode API cost, from the emulator's counters. */
export interface ApiStats {
  readonly total: number;
  readonly lastMinute: number;
  /** Busiest route templates, most calls first. */
  readonly top: readonly (readonly [route: string, calls: number])[];
}

/** One Kubernetes Event. */
export interface EventRow {
  readonly atMs: number;
  readonly type: string;
  readonly reason: string;
  /** `Node/demo-node-5`. */
  readonly object: string;
  readonly message: string;
  readonly count: number;
}

/** One CCM log line, already parsed. */
export interface LogRow {
  readonly atMs: number;
  readonly level: string;
  readonly component: string;
  readonly message: string;
}

/** One line of the scripted story: a scene started, or what the CCM was seen doing about it. */
export interface StoryLine {
  readonly atMs: number;
  readonly text: string;
}

/** One LoadBalancer Service and the NodeBalancer at its status address. */
export interface ServiceLbRow {
  /** `namespace/name`. */
  readonly service: string;
  readonly ip: string | undefined;
  readonly nodeBalancerId: number | undefined;
  /** Backends of the NodeBalancer's first config. */
  readonly backends: number;
}

/** LoadBalancer Services and NodeBalancers. */
export interface LoadBalancerInfo {
  readonly nodeBalancers: number;
  readonly services: number;
  /** `namespace/name` of LoadBalancer Services without an ingress yet. */
  readonly pending: readonly string[];
  /** Each LoadBalancer Service with its NodeBalancer. */
  readonly rows?: readonly ServiceLbRow[];
}

/** The VPC routes in the Linode emulator: every `ip_ranges` entry of every Linode. */
export interface RouteInfo {
  readonly ranges: number;
}

/** Everything the view draws. */
export interface DemoSnapshot {
  readonly nowMs: number;
  readonly startedAtMs: number;
  readonly kubeconfig: string;
  readonly leader: LeaderInfo;
  readonly nodes: readonly NodeRow[];
  readonly loadBalancers: LoadBalancerInfo;
  readonly routes?: RouteInfo;
  readonly api: ApiStats;
  /** The most recent Events, oldest first. */
  readonly events: readonly EventRow[];
  /** Recent CCM log lines, oldest first. */
  readonly logs: readonly LogRow[];
  readonly story: readonly StoryLine[];
  /** The story panel's text before the story starts (default: the demo world's story). */
  readonly preview?: string;
}

/** Counts initialised Nodes: `[initialised, total]`. */
export function countInitialised(nodes: readonly NodeRow[]): [number, number] {
  return [nodes.filter((n) => n.initialised).length, nodes.length];
}
