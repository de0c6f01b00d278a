import assert from "node:assert/strict";
import { FakeClock, systemClock } from "../common/clock.ts";
import { componentLogger } from "../common/log.ts";
import { Registry } from "../common/metrics.ts";
import { startLinodeSim } from "../sim/linode/server.ts";
import { clientFor } from "./testdata/test_support.ts";
import { checkToken, fileToken, staticToken, TokenError, watchTokenHealth } from "./token.ts";

/** A temporary folder, removed with everything in it when the test's `await using` ends. */
async function tempDir(): Promise<{ path: string } & AsyncDisposable> {
  const path = await Deno.makeTempDir({ prefix: "ccm-token-" });
  return { path, [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }) };
}

/** Writes `content` the way the kubelet updates a Secret volume: a new dir and an atomic symlink swap. */
async function writeSecret(dir: string, version: number, content: string): Promise<void> {
  await Deno.mkdir(`${dir}/..v${version}`);
  await Deno.writeTextFile(`${dir}/..v${version}/token`, content);
  await Deno.symlink(`..v${version}`, `${dir}/..data_tmp`);
  await Deno.rename(`${dir}/..data_tmp`, `${dir}/..data`);
}

Deno.test("staticToken() trims the value and rejects an empty one", async () => {
  assert.equal(await staticToken("  abc\n").token(), "abc");
  assert.throws(() => staticToken(" \n"), TokenError);
});

Deno.test("fileToken() picks up a rotated Secret after the check interval", async () => {
  await using tmp = await tempDir();
  const dir = tmp.path;
  await writeSecret(dir, 1, "first-token\n");
  await Deno.symlink("..data/token", `${dir}/token`);
  const clock = new FakeClock();
  const source = fileToken(`${dir}/token`, { clock, minCheckIntervalMs: 1000 });
  assert.equal(await source.token(), "first-token");
  await writeSecret(dir, 2, "second-token");
  assert.equal(await source.token(), "first-token", "cached within the interval");
  await clock.advance(1000);
  assert.equal(await source.token(), "second-token");
});

Deno.test("fileToken() notices a same-size rewrite of a plain file", async () => {
  await using tmp = await tempDir();
  const dir = tmp.path;
  const path = `${dir}/token`;
  await Deno.writeTextFile(path, "aaaa");
  const clock = new FakeClock();
  const source = fileToken(path, { clock, minCheckIntervalMs: 10 });
  assert.equal(await source.token(), "aaaa");
  await Deno.writeTextFile(path, "bbbb");
  await clock.advance(10);
  assert.equal(await source.token(), "bbbb");
});

Deno.test("fileToken() names the file but never its content when it cannot be used", async () => {
  await using tmp = await tempDir();
  const dir = tmp.path;
  const clock = new FakeClock();
  const missing = fileToken(`${dir}/absent`, { clock });
  await assert.rejects(missing.token(), (e: unknown) => {
    assert.ok(e instanceof TokenError);
    assert.match(e.message, /Cannot read Linode token file .*absent: NotFound/);
    return true;
  });
  await Deno.writeTextFile(`${dir}/empty`, " \n\t");
  await assert.rejects(fileToken(`${dir}/empty`, { clock }).token(), /token file .*empty is empty/);
});

Deno.test("fileToken() keeps the last good token when a re-read fails", async () => {
  await using tmp = await tempDir();
  const dir = tmp.path;
  const path = `${dir}/token`;
  await Deno.writeTextFile(path, "good-token");
  const clock = new FakeClock();
  const source = fileToken(path, { clock, minCheckIntervalMs: 5 });
  assert.equal(await source.token(), "good-token");
  await Deno.remove(path);
  await clock.advance(5);
  assert.equal(await source.token(), "good-token");
  await Deno.writeTextFile(path, "next-token");
  assert.equal(await source.token(), "next-token", "re-checked on the next call after a failure");
});

Deno.test("TokenSource.current() is the token last handed out, for redaction", async () => {
  assert.equal(staticToken(" abc\n").current(), "abc");
  await using tmp = await tempDir();
  const dir = tmp.path;
  const path = `${dir}/token`;
  await Deno.writeTextFile(path, "file-token\n");
  const clock = new FakeClock();
  const source = fileToken(path, { clock, minCheckIntervalMs: 5 });
  assert.equal(source.current(), undefined, "nothing read yet");
  await source.token();
  assert.equal(source.current(), "file-token");
  await Deno.writeTextFile(path, "rotated-token");
  await clock.advance(5);
  await source.token();
  assert.equal(source.current(), "rotated-token");
});

Deno.test("TokenSource.seen() keeps every token handed out, so a rotated-out one stays redacted", async () => {
  assert.deepEqual(staticToken("abc").seen(), ["abc"]);
  await using tmp = await tempDir();
  const path = `${tmp.path}/token`;
  await Deno.writeTextFile(path, "first-token");
  const clock = new FakeClock();
  const source = fileToken(path, { clock, minCheckIntervalMs: 5 });
  assert.deepEqual(source.seen(), [], "nothing read yet");
  await source.token();
  for (const next of ["second-token", "first-token", "third-token"]) {
    await Deno.writeTextFile(path, next);
    await clock.advance(5);
    await source.token();
  }
  assert.equal(source.current(), "third-token");
  assert.deepEqual(source.seen(), ["first-token", "second-token", "third-token"]);
});

const log = componentLogger("token-test");

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

Deno.test("checkToken() is valid on 200, invalid on 401, and throws on a 5xx (unknown is not invalid)", async () => {
  await using sim = await startLinodeSim();
  const { client } = clientFor(sim, { maxRetries: 0 });
  assert.equal(await checkToken(client), "valid");
  sim.faults.error(503, { route: "/profile", count: 1 });
  await assert.rejects(checkToken(client), { name: "LinodeApiError", status: 503 });
  sim.setToken("rotated");
  assert.equal(await checkToken(client), "invalid");
  assert.equal(sim.calls.count("GET /v4/profile"), 3);
});

Deno.test("watchTokenHealth() checks every period, rides out 5xx, and stops at the first 401", async () => {
  await using sim = await startLinodeSim();
  const { client } = clientFor(sim, { maxRetries: 0 });
  const metrics = new Registry();
  sim.faults.error(500, { route: "/profile", count: 2 });
  const stop = new AbortController();
  const watching = watchTokenHealth({ client, clock: systemClock, log, metrics, periodMs: 10 }, stop.signal);
  await until(() => sim.calls.count("GET /v4/profile") >= 4, "four checks");
  assert.equal(metrics.gauge("ccm_linode_token_valid", "").get(), 1);
  sim.setToken("rotated");
  assert.equal(await watching, "invalid");
  assert.equal(metrics.gauge("ccm_linode_token_valid", "").get(), 0);
  assert.equal(metrics.counter("ccm_linode_token_check_errors_total", "").get(), 2);
  stop.abort();
});

Deno.test("watchTokenHealth() returns stopped when aborted, without another call", async () => {
  await using sim = await startLinodeSim();
  const { client } = clientFor(sim);
  const stop = new AbortController();
  const watching = watchTokenHealth(
    { client, clock: systemClock, log, metrics: new Registry(), periodMs: 60_000 },
    stop.signal,
  );
  stop.abort();
  assert.equal(await watching, "stopped");
  assert.equal(sim.calls.total(), 0);
});
