/**
 * The route controller under faults: refused ranges, 5xx, 429, listing outages and partial listings. Whatever
 * happens, no range is lost, and failures show as a Warning Event and `NetworkUnavailable=True`.
 */
import assert from "node:assert/strict";
import { FakeClock } from "../common/clock.ts";
import type { RangeWriter } from "../controllers/route/route.ts";
import { LIST_VPC_IPS, PUT_CONFIG_INTERFACE, startRouteWorld, waitFor } from "./route_fixture.ts";

Deno.test("route: a range the API refuses gets a Warning Event with its reason; nothing else is touched", async () => {
  await using w = await startRouteWorld();
  const foreign = w.addLinode("not-a-node", ["10.192.2.0/24"]);
  const a = w.addLinode("worker-a", ["172.16.0.0/24"]);
  const b = w.addLinode("worker-b");
  await w.start();
  w.addNode("worker-a", a, "10.192.2.0/24");
  w.addNode("worker-b", b, "10.192.3.0/24");
  await waitFor(() => w.condition("worker-a") === "True/NoRouteCreated", { what: "the refused route" });
  await waitFor(() => w.condition("worker-b") === "False/RouteCreated", { what: "the other route" });
  const [event] = w.events("FailedToCreateRoute");
  assert.equal(event?.type, "Warning");
  assert.equal(event?.involvedObject.name, "worker-a");
  assert.match(
    event?.message ?? "",
    /Could not create route 10\.192\.2\.0\/24 for node worker-a: .*HTTP 400/,
  );
  assert.match(event?.message ?? "", /overlaps (with )?10\.192\.2\.0\/24/, "the API's reason");
  assert.deepEqual(w.linode.world.ipRanges(a), ["172.16.0.0/24"], "the refused write changed nothing");
  assert.deepEqual(w.linode.world.ipRanges(foreign), ["10.192.2.0/24"]);
  assert.deepEqual(w.linode.world.ipRanges(b), ["10.192.3.0/24"]);
});

Deno.test("route: a refused range is retried with backoff, not every pass", async () => {
  const clock = new FakeClock();
  await using w = await startRouteWorld({
    clock,
    controller: {
      minIntervalMs: 0,
      resyncMs: 1_000,
      writeRetry: { baseMs: 4_000, maxMs: 16_000, jitter: 0 },
    },
  });
  w.addLinode("not-a-node", ["10.192.2.0/24"]);
  const a = w.addLinode("worker-a");
  w.addNode("worker-a", a, "10.192.2.0/24");
  await w.start();
  await waitFor(() => w.condition("worker-a") === "True/NoRouteCreated", { what: "the refused route" });
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), 1);
  // 20 s of resyncs: retries at 4 s and 4 + 8 = 12 s only.
  for (let s = 1; s <= 20; s++) {
    const passes = w.passes();
    await clock.advance(1_000);
    await waitFor(() => w.passes() > passes, { what: `the pass at ${s} s` });
  }
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), 3);
  assert.deepEqual(w.linode.world.ipRanges(a), []);
});

Deno.test("route: 5xx on writes: the Node reports the failure, then its route once the API recovers", async () => {
  await using w = await startRouteWorld();
  const id = w.addLinode("worker-1", ["172.16.0.0/24"]);
  await w.start();
  w.linode.faults.error(503, {
    method: "PUT",
    route: "/linode/instances/*/configs/*/interfaces/*",
    count: 4,
  });
  w.addNode("worker-1", id, "10.192.1.0/24");
  await waitFor(() => w.condition("worker-1") === "True/NoRouteCreated", { what: "the failure" });
  assert.match(w.events("FailedToCreateRoute")[0]?.message ?? "", /HTTP 503/);
  await waitFor(() => w.condition("worker-1") === "False/RouteCreated", { what: "the recovery" });
  assert.deepEqual(w.linode.world.ipRanges(id), ["172.16.0.0/24", "10.192.1.0/24"]);
});

Deno.test("route: a 429 pauses every write of the controller until Retry-After has passed", async () => {
  const clock = new FakeClock();
  // The client holds every request during a 429 pause too: both pause on the test's clock.
  await using w = await startRouteWorld({
    clock,
    linodeClock: clock,
    controller: { minIntervalMs: 0, writeConcurrency: 1 },
  });
  const ids = ["a", "b", "c", "d"].map((n) => w.addLinode(`worker-${n}`));
  ids.forEach((id, i) => w.addNode(`worker-${i}`, id, `10.192.${i}.0/24`));
  w.linode.faults.rateLimit(30, { method: "PUT", count: 1 });
  await w.start();
  await waitFor(() => w.passes() >= 1, { what: "the first pass" });
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), 1, "no write is sent after the 429");
  assert.equal(w.events("FailedToCreateRoute").length, 0, "a 429 is a wait, not a failure");
  await clock.advance(29_000);
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), 1, "still paused");
  await clock.advance(1_000);
  await waitFor(() => ids.every((id) => w.linode.world.ipRanges(id).length === 1), { what: "every route" });
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), 5, "each write once, plus the one refused");
});

Deno.test("route: during a listing outage or a partial listing nothing is written and no range is lost", async () => {
  const clock = new FakeClock();
  await using w = await startRouteWorld({
    clock,
    ttlMs: 10_000,
    controller: { minIntervalMs: 0, resyncMs: 5_000 },
  });
  const a = w.addLinode("worker-a");
  const b = w.addLinode("worker-b");
  w.addNode("worker-a", a, "10.192.1.0/24");
  w.addNode("worker-b", b, "10.192.2.0/24");
  await w.start();
  await waitFor(
    () =>
      w.condition("worker-a") === "False/RouteCreated" && w.condition("worker-b") === "False/RouteCreated",
    {
      what: "both routes",
    },
  );
  const writes = w.calls(PUT_CONFIG_INTERFACE);
  w.linode.faults.outage(60_000, { route: "/vpcs/*/ips" });
  w.kube.store.delete("nodes", "worker-a");
  const failures = () => w.passes("rate-limited");
  for (let i = 0; i < 3; i++) {
    const before = failures();
    await clock.advance(11_000);
    await waitFor(() => failures() > before, { what: "a failed pass" });
  }
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), writes, "no write while the listing fails");
  assert.deepEqual(w.linode.world.ipRanges(a), ["10.192.1.0/24"]);
  w.linode.faults.clear();
  w.linode.faults.truncatePage({ route: "/vpcs/*/ips" }, 1);
  const listings = w.calls(LIST_VPC_IPS);
  await clock.advance(60_000);
  await waitFor(() => w.calls(LIST_VPC_IPS) > listings, { what: "a partial listing" });
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), writes, "no write from a partial listing");
  w.linode.faults.clear();
  await clock.advance(60_000);
  await waitFor(() => w.linode.world.ipRanges(a).length === 0, { what: "the deleted Node's range to go" });
  assert.deepEqual(w.linode.world.ipRanges(b), ["10.192.2.0/24"]);
});

Deno.test("route: many Nodes at once: writes in parallel within the bound, each once, none lost", async () => {
  await using w = await startRouteWorld({ controller: { writeConcurrency: 3 } });
  let inFlight = 0;
  let peak = 0;
  const real = w.deps.writer;
  // Observes the real writer (the PUTs still reach the emulator) to measure concurrency.
  const observed: RangeWriter = {
    async setRanges(target, ranges, signal) {
      peak = Math.max(peak, ++inFlight);
      try {
        return await real.setRanges(target, ranges, signal);
      } finally {
        inFlight--;
      }
    },
  };
  w.deps.writer = observed;
  w.linode.faults.latency(20, { method: "PUT" });
  const ids = Array.from({ length: 30 }, (_, i) => w.addLinode(`worker-${i}`, [`172.16.${i}.0/24`]));
  await w.start();
  ids.forEach((id, i) => w.addNode(`worker-${i}`, id, `10.192.${i}.0/24`));
  await waitFor(() => ids.every((id, i) => w.linode.world.ipRanges(id).includes(`10.192.${i}.0/24`)), {
    what: "every route",
    timeoutMs: 30_000,
  });
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), 30);
  assert.ok(peak > 1 && peak <= 3, `peak concurrency ${peak}`);
  ids.forEach((id, i) => assert.equal(w.linode.world.ipRanges(id)[0], `172.16.${i}.0/24`, "kept"));
});
