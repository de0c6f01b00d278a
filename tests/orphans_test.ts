import assert from "node:assert/strict";
import { ownershipTag } from "../controllers/service/ownership.ts";
import { clusterIdTagOf } from "./go_ccm_fixture.ts";
import { annotationKey } from "../controllers/service/annotations/table.ts";
import { fetchPlan, kubeWrites, linodeWrites, servingFlags, startShadowWorld } from "./shadow_fixture.ts";
import { startServiceWorld, until } from "./service_fixture.ts";

/** A Service UID no Service in the world has: its Service was deleted while no CCM ran. */
const GONE_UID = "5e1f0000-dead-4bee-8f00-0000000000aa";
const CLEANUP = "--cleanup-orphaned-nodebalancers";
/** The orphan check's period (`DEFAULT_ORPHAN_CHECK_MS`). */
const CHECK_MS = 3_600_000;

Deno.test("runCcm() lists the Go CCM's orphaned NodeBalancer on /plan and never deletes it: it has no ownership tag", async () => {
  await using w = await startShadowWorld({ orphanedNodeBalancer: true });
  const orphanId = w.go.drift.orphanedNodeBalancerId ?? 0;
  await using ccm = await w.ccm([CLEANUP, ...servingFlags()]);
  await ccm.tick(2 * CHECK_MS + 60_000, 60_000);
  assert.ok(w.go.linode.world.nodeBalancer(orphanId), "still there");
  const plan = await fetchPlan(ccm);
  assert.deepEqual(plan.orphanedNodeBalancers?.map((o) => [o.id, o.owned, o.fate]), [
    [orphanId, false, "kept: no ownership tag of this cluster"],
  ]);
  assert.equal(ccm.metrics.gauge("ccm_orphaned_nodebalancers", "").get(), 1);
  assert.equal(w.go.linode.calls.count("DELETE /v4/nodebalancers/{id}"), 0);
});

Deno.test("runCcm() --cleanup-orphaned-nodebalancers deletes an orphan with this cluster's ownership tag on its second sighting, nothing else", async () => {
  await using w = await startShadowWorld({ orphanedNodeBalancer: true });
  const tag = ownershipTag(w.go.clusterName, GONE_UID);
  const ours = w.go.linode.world.addNodeBalancer({
    region: w.go.region,
    label: "ccm-00000000aa",
    tags: ["kubernetes", tag, clusterIdTagOf(w.go.kube)],
  });
  const web = w.go.services[0];
  assert.ok(web);
  const before = w.go.linode.world.nodeBalancers().length;
  await using ccm = await w.ccm([CLEANUP]);
  assert.ok(w.go.linode.world.nodeBalancer(ours.id), "not on the first sighting");
  const kept = ccm.ccm.orphanCheck.list().find((o) => o.id === ours.id);
  assert.equal(kept?.fate, "kept: waiting for a second check");
  await ccm.advanceUntil(() => !w.go.linode.world.nodeBalancer(ours.id), {
    what: "the owned orphan to be deleted",
    stepMs: 60_000,
  });
  assert.ok(ccm.clock.monotonic() >= CHECK_MS, "one check later");
  assert.equal(w.go.linode.world.nodeBalancers().length, before - 1, "only that one");
  assert.ok(w.go.linode.world.nodeBalancer(web.nodeBalancerId));
  assert.ok(
    w.go.linode.world.nodeBalancer(w.go.drift.orphanedNodeBalancerId ?? 0),
    "the Go CCM's orphan stays",
  );
  assert.deepEqual(ccm.ccm.orphanCheck.list().map((o) => o.id), [w.go.drift.orphanedNodeBalancerId]);
});

Deno.test("runCcm() --cleanup-orphaned-nodebalancers deletes nothing while the NodeBalancer listing fails", async () => {
  await using w = await startShadowWorld({});
  const ours = w.go.linode.world.addNodeBalancer({
    region: w.go.region,
    label: "ccm-00000000aa",
    tags: ["kubernetes", ownershipTag(w.go.clusterName, GONE_UID), clusterIdTagOf(w.go.kube)],
  });
  await using ccm = await w.ccm([CLEANUP]);
  const fault = w.go.linode.faults.error(500, { method: "GET", route: "/nodebalancers" });
  await ccm.tick(CHECK_MS + 30_000, 60_000);
  await ccm.tick(CHECK_MS, 60_000);
  assert.ok(w.go.linode.world.nodeBalancer(ours.id), "a stale listing is doubt: nothing deleted");
  assert.equal(w.go.linode.calls.count("DELETE /v4/nodebalancers/{id}"), 0);
  w.go.linode.faults.remove(fault);
  await ccm.advanceUntil(() => !w.go.linode.world.nodeBalancer(ours.id), {
    what: "the orphan to be deleted once the listing works",
    stepMs: 60_000,
  });
});

Deno.test("runCcm() --dry-run --cleanup-orphaned-nodebalancers plans the deletion and deletes nothing", async () => {
  await using w = await startShadowWorld({});
  const ours = w.go.linode.world.addNodeBalancer({
    region: w.go.region,
    label: "ccm-00000000aa",
    tags: ["kubernetes", ownershipTag(w.go.clusterName, GONE_UID), clusterIdTagOf(w.go.kube)],
  });
  await using ccm = await w.ccm(["--dry-run", CLEANUP, ...servingFlags()]);
  await ccm.tick(CHECK_MS + 30_000, 60_000);
  const plan = await fetchPlan(ccm);
  const held = plan.pending.filter((a) => a.action === "delete-orphaned-nodebalancer");
  assert.deepEqual(held.map((a) => a.object), [`nodebalancer ${ours.id}`]);
  assert.deepEqual(plan.orphanedNodeBalancers?.map((o) => [o.id, o.fate]), [[ours.id, "deleting"]]);
  assert.ok(w.go.linode.world.nodeBalancer(ours.id));
  assert.deepEqual([...linodeWrites(w.go), ...kubeWrites(w.go)], []);
});

Deno.test("runCcm() --cleanup-orphaned-nodebalancers never deletes a NodeBalancer kept by preserve, across two checks", async () => {
  await using w = await startServiceWorld({ flags: [CLEANUP] });
  w.addNode("node-1", "192.168.140.11");
  await w.start();
  w.addService("web", { annotations: { [annotationKey("preserve")]: "true" } });
  await until(w, () => w.nodeBalancerOf("web") !== undefined, "a NodeBalancer");
  const nb = w.nodeBalancerOf("web");
  assert.ok(nb);
  const uid = w.service("web")?.metadata?.uid ?? "";
  w.kube.store.delete("services", "web", "default");
  await until(w, () => w.service("web") === undefined, "the Service gone");
  const kept = w.linode.world.nodeBalancer(nb.id);
  assert.ok(kept, "preserved");
  const tags = kept.tags;
  assert.ok(!tags.includes(ownershipTag(w.config.clusterName, uid)), "this Service's ownership tag is off");
  assert.ok(!tags.some((t) => t.startsWith("ccm-cluster:")), "and this cluster's identity tag");
  assert.ok(tags.includes(w.config.clusterName), "the cluster name the Go CCM tags with stays");
  // Two orphan checks an hour apart, and a minute more: the second sighting would delete an owned orphan.
  await w.tick(2 * CHECK_MS + 60_000, 60_000);
  assert.ok(w.linode.world.nodeBalancer(nb.id), "never deleted");
  assert.equal(w.linode.calls.count("DELETE /v4/nodebalancers/{id}"), 0);
  assert.equal(
    w.ccm.orphanCheck.list().find((o) => o.id === nb.id)?.fate,
    "kept: no ownership tag of this cluster",
  );
});
