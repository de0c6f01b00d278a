/**
 * Listings that fail half-way: 510 other Linodes in the VPC push the cluster's onto the second page of every
 * listing, then page 2 answers 503, or page 1 comes back short claiming to be the last. A listing that lost
 * the cluster's Linodes must look like "unknown", never like "gone": no Node deleted or tainted, no range
 * removed (one foreign range on a Node's interface included), no backend dropped. Only a Linode that is
 * really deleted takes its Node with it, once the API confirms.
 */
import assert from "node:assert/strict";
import { setNodeReady } from "../../sim/kubelet.ts";
import { SafetyMonitor } from "./safety.ts";
import { scaled } from "./scale.ts";
import { type ChaosWorld, startChaosWorld } from "./world.ts";

const LISTINGS = ["/linode/instances", "/vpcs/*/ips"];
/** A range the CCM did not make, outside the cluster CIDR: no plan may drop it. */
const FOREIGN_RANGE = "172.16.5.0/24";

async function pagedWorld(): Promise<ChaosWorld> {
  const w = await startChaosWorld({ nodes: 4, fillers: 510 });
  const id = w.linodeIdOf("node-1");
  w.linode.world.setIpRanges(id, [FOREIGN_RANGE]);
  await w.start();
  await w.converge();
  assert.ok(w.linode.world.ipRanges(id).includes(FOREIGN_RANGE));
  return w;
}

Deno.test("runCcm() while page 2 of every listing fails destroys nothing; a deleted Linode's Node goes once confirmed", async () => {
  await using w = await pagedWorld();
  using safety = new SafetyMonitor(w);
  safety.baseline();
  const faults = LISTINGS.map((route) => w.linode.faults.error(503, { method: "GET", route, page: 2 }));
  w.linode.world.deleteInstance(w.linodeIdOf("node-3"));
  setNodeReady(w.kube, "node-3", false);
  setNodeReady(w.kube, "node-2", false);
  safety.release({ node: "node-3" });
  safety.release({ backendsOf: "node-2" });
  const late = w.addNode("late-1");
  await w.tick(scaled(180_000, 900_000), 5_000);
  assert.ok(w.linode.calls.log.some((c) => c.fault === "error"), "page 2 failed");
  // Not from half a listing: a Node newer than the listings is read on its own (its label, one page, and its
  // interfaces), a complete answer that no failing page 2 touches.
  assert.equal(w.node("late-1")?.spec?.providerID, `linode://${late}`, "initialised from its targeted read");
  safety.check();

  for (const id of faults) w.linode.faults.remove(id);
  setNodeReady(w.kube, "node-2", true);
  await w.converge();
  assert.equal(w.node("node-3"), undefined, "the Node of the deleted Linode was deleted");
  assert.ok(w.node("node-2"), "the NotReady Node whose Linode exists stays");
  safety.assertClean();
});

Deno.test("runCcm() given a first page that claims to be the last destroys nothing", async () => {
  await using w = await pagedWorld();
  using safety = new SafetyMonitor(w);
  safety.baseline();
  const listings = w.calls("GET /v4/vpcs/{id}/ips") + w.calls("GET /v4/linode/instances");
  const faults = LISTINGS.map((route) => w.linode.faults.truncatePage({ method: "GET", route, page: 1 }));
  setNodeReady(w.kube, "node-2", false);
  safety.release({ backendsOf: "node-2" });
  w.addNode("late-1");
  await w.tick(scaled(180_000, 900_000), 5_000);
  const after = w.calls("GET /v4/vpcs/{id}/ips") + w.calls("GET /v4/linode/instances");
  assert.ok(after > listings, "the CCM listed (short pages) meanwhile");
  assert.equal(w.node("late-1")?.spec?.providerID, undefined, "not initialised from a short listing");
  assert.ok(w.node("node-2"), "a Node missing from a short listing stays");

  for (const id of faults) w.linode.faults.remove(id);
  setNodeReady(w.kube, "node-2", true);
  await w.converge();
  safety.assertClean();
});
