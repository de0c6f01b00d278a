/**
 * A Service's desired NodeBalancer, with the reading the pure planner leaves to its caller: VPC subnet
 * labels resolved to IDs, TLS Secrets read (from the informer) and fingerprinted. Also the few settings the
 * deletion path needs, readable when other annotations are invalid.
 */
import type { V1Node, V1Service } from "@kubernetes/client-node";
import { objectKey } from "../../kube/keys.ts";
import { InvalidInputError } from "../loop/run_queue.ts";
import { AnnotationReader, type AnnotationWarning, type LenientValue } from "./annotations/values.ts";
import { readNodeBalancerId } from "./annotations/lenient.ts";
import { type CurrentNodeBalancerShape, parseServiceAnnotations } from "./annotations/parse.ts";
import type { SkippedNode } from "./nodebalancer/backends.ts";
import type { ServiceDefaults } from "./annotations/defaults.ts";
import type { DesiredNodeBalancer } from "./nodebalancer/desired.ts";
import { planNodeBalancer } from "./nodebalancer/plan.ts";
import type { ServiceSpec } from "./annotations/spec.ts";
import type { SubnetResolver } from "./nodebalancer/subnets.ts";
import type { TlsSecrets } from "./tls/secrets.ts";
import type { ClusterIdentity } from "./identity.ts";
import type { PlanInputs, PlanMemo } from "./plan_memo.ts";

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
  plans?: PlanMemo<PlannedService>;
}

/** A Service's spec and the NodeBalancer it should have, plus what is worth a warning. */
export interface PlannedService {
  readonly spec: ServiceSpec;
  readonly desired: DesiredNodeBalancer;
  readonly skippedNodes: readonly SkippedNode[];
  readonly warnings: readonly AnnotationWarning[];
  /** Values read leniently (as the Go CCM reads them), each with what was used instead. */
  readonly lenient: readonly LenientValue[];
  /** TLS Secrets whose `tls.crt` holds no readable certificate, named `ns/name`. */
  readonly unreadableCertificates: readonly string[];
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
  if (remembered) return remembered;
  const planned = planFrom(svc, spec, nodes, inputs, deps.defaults);
  deps.plans?.set(key, nodesVersion, inputs, planned);
  return planned;
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
