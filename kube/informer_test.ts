import assert from "node:assert/strict";
import type { V1Node } from "@kubernetes/client-node";
import { FakeClock } from "../common/clock.ts";
import { componentLogger } from "../common/log.ts";
import { Registry } from "../common/metrics.ts";
import { TcpProxy } from "../sim/proxy.ts";
import { type KubeClients, nodeSource } from "./clients.ts";
import { callsStartingWith, type Fixture, node, startFixture, waitFor } from "./testdata/fixtures.ts";
import { type ChangeKind, Informer, RestartPolicy } from "./informer.ts";
import { trimNode } from "./trim.ts";

interface Running extends AsyncDisposable {
  informer: Informer<V1Node>;
  /** `"add n1"`, `"update n1"`, `"delete n1"` in order received. */
  changes: string[];
}

/** The emulator sends BOOKMARKs every 50 ms, so a watch silent for 400 ms is dead (a reset nobody saw). */
const SIM = { bookmarkIntervalMs: 50 };

function startNodeInformer(
  f: Fixture,
  clients: KubeClients = f.clients,
  labelSelector?: string,
  watchIdleTimeoutMs = 400,
): Running {
  const informer = new Informer(clients.kc, nodeSource(clients.core), {
    labelSelector,
    log: componentLogger("informer-test"),
    metrics: f.metrics,
    backoff: { baseMs: 20, maxMs: 100 },
    watchIdleTimeoutMs,
  });
  const changes: string[] = [];
  informer.onChange((kind: ChangeKind, obj) => changes.push(`${kind} ${obj.metadata?.name}`));
  const ac = new AbortController();
  const done = informer.start(ac.signal);
  return {
    informer,
    changes,
    async [Symbol.asyncDispose]() {
      ac.abort();
      await done;
    },
  };
}

function names(informer: Informer<V1Node>): string[] {
  return informer.list().map((n) => n.metadata?.name ?? "").sort();
}

function label(f: Fixture, name: string, value: string): void {
  const obj = f.kube.store.get("nodes", name);
  assert.ok(obj, `node ${name} exists`);
  f.kube.store.update("nodes", { ...obj, metadata: { ...obj.metadata, labels: { step: value } } });
}

Deno.test("Informer.start() syncs, then delivers add, update and delete", async () => {
  await using f = await startFixture({ sim: SIM });
  f.kube.store.create("nodes", node("n1"));
  f.kube.store.create("nodes", node("n2"));
  await using run = startNodeInformer(f);
  const ac = new AbortController();
  await run.informer.waitForSync(ac.signal);
  assert.deepEqual(names(run.informer), ["n1", "n2"]);
  assert.deepEqual(run.changes.sort(), ["add n1", "add n2"]);
  await waitFor(() => run.informer.healthy, "a healthy watch");
  run.changes.length = 0;

  await f.clients.core.createNode({ body: node("n3") });
  label(f, "n1", "one");
  f.kube.store.delete("nodes", "n2");
  await waitFor(() => run.changes.length === 3, "three changes");
  assert.deepEqual(run.changes, ["add n3", "update n1", "delete n2"]);
  assert.deepEqual(names(run.informer), ["n1", "n3"]);
  assert.equal(run.informer.get("n1")?.metadata?.labels?.step, "one");
  assert.ok(
    run.informer.get("n1")?.metadata?.creationTimestamp instanceof Date,
    "watched objects are models",
  );
});

Deno.test("Informer.start() resumes after the apiserver drops every watch", async () => {
  await using f = await startFixture({ sim: SIM });
  f.kube.store.create("nodes", node("n1"));
  await using run = startNodeInformer(f);
  await waitFor(() => run.informer.synced && run.informer.healthy, "sync");
  const watchesBefore = callsStartingWith(f.kube, "WATCH");
  for (let i = 0; i < 3; i++) {
    await waitFor(() => f.kube.faults.dropWatches({ reset: i === 1 }) >= 1, `watch ${i} to drop`);
    f.kube.store.create("nodes", node(`d${i}`));
  }
  label(f, "n1", "after-drops");
  await waitFor(
    () =>
      names(run.informer).length === 4 && run.informer.get("n1")?.metadata?.labels?.step === "after-drops",
    "convergence",
  );
  await waitFor(() => run.informer.healthy, "healthy again");
  assert.deepEqual(names(run.informer), ["d0", "d1", "d2", "n1"]);
  for (const name of ["d0", "d1", "d2"]) {
    assert.ok(run.changes.includes(`add ${name}`), `add ${name} delivered`);
  }
  assert.ok(run.changes.includes("update n1"));
  assert.ok(callsStartingWith(f.kube, "WATCH") > watchesBefore, "it watched again");
});

Deno.test("Informer.start() re-lists after connections are refused and delivers what changed", async () => {
  await using f = await startFixture({ sim: SIM });
  for (const name of ["n1", "n2", "n3"]) f.kube.store.create("nodes", node(name));
  await using proxy = new TcpProxy({ port: Number(new URL(f.kube.url).port) });
  await using run = startNodeInformer(f, f.clientsVia(proxy.url));
  await waitFor(() => run.informer.synced && run.informer.healthy, "sync");
  run.changes.length = 0;

  await proxy.cut();
  await waitFor(() => !run.informer.healthy, "the informer to notice the outage");
  f.kube.store.create("nodes", node("n4"));
  f.kube.store.delete("nodes", "n1");
  label(f, "n2", "during-outage");
  const restarts = f.metrics.counter("ccm_informer_restarts_total", "", ["resource"]);
  await waitFor(() => restarts.get({ resource: "nodes" }) >= 2, "restarts with backoff while refused");
  await proxy.restore();

  await waitFor(() => run.informer.healthy && names(run.informer).join() === "n2,n3,n4", "convergence");
  assert.deepEqual(run.changes.sort(), ["add n4", "delete n1", "update n2"]);
  assert.equal(run.informer.get("n2")?.metadata?.labels?.step, "during-outage");
  assert.equal(f.metrics.gauge("ccm_informer_healthy", "", ["resource"]).get({ resource: "nodes" }), 1);
  await run[Symbol.asyncDispose]();
  assert.doesNotMatch(f.metrics.render(), /^ccm_informer_healthy\{/m, "a stopped informer reports no health");
});

Deno.test("Informer.start() survives an apiserver that refuses connections for a window", async () => {
  await using f = await startFixture({ sim: SIM });
  f.kube.store.create("nodes", node("n1"));
  await using run = startNodeInformer(f);
  await waitFor(() => run.informer.synced && run.informer.healthy, "sync");
  const outage = f.kube.faults.refuseConnections(300);
  await waitFor(() => !run.informer.healthy, "the informer to notice the outage");
  f.kube.store.create("nodes", node("n2"));
  await outage;
  await waitFor(() => run.informer.healthy && names(run.informer).join() === "n1,n2", "convergence");
  assert.ok(run.changes.includes("add n2"));
});

Deno.test("Informer.start() keeps retrying list errors (5xx) until the list succeeds", async () => {
  await using f = await startFixture({ sim: SIM });
  f.kube.store.create("nodes", node("n1"));
  const removeFault = f.kube.faults.add({ method: "GET", route: "/api/v1/nodes", status: 500 });
  await using run = startNodeInformer(f);
  const restarts = f.metrics.counter("ccm_informer_restarts_total", "", ["resource"]);
  await waitFor(() => restarts.get({ resource: "nodes" }) >= 3, "several failed lists");
  assert.equal(run.informer.synced, false);
  assert.equal(run.informer.healthy, false);
  removeFault();
  await waitFor(() => run.informer.synced && run.informer.healthy, "sync after the fault");
  assert.deepEqual(names(run.informer), ["n1"]);

  // A failing watch and re-list after sync: changes made meanwhile still arrive.
  const removeWatchFault = f.kube.faults.add({ method: "WATCH", route: "/api/v1/nodes", status: 503 });
  const removeListFault = f.kube.faults.add({ method: "GET", route: "/api/v1/nodes", status: 500, times: 2 });
  f.kube.faults.dropWatches({ reset: true });
  f.kube.store.create("nodes", node("n2"));
  await waitFor(() => !run.informer.healthy, "unhealthy while the watch fails");
  removeWatchFault();
  removeListFault();
  await waitFor(() => run.informer.healthy && names(run.informer).join() === "n1,n2", "convergence");
  assert.ok(run.changes.includes("add n2"));
});

Deno.test("Informer.waitForSync() rejects when aborted before sync", async () => {
  await using f = await startFixture({ sim: SIM });
  const removeFault = f.kube.faults.add({ method: "GET", route: "/api/v1/nodes", status: 500 });
  await using run = startNodeInformer(f);
  const ac = new AbortController();
  const waiting = run.informer.waitForSync(ac.signal);
  ac.abort(new Error("stop waiting"));
  await assert.rejects(waiting, /stop waiting/);
  removeFault();
});

Deno.test("Informer.start() with a label selector sees objects enter and leave it", async () => {
  await using f = await startFixture({ sim: SIM });
  f.kube.store.create("nodes", node("in", { labels: { step: "a" } }));
  f.kube.store.create("nodes", node("out", { labels: { step: "b" } }));
  await using run = startNodeInformer(f, f.clients, "step=a");
  await waitFor(() => run.informer.synced && run.informer.healthy, "sync");
  assert.deepEqual(names(run.informer), ["in"]);
  label(f, "in", "b");
  label(f, "out", "a");
  await waitFor(() => names(run.informer).join() === "out", "the selection to move");
  assert.deepEqual(run.changes, ["add in", "delete in", "add out"]);
});

Deno.test("Informer with trimNode keeps only what the controllers read, from the list and from the watch", async () => {
  await using f = await startFixture({ sim: SIM });
  const images = [{ names: ["registry.k8s.io/pause:3.9"], sizeBytes: 300_000 }];
  const labels = { "node.kubernetes.io/instance-type": "g6-standard-2", "kubernetes.io/hostname": "h" };
  const taints = [
    { key: "node.cloudprovider.kubernetes.io/uninitialized", value: "true", effect: "NoSchedule" },
    { key: "dedicated", effect: "NoExecute", timeAdded: "2026-11-26T10:00:00.000Z" },
  ];
  const withImages = (name: string) => ({
    ...node(name),
    metadata: { ...node(name).metadata, labels },
    spec: { taints },
    status: {
      images,
      addresses: [{ type: "Hostname", address: name }],
      capacity: { cpu: "2" },
      conditions: [{
        type: "Ready",
        status: "True",
        reason: "KubeletReady",
        message: "kubelet is posting ready status",
        lastHeartbeatTime: "2026-11-26T10:00:00Z",
        lastTransitionTime: "2026-11-26T09:00:00Z",
      }],
    },
  });
  f.kube.store.create("nodes", withImages("n1"));
  const informer = new Informer(f.clients.kc, nodeSource(f.clients.core), {
    log: componentLogger("informer-test"),
    metrics: f.metrics,
    transform: trimNode,
  });
  const ac = new AbortController();
  const done = informer.start(ac.signal);
  try {
    await informer.waitForSync(ac.signal);
    await waitFor(() => informer.healthy, "a healthy watch");
    f.kube.store.create("nodes", withImages("n2"));
    await waitFor(() => informer.get("n2") !== undefined, "n2 watched");
    for (const name of ["n1", "n2"]) {
      const kept = informer.get(name);
      assert.equal(kept?.status?.images, undefined, `${name}: no images`);
      assert.equal(kept?.status?.capacity, undefined, `${name}: no capacity`);
      assert.deepEqual(JSON.parse(JSON.stringify(kept?.status?.addresses)), [{
        type: "Hostname",
        address: name,
      }]);
      assert.deepEqual(
        JSON.parse(JSON.stringify(kept?.status?.conditions)),
        [{ type: "Ready", status: "True", reason: "KubeletReady" }],
        `${name}: a condition's type, status and reason only`,
      );
      assert.equal(kept?.metadata?.name, name);
      assert.ok(kept?.metadata?.resourceVersion, `${name}: resourceVersion kept`);
      assert.deepEqual(kept?.metadata?.labels, labels, `${name}: labels as they are`);
      assert.deepEqual(JSON.parse(JSON.stringify(kept?.spec?.taints)), taints, `${name}: taints as they are`);
    }
    const [a, b] = ["n1", "n2"].map((n) => informer.get(n)?.status?.conditions?.[0]?.reason);
    assert.equal(a, b);
    // Trimmed as wire JSON, then decoded: the watched Node's timestamps are models as the listed one's.
    for (const name of ["n1", "n2"]) {
      assert.ok(
        informer.get(name)?.metadata?.creationTimestamp instanceof Date,
        `${name}: decoded after trimming`,
      );
    }
  } finally {
    ac.abort();
    await done;
  }
});

Deno.test("Informer on an idle resource resumes each watch from the bookmark before its timeout: no relist when history moves on", async () => {
  // Bookmarks only at a watch's end (the periodic ones a minute apart), a history of 300 ms, and other
  // objects written all along: a watch resumed from the list's resourceVersion would be answered 410.
  await using f = await startFixture({ sim: { bookmarkIntervalMs: 60_000, watchHistoryMs: 300 } });
  f.kube.store.create("nodes", node("n1"));
  await using run = startNodeInformer(f, f.clients, undefined, 1_500);
  await run.informer.waitForSync(new AbortController().signal);
  const lists = () => f.kube.calls.count("GET /api/v1/nodes");
  const watches = () => f.kube.calls.count("WATCH /api/v1/nodes");
  for (let i = 0; watches() < 4; i++) {
    f.kube.store.create("secrets", { metadata: { name: `s-${i}`, namespace: "default" } });
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(lists(), 1, "every watch resumed where the last one ended");
  f.kube.store.create("nodes", node("n2"));
  await waitFor(() => names(run.informer).includes("n2"), "the new Node");
  assert.deepEqual(run.changes, ["add n1", "add n2"]);
});

function policy(clock: FakeClock, metrics = new Registry()): RestartPolicy {
  return new RestartPolicy({
    resource: "nodes",
    log: componentLogger("informer-restart-test"),
    metrics,
    clock,
    backoff: { baseMs: 100, maxMs: 1000, jitter: 0 },
    minWatchMs: 1000,
  });
}

Deno.test("RestartPolicy.waitAfterFailure() counts, backs off and doubles the delay", async () => {
  const clock = new FakeClock();
  const metrics = new Registry();
  const p = policy(clock, metrics);
  const signal = new AbortController().signal;
  const first = p.waitAfterFailure(new Error("refused"), signal);
  await clock.advance(99);
  assert.equal(clock.pendingSleeps, 1);
  await clock.advance(1);
  assert.equal(await first, true);
  const second = p.waitAfterFailure(new Error("refused"), signal);
  await clock.advance(199);
  assert.equal(clock.pendingSleeps, 1);
  await clock.advance(1);
  assert.equal(await second, true);
  assert.equal(p.failures, 2);
  assert.equal(metrics.counter("ccm_informer_restarts_total", "").get({ resource: "nodes" }), 2);
});

Deno.test("RestartPolicy.waitAfterFailure() returns false when aborted while sleeping", async () => {
  const clock = new FakeClock();
  const p = policy(clock);
  const ac = new AbortController();
  const waiting = p.waitAfterFailure("boom", ac.signal);
  ac.abort();
  assert.equal(await waiting, false);
});

Deno.test("RestartPolicy.waitAfterClose() resets after a watch that saw events or lived long enough", async () => {
  const clock = new FakeClock();
  const p = policy(clock);
  const signal = new AbortController().signal;
  const failed = p.waitAfterFailure("boom", signal);
  await clock.advance(100);
  await failed;
  assert.equal(p.failures, 1);
  await p.waitAfterClose({ events: 1, startedAt: clock.monotonic() }, signal);
  assert.equal(p.failures, 0);
  const failedAgain = p.waitAfterFailure("boom", signal);
  await clock.advance(100);
  await failedAgain;
  await clock.advance(1000);
  await p.waitAfterClose({ events: 0, startedAt: clock.monotonic() - 1000 }, signal);
  assert.equal(p.failures, 0);
});

Deno.test("RestartPolicy.waitAfterClose() backs off when watches close at once without events", async () => {
  const clock = new FakeClock();
  const p = policy(clock);
  const signal = new AbortController().signal;
  const waiting = p.waitAfterClose({ events: 0, startedAt: clock.monotonic() }, signal);
  assert.equal(clock.pendingSleeps, 1);
  await clock.advance(100);
  await waiting;
  assert.equal(p.failures, 1);
});
