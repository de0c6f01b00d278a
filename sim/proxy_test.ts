import assert from "node:assert/strict";
import { startProxy } from "./proxy.ts";

/** An HTTP server on 127.0.0.1 that answers "hello <path>" and counts requests; disposing shuts it down. */
function startTarget(): AsyncDisposable & { port: number; requests: () => number } {
  let requests = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    requests++;
    return new Response(`hello ${new URL(req.url).pathname}`);
  });
  return { port: server.addr.port, requests: () => requests, [Symbol.asyncDispose]: () => server.shutdown() };
}

/** Fetches through its own HTTP client (closed after), so pooled connections never outlive a test. */
async function get(url: string, timeoutMs = 2000): Promise<string> {
  using client = Deno.createHttpClient({});
  const res = await fetch(url, { client, signal: AbortSignal.timeout(timeoutMs) });
  return await res.text();
}

Deno.test("startProxy() forwards requests to the target", async () => {
  await using target = startTarget();
  await using proxy = startProxy({ port: target.port });
  assert.match(proxy.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.equal(await get(`${proxy.url}/a`), "hello /a");
  assert.equal(await get(`${proxy.url}/b`), "hello /b");
  assert.equal(target.requests(), 2);
});

Deno.test("TcpProxy.cut() refuses connections until restore()", async () => {
  await using target = startTarget();
  await using proxy = startProxy({ port: target.port });
  const port = proxy.port;
  await proxy.cut();
  assert.equal(proxy.cutMode, "refuse");
  await assert.rejects(Deno.connect({ hostname: "127.0.0.1", port }), Deno.errors.ConnectionRefused);
  await assert.rejects(get(`${proxy.url}/x`), TypeError);
  assert.equal(target.requests(), 0);
  await proxy.restore();
  assert.equal(proxy.port, port);
  assert.equal(await get(`${proxy.url}/y`), "hello /y");
  assert.equal(target.requests(), 1);
});

Deno.test("TcpProxy.cut() closes open connections", async () => {
  await using target = startTarget();
  await using proxy = startProxy({ port: target.port });
  using conn = await Deno.connect({ hostname: "127.0.0.1", port: proxy.port });
  await conn.write(new TextEncoder().encode("GET /k HTTP/1.1\r\nHost: x\r\n\r\n"));
  const buffer = new Uint8Array(1024);
  assert.ok((await conn.read(buffer) ?? 0) > 0);
  await proxy.cut({ mode: "refuse" });
  assert.equal(proxy.connections, 0);
  assert.equal(await conn.read(buffer), null);
});

Deno.test("TcpProxy.cut() blackhole makes requests hang without reaching the target", async () => {
  await using target = startTarget();
  await using proxy = startProxy({ port: target.port });
  assert.equal(await get(`${proxy.url}/before`), "hello /before");
  await proxy.cut({ mode: "blackhole" });
  const started = performance.now();
  await assert.rejects(get(`${proxy.url}/lost`, 300), (e: unknown) => {
    return e instanceof DOMException && e.name === "TimeoutError";
  });
  assert.ok(performance.now() - started >= 290);
  assert.equal(target.requests(), 1);
  await proxy.restore();
  assert.equal(await get(`${proxy.url}/after`), "hello /after");
  assert.equal(target.requests(), 2);
});

Deno.test("TcpProxy.close() stops listening and restore() does not reopen", async () => {
  await using target = startTarget();
  const proxy = startProxy({ port: target.port });
  await proxy.close();
  await proxy.restore();
  await assert.rejects(
    Deno.connect({ hostname: "127.0.0.1", port: proxy.port }),
    Deno.errors.ConnectionRefused,
  );
});
