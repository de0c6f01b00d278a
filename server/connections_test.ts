/**
 * The secure port under abuse: slow and idle clients against the real server (`startServer`), each connection
 * phase's deadline run on a FakeClock, the caps on connections, and `/healthz` answering throughout.
 */
import assert from "node:assert/strict";
import { request } from "node:https";
import { FakeClock } from "../common/clock.ts";
import { componentLogger } from "../common/log.ts";
import { Registry } from "../common/metrics.ts";
import { waitFor } from "../tests/process.ts";
import type { RequestAuthorizer } from "./auth.ts";
import type { ConnectionPhase, DropReason } from "./connections.ts";
import { type ServerOptions, startServer } from "./serve.ts";

const encoder = new TextEncoder();

/** Writes all of `text` (one `write` may take only part of it). */
async function writeAll(conn: Deno.Conn, text: string): Promise<void> {
  const bytes = encoder.encode(text);
  for (let at = 0; at < bytes.length;) at += await conn.write(bytes.subarray(at));
}

/**
 * An authoriser that never decides on anything but `/healthz`: the request stays unanswered, as behind a
 * TokenReview that hangs.
 */
const HANGING: RequestAuthorizer = {
  authorize: (request) => request.path === "/healthz" ? Promise.resolve(null) : new Promise(() => {}),
};

/** Resolves once the server ends `conn` (EOF or reset); a real-time guard fails the test if it never does. */
async function closedByServer(conn: Deno.Conn, what: string): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} is still open`)), 10_000);
  });
  const ended = (async () => {
    try {
      while (await conn.read(new Uint8Array(4096)) !== null) { /* a 408/431 answer may come first */ }
    } catch {
      // reset by the server: closed too
    }
  })();
  try {
    await Promise.race([ended, guard]);
  } finally {
    clearTimeout(timer);
  }
}

/** Reads one whole HTTP/1.1 answer with a Content-Length body. */
async function readAnswer(conn: Deno.Conn): Promise<string> {
  let text = "";
  const buf = new Uint8Array(65536);
  for (;;) {
    const head = text.indexOf("\r\n\r\n");
    const length = Number(/content-length: (\d+)/i.exec(text)?.[1] ?? -1);
    if (head >= 0 && length >= 0 && text.length >= head + 4 + length) return text;
    const n = await conn.read(buf);
    if (n === null) return text;
    text += new TextDecoder().decode(buf.subarray(0, n));
  }
}

async function world(overrides: Partial<Omit<ServerOptions, "port">> = {}) {
  const clock = new FakeClock();
  const registry = new Registry();
  const server = await startServer({
    hostname: "127.0.0.1",
    tls: "self-signed",
    registry,
    checks: { healthz: [], readyz: [] },
    leading: () => false,
    clock,
    log: componentLogger("serve"),
    ...overrides,
    port: 0,
  });
  const conns: Deno.Conn[] = [];
  const keep = <C extends Deno.Conn>(conn: C): C => (conns.push(conn), conn);
  const tls = () =>
    Deno.connectTls({ hostname: "127.0.0.1", port: server.port, caCerts: [server.certPem] }).then(keep);
  return {
    server,
    clock,
    phase: (phase: ConnectionPhase) =>
      registry.gauge("ccm_secure_port_connections", "", ["phase"]).get({ phase }),
    dropped: (reason: DropReason) =>
      registry.counter("ccm_secure_port_connections_dropped_total", "", ["reason"]).get({ reason }),
    /** A TCP connection that never starts TLS. */
    bare: () => Deno.connect({ hostname: "127.0.0.1", port: server.port }).then(keep),
    /** A TLS connection whose request headers never end. */
    async halfSent(): Promise<Deno.TlsConn> {
      const conn = await tls();
      await writeAll(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n");
      return conn;
    },
    /** A TLS connection that sent `head` (a whole request head). */
    async sent(head: string): Promise<Deno.TlsConn> {
      const conn = await tls();
      await writeAll(conn, head);
      return conn;
    },
    /** GET /healthz on a fresh connection from `localAddress`; the status, or the error's code. */
    healthz(localAddress = "127.0.0.1"): Promise<number | string> {
      return new Promise((resolve) => {
        const req = request({
          host: "127.0.0.1",
          port: server.port,
          path: "/healthz",
          ca: server.certPem,
          agent: false,
          localAddress,
        }, (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        });
        req.on("error", (e: Error & { code?: string }) => resolve(e.code ?? e.message));
        req.end();
      });
    },
    async [Symbol.asyncDispose]() {
      for (const conn of conns) {
        try {
          conn.close();
        } catch {
          // closed already
        }
      }
      await server.close();
    },
  };
}

Deno.test("startServer() closes a bare TCP connection and 50 half-sent requests at upstream's 32 s, /healthz answering", async () => {
  await using w = await world({ limits: { maxConnectionsPerAddress: 100 } });
  const bare = await w.bare();
  await waitFor(() => w.phase("handshake") === 1, { what: "the bare connection accepted" });
  await w.clock.advance(20_000);
  const half = await Promise.all(Array.from({ length: 50 }, () => w.halfSent()));
  await waitFor(() => w.phase("headers") === 50, { what: "50 handshakes done" });
  assert.equal(await w.healthz(), 200, "/healthz answers beside 51 slow clients");

  await w.clock.advance(11_999);
  assert.equal(w.phase("handshake"), 1, "31.999 s after accept the handshake may still come");
  await w.clock.advance(1);
  await closedByServer(bare, "the bare TCP connection");
  assert.equal(w.dropped("handshake_timeout"), 1);

  await w.clock.advance(19_999);
  assert.equal(w.phase("headers"), 50, "31.999 s after their handshakes the headers may still come");
  assert.equal(await w.healthz(), 200);
  await w.clock.advance(1);
  await Promise.all(half.map((c, i) => closedByServer(c, `half-sent request ${i}`)));
  assert.equal(w.dropped("header_timeout"), 50);
  assert.equal(await w.healthz(), 200);
});

Deno.test("startServer() closes an idle keep-alive connection at 90 s and an unanswered request at 60 s", async () => {
  await using w = await world();
  const idle = await w.sent("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  assert.match(await readAnswer(idle), /^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\nok$/);
  await waitFor(() => w.phase("idle") === 1, { what: "the connection idle" });
  await w.clock.advance(89_999);
  assert.equal(w.phase("idle"), 1);
  await w.clock.advance(1);
  await closedByServer(idle, "the idle connection");
  assert.equal(w.dropped("idle_timeout"), 1);

  await using h = await world({ auth: HANGING });
  const hanging = await h.sent("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  await waitFor(() => h.phase("active") === 1, { what: "the request read" });
  await h.clock.advance(59_999);
  assert.equal(h.phase("active"), 1);
  await h.clock.advance(1);
  await closedByServer(hanging, "the unanswered request");
  assert.equal(h.dropped("response_timeout"), 1);
});

Deno.test("startServer() refuses connections over the per-address cap; other addresses still get /healthz", async () => {
  await using w = await world({ limits: { maxConnectionsPerAddress: 4 } });
  for (let i = 0; i < 4; i++) await w.bare();
  await waitFor(() => w.phase("handshake") === 4, { what: "4 connections" });
  await closedByServer(await w.bare(), "the fifth connection from 127.0.0.1");
  assert.equal(w.dropped("over_address_limit"), 1);
  assert.equal(await w.healthz("127.0.0.2"), 200, "another address is not affected");
  assert.notEqual(await w.healthz("127.0.0.1"), 200, "127.0.0.1 has spent its share");
});

Deno.test("startServer() at the cap closes the oldest quiet connection for a new one, and refuses when all answer", async () => {
  await using w = await world({ limits: { maxConnections: 6, maxConnectionsPerAddress: 100 } });
  const slow = [];
  for (let i = 0; i < 6; i++) slow.push(await w.bare());
  await waitFor(() => w.phase("handshake") === 6, { what: "6 slow connections" });
  assert.equal(await w.healthz(), 200, "a probe gets in by closing the oldest slow client");
  await closedByServer(slow[0]!, "the oldest slow connection");
  assert.equal(w.dropped("evicted"), 1);

  await using h = await world({
    auth: HANGING,
    limits: { maxConnections: 3, maxConnectionsPerAddress: 100 },
  });
  for (let i = 0; i < 3; i++) await h.sent("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  await waitFor(() => h.phase("active") === 3, { what: "3 requests waiting for their answers" });
  assert.notEqual(await h.healthz(), 200, "no quiet connection to close: refused");
  assert.equal(h.dropped("over_limit"), 1);
  await h.clock.advance(60_000);
  await waitFor(() => h.phase("active") === 0, { what: "the unanswered requests closed" });
  assert.equal(await h.healthz(), 200);
});

Deno.test("startServer() answers 431 to a request head over 64 KiB and closes", async () => {
  await using w = await world();
  const big = await w.sent(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: ${"a".repeat(70 * 1024)}\r\n\r\n`);
  assert.match(await readAnswer(big), /^HTTP\/1\.1 431 /);
  await closedByServer(big, "the connection after 431");
  const fits = await w.sent(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: ${"a".repeat(32 * 1024)}\r\n\r\n`);
  assert.match(await readAnswer(fits), /^HTTP\/1\.1 200 /);
});

Deno.test("startServer() close() ends slow connections instead of waiting for them", async () => {
  await using w = await world();
  const bare = await w.bare();
  const half = await w.halfSent();
  await waitFor(() => w.phase("handshake") + w.phase("headers") === 2, { what: "2 slow connections" });
  await w.server.close();
  await closedByServer(bare, "the bare connection");
  await closedByServer(half, "the half-sent request");
});
