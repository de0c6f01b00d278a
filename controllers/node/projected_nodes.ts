/**
 * The Nodes as they would be once the `cloud-node` updates (and node IPAM's pod CIDRs) held in dry run were
 * written, for the controllers that decide from Nodes (route, service). So the plan shows what an initialisation leads to (the new Node's
 * route, its backends on every NodeBalancer), as a normal run would do it once the Node is initialised.
 * A held update is kept as the plan that made it and applied to the newest copy of the Node on every read,
 * so a kubelet heartbeat neither drops nor repeats it.
 */
import type { V1Node } from "@kubernetes/client-node";
import { type NodeUpdatePlan, UNINITIALIZED_TAINT_KEY, withoutTaint } from "./addresses.ts";

/** A change handler as informers call it. */
type Handler = (kind: "add" | "update" | "delete", node: V1Node, old?: V1Node) => void;

/** Nodes as an informer holds them. `Informer<V1Node>` implements it. */
export interface NodeSource {
  list(): readonly V1Node[];
  get(name: string): V1Node | undefined;
  onChange(handler: Handler): () => void;
}

/** `node` with `plan` applied, as the apiserver would hold it after the writes. Pure. */
export function projectNode(node: V1Node, plan: NodeUpdatePlan): V1Node {
  const out = structuredClone(node);
  out.metadata ??= {};
  out.spec ??= {};
  if (plan.addresses) out.status = { ...out.status, addresses: plan.addresses.map((a) => ({ ...a })) };
  const patch = plan.patch;
  if (patch?.metadata?.labels) out.metadata.labels = { ...out.metadata.labels, ...patch.metadata.labels };
  if (patch?.metadata?.annotations) {
    out.metadata.annotations = { ...out.metadata.annotations, ...patch.metadata.annotations };
  }
  if (patch?.spec?.providerID) out.spec.providerID = patch.spec.providerID;
  if (patch?.spec?.taints) out.spec.taints = withoutTaint(node, UNINITIALIZED_TAINT_KEY);
  return out;
}

/** The Nodes of `source` with the held `cloud-node` updates applied. */
export class ProjectedNodes implements NodeSource {
  readonly #source: NodeSource;
  readonly #plans = new Map<string, NodeUpdatePlan>();
  /** Pod CIDRs node IPAM holds for Nodes without any (dry run). */
  readonly #podCidrs = new Map<string, readonly string[]>();
  readonly #handlers = new Set<Handler>();

  constructor(source: NodeSource) {
    this.#source = source;
    source.onChange((kind, node, old) => {
      const name = node.metadata?.name ?? "";
      if (kind === "delete") {
        this.#plans.delete(name);
        this.#podCidrs.delete(name);
      }
      const view = (n: V1Node | undefined) => n && kind !== "delete" ? this.#apply(n) : n;
      this.#emit(kind, view(node) ?? node, view(old));
    });
  }

  /** Sets the update held for a Node (undefined: none); readers see the change as an update event. */
  project(name: string, plan: NodeUpdatePlan | undefined): void {
    const before = this.#plans.get(name);
    if (JSON.stringify(before) === JSON.stringify(plan)) return;
    const node = this.#source.get(name);
    const old = node && this.#apply(node);
    if (plan) this.#plans.set(name, plan);
    else this.#plans.delete(name);
    if (node && old) this.#emit("update", this.#apply(node), old);
  }

  /** Sets the pod CIDRs node IPAM holds for a Node (undefined: none); readers see an update event. */
  projectPodCidrs(name: string, cidrs: readonly string[] | undefined): void {
    if (JSON.stringify(this.#podCidrs.get(name)) === JSON.stringify(cidrs)) return;
    const node = this.#source.get(name);
    const old = node && this.#apply(node);
    if (cidrs) this.#podCidrs.set(name, [...cidrs]);
    else this.#podCidrs.delete(name);
    if (node && old) this.#emit("update", this.#apply(node), old);
  }

  list(): readonly V1Node[] {
    return this.#source.list().map((n) => this.#apply(n));
  }

  get(name: string): V1Node | undefined {
    const node = this.#source.get(name);
    return node && this.#apply(node);
  }

  onChange(handler: Handler): () => void {
    this.#handlers.add(handler);
    return () => this.#handlers.delete(handler);
  }

  #apply(node: V1Node): V1Node {
    const name = node.metadata?.name ?? "";
    const plan = this.#plans.get(name);
    const projected = plan ? projectNode(node, plan) : node;
    const cidrs = this.#podCidrs.get(name);
    if (!cidrs?.length || projected.spec?.podCIDRs?.length || projected.spec?.podCIDR) return projected;
    const out = projected === node ? structuredClone(node) : projected;
    out.spec = { ...out.spec, podCIDR: cidrs[0], podCIDRs: [...cidrs] };
    return out;
  }

  #emit(kind: "add" | "update" | "delete", node: V1Node, old?: V1Node): void {
    for (const handler of this.#handlers) handler(kind, node, old);
  }
}
