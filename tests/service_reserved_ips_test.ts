import assert from "node:assert/strict";
import { DOCUMENTED_RATE_LIMITS } from "../sim/linode/rate_limit.ts";
import { REGION } from "./ccm_fixture.ts";
import { startServiceWorld, until } from "./service_fixture.ts";

const PREFIX = "service.beta.kubernetes.io/linode-loadbalancer-";
const SERVICES = 24;
const RELEASE = "DELETE /v4/networking/reserved/ips/{address}";

Deno.test("service: deleting many Services that release reserved IPs converges under the documented rate limits", async () => {
  await using w = await startServiceWorld({ rateLimits: DOCUMENTED_RATE_LIMITS });
  w.linode.world.reservedIps.limit = SERVICES;
  w.addNode("node-1", "192.168.140.11");
  await w.start();
  const addresses = Array.from(
    { length: SERVICES },
    () => w.linode.world.reservedIps.reserve({ region: REGION }).address,
  );
  addresses.forEach((address, i) =>
    w.addService(`svc-${i}`, {
      annotations: { [`${PREFIX}reserved-ipv4`]: address, [`${PREFIX}retain-reserved-ipv4`]: "false" },
    })
  );
  await until(w, () => w.nodeBalancers().length === SERVICES, "every Service on its reserved IPv4");
  w.linode.calls.reset();
  for (let i = 0; i < SERVICES; i++) w.kube.store.delete("services", `svc-${i}`, "default");
  await until(w, () => addresses.every((_, i) => w.service(`svc-${i}`) === undefined), "every Service gone");
  assert.deepEqual(w.nodeBalancers(), []);
  assert.deepEqual(w.linode.world.reservedIps.list(), [], "every reserved IPv4 released, none leaked");
  const refused = w.linode.calls.log.filter((c) => c.status === 429);
  const releases = w.linode.calls.log.filter((c) => c.key === RELEASE && c.status === 200).map((c) => c.atMs);
  assert.equal(releases.length, SERVICES);
  const busiest = Math.max(...releases.map((t) => releases.filter((u) => u >= t && u < t + 60_000).length));
  assert.ok(busiest <= 10, `at most 10 releases a minute, the limit the API reports: ${busiest}`);
  assert.ok(
    (releases.at(-1) ?? 0) - (releases[0] ?? 0) >= 120_000,
    "the limit bound: 24 releases take 3 windows",
  );
  // The client paces itself on X-RateLimit-Remaining and honours Retry-After: a refusal is rare, never a storm.
  assert.ok(refused.length <= 3, `no 429 storm: ${refused.map((c) => c.key).join(", ")}`);
});

Deno.test("service: a reserved IPv4 whose release fails is released on a later try, not leaked", async () => {
  await using w = await startServiceWorld();
  w.addNode("node-1", "192.168.140.11");
  await w.start();
  const { address } = w.linode.world.reservedIps.reserve({ region: REGION });
  w.addService("web", {
    annotations: { [`${PREFIX}reserved-ipv4`]: address, [`${PREFIX}retain-reserved-ipv4`]: "false" },
  });
  await until(w, () => w.nodeBalancerOf("web")?.ipv4 === address, "web on its reserved IPv4");
  w.linode.faults.error(503, { method: "DELETE", route: "/networking/reserved/ips/*", count: 20 });
  w.kube.store.delete("services", "web", "default");
  await until(w, () => w.service("web") === undefined, "web gone");
  assert.deepEqual(w.nodeBalancers(), []);
  assert.deepEqual(w.linode.world.reservedIps.list().map((r) => r.address), [], "released, not leaked");
});
