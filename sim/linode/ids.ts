/** Id sequences per object kind, with realistic, disjoint starting points. */

/** The object kinds that get ids. */
export type IdKind =
  | "linode"
  | "config"
  | "interface"
  | "vpc"
  | "subnet"
  | "nodebalancer"
  | "nbConfig"
  | "nbNode"
  | "nbVpcConfig"
  | "firewall"
  | "firewallDevice";

const STARTS: Record<IdKind, number> = {
  linode: 51_000_001,
  config: 71_000_001,
  interface: 1_200_001,
  vpc: 5_001,
  subnet: 9_001,
  nodebalancer: 300_001,
  nbConfig: 600_001,
  nbNode: 900_000_001,
  nbVpcConfig: 14_001,
  firewall: 40_001,
  firewallDevice: 80_001,
};

/** Hands out increasing ids; ids are never reused, even after a delete. */
export class Ids {
  #next: Record<IdKind, number> = { ...STARTS };

  /** The next id of a kind. */
  next(kind: IdKind): number {
    return this.#next[kind]++;
  }

  /** Restarts every sequence (world reset). */
  reset(): void {
    this.#next = { ...STARTS };
  }
}
