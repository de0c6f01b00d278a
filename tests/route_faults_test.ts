/**
 * The route controller under faults: refused ranges, 5xx, 429, listing outages and partial listings. Whatever
 * happens, no range is lost, and failures show as a Warning Event and `NetworkUnavailable=True`.
 */
import assert from "node:assert/strict";
import { WRITE_CONCURRENCY } from "../controllers/route/controller.ts";
import {
  LIST_VPC_IPS,
  PUT_CONFIG_INTERFACE,
  type RouteWorld,
  startRouteWorld,
  until,
} from "./route_fixture.ts";

/** The emulator's requests of one route key still waiting for their answer (held by a `hang` fault). */
function pending(w: RouteWorld, key: string): number {
  return w.linode.calls.log.filter((c) => c.key === key && c.status === 0).length;
}

Deno.test("route: a range the API refuses gets a Warning Event with its reason; nothing else is touched", async () => {
  await using w = await startRouteWorld();
  const foreign = w.addLinode("not-a-node", ["10.192.2.0/24"]);
  const a = w.addLinode("worker-a", ["172.16.0.0/24"]);
  const b = w.addLinode("worker-b");
  await w.start();
  w.addNode("worker-a", a, "10.192.2.0/24");
  w.addNode("worker-b", b, "10.192.3.0/24");
  await until(w, () => w.condition("worker-a") === "True/NoRouteCreated", "the refused route");
  await until(w, () => w.condition("worker-b") === "False/RouteCreated", "the other route");
  const [event] = w.events("FailedToCreateRoute");
  assert.equal(event?.type, "Warning");
  assert.equal(event?.source?.component, "route_controller", "upstream's recorder name");
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
  await using w = await startRouteWorld({ flags: ["--route-reconciliation-period=1s"] });
  w.addLinode("not-a-node", ["10.192.2.0/24"]);
  const a = w.addLinode("worker-a");
  w.addNode("worker-a", a, "10.192.2.0/24");
  await w.start();
  await w.waitFor(() => w.condition("worker-a") === "True/NoRouteCreated", { what: "the refusal" });
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), 1);
  const passes = w.passes();
  await w.tick(45_000, 500);
  assert.ok(w.passes() >= passes + 45, `a pass every second (${w.passes() - passes})`);
  // The interface's backoff: 1 s doubling (±10 %), so retries after about 1, 3, 7, 15 and 31 s, the next
  // after about 63 s. Each retry's jitter and step leave every one far from 45 s.
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), 6, "the first write and five retries in 45 passes");
  assert.deepEqual(w.linode.world.ipRanges(a), []);
  assert.equal(w.events("FailedToCreateRoute").length, 1, "one Event, its count raised");
});

Deno.test("route: 5xx on writes: the Node reports the failure, then its route once the API recovers", async () => {
  await using w = await startRouteWorld();
  const id = w.addLinode("worker-1", ["172.16.0.0/24"]);
  await w.start();
  // One write's attempts (the first and the client's 3 retries) all fail.
  w.linode.faults.error(503, {
    method: "PUT",
    route: "/linode/instances/*/configs/*/interfaces/*",
    count: 4,
  });
  w.addNode("worker-1", id, "10.192.1.0/24");
  await until(w, () => w.condition("worker-1") === "True/NoRouteCreated", "the failure");
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), 4);
  assert.match(w.events("FailedToCreateRoute")[0]?.message ?? "", /HTTP 503/);
  await until(w, () => w.condition("worker-1") === "False/RouteCreated", "the recovery");
  assert.deepEqual(w.linode.world.ipRanges(id), ["172.16.0.0/24", "10.192.1.0/24"]);
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), 5);
});

// Retry-After up to 30 s is slept by the Linode client (holding every request); a longer one goes back to
// the controller, which pauses every write. Either way nothing is written before it has passed.
for (const retryAfterSec of [30, 90]) {
  Deno.test(`route: a 429 pauses every write until Retry-After (${retryAfterSec} s) has passed`, async () => {
    await using w = await startRouteWorld();
    // worker-0 moves a stale range: its write (a removal) goes first, alone, and meets the 429.
    const ids = ["a", "b", "c", "d"].map((n, i) =>
      w.addLinode(`worker-${n}`, i === 0 ? ["10.192.99.0/24"] : [])
    );
    ids.forEach((id, i) => w.addNode(`worker-${i}`, id, `10.192.${i}.0/24`));
    const late = w.addLinode("worker-e");
    w.linode.faults.rateLimit(retryAfterSec, { method: "PUT", count: 1 });
    await w.start();
    await w.waitFor(() => w.calls(PUT_CONFIG_INTERFACE) > 0, { what: "the first write" });
    await w.settle();
    assert.equal(w.calls(PUT_CONFIG_INTERFACE), 1, "no write is sent after the 429");
    w.addNode("worker-4", late, "10.192.4.0/24");
    await w.tick(retryAfterSec * 1_000 - 1_000, 1_000);
    assert.equal(w.calls(PUT_CONFIG_INTERFACE), 1, "still paused, also for a Node added meanwhile");
    assert.equal(w.events("FailedToCreateRoute").length, 0, "a 429 is a wait, not a failure");
    const all = [...ids, late];
    const routed = () => all.every((id, i) => w.linode.world.ipRanges(id).includes(`10.192.${i}.0/24`));
    const tookMs = await until(w, routed, "every route");
    assert.ok(tookMs <= 2_000, `routed once the pause ends (${tookMs} ms after)`);
    assert.equal(w.calls(PUT_CONFIG_INTERFACE), 6, "each write once, plus the one refused");
    assert.equal(w.events("FailedToCreateRoute").length, 0);
    assert.deepEqual(w.linode.world.ipRanges(ids[0] ?? 0), ["10.192.0.0/24"]);
  });
}

Deno.test("route: during a listing outage or a partial listing nothing is written and no range is lost", async () => {
  await using w = await startRouteWorld({
    flags: ["--route-reconciliation-period=5s"],
    env: { LINODE_ROUTES_CACHE_TTL_SECONDS: "10" },
  });
  const a = w.addLinode("worker-a");
  const b = w.addLinode("worker-b");
  w.addNode("worker-a", a, "10.192.1.0/24");
  w.addNode("worker-b", b, "10.192.2.0/24");
  await w.start();
  const routed = () =>
    w.condition("worker-a") === "False/RouteCreated" && w.condition("worker-b") === "False/RouteCreated";
  await w.waitFor(routed, { what: "both routes" });
  const writes = w.calls(PUT_CONFIG_INTERFACE);
  w.linode.faults.outage(600_000, { route: "/vpcs/*/ips" });
  const failures = () => w.passes("rate-limited");
  // Failed passes back off up to minutes: wait in steps of a second.
  const later = (w: RouteWorld, condition: () => boolean, what: string) =>
    w.advanceUntil(condition, { what, stepMs: 1_000 });
  await later(w, () => failures() > 0, "a pass failing on the stale listing");
  w.kube.store.delete("nodes", "worker-a");
  for (let i = 0; i < 3; i++) {
    const before = failures();
    await later(w, () => failures() > before, `failed pass ${i + 1}`);
  }
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), writes, "no write while the listing fails");
  assert.deepEqual(w.linode.world.ipRanges(a), ["10.192.1.0/24"]);
  w.linode.faults.clear();
  w.linode.faults.truncatePage({ route: "/vpcs/*/ips" }, 1);
  const listings = w.calls(LIST_VPC_IPS);
  await later(w, () => w.calls(LIST_VPC_IPS) > listings, "a partial listing");
  await w.tick(60_000, 1_000);
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), writes, "no write from a partial listing");
  assert.deepEqual(w.linode.world.ipRanges(a), ["10.192.1.0/24"]);
  assert.deepEqual(w.linode.world.ipRanges(b), ["10.192.2.0/24"]);
  w.linode.faults.clear();
  await later(w, () => w.linode.world.ipRanges(a).length === 0, "the deleted Node's range to go");
  assert.deepEqual(w.linode.world.ipRanges(b), ["10.192.2.0/24"]);
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), writes + 1, "the removal, once");
});

Deno.test("route: many Nodes at once: writes in parallel within the bound, each once, none lost", async () => {
  await using w = await startRouteWorld();
  const ids = Array.from({ length: 30 }, (_, i) => w.addLinode(`worker-${i}`, [`172.16.${i}.0/24`]));
  await w.start();
  // Every write is held unanswered: the controller sends as many as its bound allows, then waits.
  const hang = w.linode.faults.hang({ method: "PUT" });
  ids.forEach((id, i) => w.addNode(`worker-${i}`, id, `10.192.${i}.0/24`));
  await until(w, () => pending(w, PUT_CONFIG_INTERFACE) >= WRITE_CONCURRENCY, "the first writes");
  await w.settle();
  assert.equal(pending(w, PUT_CONFIG_INTERFACE), WRITE_CONCURRENCY, "in parallel, up to the bound");
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), WRITE_CONCURRENCY, "no write beyond it");
  w.linode.faults.remove(hang);
  await until(
    w,
    () => ids.every((id, i) => w.linode.world.ipRanges(id).includes(`10.192.${i}.0/24`)),
    "every route",
  );
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), 30);
  ids.forEach((id, i) => assert.equal(w.linode.world.ipRanges(id)[0], `172.16.${i}.0/24`, "kept"));
});
