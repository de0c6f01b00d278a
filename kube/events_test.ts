import assert from "node:assert/strict";
import { FakeClock } from "../common/clock.ts";
import { SwitchFence } from "../common/write_guard.ts";
import { captureLogs, componentLogger } from "../common/log.ts";
import { EventRecorder, type EventRecorderOptions, refFor, renderMessage, warnEvent } from "./events.ts";
import { callsStartingWith, type Fixture, node, startFixture } from "./testdata/fixtures.ts";

interface StoredEvent {
  metadata: { name: string; namespace: string };
  involvedObject: Record<string, unknown>;
  reason: string;
  message: string;
  type: string;
  count: number;
  source: { component?: string; host?: string };
  reportingComponent?: string;
  firstTimestamp: string;
  lastTimestamp: string;
}

function storedEvents(f: Fixture): StoredEvent[] {
  return f.kube.store.list("events") as unknown as StoredEvent[];
}

function recorder(f: Fixture, options: Partial<EventRecorderOptions> = {}): EventRecorder {
  return new EventRecorder(f.clients.core, { log: componentLogger("events-test"), host: "cp-1", ...options });
}

function nodeRef(f: Fixture) {
  return refFor(f.kube.store.create("nodes", node("n1")), "Node");
}

Deno.test("EventRecorder.event() creates a core/v1 Event like client-go's recorder", async () => {
  await using f = await startFixture();
  const ref = nodeRef(f);
  const r = recorder(f, { clock: new FakeClock(Date.UTC(2026, 0, 2)) });
  r.event(ref, "Warning", "InstanceNotFound", "no Linode has this node's providerID");
  await r.flush();
  const [e, ...rest] = storedEvents(f);
  assert.equal(rest.length, 0);
  assert.ok(e);
  assert.match(e.metadata.name, /^n1\.[0-9a-f]+$/);
  assert.equal(e.metadata.namespace, "default");
  assert.deepEqual(
    { kind: e.involvedObject.kind, name: e.involvedObject.name, uid: e.involvedObject.uid },
    { kind: "Node", name: "n1", uid: ref.uid },
  );
  assert.equal(e.involvedObject.apiVersion, "v1");
  assert.equal(e.involvedObject.resourceVersion, ref.resourceVersion);
  assert.deepEqual([e.type, e.reason, e.count], ["Warning", "InstanceNotFound", 1]);
  assert.deepEqual(e.source, { component: "cloud-controller-manager", host: "cp-1" });
  assert.equal(e.reportingComponent, "cloud-controller-manager");
  assert.equal(new Date(e.firstTimestamp).toISOString(), "2026-01-02T00:00:00.000Z");
});

Deno.test("EventRecorder.event() aggregates a repeat into count 2 with a PATCH", async () => {
  await using f = await startFixture();
  const ref = nodeRef(f);
  const clock = new FakeClock();
  const r = recorder(f, { clock });
  r.event(ref, "Normal", "Synced", "node synced");
  await r.flush();
  await clock.advance(60_000);
  r.event(ref, "Normal", "Synced", "node synced");
  await r.flush();
  const events = storedEvents(f);
  assert.equal(events.length, 1);
  assert.equal(events[0]?.count, 2);
  assert.equal(
    new Date(events[0]?.lastTimestamp ?? 0).getTime() - new Date(events[0]?.firstTimestamp ?? 0).getTime(),
    60_000,
  );
  assert.equal(callsStartingWith(f.kube, "POST"), 1);
  assert.equal(callsStartingWith(f.kube, "PATCH"), 1);
  r.event(ref, "Normal", "Synced", "a different message");
  await r.flush();
  assert.equal(storedEvents(f).length, 2, "a different message is a new Event");
});

Deno.test("EventRecorder.event() starts a new Event when the aggregated one was deleted", async () => {
  await using f = await startFixture();
  const ref = nodeRef(f);
  const r = recorder(f);
  r.event(ref, "Normal", "Synced", "node synced");
  await r.flush();
  const first = storedEvents(f)[0];
  f.kube.store.delete("events", first?.metadata.name ?? "", "default");
  r.event(ref, "Normal", "Synced", "node synced");
  await r.flush();
  assert.deepEqual(storedEvents(f).map((e) => e.count), [1]);
});

Deno.test("EventRecorder.event() rate-limits a burst per object", async () => {
  await using f = await startFixture();
  const ref = nodeRef(f);
  const clock = new FakeClock();
  const r = recorder(f, { clock, burst: 3, refillEveryMs: 10_000 });
  for (let i = 0; i < 6; i++) r.event(ref, "Warning", `Reason${i}`, "burst");
  await r.flush();
  assert.deepEqual(storedEvents(f).map((e) => e.reason).sort(), ["Reason0", "Reason1", "Reason2"]);
  const other = refFor(f.kube.store.create("nodes", node("n2")), "Node");
  r.event(other, "Warning", "Other", "another object has its own bucket");
  await clock.advance(10_000);
  r.event(ref, "Warning", "Later", "one token back");
  r.event(ref, "Warning", "TooSoon", "still limited");
  await r.flush();
  assert.deepEqual(storedEvents(f).map((e) => e.reason).sort(), [
    "Later",
    "Other",
    "Reason0",
    "Reason1",
    "Reason2",
  ]);
});

Deno.test("EventRecorder.event() keeps buckets for the maxCached most recent objects only", async () => {
  await using f = await startFixture();
  const [a, b, c] = ["a", "b", "c"].map((name) => refFor(f.kube.store.create("nodes", node(name)), "Node"));
  assert.ok(a && b && c);
  const r = recorder(f, { clock: new FakeClock(), burst: 1, refillEveryMs: 3_600_000, maxCached: 2 });
  r.event(a, "Warning", "First", "a");
  r.event(a, "Warning", "Limited", "a's bucket is empty");
  r.event(b, "Warning", "First", "b");
  r.event(c, "Warning", "First", "c");
  r.event(a, "Warning", "Again", "a's bucket was dropped: full again");
  await r.flush();
  assert.deepEqual(storedEvents(f).map((e) => `${e.involvedObject.name} ${e.reason}`).sort(), [
    "a Again",
    "a First",
    "b First",
    "c First",
  ]);
});

Deno.test("EventRecorder.forget() drops a deleted object's bucket and aggregation, and no other's", async () => {
  await using f = await startFixture();
  const [a, b] = ["a", "b"].map((name) => refFor(f.kube.store.create("nodes", node(name)), "Node"));
  assert.ok(a?.uid && b);
  const r = recorder(f, { clock: new FakeClock(), burst: 1, refillEveryMs: 3_600_000 });
  r.event(a, "Warning", "Same", "m");
  r.event(b, "Warning", "Same", "m");
  // Still queued when a is deleted: forgotten too once written.
  r.forget(a.uid);
  await r.flush();
  // a starts over: a full bucket, and a new Event rather than a PATCH of the old one; b is still limited.
  r.event(a, "Warning", "Same", "m");
  r.event(b, "Warning", "Same", "m");
  await r.flush();
  assert.deepEqual(storedEvents(f).map((e) => `${e.involvedObject.name} ${e.count}`).sort(), [
    "a 1",
    "a 1",
    "b 1",
  ]);
});

Deno.test("EventRecorder.event() never writes a secret and never throws on API errors", async () => {
  await using f = await startFixture();
  const logs = await captureLogs("debug", () => [f.kube.token]);
  const ref = nodeRef(f);
  const r = recorder(f, { secrets: () => [f.kube.token] });
  r.event(ref, "Warning", "Leak", `token is ${f.kube.token}`);
  await r.flush();
  assert.equal(storedEvents(f)[0]?.message, "token is ***");
  f.kube.faults.add({ method: "POST", route: "*", status: 500 });
  r.event(ref, "Warning", "Failing", "the apiserver is down");
  await r.flush();
  assert.equal(storedEvents(f).length, 1);
  assert.match(logs.text(), /cannot write event/);
  assert.ok(!JSON.stringify(storedEvents(f)).includes(f.kube.token));
  assert.ok(!logs.text().includes(f.kube.token));
});

Deno.test("EventRecorder.event() over fenced clients writes nothing without leadership", async () => {
  const fence = new SwitchFence(false);
  await using f = await startFixture({ fence });
  const logs = await captureLogs("debug");
  const ref = nodeRef(f);
  const r = recorder(f);
  f.kube.calls.reset();
  r.event(ref, "Normal", "Synced", "node synced");
  await r.flush();
  assert.equal(f.kube.calls.total(), 0);
  assert.match(logs.text(), /"level":"DEBUG","message":"cannot write event .*"error":"Refusing to write/);
  fence.set(true);
  r.event(ref, "Normal", "Synced", "node synced");
  await r.flush();
  assert.equal(storedEvents(f).length, 1);
});

Deno.test("warnEvent() writes the Event and the warning log line together", async () => {
  await using f = await startFixture();
  const logs = await captureLogs("debug");
  const ref = nodeRef(f);
  const r = recorder(f);
  warnEvent({ log: componentLogger("events-test"), events: r }, {
    ref,
    reason: "SyncLoadBalancerFailed",
    message: "cannot create NodeBalancer for {service}: {error}",
    props: { service: "default/web", error: "HTTP 503" },
  });
  await r.flush();
  assert.equal(storedEvents(f)[0]?.message, "cannot create NodeBalancer for default/web: HTTP 503");
  const line = JSON.parse(logs.lines.find((l) => l.includes("SyncLoadBalancerFailed")) ?? "{}");
  assert.match(String(line.level), /warn/i);
  assert.match(String(line.message), /cannot create NodeBalancer for .*default\/web.*HTTP 503/);
});

Deno.test("renderMessage() fills known placeholders and keeps unknown ones", () => {
  assert.equal(renderMessage("{a} and {b}", { a: 1 }), "1 and {b}");
});

Deno.test("EventRecorder.forComponent() writes as another source component, aggregated apart", async () => {
  await using f = await startFixture();
  const ref = nodeRef(f);
  const r = recorder(f);
  const lifecycle = r.forComponent("cloud-node-lifecycle-controller");
  lifecycle.event(ref, "Normal", "DeletingNode", "gone");
  lifecycle.event(ref, "Normal", "DeletingNode", "gone");
  r.event(ref, "Normal", "DeletingNode", "gone");
  await r.flush();
  const events = storedEvents(f).map((e) => [e.source.component, e.reportingComponent, e.count]);
  assert.deepEqual(events.sort(), [
    ["cloud-controller-manager", "cloud-controller-manager", 1],
    ["cloud-node-lifecycle-controller", "cloud-node-lifecycle-controller", 2],
  ]);
});
