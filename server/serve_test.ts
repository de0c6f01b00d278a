import assert from "node:assert/strict";
import { FakeClock } from "../common/clock.ts";
import { captureLogs, componentLogger } from "../common/log.ts";
import { Registry } from "../common/metrics.ts";
import { waitFor } from "../tests/process.ts";
import {
  type HealthCheck,
  METRICS_CONTENT_TYPE,
  parseTarget,
  type RunningServer,
  type ServerOptions,
  startServer,
} from "./serve.ts";
import { generateSelfSignedCert, readTlsFiles } from "./tls.ts";
import { loadX509 } from "./x509.ts";

/** A check whose outcome the test flips. */
function toggle(
  name: string,
  initial: boolean | string = true,
): HealthCheck & { set(v: boolean | string): void } {
  let value = initial;
  return { name, check: () => value, set: (v) => value = v };
}

function options(overrides: Partial<Omit<ServerOptions, "port">> = {}): ServerOptions & { port: number } {
  return {
    hostname: "127.0.0.1",
    tls: "self-signed",
    registry: new Registry(),
    checks: { healthz: [], readyz: [] },
    leading: () => false,
    // Time stands still unless a test moves it.
    clock: new FakeClock(),
    log: componentLogger("serve"),
    ...overrides,
    port: 0,
  };
}

/** Starts a server and an HTTPS client that trusts only its certificate. */
async function serve(overrides: Partial<Omit<ServerOptions, "port">> = {}) {
  const server = await startServer(options(overrides));
  const client = Deno.createHttpClient({ caCerts: [server.certPem] });
  return {
    server,
    async get(path: string, init: RequestInit = {}) {
      const res = await fetch(`${server.url}${path}`, { ...init, client });
      return { status: res.status, headers: res.headers, body: await res.text() };
    },
    async [Symbol.asyncDispose]() {
      client.close();
      await server.close();
    },
  };
}

Deno.test("startServer() serves /healthz, /readyz and /metrics over HTTPS with a self-signed certificate", async () => {
  const registry = new Registry();
  registry.counter("ccm_test_total", "A test counter.").inc();
  await using s = await serve({ registry });
  assert.match(s.server.url, /^https:\/\/127\.0\.0\.1:\d+$/);
  assert.deepEqual(await s.get("/healthz").then((r) => [r.status, r.body]), [200, "ok"]);
  assert.deepEqual(await s.get("/readyz").then((r) => [r.status, r.body]), [200, "ok"]);
  const metrics = await s.get("/metrics");
  assert.equal(metrics.status, 200);
  assert.equal(metrics.headers.get("content-type"), METRICS_CONTENT_TYPE);
  assert.match(metrics.body, /^ccm_test_total 1$/m);
  // The process gauges are read at each scrape: a resident set and a heap are never empty.
  for (const name of ["process_resident_memory_bytes", "ccm_heap_used_bytes", "ccm_heap_total_bytes"]) {
    const value = Number(new RegExp(`^${name} (\\d+)$`, "m").exec(metrics.body)?.[1]);
    assert.ok(value > 1024 * 1024, `${name} ${value}`);
  }
  // CPU time only grows from scrape to scrape; the start time is this process's, in seconds.
  const cpu = (body: string) => Number(/^process_cpu_seconds_total (\S+)$/m.exec(body)?.[1]);
  const first = cpu(metrics.body);
  for (let i = 0; i < 1e6; i++) Math.sqrt(i);
  const second = cpu((await s.get("/metrics")).body);
  assert.ok(first > 0 && second >= first, `process_cpu_seconds_total ${first} then ${second}`);
  const started = Number(/^process_start_time_seconds (\S+)$/m.exec(metrics.body)?.[1]);
  assert.equal(started, Math.round(performance.timeOrigin) / 1000);
});

Deno.test("startServer() /readyz flips with its checks and reports leadership", async () => {
  const clients = toggle("linode-client");
  const informers = toggle("informers-synced", "nodes not synced");
  let leading = false;
  await using s = await serve({
    checks: { healthz: [], readyz: [clients, informers] },
    leading: () => leading,
  });

  const notReady = await s.get("/readyz");
  assert.equal(notReady.status, 500);
  assert.equal(
    notReady.body,
    "[+]ping ok\n[+]linode-client ok\n[-]informers-synced failed: nodes not synced\n" +
      "[+]leader-election ok: standby\nreadyz check failed\n",
  );

  informers.set(true);
  const standby = await s.get("/readyz?verbose");
  assert.equal(standby.status, 200, "a standby is ready");
  assert.equal(standby.headers.get("x-ccm-leader"), "false");
  assert.equal(
    standby.body,
    "[+]ping ok\n[+]linode-client ok\n[+]informers-synced ok\n[+]leader-election ok: standby\nreadyz check passed\n",
  );

  leading = true;
  const leader = await s.get("/readyz?verbose");
  assert.equal(leader.headers.get("x-ccm-leader"), "true");
  assert.match(leader.body, /^\[\+\]leader-election ok: leading$/m);

  clients.set(false);
  const failing = await s.get("/readyz");
  assert.equal(failing.status, 500);
  assert.match(failing.body, /^\[-\]linode-client failed: not ok$/m);
});

Deno.test("startServer() /healthz fails while an essential loop is dead and recovers after", async () => {
  const informer = toggle("informer-nodes");
  const throwing: HealthCheck = {
    name: "elector",
    check: () => {
      throw new Error("elector loop exited");
    },
  };
  await using s = await serve({ checks: { healthz: [informer], readyz: [] } });
  assert.equal((await s.get("/healthz")).status, 200);
  informer.set("unhealthy for 300s");
  const dead = await s.get("/healthz");
  assert.equal(dead.status, 500);
  assert.equal(dead.body, "[+]ping ok\n[-]informer-nodes failed: unhealthy for 300s\nhealthz check failed\n");
  assert.equal((await s.get("/readyz")).status, 200, "readyz has its own checks");
  informer.set(true);
  assert.deepEqual(await s.get("/healthz?verbose").then((r) => [r.status, r.body]), [
    200,
    "[+]ping ok\n[+]informer-nodes ok\nhealthz check passed\n",
  ]);

  await using t = await serve({ checks: { healthz: [throwing], readyz: [] } });
  assert.match((await t.get("/healthz")).body, /^\[-\]elector failed: elector loop exited$/m);
});

/** One sample line of the text format: name, optional labels (escaped values), value. */
const SAMPLE =
  /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\n"])*",?)*\})? (\S+)$/;

Deno.test("startServer() /metrics renders text format 0.0.4 with escaped labels", async () => {
  const registry = new Registry();
  registry.counter("ccm_linode_requests_total", "Linode API calls.", ["method", "route"])
    .inc({ method: "GET", route: 'weird "route"\\with\nnewline' }, 3);
  registry.gauge("ccm_workqueue_depth", "Keys waiting.", ["name"]).set({ name: "service" }, 2);
  registry.histogram("ccm_reconcile_duration_seconds", "Reconcile time.", ["controller"], [0.1, 1])
    .observe({ controller: "route" }, 0.5);
  await using s = await serve({ registry });
  const { body } = await s.get("/metrics");
  const lines = body.trimEnd().split("\n");
  const types = new Map<string, string>();
  for (const line of lines) {
    const meta = /^# (HELP|TYPE) (\S+) (.+)$/.exec(line);
    if (meta) {
      if (meta[1] === "TYPE") types.set(meta[2]!, meta[3]!);
      continue;
    }
    const sample = SAMPLE.exec(line);
    assert.ok(sample, `not a sample line: ${JSON.stringify(line)}`);
    assert.ok(!Number.isNaN(Number(sample[4]!.replace("+Inf", "Infinity"))), line);
    const family = sample[1]!.replace(/_(bucket|sum|count)$/, "");
    assert.ok(types.has(sample[1]!) || types.get(family) === "histogram", `TYPE before ${line}`);
  }
  assert.deepEqual(Object.fromEntries(types), {
    ccm_linode_requests_total: "counter",
    ccm_workqueue_depth: "gauge",
    ccm_reconcile_duration_seconds: "histogram",
    ccm_secure_port_connections: "gauge",
    ccm_secure_port_connections_dropped_total: "counter",
    ccm_secure_port_tls_handshake_errors_total: "counter",
    process_resident_memory_bytes: "gauge",
    ccm_heap_used_bytes: "gauge",
    ccm_heap_total_bytes: "gauge",
    process_cpu_seconds_total: "counter",
    process_start_time_seconds: "gauge",
  });
  assert.ok(
    lines.includes('ccm_linode_requests_total{method="GET",route="weird \\"route\\"\\\\with\\nnewline"} 3'),
  );
  assert.ok(lines.includes('ccm_workqueue_depth{name="service"} 2'));
  assert.ok(lines.includes('ccm_reconcile_duration_seconds_bucket{controller="route",le="+Inf"} 1'));
});

Deno.test("startServer() serves the certificate given in files", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const given = await generateSelfSignedCert({ hosts: ["127.0.0.1"], algorithm: "RSA-2048" });
    await Deno.writeTextFile(`${dir}/tls.crt`, given.certPem);
    await Deno.writeTextFile(`${dir}/tls.key`, given.keyPem);
    await using s = await serve({ tls: await readTlsFiles(`${dir}/tls.crt`, `${dir}/tls.key`) });
    assert.equal(s.server.certPem, given.certPem);
    assert.equal((await s.get("/healthz")).body, "ok");

    const other = await generateSelfSignedCert({ hosts: ["127.0.0.1"] });
    using stranger = Deno.createHttpClient({ caCerts: [other.certPem] });
    await assert.rejects(fetch(`${s.server.url}/healthz`, { client: stranger }), TypeError);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("startServer() answers 404 for other paths and 405 for other methods", async () => {
  await using s = await serve();
  for (const path of ["/", "/metricsx", "/healthz/extra", "/debug/pprof"]) {
    const res = await s.get(path);
    assert.equal(res.status, 404, path);
    assert.equal(res.body, "404 page not found\n");
  }
  assert.equal((await s.get("/metrics/")).status, 200);
  const post = await s.get("/readyz", { method: "POST", body: "x" });
  assert.equal(post.status, 405);
  assert.equal(post.headers.get("allow"), "GET, HEAD");
  assert.equal((await s.get("/healthz", { method: "HEAD" })).status, 200);
  assert.deepEqual(
    await s.get("/livez").then((r) => [r.status, r.body]),
    [200, "ok"],
    "upstream's liveness path",
  );
});

Deno.test("startServer() close() stops listening and a second close() is harmless", async () => {
  const server: RunningServer = await startServer(options());
  using client = Deno.createHttpClient({ caCerts: [server.certPem] });
  const res = await fetch(`${server.url}/healthz`, { client });
  assert.equal(await res.text(), "ok");
  await server.close();
  await server.close();
  await assert.rejects(fetch(`${server.url}/healthz`, { client }), TypeError);
});

Deno.test("startServer() with port null serves nothing", async () => {
  assert.equal(await startServer({ ...options(), port: null }), null);
});

Deno.test("startServer() never logs the private key", async () => {
  const logs = await captureLogs("trace");
  const tls = await generateSelfSignedCert({ hosts: ["127.0.0.1"] });
  await using s = await serve({ tls, checks: { healthz: [toggle("x", false)], readyz: [] } });
  await s.get("/healthz");
  const keyBody = tls.keyPem.split("\n").slice(1, -2).join("");
  assert.match(logs.text(), /"url":"https:\/\/127\.0\.0\.1:\d+"/, "the start is logged");
  assert.ok(!logs.text().includes(keyBody.slice(0, 40)));
  assert.ok(!logs.text().includes("PRIVATE KEY"));
});

Deno.test("startServer() answers GET /plan with the plan as JSON, and 404 when there is none", async () => {
  const report = {
    dryRun: true,
    pending: [{ controller: "route", action: "add-ranges", object: "linode 1 interface 2" }],
  };
  {
    await using s = await serve({ plan: () => report });
    const res = await s.get("/plan");
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "application/json");
    assert.deepEqual(JSON.parse(res.body), report);
    assert.equal((await s.get("/plan", { method: "POST" })).status, 405);
  }
  await using s = await serve();
  assert.equal((await s.get("/plan")).status, 404);
});

/** Sends `head` over TLS and returns the status line of the answer. */
async function statusLine(server: RunningServer, head: string): Promise<string> {
  const conn = await Deno.connectTls({ hostname: "127.0.0.1", port: server.port, caCerts: [server.certPem] });
  try {
    const bytes = new TextEncoder().encode(head);
    for (let at = 0; at < bytes.length;) at += await conn.write(bytes.subarray(at));
    let text = "";
    const buf = new Uint8Array(4096);
    while (!text.includes("\r\n")) {
      const n = await conn.read(buf);
      if (n === null) break;
      text += new TextDecoder().decode(buf.subarray(0, n));
    }
    return text.split("\r\n")[0] ?? "";
  } finally {
    conn.close();
  }
}

Deno.test("startServer() authorises and routes on the request target: a forged Host header changes nothing", async () => {
  const seen: string[] = [];
  await using s = await serve({
    auth: {
      authorize: (request) => {
        seen.push(request.path);
        return Promise.resolve(request.path === "/healthz" ? null : new Response("no\n", { status: 401 }));
      },
    },
  });
  const get = (target: string, host: string) =>
    statusLine(s.server, `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
  // Deno.serve built its URL from the Host header: this Host made /metrics a /healthz request.
  assert.equal(await get("/metrics", "evil/healthz?"), "HTTP/1.1 401 Unauthorized");
  assert.equal(await get("/healthz", "evil/metrics?"), "HTTP/1.1 200 OK");
  assert.deepEqual(seen, ["/metrics", "/healthz"], "authorised on the target's path");
  for (
    const target of [
      "http://evil/healthz",
      "https://127.0.0.1/healthz",
      "*",
      "/healthz/../metrics",
      "/%68ealthz",
    ]
  ) {
    assert.equal(await get(target, "x"), "HTTP/1.1 400 Bad Request", target);
  }
  assert.deepEqual(seen, ["/metrics", "/healthz"], "a target that is not a plain path is never authorised");
});

const TARGETS: { target: string; path: string | null; query?: string }[] = [
  { target: "/healthz", path: "/healthz" },
  { target: "/readyz?verbose", path: "/readyz", query: "verbose=" },
  { target: "/metrics/", path: "/metrics" },
  { target: "/", path: "/" },
  { target: "//", path: "/" },
  { target: "/a:b@c/d", path: "/a:b@c/d" },
  { target: "http://host/healthz", path: null },
  { target: "host:443", path: null },
  { target: "*", path: null },
  { target: "", path: null },
  { target: "/a//b", path: null },
  { target: "/a/./b", path: null },
  { target: "/a/../metrics", path: null },
  { target: "/%2e%2e/metrics", path: null },
  { target: "/a\\b", path: null },
  { target: "/healthz?x#y", path: null },
];

for (const c of TARGETS) {
  Deno.test(`parseTarget() ${JSON.stringify(c.target)} → ${c.path ?? "refused"}`, () => {
    const got = parseTarget(c.target);
    assert.equal(got?.path ?? null, c.path);
    if (c.query !== undefined) assert.equal(got?.query.toString(), c.query);
  });
}

Deno.test("startServer() renews its self-signed certificate at two thirds of its life, without a restart", async () => {
  const day = 86_400_000;
  const clock = new FakeClock();
  await using s = await serve({ clock });
  const first = s.server.certPem;
  assert.equal((await s.get("/healthz")).body, "ok");
  await clock.advance(20 * day - 60_000);
  assert.equal(s.server.certPem, first, "not before two thirds of 30 days");
  await clock.advance(60_000);
  await waitFor(() => s.server.certPem !== first, { what: "the renewed certificate" });
  using renewed = Deno.createHttpClient({ caCerts: [s.server.certPem] });
  const res = await fetch(`${s.server.url}/healthz`, { client: renewed });
  assert.equal(await res.text(), "ok", "the same listener serves the new certificate");
  using stale = Deno.createHttpClient({ caCerts: [first] });
  await assert.rejects(fetch(`${s.server.url}/healthz`, { client: stale }), TypeError, "the old one is gone");
  const x509 = await loadX509();
  const [before, after] = [first, s.server.certPem].map((pem) => new x509.X509Certificate(pem));
  assert.ok(after!.serialNumber !== before!.serialNumber);
  assert.equal(
    after!.notAfter.getTime() - after!.notBefore.getTime(),
    30 * day + 3_600_000,
    "30 days, backdated 1 h",
  );
});

Deno.test("startServer() re-reads --tls-cert-file/--tls-private-key-file every minute; a bad pair keeps the served one", async () => {
  const logs = await captureLogs("debug");
  const dir = await Deno.makeTempDir();
  const certFile = `${dir}/tls.crt`;
  const keyFile = `${dir}/tls.key`;
  const write = async (pem: { certPem: string; keyPem: string }) => {
    await Deno.writeTextFile(certFile, pem.certPem);
    await Deno.writeTextFile(keyFile, pem.keyPem);
  };
  try {
    const [a, b, c] = await Promise.all(
      [1, 2, 3].map(() => generateSelfSignedCert({ hosts: ["127.0.0.1"] })),
    );
    await write(a!);
    const clock = new FakeClock();
    await using s = await serve({ clock, tls: { certFile, keyFile } });
    assert.equal(s.server.certPem, a!.certPem);
    await write(b!);
    await clock.advance(59_999);
    assert.equal(s.server.certPem, a!.certPem, "read again after a minute");
    await clock.advance(1);
    await waitFor(() => s.server.certPem === b!.certPem, { what: "the new pair" });
    // A client per request: a kept-alive connection would meet the 90 s idle bound as the clock jumps.
    const trustingB = async () => {
      using client = Deno.createHttpClient({ caCerts: [b!.certPem] });
      return await (await fetch(`${s.server.url}/healthz`, { client })).text();
    };
    assert.equal(await trustingB(), "ok");

    await write({ certPem: c!.certPem, keyPem: a!.keyPem });
    await clock.advance(60_000);
    await waitFor(() => logs.text().includes("is not the key of"), { what: "the mismatch logged" });
    await Deno.writeTextFile(
      keyFile,
      "-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n",
    );
    await clock.advance(60_000);
    await waitFor(() => logs.text().includes("does not parse"), { what: "the broken key logged" });
    assert.equal(s.server.certPem, b!.certPem, "the served pair stays");
    assert.equal(await trustingB(), "ok");
    for (const key of [a!.keyPem, b!.keyPem, "bm90IGEga2V5"]) {
      assert.ok(!logs.text().includes(key.split("\n")[1]!), "no key material in the logs");
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
