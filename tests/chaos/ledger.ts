/**
 * Who wrote what, and when, across both emulators, judged against the leader Lease. Every CCM process names
 * its Lease identity in its `User-Agent` (`wiring/parts.ts`), so each write either emulator receives is
 * attributed to a replica; the Lease's own commits give each holder's term. The rule: every write of a
 * replica arrives after its term began and is answered before the next holder's term began, so the writes of
 * two holders never interleave. Lease requests themselves are the election, not writes of a term.
 */
import type { KubeSim } from "../../sim/kube/server.ts";
import type { LinodeSim } from "../../sim/linode/server.ts";

/** One write request an emulator answered, with its sender's identity. */
export interface AttributedWrite {
  readonly api: "linode" | "kube";
  readonly identity: string;
  readonly request: string;
  readonly status: number;
  /** `performance.now()` at arrival and at answer. */
  readonly receivedAt: number;
  readonly answeredAt: number;
}

/** One holder's time with the Lease: from the commit that named it to the commit that named another. */
export interface LeaseTerm {
  readonly identity: string;
  readonly from: number;
  to: number;
}

/** The identity in `linode-cloud-controller-manager/<version> (<identity>)`; "" for any other agent. */
export function identityOf(userAgent: string): string {
  return /^linode-cloud-controller-manager\/\S+ \((.+)\)$/.exec(userAgent)?.[1] ?? "";
}

function isKubeWrite(key: string): boolean {
  return !/^(GET|LIST|WATCH) /.test(key) && !/\/leases(\/|$)/.test(key);
}

/** Records attributed writes and Lease terms from the moment it is built. */
export class WriteLedger implements Disposable {
  readonly writes: AttributedWrite[] = [];
  readonly terms: LeaseTerm[] = [];
  readonly #off: (() => void)[];

  constructor(
    linode: LinodeSim,
    kube: KubeSim,
    lease = { namespace: "kube-system", name: "cloud-controller-manager" },
  ) {
    type Answered = { userAgent: string; status: number; receivedAt: number; answeredAt?: number };
    const add = (api: AttributedWrite["api"], c: Answered, request: string) =>
      this.writes.push({
        api,
        identity: identityOf(c.userAgent),
        request,
        status: c.status,
        receivedAt: c.receivedAt,
        answeredAt: c.answeredAt ?? performance.now(),
      });
    this.#off = [
      linode.calls.subscribe((c) => {
        if (c.method !== "GET") add("linode", c, `${c.method} ${c.path}`);
      }),
      kube.calls.subscribe((c) => {
        if (isKubeWrite(c.key)) add("kube", c, `${c.key.split(" ")[0]} ${c.path}`);
      }),
      kube.store.subscribe((ev) => {
        const meta = ev.object.metadata;
        if (ev.def.kind !== "Lease" || meta.name !== lease.name || meta.namespace !== lease.namespace) return;
        const spec = (ev.object as { spec?: { holderIdentity?: unknown } }).spec;
        this.#holder(typeof spec?.holderIdentity === "string" ? spec.holderIdentity : "");
      }),
    ];
  }

  /** The writes of one identity. */
  by(identity: string): AttributedWrite[] {
    return this.writes.filter((w) => w.identity === identity);
  }

  /** Each write outside its sender's terms, described; empty when no two holders' writes interleave. */
  interleavings(): string[] {
    return this.writes.flatMap((w) => {
      const inTerm = this.terms.some((t) =>
        t.identity === w.identity && t.from <= w.receivedAt && w.answeredAt <= t.to
      );
      if (inTerm) return [];
      const holder = this.terms.findLast((t) => t.from <= w.answeredAt)?.identity;
      const sender = w.identity || "an unnamed client";
      return [`${w.api} ${w.request} (${w.status}) by ${sender} while the Lease named ${holder || "nobody"}`];
    });
  }

  [Symbol.dispose](): void {
    for (const off of this.#off) off();
  }

  #holder(identity: string): void {
    const now = performance.now();
    const current = this.terms.at(-1);
    if (current?.identity === identity) return;
    if (current) current.to = now;
    this.terms.push({ identity, from: now, to: Infinity });
  }
}
