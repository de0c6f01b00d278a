import assert from "node:assert/strict";
import { FakeClock } from "./clock.ts";
import { clientFor } from "../linode/testdata/test_support.ts";
import { node, startFixture } from "../kube/testdata/fixtures.ts";
import { startLinodeSim } from "../sim/linode/server.ts";
import { Registry } from "./metrics.ts";
import { DryRunGuard, DryRunWriteError, LeaseLostError, SwitchFence } from "./write_guard.ts";
import { captureLogs, componentLogger } from "./log.ts";

Deno.test("SwitchFence.leadUntil() turns the fence off at the monotonic deadline", async () => {
  const clock = new FakeClock();
  const fence = new SwitchFence();
  assert.equal(fence.leading, false);
  fence.leadUntil(100, clock);
  assert.equal(fence.leading, true);
  await clock.advance(99);
  fence.assertLeading();
  await clock.advance(1);
  assert.equal(fence.leading, false);
  assert.throws(() => fence.assertLeading(), LeaseLostError);
  // Only a new renewal reopens it.
  fence.leadUntil(300, clock);
  assert.equal(fence.leading, true);
});

Deno.test("SwitchFence.set() switches without a deadline", async () => {
  const clock = new FakeClock();
  const fence = new SwitchFence();
  fence.leadUntil(10, clock);
  fence.set(false);
  assert.equal(fence.leading, false);
  fence.set(true);
  await clock.advance(1000);
  assert.equal(fence.leading, true);
});

Deno.test("SwitchFence.termSignal aborts when leadership ends, at its deadline too, and is new for each term", async () => {
  const clock = new FakeClock();
  const fence = new SwitchFence();
  assert.equal(fence.termSignal.aborted, true, "no term before leading");
  fence.leadUntil(100, clock);
  const first = fence.termSignal;
  assert.equal(first.aborted, false);
  fence.leadUntil(200, clock);
  assert.equal(fence.termSignal, first, "a renewal keeps the term");
  await clock.advance(200);
  // A passed deadline is noticed when the fence is next asked (the elector switches it off at the deadline).
  assert.equal(fence.leading, false);
  assert.equal(first.aborted, true, "the deadline passed");
  assert.ok(first.reason instanceof LeaseLostError);
  fence.set(true);
  const second = fence.termSignal;
  assert.notEqual(second, first);
  fence.set(false);
  assert.equal(second.aborted, true);
});

Deno.test("SwitchFence.writeStarted() counts writes in flight and remembers the latest start", () => {
  const fence = new SwitchFence(true);
  const a = fence.writeStarted(10);
  const b = fence.writeStarted(30);
  assert.equal(fence.writesInFlight, 2);
  assert.equal(fence.lastWriteStartMs, 30);
  a();
  a();
  assert.equal(fence.writesInFlight, 1, "settling twice counts once");
  b();
  assert.equal(fence.writesInFlight, 0);
});

function guard(metrics = new Registry()) {
  return new DryRunGuard({ log: componentLogger("dry-run"), metrics });
}

/** Asserts a rejection with `DryRunWriteError` naming `call`. */
async function refused(promise: Promise<unknown>, call: string): Promise<void> {
  await assert.rejects(promise, (e: unknown) => {
    assert.ok(e instanceof DryRunWriteError, `expected DryRunWriteError, got ${String(e)}`);
    assert.equal(e.call, call);
    return true;
  });
}

Deno.test("LinodeClient() with the dry-run guard sends GETs and refuses every write before sending it", async () => {
  await using sim = await startLinodeSim();
  const nb = sim.world.addNodeBalancer({ region: "us-east", label: "ccm-0123456789ab" });
  const logs = await captureLogs("info");
  const metrics = new Registry();
  const { client } = clientFor(sim, { writeGuard: guard(metrics), metrics });
  assert.equal((await client.nodeBalancers.list()).length, 1);
  await refused(client.nodeBalancers.create({ region: "us-east", configs: [] }), "POST /nodebalancers");
  await refused(client.nodeBalancers.update(nb.id, { tags: ["x"] }), "PUT /nodebalancers/{id}");
  await refused(client.nodeBalancers.delete(nb.id), "DELETE /nodebalancers/{id}");
  await refused(
    client.instances.updateConfigInterface(1, 2, 3, { ip_ranges: ["10.0.0.0/24"] }),
    "PUT /linode/instances/{id}/configs/{id}/interfaces/{id}",
  );
  assert.deepEqual(sim.calls.log.map((c) => c.method), ["GET"], "only the listing reached the API");
  assert.equal(sim.world.nodeBalancers().length, 1);
  const errors = logs.lines.map((l) => JSON.parse(l)).filter((r) => r.level === "ERROR");
  assert.deepEqual(errors.map((r) => [r.client, r.call]), [
    ["linode", "POST /nodebalancers"],
    ["linode", "PUT /nodebalancers/{id}"],
    ["linode", "DELETE /nodebalancers/{id}"],
    ["linode", "PUT /linode/instances/{id}/configs/{id}/interfaces/{id}"],
  ]);
  const counter = metrics.counter("ccm_dry_run_refused_writes_total", "", ["client"]);
  assert.equal(counter.get({ client: "linode" }), 4);
});

Deno.test("makeKubeClients() with the dry-run guard reads and refuses every write, the Lease's included", async () => {
  const metrics = new Registry();
  await using f = await startFixture({ writeGuard: guard(metrics) });
  f.kube.store.create("nodes", node("n1"));
  f.kube.calls.reset();
  const logs = await captureLogs("info");
  assert.equal((await f.clients.core.readNode({ name: "n1" })).metadata?.name, "n1");
  assert.equal((await f.clients.core.listNode()).items.length, 1);
  const c = f.clients.core;
  await refused(
    c.patchNode({ name: "n1", body: { metadata: { labels: { a: "b" } } } }),
    "PATCH /api/v1/nodes/n1",
  );
  await refused(c.deleteNode({ name: "n1" }), "DELETE /api/v1/nodes/n1");
  await refused(
    c.createNamespacedEvent({
      namespace: "default",
      body: { metadata: { name: "e1" }, involvedObject: { kind: "Node", name: "n1" } },
    }),
    "POST /api/v1/namespaces/default/events",
  );
  await refused(
    f.clients.coordination.createNamespacedLease({
      namespace: "kube-system",
      body: { metadata: { name: "cloud-controller-manager" }, spec: { holderIdentity: "me" } },
    }),
    "POST /apis/coordination.k8s.io/v1/namespaces/kube-system/leases",
  );
  assert.deepEqual(
    f.kube.calls.log.map((r) => r.key.split(" ")[0]),
    ["GET", "GET"],
    "only the reads were sent",
  );
  assert.deepEqual(f.kube.store.get("nodes", "n1")?.metadata?.labels, {});
  assert.equal(f.kube.store.get("leases", "cloud-controller-manager", "kube-system"), undefined);
  const errors = logs.lines.map((l) => JSON.parse(l)).filter((r) => r.level === "ERROR");
  assert.equal(errors.length, 4);
  assert.ok(errors.every((r) => r.client === "kubernetes" && typeof r.call === "string"));
  const counter = metrics.counter("ccm_dry_run_refused_writes_total", "", ["client"]);
  assert.equal(counter.get({ client: "kubernetes" }), 4);
});
