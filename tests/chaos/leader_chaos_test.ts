/**
 * Two CCM processes (the real `main.ts`, production permissions) with every controller on, and a leader that
 * is SIGKILLed, SIGSTOPped past its lease, or cut off from the apiserver while it still reaches Linode. The
 * emulators attribute every write to the replica that sent it (its Lease identity is in its User-Agent):
 * both replicas wrote, no write of one holder falls inside another's term, and the survivor converges.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startProxy } from "../../sim/proxy.ts";
import {
  type ElectionWorld,
  identityOf,
  startElectionWorld,
  waitForCampaigning,
  waitForLeader,
} from "../leader_fixture.ts";
import { type CcmProcess, waitFor } from "../process.ts";
import { convergenceProblems } from "./goal.ts";
import { WriteLedger } from "./ledger.ts";
import { report } from "./scale.ts";
import { chaosFlags } from "./world.ts";

/** Waits (real time, bounded) until the emulators show the goal state. */
async function converged(ew: ElectionWorld, what: string): Promise<void> {
  try {
    await waitFor(() => convergenceProblems(ew.world).length === 0, { what, timeoutMs: 30_000 });
  } catch (e) {
    throw new Error(`${what}: ${convergenceProblems(ew.world).join("; ")}`, { cause: e });
  }
}

/** A leader `a` and a campaigning standby `b`, the cluster converged by `a`; `kubeconfig` routes `a`. */
async function leaderAndStandby(ew: ElectionWorld, kubeconfig?: string): Promise<[CcmProcess, CcmProcess]> {
  const flags = chaosFlags(ew.world);
  const a = ew.spawn("a", { flags, kubeconfig });
  assert.equal(await waitForLeader(ew, [a]), a);
  const b = ew.spawn("b", { flags });
  await waitForCampaigning(ew, [b]);
  await converged(ew, "the first leader's convergence");
  return [a, b];
}

/** Both replicas wrote, and never inside each other's terms. */
function assertNoInterleaving(ledger: WriteLedger, a: CcmProcess, b: CcmProcess): void {
  const idA = identityOf(a) ?? "";
  const idB = identityOf(b) ?? "";
  assert.ok(ledger.by(idA).length > 0, "the first leader wrote");
  assert.ok(ledger.by(idB).some((w) => w.api === "linode"), "the second leader wrote to Linode");
  assert.deepEqual(ledger.terms.map((t) => t.identity).filter((id) => id !== ""), [idA, idB]);
  assert.deepEqual(ledger.interleavings(), []);
  const count = (id: string, api: string) => ledger.by(id).filter((w) => w.api === api).length;
  report("leader", {
    first: { linode: count(idA, "linode"), kube: count(idA, "kube") },
    second: { linode: count(idB, "linode"), kube: count(idB, "kube") },
    terms: ledger.terms.length,
  });
}

async function takeOver(ew: ElectionWorld, b: CcmProcess, node: string): Promise<void> {
  assert.equal(await waitForLeader(ew, [b]), b);
  ew.world.addNode(node);
  await converged(ew, `the new leader's convergence with ${node}`);
}

Deno.test("main() leader SIGKILLed: the standby takes over and converges; their writes never interleave", async () => {
  await using ew = await startElectionWorld({ nodes: 2, services: 1 });
  using ledger = new WriteLedger(ew.world.linode, ew.world.kube);
  const [a, b] = await leaderAndStandby(ew);
  await using _a = a;
  await using _b = b;
  a.kill("SIGKILL");
  await a.exited();
  await takeOver(ew, b, "after-kill");
  assertNoInterleaving(ledger, a, b);
});

Deno.test("main() leader SIGSTOPped past its lease: it writes nothing when resumed and exits 1", async () => {
  await using ew = await startElectionWorld({ nodes: 2, services: 1 });
  using ledger = new WriteLedger(ew.world.linode, ew.world.kube);
  const [a, b] = await leaderAndStandby(ew);
  await using _a = a;
  await using _b = b;
  a.kill("SIGSTOP");
  await takeOver(ew, b, "while-stopped");
  const resumedAt = performance.now();
  a.kill("SIGCONT");
  assert.equal((await a.exited(10_000)).code, 1, a.output);
  assert.ok(a.logs(/^(leadership lost|lost leadership)/).length > 0, a.output);
  assert.deepEqual(ledger.by(identityOf(a) ?? "").filter((w) => w.receivedAt >= resumedAt), []);
  assertNoInterleaving(ledger, a, b);
});

Deno.test("main() leader cut off from the apiserver only, retrying Linode writes: its retries stop at the fence", async () => {
  await using ew = await startElectionWorld({ nodes: 2, services: 1 });
  using ledger = new WriteLedger(ew.world.linode, ew.world.kube);
  const { world } = ew;
  await using proxy = startProxy({ port: Number(new URL(world.kube.url).port) });
  const viaProxy = join(world.kubeconfigPath, "..", "kubeconfig-via-proxy");
  const text = world.kube.kubeconfig().replace(world.kube.url, `https://127.0.0.1:${proxy.port}`);
  await Deno.writeTextFile(viaProxy, text, { mode: 0o600 });
  const [a, b] = await leaderAndStandby(ew, viaProxy);
  await using _a = a;
  await using _b = b;
  const idA = identityOf(a) ?? "";
  // Linode refuses A's range writes, so A keeps retrying one while it loses the apiserver.
  world.linode.faults.error(503, { method: "PUT", agent: idA });
  world.addNode("cut-1");
  const refused = () => ledger.by(idA).filter((w) => w.api === "linode" && w.status === 503).length;
  await waitFor(() => refused() > 0, { what: "A retrying a refused route write" });
  await proxy.cut({ mode: "blackhole" });
  assert.equal((await a.exited(10_000)).code, 1, a.output);
  await takeOver(ew, b, "after-cut");
  assertNoInterleaving(ledger, a, b);
});
