/**
 * Event reasons operators alert on, kept as the Go CCM's cluster emits them: the Go CCM's own
 * `NodeBalancerIPChangeIgnored`, and upstream's service controller reasons `UnAvailableLoadBalancer` and
 * `DeleteLoadBalancerFailed` (the latter in `service_safety_test.ts`).
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
  const said = event?.message ?? "";
  assert.ok(said.includes(reserved.address) && said.includes(before ?? "?"), said);
  assert.equal(w.nodeBalancerOf("web")?.ipv4, before, "the address stays");
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
