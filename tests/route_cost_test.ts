/** What the route controller costs: Linode calls for 100 Nodes, first programming then steady state. */
import assert from "node:assert/strict";
import { LIST_VPC_IPS, PUT_CONFIG_INTERFACE, startRouteWorld } from "./route_fixture.ts";

const NODES = 100;

Deno.test("route: 100 Nodes cost one write each, then one VPC listing per drift period and nothing per Node", async () => {
  // The defaults: the drift period is --node-status-update-frequency=5m, --route-reconciliation-period=10s.
  await using w = await startRouteWorld();
  const ttlMs = w.config.nodes.statusUpdateFrequencyMs;
  const resyncMs = w.config.routes.reconciliationPeriodMs;
  const ids = Array.from({ length: NODES }, (_, i) => w.addLinode(`worker-${i}`));
  ids.forEach((id, i) => w.addNode(`worker-${i}`, id, `10.192.${i}.0/24`));
  await w.start();
  // The first pass, at start, before any time passes.
  await w.waitFor(() => ids.every((id, i) => w.linode.world.ipRanges(id).join() === `10.192.${i}.0/24`), {
    what: "every route",
  });
  await w.waitFor(() => ids.every((_, i) => w.condition(`worker-${i}`) === "False/RouteCreated"), {
    what: "every condition",
  });
  assert.equal(w.clock.monotonic(), 0, "no time has passed");
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), NODES, "one write per Node");
  assert.equal(w.calls(LIST_VPC_IPS), 1, "one listing for all of them");
  // 200 entries (an address and a range per Node) fit one page of 500.
  const entries = (await w.ccm.linode.vpcs.listIps(w.vpcId)).length;
  assert.equal(entries, 2 * NODES);
  const pages = Math.ceil(entries / 500);
  w.linode.calls.reset();

  const periods = 2;
  const passes = w.passes();
  for (let t = resyncMs; t <= periods * ttlMs; t += resyncMs) {
    const before = w.passes();
    await w.tick(resyncMs);
    await w.waitFor(() => w.passes() > before, { what: `the pass of the resync at ${t} ms` });
  }
  await w.settle();
  assert.equal(w.passes() - passes, (periods * ttlMs) / resyncMs, "one pass per resync, no other");
  // The listing is refreshed by the first resync after it is older than the drift period: every 310 s here.
  const listings = Math.floor((periods * ttlMs) / (ttlMs + resyncMs));
  assert.equal(
    w.calls(LIST_VPC_IPS),
    listings * pages,
    "ceil(entries/500) calls per listing, one per drift period",
  );
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), 0, "zero repeated writes");
  // Each refresh also lists the VPC's IPv6 (SLAAC) addresses, as the Go CCM does: none here, one page.
  assert.equal(w.calls("GET /v4/vpcs/{id}/ipv6s"), listings, "one IPv6 listing per refresh");
  // `--controllers=route` leaves cloud-node out, so node-metadata keeps the host-uuid label and the IP
  // annotations, as the Go CCM's own node controller does whatever --controllers says: one instance listing
  // per status period, shared by every Node.
  assert.equal(w.calls("GET /v4/linode/instances"), periods, "node-metadata: one listing per status period");
  assert.equal(
    w.linode.calls.total(),
    listings * pages + listings + periods,
    "no other call: nothing per Node",
  );
});
