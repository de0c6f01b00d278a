/** The route controller as `runCcm` wires it: flags in, pod CIDRs routed in the demo world. */
import assert from "node:assert/strict";
import type { V1Node } from "@kubernetes/client-node";
import { runCcm } from "../ccm.ts";
import { systemClock } from "../common/clock.ts";
import { parseConfig } from "../config/config.ts";
import { Registry } from "../common/metrics.ts";
import { type DemoWorld, startDemoWorld } from "../sim/mod.ts";
import { waitFor } from "./process.ts";

for (const generation of ["legacy_config", "linode"] as const) {
  Deno.test(`runCcm() with --enable-route-controller routes every Node's pod CIDR (${generation} interfaces)`, async () => {
    await using world = await startDemoWorld({
      nodes: 3,
      services: 0,
      tls: false,
      interfaceGeneration: generation,
    });
    await routesEveryNode(world);
  });
}

/** Runs the CCM with routes on against `world` until every Node's pod CIDR is routed and its condition set. */
async function routesEveryNode(world: DemoWorld): Promise<void> {
  const args = [
    "--secure-port=0",
    "--leader-elect=false",
    `--vpc-names=${world.vpcLabel}`,
    "--enable-route-controller",
    `--cluster-cidr=${world.clusterCidr}`,
  ];
  const parsed = parseConfig(args, world.env);
  if (parsed.kind !== "run") throw new Error(parsed.kind);
  assert.ok(parsed.config.controllers.has("route"));
  const stop = new AbortController();
  const run = runCcm(
    parsed.config,
    { clock: systemClock, metrics: new Registry(), hostname: "routes" },
    stop.signal,
  );
  try {
    const nodes = () => world.kube.store.list("nodes") as unknown as V1Node[];
    const routed = () =>
      nodes().every((n) => {
        const id = Number(n.spec?.providerID?.replace("linode://", ""));
        return id > 0 && world.linode.world.ipRanges(id).includes(n.spec?.podCIDR ?? "none");
      });
    await waitFor(routed, { what: "every pod CIDR routed" });
    const conditions = () =>
      nodes().map((n) => n.status?.conditions?.find((c) => c.type === "NetworkUnavailable")?.reason);
    await waitFor(() => conditions().every((r) => r === "RouteCreated"), { what: "every condition" });
  } finally {
    stop.abort();
    assert.equal(await run, "stopped");
  }
}
