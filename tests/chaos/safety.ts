/**
 * What must never happen, checked at the moment it would: on every write the CCM sends to either emulator
 * (synchronously, as the emulator answers it) and on every Node change the Kubernetes store commits. The floor
 * is the converged state at `baseline()`: no Node deleted, no Node given a shutdown taint while its Linode
 * runs or another Linode's providerID, no ip_range removed, no NodeBalancer deleted, no port of one dropped,
 * no backend removed. A case that removes something on purpose says so first with `release()`.
 */
import type { V1Node } from "@kubernetes/client-node";
import type { ChaosWorld } from "./world.ts";

const SHUTDOWN_TAINT = "node.cloudprovider.kubernetes.io/shutdown";

/** What a case removed on purpose, so the CCM may follow. */
export interface Release {
  /** A Node the case deleted (or whose Linode it deleted): the Node, its ranges and backends may go. */
  node?: string;
  /** A Node the case made ineligible (NotReady, excluded): only its backends may go. */
  backendsOf?: string;
  /** A NodeBalancer whose Service the case deleted. */
  nodeBalancerId?: number;
}

function isWrite(method: string): boolean {
  return method !== "GET" && method !== "WATCH" && method !== "LIST";
}

function taints(node: unknown): string[] {
  return ((node as V1Node | undefined)?.spec?.taints ?? []).map((t) => t.key);
}

/** Records every violation of the floor; `assertClean()` fails naming them. */
export class SafetyMonitor implements Disposable {
  /** Each violation, in the order seen, with the request or change that caused it. */
  readonly violations: string[] = [];
  readonly #world: ChaosWorld;
  /** Linode id → node name → ranges that must stay. */
  #ranges = new Map<number, { node: string; ranges: string[] }>();
  /** NodeBalancer id → port → backend labels (node names) that must stay. */
  #backends = new Map<number, Map<number, Set<string>>>();
  readonly #released = new Set<string>();
  readonly #releasedBackends = new Set<string>();
  readonly #releasedNbs = new Set<number>();
  readonly #unsubscribe: (() => void)[] = [];

  constructor(world: ChaosWorld) {
    this.#world = world;
    this.#unsubscribe.push(
      world.linode.calls.subscribe((c) => {
        if (isWrite(c.method) && c.status < 300) this.#afterLinodeWrite(`${c.method} ${c.path}`);
      }),
      world.kube.calls.subscribe((c) => {
        const m = /^DELETE \/api\/v1\/nodes\/\{name\}$/.test(c.key) ? c.path.split("/").pop() : undefined;
        if (m && c.status < 300 && !this.#released.has(m)) this.#violate(`Node ${m} deleted (${c.key})`);
      }),
      world.kube.store.subscribe((ev) => {
        if (ev.def.key === "nodes" && ev.type === "MODIFIED") this.#afterNodeChange(ev.object, ev.prev);
      }),
    );
  }

  /** Takes the current state as the floor (call once converged). */
  baseline(): void {
    const w = this.#world;
    this.#ranges.clear();
    for (const node of w.nodes()) {
      const name = node.metadata?.name ?? "";
      const id = w.linodeIdOf(name);
      if (id > 0 && !this.#released.has(name)) {
        this.#ranges.set(id, { node: name, ranges: w.linode.world.ipRanges(id) });
      }
    }
    this.#backends.clear();
    for (const nb of w.linode.world.nodeBalancers()) {
      if (this.#releasedNbs.has(nb.id)) continue;
      const ports = new Map<number, Set<string>>();
      for (const config of nb.configs) ports.set(config.port, new Set(config.nodes.map((n) => n.label)));
      this.#backends.set(nb.id, ports);
    }
  }

  /** Allows the CCM to remove what the case removed. */
  release(what: Release): void {
    if (what.node !== undefined) this.#released.add(what.node);
    if (what.backendsOf !== undefined) this.#releasedBackends.add(what.backendsOf);
    if (what.nodeBalancerId !== undefined) this.#releasedNbs.add(what.nodeBalancerId);
  }

  /** Checks the whole floor now (it is also checked on every write). */
  check(why = "check"): void {
    this.#checkRanges(why);
    this.#checkNodeBalancers(why);
  }

  /** Fails with every violation seen so far. */
  assertClean(): void {
    this.check("final check");
    if (this.violations.length > 0) {
      throw new Error(
        `Safety violated ${this.violations.length} times:\n${this.violations.slice(0, 20).join("\n")}`,
      );
    }
  }

  [Symbol.dispose](): void {
    for (const off of this.#unsubscribe) off();
  }

  #violate(message: string): void {
    if (this.violations.length < 1000) this.violations.push(message);
  }

  #afterLinodeWrite(request: string): void {
    const m = /^DELETE \/v4(?:beta)?\/nodebalancers\/(\d+)$/.exec(request);
    if (m && !this.#releasedNbs.has(Number(m[1]))) this.#violate(`NodeBalancer ${m[1]} deleted`);
    this.check(request);
  }

  #checkRanges(why: string): void {
    for (const [id, floor] of this.#ranges) {
      if (this.#released.has(floor.node)) continue;
      const now = this.#world.linode.world.ipRanges(id);
      const lost = floor.ranges.filter((r) => !now.includes(r));
      if (lost.length > 0) {
        this.#violate(`${why}: linode ${id} (${floor.node}) lost ranges ${lost.join(", ")}`);
      }
    }
  }

  #checkNodeBalancers(why: string): void {
    const live = new Map(this.#world.linode.world.nodeBalancers().map((nb) => [nb.id, nb]));
    for (const [id, ports] of this.#backends) {
      if (this.#releasedNbs.has(id)) continue;
      const nb = live.get(id);
      if (!nb) {
        this.#violate(`${why}: NodeBalancer ${id} is gone`);
        continue;
      }
      for (const [port, labels] of ports) {
        const config = nb.configs.find((c) => c.port === port);
        const have = new Set(config?.nodes.map((n) => n.label) ?? []);
        const lost = [...labels].filter((l) =>
          !have.has(l) && !this.#released.has(l) && !this.#releasedBackends.has(l)
        );
        if (!config) this.#violate(`${why}: NodeBalancer ${id} lost port ${port}`);
        else if (lost.length > 0) {
          this.#violate(`${why}: NodeBalancer ${id}:${port} lost backends ${lost.join(", ")}`);
        }
      }
    }
  }

  #afterNodeChange(object: unknown, prev: unknown): void {
    const node = object as V1Node;
    const name = node.metadata?.name ?? "";
    const id = this.#world.linodeIdOf(name);
    const provider = node.spec?.providerID;
    if (
      provider && provider !== (prev as V1Node | undefined)?.spec?.providerID && provider !== `linode://${id}`
    ) {
      this.#violate(`Node ${name} got providerID ${provider}, its Linode is ${id}`);
    }
    const tainted = taints(object).includes(SHUTDOWN_TAINT) && !taints(prev).includes(SHUTDOWN_TAINT);
    const status = this.#world.linode.world.instance(id)?.status;
    if (tainted && status === "running") {
      this.#violate(`Node ${name} tainted shut down while its Linode runs`);
    }
  }
}
