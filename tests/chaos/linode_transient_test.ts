/**
 * The transient answers the real Linode API gives, while the cluster changes: a busy Linode (400 "Linode
 * busy."), 408, a maintenance window (503 with X-Maintenance-Mode), proxies' HTML pages (400 and 502) and a
 * 200 whose body is an HTML page. Nothing is destroyed, the quiet ones make no Warning Event, and everything
 * converges once they stop.
 */
import assert from "node:assert/strict";
import type { TransientFault } from "../../sim/linode/fault_answers.ts";
import { SafetyMonitor } from "./safety.ts";
import { report } from "./scale.ts";
import { type ChaosWorld, startChaosWorld } from "./world.ts";

/** Warning Events of a failed sync or route write. */
function failureEvents(w: ChaosWorld): number {
  return ["SyncLoadBalancerFailed", "FailedToCreateRoute", "FailedToDeleteRoute"]
    .reduce((n, reason) => n + w.events(reason).length, 0);
}

const WRITES = ["POST", "PUT", "DELETE"];

/**
 * `quiet`: answered at most twice per method and retried inside the client, so no sync fails. A 502 page may
 * come after the API acted, so a POST answered with one is not repeated (the sync fails and is retried); an
 * HTML 200 is given to reads only (after a write it would be just as ambiguous).
 */
const CASES: { name: string; fault: TransientFault; methods: string[]; quiet: boolean }[] = [
  { name: "a busy Linode (400 Linode busy.)", fault: { kind: "busy" }, methods: WRITES, quiet: true },
  {
    name: "408 Request Timeout",
    fault: { kind: "requestTimeout" },
    methods: ["GET", ...WRITES],
    quiet: true,
  },
  {
    name: "a proxy's 400 HTML page",
    fault: { kind: "htmlError", status: 400 },
    methods: ["GET", ...WRITES],
    quiet: true,
  },
  {
    name: "a proxy's 502 HTML page",
    fault: { kind: "htmlError", status: 502 },
    methods: ["GET", ...WRITES],
    quiet: false,
  },
  { name: "an HTML page with 200", fault: { kind: "htmlOk" }, methods: ["GET"], quiet: true },
  {
    name: "a maintenance window (503 X-Maintenance-Mode)",
    fault: { kind: "maintenance" },
    methods: [],
    quiet: false,
  },
];

for (const c of CASES) {
  Deno.test(`runCcm() through ${c.name} destroys nothing${c.quiet ? ", warns of nothing" : ""} and converges`, async () => {
    await using w = await startChaosWorld({ nodes: 3, services: 1 });
    using safety = new SafetyMonitor(w);
    await w.start();
    await w.converge();
    safety.baseline();
    const warningsBefore = failureEvents(w);
    const answered: Record<string, number> = {};
    const off = w.linode.calls.subscribe((call) => {
      if (call.fault === c.fault.kind) answered[call.key] = (answered[call.key] ?? 0) + 1;
    });
    // The first two requests of each method get the answer (within the client's retries). A maintenance
    // window answers everything for two minutes.
    const ids = c.methods.length === 0
      ? [w.linode.faults.transient(c.fault)]
      : c.methods.map((method) => w.linode.faults.transient(c.fault, { method, count: 2 }));
    w.addNode("late-1");
    w.addService("late-svc", 8443);
    await w.tick(c.methods.length > 0 ? 30_000 : 120_000, 1_000);
    for (const id of ids) w.linode.faults.remove(id);
    off();
    assert.ok(Object.keys(answered).length > 0, "the fault answered some requests");
    await w.converge();
    safety.assertClean();
    if (c.quiet) assert.equal(failureEvents(w), warningsBefore, "a transient answer became a Warning Event");
    assert.equal(w.linode.world.nodeBalancers().length, 2, "no NodeBalancer created twice");
    report(`transient-${c.fault.kind}`, { answered });
  });
}
