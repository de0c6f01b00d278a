import assert from "node:assert/strict";
import { runCcm } from "./ccm.ts";
import { FakeClock } from "./clock.ts";
import { type Config, parseConfig } from "./config.ts";
import { Registry } from "./metrics.ts";
import { startDemoWorld } from "./sim/demo_world.ts";

function configFor(args: string[], env: Record<string, string>): Config {
  const parsed = parseConfig(args, env);
  if (parsed.kind !== "run") throw new Error(parsed.kind);
  return parsed.config;
}

Deno.test("runCcm() that cannot serve stops what it started and rejects (no leaked informer or watch)", async () => {
  await using world = await startDemoWorld({ nodes: 1, services: 0 });
  using taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const config = configFor(
    ["--bind-address=127.0.0.1", `--secure-port=${taken.addr.port}`, "--enable-token-health-checker"],
    world.env,
  );
  const clock = new FakeClock();
  const deps = { clock, metrics: new Registry(), hostname: "serve-fails" };
  await assert.rejects(runCcm(config, deps, new AbortController().signal), Deno.errors.AddrInUse);
  // The token watch and the informer sleep on this clock while they run.
  assert.equal(clock.pendingSleeps, 0, "a loop outlived runCcm()");
  assert.equal(world.kube.store.get("leases", "cloud-controller-manager", "kube-system"), undefined);
});
