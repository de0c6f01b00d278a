import assert from "node:assert/strict";
import type { V1Lease, V1Node } from "@kubernetes/client-node";
import { captureLogs } from "../common/log.ts";
import { DryRunWriteError } from "../common/write_guard.ts";
import { isInitialised } from "./ccm_fixture.ts";
import {
  fetchHealthPort,
  fetchPlan,
  fieldChanges,
  kubeWrites,
  linodeWrites,
  servingFlags,
  startShadowWorld,
} from "./shadow_fixture.ts";
import { CCM_LEASE } from "../sim/go_ccm_world.ts";
import { clientFor } from "../linode/testdata/test_support.ts";

/** One pending action per controller (and its consequences). */
const DRIFT = {
  nodeWithoutBackends: true,
  uninitialisedNode: true,
  missingRoute: true,
  unpinnedDefaults: true,
};
const DRY_RUN = ["--dry-run", "--leader-elect=true"];

function planned(actions: readonly { controller: string; action: string; object: string }[]): string[] {
  return actions.map((a) => `${a.controller} ${a.action} ${a.object}`).sort();
}

function leaseHolder(w: { go: { kube: { store: { get(r: string, n: string, ns: string): unknown } } } }) {
  const lease = w.go.kube.store.get("leases", CCM_LEASE.name, CCM_LEASE.namespace) as V1Lease | undefined;
  return lease?.spec?.holderIdentity;
}

Deno.test("runCcm() --dry-run on the Go CCM's world writes nothing and plans each drift; a normal start then does exactly that", async () => {
  await using w = await startShadowWorld(DRIFT);
  const { drift } = w.go;
  const logs = await captureLogs("info");
  let plan;
  {
    await using shadow = await w.ccm([...DRY_RUN, ...servingFlags()]);
    await shadow.tick(60_000, 5_000);
    assert.deepEqual(linodeWrites(w.go), [], "no Linode request but GET");
    assert.deepEqual(kubeWrites(w.go), [], "no Kubernetes write: no Lease, Event, finalizer or status");
    assert.equal(leaseHolder(w), w.go.lease.identity, "the Go CCM keeps the Lease");
    assert.ok(w.go.lease.renewing);
    plan = await fetchPlan(shadow);
    const ready = await fetchHealthPort(shadow, "/readyz?verbose");
    assert.equal(ready.headers.get("x-ccm-leader"), "false", "ready, and no leader");
    assert.match(await ready.text(), /leader-election ok: standby/);
    const gauge = shadow.metrics.gauge("ccm_plan_pending_actions", "", ["controller", "action"]);
    assert.equal(gauge.get({ controller: "service", action: "adopt-nodebalancer" }), 2);
  }
  assert.equal(plan.dryRun, true);
  const missing = drift.missingRoute;
  const fresh = w.go.nodes.find((n) => n.name === drift.uninitialisedNode);
  assert.ok(missing && fresh);
  const routes = plan.pending.filter((a) => a.action === "add-ranges").map((a) => a.object);
  assert.deepEqual(routes.map((o) => o.replace(/ interface \d+$/, "")).sort(), [
    `linode ${missing.linodeId}`,
    `linode ${fresh.linodeId}`,
  ]);
  assert.deepEqual(planned(plan.pending.filter((a) => a.action !== "add-ranges")), [
    "cloud-node initialise-node go-node-5",
    // The Go CCM set NetworkUnavailable on the Nodes it routed; only the new Node needs it.
    "route set-condition go-node-5",
    "service adopt-nodebalancer default/api",
    "service adopt-nodebalancer default/web",
  ]);
  const web = fieldChanges(plan.pending.filter((a) => a.object === "default/web"));
  for (const line of ["client_conn_throttle: 0 → 20", "configs[80/tcp].check_passive: true → false"]) {
    assert.ok(web.some((l) => l.endsWith(line)), `web plans ${line}`);
  }
  assert.ok(web.some((l) => l.includes(`nodes[${drift.nodeWithoutBackends}]: null →`)), "new Node added");
  const records = logs.lines.map((l) => JSON.parse(l));
  assert.ok(records.some((r) => r.message.includes("taking no part in leader election")));
  for (const a of plan.pending) {
    const said = records.filter((r) =>
      r.component === "plan" && r.object === a.object && r.action === a.action
    );
    assert.deepEqual(said.at(-1)?.changes, a.changes, `${a.action} ${a.object} logged as planned`);
  }
  assert.ok(!records.some((r) => r.level === "ERROR"), "the client guard never had to refuse a write");

  w.go.linode.calls.reset();
  w.go.kube.calls.reset();
  await using normal = await w.ccm(servingFlags());
  await normal.tick(60_000, 5_000);
  const done = await fetchPlan(normal);
  assert.deepEqual(fieldChanges(done.carriedOut), fieldChanges(plan.pending), "the same fields, same values");
  assert.ok(isInitialised(w.go.kube.store.get("nodes", fresh.name) as V1Node | undefined));
  assert.deepEqual(w.go.linode.world.ipRanges(missing.linodeId), [missing.podCidr]);
  assert.deepEqual(w.go.linode.world.ipRanges(fresh.linodeId), [fresh.podCidr]);
  const webNb = w.go.linode.world.nodeBalancer(w.go.services[0]?.nodeBalancerId ?? 0);
  assert.equal(webNb?.client_conn_throttle, 20);
  assert.deepEqual(webNb?.configs[0]?.nodes.map((n) => n.label).sort(), w.go.nodes.map((n) => n.name).sort());
  assert.ok(linodeWrites(w.go).length > 0 && kubeWrites(w.go).length > 0);
});

Deno.test("runCcm() --dry-run drops an action from the plan once someone else carries it out", async () => {
  await using w = await startShadowWorld(DRIFT);
  const { drift } = w.go;
  const logs = await captureLogs("info");
  await using shadow = await w.ccm(DRY_RUN);
  const missing = drift.missingRoute;
  assert.ok(missing);
  const pending = () => shadow.ccm.shadow.pending();
  const routeHeld = () => pending().some((a) => a.object.startsWith(`linode ${missing.linodeId} `));
  const webAction = () => pending().find((a) => a.object === "default/web");
  const throttle = () => webAction()?.changes.find((c) => c.field === "client_conn_throttle");
  assert.ok(routeHeld());
  assert.deepEqual([throttle()?.old, throttle()?.new], [0, 20]);
  // The Go CCM, still running, adds the missing route; someone sets the throttle the Service now wants.
  w.go.linode.world.setIpRanges(missing.linodeId, [missing.podCidr]);
  const { client } = clientFor(w.go.linode);
  await client.nodeBalancers.update(w.go.services[0]?.nodeBalancerId ?? 0, { client_conn_throttle: 20 });
  await shadow.advanceUntil(() => !routeHeld(), {
    what: "the route action to leave the plan",
    stepMs: 5_000,
  });
  // The next orphan check (hourly) lists NodeBalancers again and sees this one changed.
  await shadow.advanceUntil(() => throttle() === undefined, {
    what: "the throttle change to leave the web action",
    stepMs: 60_000,
  });
  assert.ok(webAction(), "the other changes (defaults, ownership tag, backends) are still to be made");
  const said = logs.lines.map((l) => JSON.parse(l).message).filter((m) => m.startsWith("plan:"));
  assert.ok(said.some((m) => m.includes("no longer needs to") && m.includes(`linode ${missing.linodeId} `)));
  assert.ok(said.some((m) => m.includes("would now") && m.includes("default/web")));
});

Deno.test("runCcm() --dry-run plans a new Service's finalizer, NodeBalancer and status; a normal start makes them", async () => {
  await using w = await startShadowWorld({});
  w.go.kube.store.create("services", {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "shop", namespace: "default" },
    spec: { type: "LoadBalancer", selector: { app: "shop" }, ports: [{ port: 443, protocol: "TCP" }] },
  });
  const nbs = w.go.linode.world.nodeBalancers().length;
  let plan;
  {
    await using shadow = await w.ccm(DRY_RUN);
    await shadow.tick(30_000, 5_000);
    plan = shadow.ccm.shadow.pending().filter((a) => a.object === "default/shop");
  }
  assert.deepEqual(plan.map((a) => a.action), ["add-finalizer", "create-nodebalancer", "set-status"]);
  const create = plan[1]?.changes ?? [];
  assert.deepEqual(create.find((c) => c.field === "configs[443/tcp]")?.new, "tcp");
  assert.deepEqual(create.find((c) => c.field === "client_conn_throttle")?.new, 20);
  assert.deepEqual(linodeWrites(w.go), []);
  assert.equal(w.go.linode.world.nodeBalancers().length, nbs);
  await using normal = await w.ccm([]);
  await normal.tick(30_000, 5_000);
  const done = normal.ccm.shadow.carriedOut().filter((a) => a.object === "default/shop");
  assert.deepEqual(done.map((a) => a.action), ["add-finalizer", "create-nodebalancer", "set-status"]);
  assert.equal(w.go.linode.world.nodeBalancers().length, nbs + 1);
});

Deno.test("runCcm() --dry-run: a write that skips the plan is refused by both clients, loudly", async () => {
  await using w = await startShadowWorld({});
  await using shadow = await w.ccm(DRY_RUN);
  const nb = w.go.services[0]?.nodeBalancerId ?? 0;
  await assert.rejects(shadow.ccm.linode.nodeBalancers.delete(nb), DryRunWriteError);
  await assert.rejects(
    shadow.ccm.kube.core.patchNode({ name: "go-node-1", body: { metadata: { labels: { a: "b" } } } }),
    DryRunWriteError,
  );
  assert.ok(w.go.linode.world.nodeBalancer(nb));
  assert.deepEqual([...linodeWrites(w.go), ...kubeWrites(w.go)], []);
  const refused = shadow.metrics.counter("ccm_dry_run_refused_writes_total", "", ["client"]);
  assert.deepEqual([refused.get({ client: "linode" }), refused.get({ client: "kubernetes" })], [1, 1]);
});

Deno.test("runCcm() --dry-run reads no more from the Linode API than a normal run over the same world", async () => {
  const gets = async (flags: readonly string[]) => {
    await using w = await startShadowWorld(DRIFT);
    await using ccm = await w.ccm(flags);
    // Two orphan checks (hourly), 24 service resyncs, an hour of route resyncs and cache periods.
    await ccm.tick(3_700_000, 60_000);
    return w.go.linode.calls.log.filter((c) => c.method === "GET").length;
  };
  const dry = await gets(DRY_RUN);
  const normal = await gets([]);
  assert.ok(dry <= normal, `dry run ${dry} GETs, normal run ${normal} GETs`);
});
