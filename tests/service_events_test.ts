/**
 * Events as the Go CCM's cluster emits them, which operators and its end-to-end tests match: the Go CCM's own
 * `NodeBalancerIPChangeIgnored` (its text and source), and upstream's service controller reasons, texts, source
 * (`service-controller`) and cadence (k8s.io/cloud-provider v0.35.4 `syncLoadBalancerIfNeeded`): Ensuring and
 * Ensured on every sync upstream makes (a Service change, a new term, a retry), none on this CCM's own resync;
 * `UpdatedLoadBalancer` for a Node change that only moves backends; `DeletedLoadBalancer` even when there was no
 * NodeBalancer; `SyncLoadBalancerFailed` with the error as linodego prints it.
 */
import assert from "node:assert/strict";
import { annotationKey } from "../controllers/service/annotations/table.ts";
import { EXCLUDE_LABEL } from "../controllers/service/nodebalancer/plan.ts";
import { REGION } from "./ccm_fixture.ts";
import { type ServiceWorld, startServiceWorld, until } from "./service_fixture.ts";

async function world(): Promise<ServiceWorld> {
  const w = await startServiceWorld();
  w.addNode("node-1", "192.168.140.11");
  await w.start();
  return w;
}

Deno.test("service warns NodeBalancerIPChangeIgnored when reserved-ipv4 changes on an existing NodeBalancer", async () => {
  await using w = await world();
  w.addService("web");
  await until(w, () => w.nodeBalancerOf("web") !== undefined, "a NodeBalancer");
  const before = w.nodeBalancerOf("web")?.ipv4;
  const reserved = await w.userCall<{ address: string }>("POST", "/networking/reserved/ips", {
    region: REGION,
  });
  w.kube.store.patch("services", "web", {
    metadata: { annotations: { [annotationKey("reserved-ipv4")]: reserved.address } },
  }, { type: "merge", namespace: "default" });
  await until(w, () => w.events("NodeBalancerIPChangeIgnored", "web").length > 0, "the Go CCM's Warning");
  const [event] = w.events("NodeBalancerIPChangeIgnored", "web");
  assert.equal(event?.type, "Warning");
  const id = w.nodeBalancerOf("web")?.id;
  assert.equal(
    event?.message,
    `IPv4 annotation changed to ${reserved.address}, but NodeBalancer (${id}) IP cannot be updated after creation. It will remain ${before}`,
    "the Go CCM's words (createIPChangeWarningEvent)",
  );
  assert.equal(event?.source?.component, "linode-cloud-controller-manager", "and its source");
  assert.equal(w.nodeBalancerOf("web")?.ipv4, before, "the address stays");
});

Deno.test("service says SyncLoadBalancerFailed in upstream's words, the API's error as linodego prints it", async () => {
  await using w = await world();
  w.addService("web", { annotations: { [annotationKey("reserved-ipv4")]: "203.0.113.9" } });
  await until(w, () => w.events("SyncLoadBalancerFailed", "web").length > 0, "the failed sync");
  assert.equal(
    w.events("SyncLoadBalancerFailed", "web")[0]?.message,
    "Error syncing load balancer: failed to ensure load balancer: [400] IPv4 address is not reserved",
    "as the Go CCM's e2e test lb-created-with-unreserved-ip expects it",
  );
  assert.equal(w.events("SyncLoadBalancerFailed", "web")[0]?.source?.component, "service-controller");
  assert.deepEqual(w.nodeBalancers(), []);
});

/** The number of times an Event of this reason was said for `name` (aggregated repeats counted). */
function said(w: ServiceWorld, reason: string, name = "web"): number {
  return w.events(reason, name).reduce((n, e) => n + (e.count ?? 1), 0);
}

Deno.test("service says Ensuring and Ensured on every sync upstream makes: a Service change and a new term, not a resync", async () => {
  await using w = await world();
  w.addService("web");
  await until(w, () => said(w, "EnsuredLoadBalancer") === 1, "the first sync");
  assert.equal(said(w, "EnsuringLoadBalancer"), 1);
  assert.deepEqual(w.events("EnsuredLoadBalancer", "web").map((e) => [e.message, e.source?.component]), [
    ["Ensured load balancer", "service-controller"],
  ]);
  assert.equal(w.events("EnsuringLoadBalancer", "web")[0]?.message, "Ensuring load balancer");
  // Two of this CCM's 5-minute resyncs: upstream makes no sync then, and neither Event comes.
  await w.tick(2 * 300_000, 30_000);
  assert.deepEqual([said(w, "EnsuringLoadBalancer"), said(w, "EnsuredLoadBalancer")], [1, 1]);
  // A change of the Service: a sync upstream makes, whatever it changes.
  w.kube.store.patch("services", "web", { metadata: { labels: { team: "a" } } }, {
    type: "merge",
    namespace: "default",
  });
  w.kube.store.patch("services", "web", {
    metadata: { annotations: { [annotationKey("throttle")]: "5" } },
  }, { type: "merge", namespace: "default" });
  await until(w, () => said(w, "EnsuredLoadBalancer") === 2, "the sync of the change");
  assert.equal(said(w, "EnsuringLoadBalancer"), 2);
  // A new term (the CCM restarted, or another replica took over) syncs every Service, as upstream's start does.
  await w.stop();
  await w.start();
  await until(w, () => said(w, "EnsuredLoadBalancer") === 3, "the sync of the new term");
  assert.equal(said(w, "EnsuringLoadBalancer"), 3);
  assert.equal(said(w, "UpdatedLoadBalancer"), 0);
});

Deno.test("service says UpdatedLoadBalancer, not Ensuring, when a Node change only moves backends", async () => {
  await using w = await world();
  w.addService("web");
  await until(w, () => said(w, "EnsuredLoadBalancer") === 1, "the first sync");
  w.addNode("node-2", "192.168.140.12");
  await until(w, () => said(w, "UpdatedLoadBalancer") === 1, "upstream's host update");
  assert.equal(w.events("UpdatedLoadBalancer", "web")[0]?.message, "Updated load balancer with new hosts");
  assert.deepEqual([said(w, "EnsuringLoadBalancer"), said(w, "EnsuredLoadBalancer")], [1, 1]);
});

Deno.test("service says DeletedLoadBalancer even when there was no NodeBalancer, as upstream", async () => {
  await using w = await world();
  w.addService("web");
  await until(w, () => w.nodeBalancerOf("web") !== undefined, "a NodeBalancer");
  const nb = w.nodeBalancerOf("web");
  await w.userCall("DELETE", `/nodebalancers/${nb?.id}`, undefined);
  w.kube.store.delete("services", "web", "default");
  await until(w, () => w.service("web") === undefined, "the Service gone");
  assert.deepEqual(w.events("DeletedLoadBalancer", "web").map((e) => e.message), ["Deleted load balancer"]);
  assert.equal(
    w.events("SyncLoadBalancerFailed", "web").length,
    0,
    "a NodeBalancer gone already is no failure",
  );
  // A Service that stops being a LoadBalancer before it has one: upstream syncs it once more, and says so.
  w.addService("early");
  w.kube.store.patch("services", "early", { spec: { type: "ClusterIP" } }, {
    type: "merge",
    namespace: "default",
  });
  await until(w, () => w.events("DeletedLoadBalancer", "early").length > 0, "the second one's Event");
  await w.settle();
  assert.equal(w.nodeBalancerOf("early"), undefined);
});

Deno.test("service warns UnAvailableLoadBalancer, as upstream, when no Node can back the NodeBalancer", async () => {
  await using w = await world();
  w.kube.store.patch("nodes", "node-1", { metadata: { labels: { [EXCLUDE_LABEL]: "true" } } }, {
    type: "merge",
  });
  w.addService("web");
  await until(w, () => w.events("UnAvailableLoadBalancer", "web").length > 0, "upstream's Warning");
  assert.equal(
    w.events("UnAvailableLoadBalancer", "web")[0]?.message,
    "There are no available nodes for LoadBalancer",
  );
  assert.ok(w.events("SyncLoadBalancerFailed", "web").length > 0, "and the failed sync");
  assert.deepEqual(w.nodeBalancers(), []);
});
