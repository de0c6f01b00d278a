import assert from "node:assert/strict";
import { FakeClock } from "../common/clock.ts";
import { fileToken, staticToken, TokenError } from "./token.ts";

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
