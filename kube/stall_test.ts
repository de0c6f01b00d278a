/**
 * A response whose body stalls after its headers: the request timeout covers the whole request, body included,
 * and an informer's list ends with its stop signal. The emulator's `stallBody` fault holds the rest of the body
 * until it closes, so without these bounds the calls below would hang until the test's own end.
 */
import assert from "node:assert/strict";
import { loadKubeConfig } from "./config.ts";
import { makeKubeClients, nodeSource } from "./clients.ts";
import { node, startFixture } from "./testdata/fixtures.ts";
import { Informer } from "./informer.ts";
import { KubeApiError } from "./requests.ts";
import { componentLogger } from "../common/log.ts";

Deno.test("a Kubernetes request whose body stalls after the headers times out", async () => {
  await using f = await startFixture();
  f.kube.store.create("nodes", node("n1"));
  const clients = makeKubeClients(loadKubeConfig({ kubeconfig: f.kubeconfigPath }), {
    metrics: f.metrics,
    requestTimeoutMs: 200,
  });
  f.kube.faults.add({ method: "GET", route: "/api/v1/nodes", stallBody: true, times: 1 });
  // A guard far above the 200 ms timeout, so a request that never ends fails the test instead of hanging it.
  const hung = new Promise((r) => setTimeout(() => r("still pending after 5 s"), 5_000));
  const outcome = await Promise.race([
    clients.core.listNode().then(() => "answered", (e: unknown) => e),
    hung,
  ]);
  assert.ok(outcome instanceof KubeApiError, String(outcome));
  assert.equal(outcome.reason, "Timeout");
  // The next request is served in full.
  assert.deepEqual((await clients.core.listNode()).items.map((n) => n.metadata?.name), ["n1"]);
});

Deno.test("Informer.start() returns at once when stopped during a list whose body stalls", async () => {
  await using f = await startFixture();
  f.kube.store.create("nodes", node("n1"));
  f.kube.faults.add({ method: "GET", route: "/api/v1/nodes", stallBody: true });
  const informer = new Informer(f.clients.kc, nodeSource(f.clients.core), {
    log: componentLogger("informer-test"),
    metrics: f.metrics,
  });
  const stop = new AbortController();
  const running = informer.start(stop.signal);
  while (f.kube.calls.count("GET /api/v1/nodes") === 0) await new Promise((r) => setTimeout(r, 5));
  await new Promise((r) => setTimeout(r, 50));
  stop.abort();
  let stopped = false;
  const ended = running.then(() => stopped = true);
  // No wall-clock bound: the list is aborted by the stop itself, so it ends as soon as the abort is handled.
  await Promise.race([ended, new Promise((r) => setTimeout(r, 2_000))]);
  assert.equal(stopped, true, "the informer kept waiting for the stalled list");
  assert.equal(informer.synced, false);
  f.kube.faults.clear();
});
