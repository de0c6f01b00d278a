/**
 * The Linode API down for 10 minutes of the CCM's time (the emulators and the CCM share a fake clock): a
 * Node joins and another goes NotReady meanwhile. Nothing is deleted, tainted or initialised wrongly, every
 * loop backs off (the calls stay under the bound its retry settings give), and all converges afterwards.
 */
import assert from "node:assert/strict";
import { setNodeReady } from "../../sim/kubelet.ts";
import { cachedListingBound, isServiceCall, orphanCheckBound, serviceSyncBound } from "./bounds.ts";
import { SafetyMonitor } from "./safety.ts";
import { report, scaled } from "./scale.ts";
import { startChaosWorld } from "./world.ts";

const OUTAGE_MS = 600_000;
const LIST_INSTANCES = "GET /v4/linode/instances";
const LIST_VPC_IPS = "GET /v4/vpcs/{id}/ips";
/** Listed beside the IPv4 addresses in every refresh (the Go CCM's two VPC listings). */
const LIST_VPC_IPV6S = "GET /v4/vpcs/{id}/ipv6s";

Deno.test("runCcm() through a 10-minute Linode outage destroys nothing, backs off within its bound, then converges", async () => {
  const services = scaled(2, 3);
  await using w = await startChaosWorld({ nodes: scaled(4, 12), services });
  using safety = new SafetyMonitor(w);
  await w.start();
  await w.converge();
  safety.baseline();

  const during: Record<string, number> = {};
  const off = w.linode.calls.subscribe((c) => {
    if (c.fault === "outage") during[c.key] = (during[c.key] ?? 0) + 1;
  });
  w.linode.faults.outage(OUTAGE_MS);
  w.addNode("late-1");
  setNodeReady(w.kube, "node-2", false);
  safety.release({ backendsOf: "node-2" });
  // Judged one step before the outage ends: once it ends, a retry may initialise the Node at once.
  await w.tick(OUTAGE_MS - 5_000, 5_000);
  assert.equal(w.node("late-1")?.spec?.providerID, undefined, "no Node initialised without its Linode");
  await w.tick(5_000, 5_000);
  off();
  assert.deepEqual(w.linode.faults.list(), [], "the outage ended on the fake clock");

  assert.ok(w.node("node-2"), "a NotReady Node whose Linode could not be checked stays");
  const keys = Object.keys(during);
  const listing = cachedListingBound(OUTAGE_MS);
  const serviceBound = services * serviceSyncBound(OUTAGE_MS) + orphanCheckBound(OUTAGE_MS);
  const serviceCalls = keys.filter(isServiceCall).reduce((n, k) => n + (during[k] ?? 0), 0);
  const counts = JSON.stringify(during);
  assert.ok((during[LIST_INSTANCES] ?? 0) <= listing, `instance listings ${counts} > ${listing}`);
  assert.ok((during[LIST_VPC_IPS] ?? 0) <= listing, `VPC IP listings ${counts} > ${listing}`);
  assert.ok((during[LIST_VPC_IPV6S] ?? 0) <= listing, `VPC IPv6 listings ${counts} > ${listing}`);
  assert.ok(serviceCalls <= serviceBound, `Service calls ${serviceCalls} > ${serviceBound}: ${counts}`);
  const listings = [LIST_INSTANCES, LIST_VPC_IPS, LIST_VPC_IPV6S];
  const unmodelled = keys.filter((k) => !listings.includes(k) && !isServiceCall(k));
  assert.deepEqual(unmodelled, [], "every call during the outage comes from a loop the bound covers");

  report("outage", { during, listingBound: listing, serviceCalls, serviceBound });
  setNodeReady(w.kube, "node-2", true);
  await w.converge();
  safety.assertClean();
  assert.equal(w.linode.world.nodeBalancers().length, services, "no NodeBalancer created twice");
});
