/**
 * The decide stage: a Service's desired NodeBalancer (`planService`), with the reading the pure planner leaves
 * to its caller: VPC subnet labels resolved to IDs, TLS Secrets read (from the informer) and fingerprinted, the
 * cluster identity tag.
 *
 * The last plan of each Service and what it was planned from (`PlanMemo`), so that a sync whose inputs are all
 * unchanged (the 5-minute resync of a settled Service, most syncs) reuses it instead of planning every backend
 * again: at 5,000 Nodes and 50 Services a resync planned 250,000 backends and serialised each plan to
 * fingerprint it. Only planning is skipped: the NodeBalancer is still found and compared as before, so drift
 * is still seen. What is kept is the plan without its backends (spec, warnings, fingerprint): 50 plans of
 * 5,000 backends would hold ~35 MiB; a sync that needs the backends (a NodeBalancer to compare or create)
 * plans them again. The Nodes are tracked by a version the controller moves on every Node change that can
 * move a backend (the same test that enqueues Services, `nodeBackendFields`); the other inputs are compared
 * by value.
 *
 * VPC subnets named by label (`backend-vpc-name`/`backend-subnet-name`, `frontend-*`, `--vpc-names`) become the
 * IDs the NodeBalancer API takes (`SubnetResolver`). The account's VPCs are listed on first need and kept:
 * names rarely move, and a name not found lists again (at most once per `refreshMs`), so a steady Service
 * costs no call.
 */
import { createHash } from "node:crypto";
import type { V1Node, V1Service } from "@kubernetes/client-node";
import type { NodeBalancerCache } from "../../cache/nodebalancers.ts";
import { type NodeBalancerSummary, toVpc, type Vpc } from "../../cache/types.ts";
import type { Clock } from "../../common/clock.ts";
import { objectKey } from "../../kube/keys.ts";
import { type CurrentNodeBalancerShape, parseServiceAnnotations } from "./annotations/parse.ts";
import {
  type AnnotationWarning,
  InvalidServiceError,
  type LenientValue,
  type ServiceDefaults,
  type ServiceSpec,
  type SubnetSelector,
} from "./annotations/spec.ts";
import type { DesiredNodeBalancer } from "./nodebalancer/desired.ts";
import { syncFields } from "./read.ts";
import { backendFamilyOf, planNodeBalancer, type SkippedNode } from "./nodebalancer/plan.ts";
import type { ClusterIdentity } from "./ownership.ts";
import type { TlsMaterial, TlsSecrets } from "./tls/secrets.ts";

// ---------------------------------------------------------------------------------------------------------
// Planning a Service.

/** What planning reads besides the Service and the Nodes. */
export interface PlannerDeps {
  defaults: ServiceDefaults;
  /** The cluster identity: every planned NodeBalancer carries its tag. */
  identity: Pick<ClusterIdentity, "tag">;
  subnets: Pick<SubnetResolver, "resolve">;
  tls: TlsSecrets;
  /** The last plan per Service (see `PlanMemo`); without it every sync plans afresh. */
  plans?: RememberedPlans;
}

/** A Service's spec and the NodeBalancer it should have, plus what is worth a warning. */
export interface PlannedService {
  readonly spec: ServiceSpec;
  /**
   * Every backend included. Reusing a remembered plan (`PlanMemo`) plans it again on first read: a
   * settled Service's sync compares only `fingerprint`, and 50 plans of 5,000 backends kept would be ~35 MiB.
   */
  readonly desired: DesiredNodeBalancer;
  /** `planFingerprint(desired)`: what a NodeBalancer created from this plan is recorded with. */
  readonly fingerprint: string;
  readonly skippedNodes: readonly SkippedNode[];
  readonly warnings: readonly AnnotationWarning[];
  /** Values read leniently (as the Go CCM reads them), each with what was used instead. */
  readonly lenient: readonly LenientValue[];
  /** TLS Secrets whose `tls.crt` holds no readable certificate, named `ns/name`. */
  readonly unreadableCertificates: readonly string[];
}

/** Everything a plan is made from besides the Nodes and the controller's fixed defaults. */
export interface PlanInputs {
  readonly service: V1Service;
  readonly current: CurrentNodeBalancerShape;
  /** Resolved VPC subnets: null without one, undefined when a label resolved to nothing. */
  readonly backendSubnetId: number | null | undefined;
  readonly frontendSubnetId: number | null | undefined;
  readonly clusterIdTag: string;
  readonly tls: ReadonlyMap<string, TlsMaterial>;
}

/** A plan as remembered: everything but the backends. */
export type PlanSummary = Omit<PlannedService, "desired">;

/** The last plans, by Service and inputs (`PlanMemo`). */
export interface RememberedPlans {
  /** The version of the Nodes as plans read them; read it in the same step as the Node listing. */
  readonly nodesVersion: number;
  /** The plan remembered for `key` when it was made from these inputs and Nodes of `nodesVersion`. */
  get(key: string, nodesVersion: number, inputs: PlanInputs): PlanSummary | undefined;
  /** Remembers the plan made from `inputs` over Nodes of `nodesVersion`. */
  set(key: string, nodesVersion: number, inputs: PlanInputs, planned: PlannedService): void;
}

/**
 * Plans `svc` over `nodes` (`current`: what its existing NodeBalancer shows, see `CurrentNodeBalancerShape`);
 * throws `InvalidServiceError` naming every problem.
 */
export async function planService(
  deps: PlannerDeps,
  svc: V1Service,
  nodes: readonly V1Node[],
  current: CurrentNodeBalancerShape = {},
): Promise<PlannedService> {
  // `nodes` was listed by the caller in this same synchronous step: no Node change can fall in between.
  const nodesVersion = deps.plans?.nodesVersion ?? 0;
  const parsed = parseServiceAnnotations(svc, deps.defaults, current);
  if (!parsed.ok) throw new InvalidServiceError(parsed.errors);
  const spec = parsed.spec;
  const backendSubnetId = spec.backendVpc ? await deps.subnets.resolve(spec.backendVpc.subnet) : null;
  const frontendSubnetId = spec.frontendVpc ? await deps.subnets.resolve(spec.frontendVpc.subnet) : null;
  const secretNames = spec.ports.flatMap((p) => p.tlsSecretName ? [p.tlsSecretName] : []);
  const key = objectKey(svc);
  const tls = await deps.tls.materialFor(key, svc.metadata?.namespace ?? "", secretNames);
  const clusterIdTag = await deps.identity.tag();
  const inputs = { service: svc, current, backendSubnetId, frontendSubnetId, clusterIdTag, tls };
  const remembered = deps.plans?.get(key, nodesVersion, inputs);
  if (remembered) {
    return withDesired(remembered, () => planFrom(svc, spec, nodes, inputs, deps.defaults).desired);
  }
  const planned = planFrom(svc, spec, nodes, inputs, deps.defaults);
  deps.plans?.set(key, nodesVersion, inputs, planned);
  return planned;
}

/** A remembered plan with `desired` planned again (over the same inputs) only when read. */
function withDesired(summary: PlanSummary, plan: () => DesiredNodeBalancer): PlannedService {
  let desired: DesiredNodeBalancer | undefined;
  return {
    ...summary,
    get desired() {
      return desired ??= plan();
    },
  };
}

function planFrom(
  svc: V1Service,
  spec: ServiceSpec,
  nodes: readonly V1Node[],
  inputs: PlanInputs,
  defaults: ServiceDefaults,
): PlannedService {
  const { backendSubnetId, frontendSubnetId, clusterIdTag, tls } = inputs;
  const plan = planNodeBalancer(svc, spec, nodes, {
    defaults,
    clusterIdTag,
    backendSubnetId,
    frontendSubnetId,
    tls,
  });
  if (!plan.ok) throw new InvalidServiceError(plan.errors);
  // Sent to a new NodeBalancer, the API refuses it (a Warning then); an existing one keeps serving the
  // certificate it has, since one that cannot be read cannot be compared: either way the user must hear of it.
  const unreadableCertificates = [...tls].filter(([, m]) => m.fingerprint === null)
    .map(([name]) => `${svc.metadata?.namespace ?? ""}/${name}`);
  return {
    spec,
    desired: plan.desired,
    fingerprint: planFingerprint(plan.desired),
    skippedNodes: plan.skippedNodes,
    warnings: spec.warnings,
    lenient: spec.lenient,
    unreadableCertificates,
  };
}

/**
 * An unparsable `enable-ipv6-backends` (the Go CCM reads false) leaves an existing NodeBalancer's backends in
 * the address family they have: planned again with it when it differs from the Go CCM's reading.
 */
export async function keepBackendFamily(
  deps: PlannerDeps & { cache: Pick<NodeBalancerCache, "details">; nodes: { list(): readonly V1Node[] } },
  svc: V1Service,
  nb: NodeBalancerSummary,
  plan: PlannedService,
): Promise<PlannedService> {
  if (!plan.spec.keepsBackendFamily) return plan;
  const configs = await deps.cache.details.configs(nb.id);
  const ipv6Backends = backendFamilyOf(configs.flatMap((c) => c.nodes));
  if (ipv6Backends === undefined || ipv6Backends === plan.spec.ipv6Backends) return plan;
  return await planService(deps, svc, deps.nodes.list(), { ipv6Backends });
}

/**
 * What a NodeBalancer is created from, as a SHA-256 digest of its text: the same plan later means the
 * NodeBalancer needs no read. The digest, not the text, is kept: the text lists every backend (about 60 KiB
 * per Service at 5,000 Nodes).
 */
export function planFingerprint(desired: DesiredNodeBalancer): string {
  // A TLS key serialises redacted; its certificate (and fingerprint) does not, so a new pair still differs.
  return createHash("sha256").update(JSON.stringify(desired)).digest("base64");
}

// ---------------------------------------------------------------------------------------------------------
// The plan memo.

interface Remembered {
  readonly nodesVersion: number;
  readonly fields: string;
  readonly tls: ReadonlyMap<string, TlsMaterial>;
  readonly plan: PlanSummary;
}

function sameTls(a: ReadonlyMap<string, TlsMaterial>, b: ReadonlyMap<string, TlsMaterial>): boolean {
  if (a.size !== b.size) return false;
  for (const [name, m] of a) {
    const other = b.get(name);
    if (!other || other.cert !== m.cert || other.key !== m.key || other.fingerprint !== m.fingerprint) {
      return false;
    }
  }
  return true;
}

/** Per leadership term: a new term plans everything afresh. */
export class PlanMemo implements RememberedPlans {
  #nodesVersion = 0;
  /** Service key → inputs besides the Service (the current NodeBalancer's shape, subnets, tag) → plan. */
  readonly #plans = new Map<string, Map<string, Remembered>>();

  /** The version of the Nodes as plans read them; read it in the same step as the Node listing. */
  get nodesVersion(): number {
    return this.#nodesVersion;
  }

  /** A Node was added, deleted, or changed a field a backend depends on: every plan is out of date. */
  nodesChanged(): void {
    this.#nodesVersion++;
    this.#plans.clear();
  }

  /** The plan remembered for `key` when it was made from these inputs and Nodes of `nodesVersion`. */
  get(key: string, nodesVersion: number, inputs: PlanInputs): PlanSummary | undefined {
    const seen = this.#plans.get(key)?.get(restOf(inputs));
    if (!seen || seen.nodesVersion !== nodesVersion || seen.nodesVersion !== this.#nodesVersion) {
      return undefined;
    }
    if (seen.fields !== syncFields(inputs.service)) return undefined;
    return sameTls(seen.tls, inputs.tls) ? seen.plan : undefined;
  }

  /** Remembers the plan made from `inputs` over Nodes of `nodesVersion` (not when the Nodes moved since). */
  set(key: string, nodesVersion: number, inputs: PlanInputs, planned: PlannedService): void {
    if (nodesVersion !== this.#nodesVersion) return;
    const fields = syncFields(inputs.service);
    let plans = this.#plans.get(key);
    // Plans of an older Service are of no use; at most a few shapes (see `keepBackendFamily`) per Service.
    if (!plans || [...plans.values()].some((p) => p.fields !== fields)) {
      this.#plans.set(key, plans = new Map());
    }
    const { desired: _backends, ...plan } = planned;
    plans.set(restOf(inputs), { nodesVersion, fields, tls: inputs.tls, plan });
  }

  /** Forgets a deleted Service. */
  forget(key: string): void {
    this.#plans.delete(key);
  }

  /** How many plans are remembered. */
  get size(): number {
    let n = 0;
    for (const plans of this.#plans.values()) n += plans.size;
    return n;
  }
}

function restOf(inputs: PlanInputs): string {
  const subnet = (id: number | null | undefined) => id === undefined ? "unresolved" : id;
  return JSON.stringify([
    inputs.current,
    subnet(inputs.backendSubnetId),
    subnet(inputs.frontendSubnetId),
    inputs.clusterIdTag,
  ]);
}

// ---------------------------------------------------------------------------------------------------------
// VPC subnets by label.

/** Lists the account's VPCs. `LinodeClient.vpcs` implements it. */
export interface VpcLister {
  list(): Promise<readonly Vpc[]>;
}

const DEFAULT_REFRESH_MS = 30_000;

/** Resolves subnet selectors to IDs. */
export class SubnetResolver {
  readonly #source: VpcLister;
  readonly #clock: Clock;
  readonly #refreshMs: number;
  #vpcs: Promise<readonly Vpc[]> | undefined;
  #loadedAt = -Infinity;

  constructor(source: VpcLister, clock: Clock, options: { refreshMs?: number } = {}) {
    this.#source = source;
    this.#clock = clock;
    this.#refreshMs = options.refreshMs ?? DEFAULT_REFRESH_MS;
  }

  /** The subnet's ID, or undefined when no VPC and subnet have those labels. Throws when VPCs cannot be listed. */
  async resolve(selector: SubnetSelector): Promise<number | undefined> {
    if (selector.kind === "id") return selector.subnetId;
    const found = find(await this.#list(false), selector.vpcName, selector.subnetName);
    if (found !== undefined) return found;
    if (this.#clock.monotonic() - this.#loadedAt < this.#refreshMs) return undefined;
    return find(await this.#list(true), selector.vpcName, selector.subnetName);
  }

  #list(again: boolean): Promise<readonly Vpc[]> {
    if (this.#vpcs && !again) return this.#vpcs;
    this.#loadedAt = this.#clock.monotonic();
    // Only the fields read are kept (`toVpc`): a listed subnet also names every Linode in it.
    const loading = this.#source.list().then((vpcs) => vpcs.map(toVpc));
    this.#vpcs = loading;
    // A failed listing is not kept: the next Service asks again.
    loading.catch(() => {
      if (this.#vpcs === loading) this.#vpcs = undefined;
    });
    return loading;
  }
}

function find(vpcs: readonly Vpc[], vpcName: string, subnetName: string): number | undefined {
  return vpcs.find((v) => v.label === vpcName)?.subnets.find((s) => s.label === subnetName)?.id;
}
