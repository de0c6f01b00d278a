import assert from "node:assert/strict";
import { runCcm, type RunningCcm } from "./ccm.ts";
import { FakeClock } from "./common/clock.ts";
import { type Config, parseConfig } from "./config/config.ts";
import { checkToken } from "./linode/token.ts";
import { Registry } from "./common/metrics.ts";
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

Deno.test("runCcm() hands main the secrets to redact: a token read from LINODE_API_TOKEN_FILE and the kube token", async () => {
  const token = "tok-from-file-4e1a9c7b2d5f8e03";
  await using world = await startDemoWorld({ nodes: 1, services: 0, linodeToken: token });
  const dir = await Deno.makeTempDir({ prefix: "ccm-secrets-" });
  const stop = new AbortController();
  try {
    await Deno.writeTextFile(`${dir}/token`, `${token}\n`);
    const { LINODE_API_TOKEN: _, ...env } = world.env;
    const config = configFor(
      ["--secure-port=0", "--leader-elect=false", "--enable-token-health-checker"],
      { ...env, LINODE_API_TOKEN_FILE: `${dir}/token` },
    );
    const started = Promise.withResolvers<RunningCcm>();
    const clock = new FakeClock();
    const run = runCcm(config, {
      clock,
      metrics: new Registry(),
      hostname: "secrets",
      onStarted: (ccm) => started.resolve(ccm),
    }, stop.signal);
    run.catch((e) => started.reject(e));
    const ccm = await started.promise;
    // The start-up token check has read the file by now.
    assert.deepEqual([...ccm.secrets()].sort(), [token, world.kube.token].sort());
    // After a rotation the new token is read at the next call (the API refuses it here: the sim knows the old
    // one); the old token may still sit in an error or a buffer, so both stay redacted.
    const rotated = "tok-rotated-7c2e5a9f1b3d6e48";
    await Deno.writeTextFile(`${dir}/token`, rotated);
    // The file is read again once LINODE_API_TOKEN_CACHE_TTL_SECONDS (default 60, as the Go CCM) has passed.
    await clock.advance(60_000);
    await checkToken(ccm.linode, stop.signal).catch(() => {});
    assert.deepEqual([...ccm.secrets()].sort(), [token, rotated, world.kube.token].sort());
    stop.abort();
    assert.equal(await run, "stopped");
  } finally {
    stop.abort();
    await Deno.remove(dir, { recursive: true });
  }
});
