/**
 * The last plan of each Service and what it was planned from, so that a sync whose inputs are all unchanged
 * (the 5-minute resync of a settled Service, most syncs) reuses it instead of planning every backend again:
 * at 5,000 Nodes and 50 Services a resync planned 250,000 backends and serialised each plan to fingerprint it.
 * Only planning is skipped: the NodeBalancer is still found and compared as before, so drift is still seen.
 * What is kept is the plan without its backends (spec, warnings, fingerprint): 50 plans of 5,000 backends
 * would hold ~35 MiB; a sync that needs the backends (a NodeBalancer to compare or create) plans them again.
 *
 * The Nodes are tracked by a version the controller moves on every Node change that can move a backend (the
 * same test that enqueues Services, `nodeBackendFields`); the other inputs are compared by value.
 */
import type { V1Service } from "@kubernetes/client-node";
import type { PlanInputs, PlannedService, PlanSummary, RememberedPlans } from "./planner.ts";
import type { TlsMaterial } from "./tls/secrets.ts";

/**
 * The Service fields a sync depends on; other changes enqueue nothing and leave a plan as it was. The
 * ingress is among them so that a lost or edited status is restored at once.
 */
export function syncFields(svc: V1Service): string {
  const m = svc.metadata ?? {};
  const ingress = svc.status?.loadBalancer?.ingress;
  return JSON.stringify([
    m.uid,
    m.annotations,
    m.finalizers,
    m.deletionTimestamp !== undefined,
    svc.spec,
    ingress,
  ]);
}

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
