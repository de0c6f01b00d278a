/**
 * A Service's desired NodeBalancer, with the reading the pure planner leaves to its caller: VPC subnet
 * labels resolved to IDs, TLS Secrets read (from the informer) and fingerprinted. Also the few settings the
 * deletion path needs, readable when other annotations are invalid.
 */
import type { V1Node, V1Service } from "@kubernetes/client-node";
import { objectKey } from "../../kube/keys.ts";
import { InvalidInputError } from "../loop/runtime.ts";
import { AnnotationReader, readNodeBalancerId } from "./annotations/table.ts";
import { type CurrentNodeBalancerShape, parseServiceAnnotations } from "./annotations/parse.ts";
import { type DesiredNodeBalancer, planFingerprint } from "./nodebalancer/desired.ts";
import { planNodeBalancer, type SkippedNode } from "./nodebalancer/plan.ts";
import type { AnnotationWarning, LenientValue, ServiceDefaults, ServiceSpec } from "./annotations/spec.ts";
import type { SubnetResolver } from "./nodebalancer/subnets.ts";
import type { TlsMaterial, TlsSecrets } from "./tls/secrets.ts";
import type { ClusterIdentity } from "./identity.ts";

/** Bad input on a Service (annotations, Secret, ports, Nodes): a Warning, no retry until something changes. */
export class InvalidServiceError extends InvalidInputError {
  override name = "InvalidServiceError";
  constructor(readonly errors: readonly Error[]) {
    super(errors.map((e) => e.message).join("; "));
  }
}

/** What planning reads besides the Service and the Nodes. */
export interface PlannerDeps {
  defaults: ServiceDefaults;
  /** The cluster identity: every planned NodeBalancer carries its tag. */
  identity: Pick<ClusterIdentity, "tag">;
  subnets: Pick<SubnetResolver, "resolve">;
  tls: TlsSecrets;
  /** The last plan per Service (see `plan_memo.ts`); without it every sync plans afresh. */
  plans?: RememberedPlans;
}

/** A Service's spec and the NodeBalancer it should have, plus what is worth a warning. */
export interface PlannedService {
  readonly spec: ServiceSpec;
  /**
   * Every backend included. Reusing a remembered plan (`plan_memo.ts`) plans it again on first read: a
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

/** The last plans, by Service and inputs (`plan_memo.ts`'s `PlanMemo`). */
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

/** The settings that decide what happens to a NodeBalancer when its Service goes. */
export interface ServiceLifecycle {
  readonly preserve: boolean;
  readonly nodeBalancerId: number | null;
  readonly retainReservedIpv4: boolean;
}

/**
 * `preserve`, `nodebalancer-id` and `retain-reserved-ipv4` alone, so a Service with some other bad annotation
 * can still go. A bad `preserve` or `retain-reserved-ipv4` throws (the Go CCM reads false and deletes; here
 * guessing could delete what was to be kept); a `nodebalancer-id` of 0 or not a number is ignored, as the Go
 * CCM ignores it (the NodeBalancer is found by its ownership tag or status).
 */
export function lifecycleOf(svc: V1Service): ServiceLifecycle {
  const reader = new AnnotationReader(svc.metadata?.annotations);
  const lifecycle = {
    preserve: reader.bool("preserve") ?? false,
    nodeBalancerId: readNodeBalancerId(reader),
    retainReservedIpv4: reader.bool("retain-reserved-ipv4") ?? true,
  };
  if (reader.errors.length) throw new InvalidServiceError(reader.errors);
  return lifecycle;
}
