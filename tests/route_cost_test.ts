/** What the route controller costs: Linode calls for 100 Nodes, first programming then steady state. */
import assert from "node:assert/strict";
import { FakeClock } from "../common/clock.ts";
import { LIST_VPC_IPS, PUT_CONFIG_INTERFACE, startRouteWorld, waitFor } from "./route_fixture.ts";

const NODES = 100;
const TTL_MS = 60_000;
const RESYNC_MS = 10_000;

Deno.test("route: 100 Nodes cost one write each, then one VPC listing per TTL and nothing per Node", async () => {
  const clock = new FakeClock();
  await using w = await startRouteWorld({ clock, ttlMs: TTL_MS, controller: { resyncMs: RESYNC_MS } });
  const ids = Array.from({ length: NODES }, (_, i) => w.addLinode(`worker-${i}`));
  ids.forEach((id, i) => w.addNode(`worker-${i}`, id, `10.192.${i}.0/24`));
  await w.start();
  await waitFor(() => ids.every((id) => w.linode.world.ipRanges(id).length === 1), { what: "every route" });
  await waitFor(
    () => [...Array(NODES).keys()].every((i) => w.condition(`worker-${i}`) === "False/RouteCreated"),
    {
      what: "every condition",
    },
  );
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), NODES, "one write per Node");
  assert.equal(w.calls(LIST_VPC_IPS), 1, "one listing for all of them");
  // 200 entries (an address and a range per Node) fit one page of 500.
  const entries = (await w.client.vpcs.listIps(w.vpcId)).length;
  assert.equal(entries, 2 * NODES);
  const pages = Math.ceil(entries / 500);
  w.linode.calls.reset();

  const periods = 5;
  for (let t = 0; t < periods * TTL_MS; t += RESYNC_MS) {
    const passes = w.passes();
    await clock.advance(RESYNC_MS);
    await waitFor(() => w.passes() > passes, { what: `the resync at ${t + RESYNC_MS} ms` });
  }
  // The listing is refreshed by the first resync after it is older than the TTL: every 70 s here.
  const listings = Math.floor((periods * TTL_MS) / (TTL_MS + RESYNC_MS));
  assert.equal(w.calls(LIST_VPC_IPS), listings * pages, "ceil(entries/500) calls per listing, one per TTL");
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), 0, "zero repeated writes");
  assert.equal(
    w.linode.calls.total(),
    listings * pages,
    "no other call: no instance listing, nothing per Node",
  );
});
