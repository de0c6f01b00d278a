/**
 * The service controller's Linode writes end with its term: a create stuck in a slow Linode answer is aborted
 * the moment the term is told to stop, instead of running on for `LINODE_REQUEST_TIMEOUT_SECONDS` after a
 * hand-over.
 */
import assert from "node:assert/strict";
import { startServiceWorld } from "./service_fixture.ts";

Deno.test("service: a NodeBalancer create in flight is aborted when the term stops", async () => {
  await using world = await startServiceWorld();
  world.addNode("node-1", "192.168.140.11");
  world.linode.faults.hang({ method: "POST", route: "/nodebalancers" });
  await world.start();
  world.addService("web");
  await world.waitFor(() => world.linode.faults.hungCount === 1, { what: "the create to be sent" });

  assert.equal(await world.stop(), "stopped");
  const requests = world.metrics.counter("ccm_linode_requests_total", "", ["method", "route", "status"]);
  assert.equal(requests.get({ method: "POST", route: "/nodebalancers", status: "aborted" }), 1);
  assert.equal(world.nodeBalancers().length, 0);
  world.linode.faults.clear();
});
