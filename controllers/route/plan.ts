/**
 * The route controller's decisions, pure: from the Nodes' pod CIDRs and one listing of the configured VPCs'
 * addresses and routed ranges (`GET /vpcs/{id}/ips`), the whole new range list of every VPC interface that
 * must change. Only ranges inside `--cluster-cidr` are ever added or removed; everything else stays. Pod CIDRs
 * and ranges are parsed once per text (`CidrMemo`).
 */
import type { VpcIp } from "../../cache/types.ts";
import type { VpcInterfaceRef } from "../../cache/vpc_ips.ts";
import {
  type Cidr4,
  cidr4Within,
  cidrFamily,
  formatCidr4,
  type IpFamily,
  parseCidr4,
} from "../../common/net.ts";

/** The IPv4 CIDRs of `--cluster-cidr` (its IPv6 part needs no routes). */
export function clusterCidrs4(cidrs: readonly string[]): Cidr4[] {
  return cidrs.map(parseCidr4).filter((c): c is Cidr4 => c !== undefined);
}

/** True when the range (text) lies inside one of the cluster CIDRs: only such ranges are ever changed. */
export function isClusterRange(range: string, cluster: readonly Cidr4[]): boolean {
  const c = parseCidr4(range);
  return c !== undefined && cluster.some((outer) => cidr4Within(c, outer));
}

type Parsed = { cidr: Cidr4 | undefined; canonical: string | undefined };

/**
 * The CIDR parses of a pass, remembered by text. Every route pass plans every Node: a big cluster's cold
 * start parsed the same pod CIDRs and ranges over and over (docs/measurements.md, "CIDR parse memo"). One memo
 * lives as long as the controller; a text not read in the last two passes (`endPass`) is forgotten, so the
 * pod CIDRs and ranges of deleted Nodes are not kept (a soak adds and removes Nodes for ever).
 */
export class CidrMemo {
  #current = new Map<string, Parsed>();
  #previous = new Map<string, Parsed>();

  /** `parseCidr4` and `canonicalCidr4` of `text` in one. */
  #get(text: string): Parsed {
    let hit = this.#current.get(text);
    if (!hit) {
      hit = this.#previous.get(text);
      if (!hit) {
        const cidr = parseCidr4(text);
        hit = { cidr, canonical: cidr && formatCidr4(cidr) };
      }
      this.#current.set(text, hit);
    }
    return hit;
  }

  /** Ends a pass: what was not read during it or the pass before is forgotten. */
  endPass(): void {
    this.#previous = this.#current;
    this.#current = new Map();
  }

  /** How many texts are remembered (for tests). */
  get size(): number {
    return new Set([...this.#current.keys(), ...this.#previous.keys()]).size;
  }

  /** `canonicalCidr4(text)`. */
  canonical(text: string): string | undefined {
    return this.#get(text).canonical;
  }

  /** `isClusterRange(text, cluster)`. */
  inCluster(text: string, cluster: readonly Cidr4[]): boolean {
    const c = this.#get(text).cidr;
    return c !== undefined && cluster.some((outer) => cidr4Within(c, outer));
  }

  /** `cidrFamily(text)`. */
  family(text: string): IpFamily | undefined {
    return this.#get(text).cidr ? 4 : cidrFamily(text);
  }
}

/** A Node as the route controller sees it: only Nodes whose providerID names a Linode. */
export interface RouteNode {
  readonly name: string;
  readonly linodeId: number;
  /** `spec.podCIDRs` (or `spec.podCIDR`), as written. */
  readonly podCidrs: readonly string[];
}

/** Where routes live: the cluster CIDRs and, per configured VPC, its selected subnets. */
export interface RouteScope {
  readonly clusterCidrs: readonly Cidr4[];
  readonly subnets: ReadonlyMap<number, ReadonlySet<number>>;
}

/** Everything `planRoutes` looks at. */
export interface PlanInput {
  readonly nodes: readonly RouteNode[];
  /** Linodes whose Node was deleted: their cluster ranges go, while the Linode is still in the listing. */
  readonly released: ReadonlySet<number>;
  readonly ips: readonly VpcIp[];
  readonly scope: RouteScope;
  /** Parses remembered across passes (default: a memo for this call only). */
  readonly memo?: CidrMemo;
}

/** One VPC interface that carries routes; `configId` null means a Linode interface. */
export interface RouteTarget extends VpcInterfaceRef {
  readonly subnetId: number;
  readonly configId: number | null;
}

/** One interface's new range list (the API replaces the whole list). */
export interface RangeWrite {
  readonly target: RouteTarget;
  readonly ranges: readonly string[];
  readonly added: readonly string[];
  readonly removed: readonly string[];
  /** 0 for writes that remove a range, sent first, so a range moving between Linodes is free when claimed. */
  readonly phase: 0 | 1;
}

/** What one Node needs, split by what can be routed. */
export interface NodeRoutes {
  readonly node: string;
  readonly linodeId: number;
  /** IPv4 pod CIDRs inside the cluster CIDR (canonical): these get routed. */
  readonly wanted: readonly string[];
  /** IPv4 pod CIDRs outside every cluster CIDR: never routed. */
  readonly outside: readonly string[];
  /** IPv6 pod CIDRs: need no VPC route. */
  readonly ipv6: readonly string[];
  readonly invalid: readonly string[];
  /** The Linode's interface in each configured VPC it is in; empty when it has none. */
  readonly targets: readonly RouteTarget[];
}

/** The plan: writes, and what each Node with pod CIDRs needs. */
export interface RoutePlan {
  readonly writes: readonly RangeWrite[];
  readonly nodes: readonly NodeRoutes[];
}

interface InterfaceState {
  target: RouteTarget;
  active: boolean;
  ranges: string[];
}

/** The key of a VPC interface in maps and logs: `linodeId/interfaceId`. */
export function targetKey(t: VpcInterfaceRef): string {
  return `${t.linodeId}/${t.interfaceId}`;
}

function inScope(ip: VpcIp, scope: RouteScope): boolean {
  return scope.subnets.get(ip.vpc_id)?.has(ip.subnet_id) === true && ip.linode_id !== null &&
    typeof ip.interface_id === "number";
}

/** The interfaces in scope that have an address, by Linode. */
function interfacesByLinode(ips: readonly VpcIp[], scope: RouteScope): Map<number, InterfaceState[]> {
  const byIface = new Map<number, InterfaceState>();
  for (const ip of ips) {
    if (!inScope(ip, scope) || !ip.address) continue;
    const interfaceId = ip.interface_id as number;
    if (byIface.has(interfaceId)) continue;
    const target = {
      vpcId: ip.vpc_id,
      subnetId: ip.subnet_id,
      linodeId: ip.linode_id as number,
      interfaceId,
      configId: ip.config_id ?? null,
    };
    byIface.set(interfaceId, { target, active: ip.active !== false, ranges: [] });
  }
  for (const ip of ips) {
    if (!inScope(ip, scope) || !ip.address_range) continue;
    byIface.get(ip.interface_id as number)?.ranges.push(ip.address_range);
  }
  const out = new Map<number, InterfaceState[]>();
  for (const state of byIface.values()) {
    const list = out.get(state.target.linodeId) ?? [];
    list.push(state);
    out.set(state.target.linodeId, list);
  }
  return out;
}

/**
 * One interface per configured VPC: with several (several configuration profiles in one VPC) the active
 * one, the one the Linode booted with; then the lowest id, so the choice is stable.
 */
function pickTargets(interfaces: readonly InterfaceState[]): InterfaceState[] {
  const byVpc = new Map<number, InterfaceState>();
  const sorted = [...interfaces].sort((a, b) =>
    Number(b.active) - Number(a.active) || a.target.interfaceId - b.target.interfaceId
  );
  for (const i of sorted) if (!byVpc.has(i.target.vpcId)) byVpc.set(i.target.vpcId, i);
  return [...byVpc.values()].sort((a, b) => a.target.vpcId - b.target.vpcId);
}

/** Splits a Node's pod CIDRs into what is routed and what is not. */
export function classifyPodCidrs(
  podCidrs: readonly string[],
  cluster: readonly Cidr4[],
  memo: CidrMemo = new CidrMemo(),
): Pick<NodeRoutes, "wanted" | "outside" | "ipv6" | "invalid"> {
  const wanted: string[] = [];
  const outside: string[] = [];
  const ipv6: string[] = [];
  const invalid: string[] = [];
  for (const text of podCidrs) {
    const family = memo.family(text);
    const v4 = memo.canonical(text);
    if (family === 6) ipv6.push(text);
    else if (family === undefined || v4 === undefined) invalid.push(text);
    else if (!memo.inCluster(v4, cluster)) outside.push(v4);
    else if (!wanted.includes(v4)) wanted.push(v4);
  }
  return { wanted, outside, ipv6, invalid };
}

/** The new list of one interface: its ranges outside the cluster CIDR kept in order, then `wanted`. */
function planWrite(
  state: InterfaceState,
  wanted: readonly string[],
  cluster: readonly Cidr4[],
  memo: CidrMemo,
) {
  const current = state.ranges;
  const have = new Set(current.map((r) => memo.canonical(r) ?? r));
  const keep = current.filter((r) => !memo.inCluster(r, cluster) || wanted.includes(memo.canonical(r) ?? r));
  const removed = current.filter((r) => !keep.includes(r));
  const added = wanted.filter((r) => !have.has(r));
  if (added.length === 0 && removed.length === 0) return undefined;
  const write: RangeWrite = {
    target: state.target,
    ranges: [...keep, ...added],
    added,
    removed,
    phase: removed.length > 0 ? 0 : 1,
  };
  return write;
}

/**
 * Decides every write. A Linode that is neither a Node's nor released is never touched (found by providerID
 * only: a renamed Linode keeps its routes). A Node in several configured VPCs gets its pod CIDRs on its
 * interface in each. Nodes without pod CIDRs are left out.
 */
export function planRoutes(input: PlanInput): RoutePlan {
  const { scope } = input;
  const memo = input.memo ?? new CidrMemo();
  const interfaces = interfacesByLinode(input.ips, scope);
  const wantedByLinode = new Map<number, string[]>();
  const nodes: NodeRoutes[] = [];
  for (const n of input.nodes) {
    if (n.podCidrs.length === 0) continue;
    const split = classifyPodCidrs(n.podCidrs, scope.clusterCidrs, memo);
    const targets = pickTargets(interfaces.get(n.linodeId) ?? []).map((i) => i.target);
    nodes.push({ node: n.name, linodeId: n.linodeId, ...split, targets });
    const wanted = wantedByLinode.get(n.linodeId) ?? [];
    for (const c of split.wanted) if (!wanted.includes(c)) wanted.push(c);
    wantedByLinode.set(n.linodeId, wanted);
  }
  // A Node whose pod CIDR is not set yet claims nothing, and must not lose the ranges it has.
  const claimed = new Set(input.nodes.map((n) => n.linodeId));
  const writes: RangeWrite[] = [];
  for (const [linodeId, states] of interfaces) {
    const released = input.released.has(linodeId) && !claimed.has(linodeId);
    if (!wantedByLinode.has(linodeId) && !released) continue;
    const wanted = released ? [] : wantedByLinode.get(linodeId) ?? [];
    for (const state of pickTargets(states)) {
      const write = planWrite(state, wanted, scope.clusterCidrs, memo);
      if (write) writes.push(write);
    }
  }
  writes.sort((a, b) => a.phase - b.phase || a.target.linodeId - b.target.linodeId);
  return { writes, nodes };
}
