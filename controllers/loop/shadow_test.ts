import assert from "node:assert/strict";
import { FakeClock } from "../../common/clock.ts";
import { captureLogs, componentLogger } from "../../common/log.ts";
import { Registry } from "../../common/metrics.ts";
import { type ActionSpec, ShadowRecorder } from "./shadow.ts";

function recorder(dryRun: boolean) {
  const metrics = new Registry();
  const clock = new FakeClock();
  const plan = new ShadowRecorder({ dryRun, log: componentLogger("plan"), metrics, clock, historySize: 3 });
  const gauge = (controller: string, action: string) =>
    metrics.gauge("ccm_plan_pending_actions", "", ["controller", "action"]).get({ controller, action });
  return { plan, clock, gauge };
}

const INIT: ActionSpec = {
  action: "initialise-node",
  object: "node-4",
  changes: [{ field: "spec.providerID", old: null, new: "linode://4" }],
};

/** One reconcile of `scope` that holds `actions`; resolves to what `hold` answered. */
function pass(plan: ShadowRecorder, scope: string, ...actions: ActionSpec[]): Promise<boolean[]> {
  return plan.within("cloud-node", scope, (s) => Promise.resolve(actions.map((a) => s.hold(a))));
}

function planLines(lines: string[]): string[] {
  return lines.map((l) => JSON.parse(l)).filter((r) => r.component === "plan").map((r) => r.message);
}

Deno.test("ShadowRecorder.within() in dry run holds the write and logs a new action once, however often it is decided", async () => {
  const { plan, gauge } = recorder(true);
  const logs = await captureLogs("info");
  assert.deepEqual(await pass(plan, "node-4", INIT), [true]);
  await pass(plan, "node-4", INIT);
  await pass(plan, "node-4", INIT);
  assert.deepEqual(planLines(logs.lines), ['plan: "cloud-node" would "initialise-node" "node-4"']);
  const record = JSON.parse(logs.lines.find((l) => l.includes("would")) ?? "{}");
  assert.deepEqual(record.changes, INIT.changes);
  assert.deepEqual(plan.pending().map((a) => [a.controller, a.action, a.object]), [
    ["cloud-node", "initialise-node", "node-4"],
  ]);
  assert.equal(gauge("cloud-node", "initialise-node"), 1);
  assert.deepEqual(plan.carriedOut(), []);
});

Deno.test("ShadowRecorder.within() drops an action a later reconcile no longer holds, and logs it leaving", async () => {
  const { plan, gauge } = recorder(true);
  const logs = await captureLogs("info");
  await pass(plan, "node-4", INIT);
  await pass(plan, "node-5", { ...INIT, object: "node-5" });
  assert.equal(gauge("cloud-node", "initialise-node"), 2);
  await pass(plan, "node-4");
  assert.deepEqual(plan.pending().map((a) => a.object), ["node-5"]);
  assert.equal(gauge("cloud-node", "initialise-node"), 1);
  assert.ok(
    planLines(logs.lines).includes('plan: "cloud-node" no longer needs to "initialise-node" "node-4"'),
  );
  plan.forget("cloud-node", "node-5");
  assert.deepEqual(plan.pending(), []);
  assert.equal(gauge("cloud-node", "initialise-node"), 0);
});

Deno.test("ShadowRecorder.within() keeps a scope's actions when its reconcile fails", async () => {
  const { plan } = recorder(true);
  await pass(plan, "node-4", INIT);
  const failing = plan.within("cloud-node", "node-4", (s) => {
    s.hold({ ...INIT, action: "update-node" });
    return Promise.reject(new Error("cache stale"));
  });
  await assert.rejects(failing, /cache stale/);
  assert.deepEqual(plan.pending().map((a) => a.action), ["initialise-node"]);
});

Deno.test("ShadowRecorder.within() treats changed field values as another action, keeping the first sighting's time", async () => {
  const { plan, clock } = recorder(true);
  await pass(plan, "node-4", INIT);
  const first = plan.pending()[0]?.since;
  await clock.advance(60_000);
  await pass(plan, "node-4", INIT);
  assert.equal(plan.pending()[0]?.since, first);
  const logs = await captureLogs("info");
  await pass(plan, "node-4", {
    ...INIT,
    changes: [{ field: "spec.providerID", old: null, new: "linode://5" }],
  });
  assert.notEqual(plan.pending()[0]?.since, first);
  assert.equal(plan.pending().length, 1);
  assert.deepEqual(planLines(logs.lines), ['plan: "cloud-node" would now "initialise-node" "node-4"']);
});

Deno.test("ShadowRecorder.within() in a normal run lets every write go ahead and keeps the latest ones carried out", async () => {
  const { plan, gauge } = recorder(false);
  const logs = await captureLogs("info");
  assert.deepEqual(await pass(plan, "node-4", INIT, { ...INIT, action: "a2" }), [false, false]);
  await pass(plan, "node-5", { ...INIT, action: "a3" }, { ...INIT, action: "a4" });
  assert.deepEqual(plan.pending(), []);
  assert.deepEqual(plan.carriedOut().map((a) => a.action), ["a2", "a3", "a4"]);
  assert.equal(gauge("cloud-node", "initialise-node"), 0);
  assert.deepEqual(planLines(logs.lines), []);
});
