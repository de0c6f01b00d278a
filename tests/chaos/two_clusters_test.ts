/**
 * Two clusters sharing one Linode account (one fake Linode, two Kubernetes emulators, two CCMs on one fake
 * clock), both with `--cleanup-orphaned-nodebalancers`, with the same cluster name and with different ones:
 * neither ever writes to the other's NodeBalancers, through two orphan checks, a `nodebalancer-id` pointed
 * at the other's NodeBalancer, and the deletion of that Service. Leftovers tagged before cluster identities
 * existed (ambiguous between two clusters named alike) are kept too.
 */
import assert from "node:assert/strict";
import { annotationKey } from "../../controllers/service/annotations/table.ts";
import { ownershipTag } from "../../controllers/service/ownership.ts";
import { FakeClock } from "../../common/clock.ts";
import { type ServiceWorld, startSecondCluster, startServiceWorld, until } from "../service_fixture.ts";

const CLEANUP = "--cleanup-orphaned-nodebalancers";
/** Two orphan checks (1 h apart) and a little more. */
const TWO_CHECKS_MS = 2 * 3_600_000 + 120_000;
const NB_WRITE = /^(PUT|DELETE|POST) \/v4\/nodebalancers\/(\d+)/;

/** NodeBalancer ids each CCM process wrote to, by its User-Agent (its Lease identity). */
function writersOf(world: ServiceWorld): Map<string, Set<number>> {
  const out = new Map<string, Set<number>>();
  for (const c of world.linode.calls.log) {
    const m = NB_WRITE.exec(`${c.method} ${c.path}`);
    if (!m || c.userAgent === "") continue;
    const ids = out.get(c.userAgent) ?? new Set<number>();
    ids.add(Number(m[2]));
    out.set(c.userAgent, ids);
  }
  return out;
}

for (const names of [["kubernetes", "kubernetes"], ["alpha", "beta"]] as const) {
  Deno.test(`two clusters named ${names.join(" and ")} in one Linode account never touch each other's NodeBalancers`, async () => {
    const clock = new FakeClock();
    await using a = await startServiceWorld({ clock, flags: [CLEANUP, `--cluster-name=${names[0]}`] });
    await using b = await startSecondCluster(a, clock, [CLEANUP, `--cluster-name=${names[1]}`]);
    a.addNode("a-node-1", "192.168.128.11");
    b.addNode("b-node-1", "192.168.128.21");
    await a.start();
    await b.start();
    for (const svc of ["web", "api", "db"]) {
      a.addService(svc);
      b.addService(svc);
    }
    const served = (w: ServiceWorld) => ["web", "api", "db"].every((s) => w.nodeBalancerOf(s) !== undefined);
    await until(a, () => served(a) && served(b), "every Service of both clusters served");
    const idsOf = (w: ServiceWorld) => new Set(["web", "api", "db"].map((s) => w.nodeBalancerOf(s)?.id ?? 0));
    const ofA = idsOf(a);
    const ofB = idsOf(b);
    assert.equal(new Set([...ofA, ...ofB]).size, 6, "six NodeBalancers");

    // A leftover from before cluster identities, of a Service gone from a cluster with A's name.
    const legacy = await a.userCall<{ id: number }>("POST", "/nodebalancers", {
      label: "legacy-leftover",
      region: "us-east",
      configs: [],
      tags: [names[0], ownershipTag(names[0], "5e1f0000-dead-4bee-8f00-0000000000aa")],
    });
    // B points a Service at one of A's NodeBalancers.
    const target = [...ofA][0] ?? 0;
    const before = a.nodeBalancers().find((nb) => nb.id === target);
    b.addService("hijack", { annotations: { [annotationKey("nodebalancer-id")]: String(target) } });
    await until(b, () => b.events("SyncLoadBalancerFailed", "hijack").length > 0, "B's Warning for hijack");
    b.kube.store.delete("services", "hijack", "default");
    await until(b, () => b.service("hijack") === undefined, "hijack deleted, finalizer released");

    await a.tick(TWO_CHECKS_MS, 60_000);
    await b.settle();
    const left = new Set(a.nodeBalancers().map((nb) => nb.id));
    for (const id of [...ofA, ...ofB, legacy.id]) assert.ok(left.has(id), `NodeBalancer ${id} still there`);
    assert.deepEqual(a.nodeBalancers().find((nb) => nb.id === target), before, "A's NodeBalancer as it was");
    const writers = writersOf(a);
    for (const [world, own] of [[a, ofA], [b, ofB]] as const) {
      const agent = [...writers.keys()].find((ua) => ua.includes(world.ccm.identity)) ?? "";
      const foreign = [...writers.get(agent) ?? []].filter((id) => !own.has(id));
      assert.deepEqual(foreign, [], `${world === a ? "A" : "B"} wrote only to its own NodeBalancers`);
    }
    assert.equal(a.linode.calls.count("DELETE /v4/nodebalancers/{id}"), 0, "nothing deleted");
  });
}
