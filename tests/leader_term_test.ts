/**
 * A leader term that fails ends the run, through the same `runCcm` that `main.ts` uses: the Lease is handed
 * back and the outcome is "failed" (main exits 1), with and without leader election. The failure is a value
 * that slipped past validation (an IPv6 LINODE_EXTERNAL_SUBNET, as before validation learned to refuse it):
 * the controllers' setup throws when the term starts.
 */
import assert from "node:assert/strict";
import { type CcmOutcome, runCcm } from "../ccm.ts";
import { FakeClock } from "../common/clock.ts";
import { captureLogs } from "../common/log.ts";
import { type Config, parseConfig } from "../config/config.ts";
import { Registry } from "../common/metrics.ts";
import { startDemoWorld } from "../sim/demo_world.ts";
import { waitFor } from "./process.ts";

/** A parsed config with an external subnet the node controllers cannot parse. */
function brokenConfig(args: string[], env: Record<string, string>): Config {
  const parsed = parseConfig(args, env);
  if (parsed.kind !== "run") throw new Error(parsed.kind);
  return { ...parsed.config, linode: { ...parsed.config.linode, externalSubnet: "fd00::/64" } };
}

function leaseHolder(
  world: { kube: { store: { get(r: string, n: string, ns?: string): unknown } } },
): unknown {
  const lease = world.kube.store.get("leases", "cloud-controller-manager", "kube-system") as
    | { spec?: { holderIdentity?: string } }
    | undefined;
  return lease?.spec?.holderIdentity;
}

for (const elect of [true, false]) {
  Deno.test(`runCcm() resolves failed when the leader term throws (--leader-elect=${elect})`, async () => {
    await using world = await startDemoWorld({ nodes: 1, services: 0 });
    const logs = await captureLogs("info");
    const config = brokenConfig(["--secure-port=0", `--leader-elect=${elect}`], world.env);
    const stop = new AbortController();
    let outcome: CcmOutcome | undefined;
    const run = runCcm(
      config,
      { clock: new FakeClock(), metrics: new Registry(), hostname: "term" },
      stop.signal,
    );
    const settled = run.then((o) => outcome = o, (e) => outcome = e);
    try {
      // No clock advance, no signal: the failure alone ends the run.
      await waitFor(() => outcome !== undefined, { what: "runCcm() to end on its own", timeoutMs: 10_000 });
      assert.equal(outcome, "failed");
      assert.equal(leaseHolder(world), elect ? "" : undefined, "the Lease is handed back");
      assert.match(logs.text(), /Invalid IPv4 CIDR fd00::\/64/);
    } finally {
      stop.abort();
      await settled;
    }
  });
}
