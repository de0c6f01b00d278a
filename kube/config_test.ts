import assert from "node:assert/strict";
import { join } from "node:path";
import { CoreV1Api, HttpMethod, KubeConfig, RequestContext, Watch } from "@kubernetes/client-node";
import { FakeClock } from "../common/clock.ts";
import { generateCertificates } from "../sim/kube/tls.ts";
import { startKubeSim } from "../sim/kube/server.ts";
import { startProxy } from "../sim/proxy.ts";
import { KubeConfigError, kubeConfigSecrets, kubeSecretsSource, loadKubeConfig, useHttp1 } from "./config.ts";

const TOKEN = "s3cr3t-token-abcdef";

function kubeconfigYaml(options: { context?: string; cluster?: string; user?: string } = {}): string {
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- name: c1",
    "  cluster:",
    "    server: https://127.0.0.1:6443",
    "    certificate-authority: ca.crt",
    "users:",
    "- name: u1",
    "  user:",
    `    token: ${TOKEN}`,
    "contexts:",
    "- name: ctx",
    "  context:",
    `    cluster: ${options.cluster ?? "c1"}`,
    `    user: ${options.user ?? "u1"}`,
    ...(options.context === "" ? [] : [`current-context: ${options.context ?? "ctx"}`]),
    "",
  ].join("\n");
}

async function withDir(fn: (dir: string) => Promise<void> | void): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "kubeconfig_test_" });
  try {
    await Deno.writeTextFile(join(dir, "ca.crt"), "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n");
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function assertConfigError(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof KubeConfigError, `want KubeConfigError, got ${e}`);
    assert.match(e.message, pattern);
    assert.ok(!e.message.includes(TOKEN), "token leaked into the error");
    assert.ok(!String(e.cause ?? "").includes(TOKEN), "token leaked into the cause");
    return true;
  });
}

Deno.test("loadKubeConfig() loads a kubeconfig file and resolves relative paths", () =>
  withDir(async (dir) => {
    const path = join(dir, "config");
    await Deno.writeTextFile(path, kubeconfigYaml());
    const kc = loadKubeConfig({ kubeconfig: path });
    assert.equal(kc.getCurrentCluster()?.server, "https://127.0.0.1:6443");
    assert.equal(kc.getCurrentCluster()?.caFile, join(dir, "ca.crt"));
    assert.equal(kc.getCurrentUser()?.token, TOKEN);
    assert.deepEqual(kubeConfigSecrets(kc), [TOKEN]);
  }));

Deno.test("loadKubeConfig() --master overrides the server and allows plain HTTP", () =>
  withDir(async (dir) => {
    const path = join(dir, "config");
    await Deno.writeTextFile(path, kubeconfigYaml());
    const kc = loadKubeConfig({ kubeconfig: path, master: "http://127.0.0.1:8080/" });
    assert.equal(kc.getCurrentCluster()?.server, "http://127.0.0.1:8080");
    assert.equal(kc.getCurrentCluster()?.skipTLSVerify, true);
    assert.equal(kc.getCurrentUser()?.token, TOKEN);
  }));

Deno.test("loadKubeConfig() reports a missing file", () => {
  assertConfigError(
    () => loadKubeConfig({ kubeconfig: "/nonexistent/kubeconfig" }),
    /^Cannot load kubeconfig \/nonexistent\/kubeconfig: \/nonexistent\/kubeconfig not found$/,
  );
});

const BROKEN = [
  {
    name: "bad YAML without quoting the file",
    yaml: `users:\n- name: u1\n  user:\n    token: ${TOKEN}\n   bad: [\n`,
    want: /invalid YAML at line \d+, column \d+$/,
  },
  {
    name: "a missing current-context",
    yaml: kubeconfigYaml({ context: "" }),
    want: /no current-context is set/,
  },
  {
    name: "an undefined current-context",
    yaml: kubeconfigYaml({ context: "nope" }),
    want: /"nope" is not defined/,
  },
  { name: "an unknown cluster", yaml: kubeconfigYaml({ cluster: "c9" }), want: /unknown cluster "c9"/ },
  { name: "an unknown user", yaml: kubeconfigYaml({ user: "u9" }), want: /unknown user "u9"/ },
  { name: "a list instead of a mapping", yaml: "- a\n- b\n", want: /not a kubeconfig mapping/ },
];

for (const c of BROKEN) {
  Deno.test(`loadKubeConfig() reports ${c.name}`, () =>
    withDir(async (dir) => {
      const path = join(dir, "config");
      await Deno.writeTextFile(path, c.yaml);
      assertConfigError(() => loadKubeConfig({ kubeconfig: path }), c.want);
    }));
}

Deno.test("loadKubeConfig() reports a missing certificate-authority file", () =>
  withDir(async (dir) => {
    const path = join(dir, "config");
    await Deno.writeTextFile(path, kubeconfigYaml());
    await Deno.remove(join(dir, "ca.crt"));
    assertConfigError(
      () => loadKubeConfig({ kubeconfig: path }),
      /certificate-authority file .*ca\.crt not found/,
    );
  }));

Deno.test("loadKubeConfig() in-cluster uses the service host, CA and a token read from the folder", () =>
  withDir(async (dir) => {
    await Deno.writeTextFile(join(dir, "token"), TOKEN);
    const kc = loadKubeConfig({ serviceHost: "fd00::1", servicePort: "443", serviceAccountDir: dir });
    assert.equal(kc.getCurrentCluster()?.server, "https://[fd00::1]:443");
    assert.equal(kc.getCurrentCluster()?.caFile, join(dir, "ca.crt"));
    const ctx = new RequestContext("https://[fd00::1]:443/api/v1/nodes", HttpMethod.GET);
    await kc.applySecurityAuthentication(ctx);
    assert.equal(ctx.getHeaders()["Authorization"], `Bearer ${TOKEN}`);
    assert.deepEqual(kubeConfigSecrets(kc), [TOKEN]);
  }));

Deno.test("loadKubeConfig() in-cluster reports missing service env and a missing token", () =>
  withDir((dir) => {
    assertConfigError(
      () => loadKubeConfig({ serviceAccountDir: dir }),
      /^Cannot load in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set/,
    );
    assertConfigError(
      () => loadKubeConfig({ serviceHost: "127.0.0.1", servicePort: "443", serviceAccountDir: dir }),
      /service-account token file .*token not found/,
    );
  }));

Deno.test("loadKubeConfig() with only --master talks to that server without credentials", async () => {
  const kc = loadKubeConfig({ master: "http://127.0.0.1:8080" });
  assert.equal(kc.getCurrentCluster()?.server, "http://127.0.0.1:8080");
  const ctx = new RequestContext("http://127.0.0.1:8080/api/v1/nodes", HttpMethod.GET);
  await kc.applySecurityAuthentication(ctx);
  assert.equal(ctx.getHeaders()["Authorization"], undefined);
});

Deno.test("kubeSecretsSource() re-reads the token file once per interval, not per line, and keeps old tokens", () =>
  withDir(async (dir) => {
    const tokenFile = join(dir, "token");
    await Deno.writeTextFile(tokenFile, TOKEN);
    const kc = loadKubeConfig({ serviceHost: "10.0.0.1", servicePort: "443", serviceAccountDir: dir });
    const clock = new FakeClock();
    const secrets = kubeSecretsSource(kc, { clock, recheckMs: 1000 });
    assert.deepEqual(secrets(), [TOKEN]);
    await Deno.writeTextFile(tokenFile, "rotated-token-1");
    for (let i = 0; i < 100; i++) assert.deepEqual(secrets(), [TOKEN], "the file is not read per call");
    await clock.advance(999);
    assert.deepEqual(secrets(), [TOKEN]);
    await clock.advance(1);
    assert.deepEqual(secrets(), [TOKEN, "rotated-token-1"], "the rotated-out token stays redacted");
    await Deno.remove(tokenFile);
    await clock.advance(1000);
    assert.deepEqual(secrets(), [TOKEN, "rotated-token-1"], "an unreadable file keeps what was seen");
  }));

async function waitFor(condition: () => boolean, what: string): Promise<void> {
  for (const deadline = Date.now() + 10_000; !condition();) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** A TLS listener that offers h2 and http/1.1 and records what each client chose, then hangs up. */
async function alpnRecorder() {
  const certs = await generateCertificates();
  const listener = Deno.listenTls({
    hostname: "127.0.0.1",
    port: 0,
    cert: certs.certPem,
    key: certs.keyPem,
    alpnProtocols: ["h2", "http/1.1"],
  });
  const chosen: (string | null)[] = [];
  const accepting = (async () => {
    for await (const conn of listener) {
      try {
        chosen.push((await conn.handshake()).alpnProtocol);
      } catch {
        chosen.push("handshake failed");
      }
      conn.close();
    }
  })();
  return {
    certs,
    port: (listener.addr as Deno.NetAddr).port,
    chosen,
    async close() {
      listener.close();
      await accepting.catch(() => {});
    },
  };
}

Deno.test("loadKubeConfig() clients offer only http/1.1 over TLS (HTTP/2 GOAWAY aborts Deno's nghttp2)", async () => {
  const server = await alpnRecorder();
  const dir = await Deno.makeTempDir({ prefix: "http1_" });
  try {
    const kubeconfig = join(dir, "kubeconfig");
    const ca = btoa(server.certs.caPem);
    await Deno.writeTextFile(
      kubeconfig,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{
          name: "c",
          cluster: { server: `https://127.0.0.1:${server.port}`, "certificate-authority-data": ca },
        }],
        users: [{ name: "u", user: { token: "t" } }],
        contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
        "current-context": "x",
      }),
    );
    const core = loadKubeConfig({ kubeconfig }).makeApiClient(CoreV1Api);
    await assert.rejects(core.listNode());
    assert.deepEqual(server.chosen.slice(0, 1), ["http/1.1"]);
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadKubeConfig() clients keep working while the HTTPS apiserver shuts down under them", async () => {
  const sim = await startKubeSim({ tls: true });
  const dir = await Deno.makeTempDir({ prefix: "http1_" });
  try {
    const kubeconfig = join(dir, "kubeconfig");
    await sim.writeKubeconfig(kubeconfig);
    const core = loadKubeConfig({ kubeconfig }).makeApiClient(CoreV1Api);
    await core.listNode();
    // Requests the server has received and holds while it shuts down: over HTTP/2, its GOAWAY with these
    // streams open aborted the whole process. The hold is far longer than the few ms until close() below.
    sim.faults.add({ method: "GET", route: "/api/v1/nodes", latencyMs: 2_000 });
    let settled = 0;
    const inFlight = Array.from({ length: 20 }, () =>
      core.listNode().then(
        (list) => `answered with ${list.items.length} nodes`,
        (e: unknown) => `failed: ${e instanceof Error ? e.message : String(e)}`,
      ).finally(() => settled++));
    await waitFor(() => sim.calls.count("GET /api/v1/nodes") === 21, "every request received");
    assert.equal(settled, 0, "still in flight when the server starts shutting down");
    await sim.close();
    // A graceful shutdown (as kube-apiserver's) answers what it received; nothing fails or hangs.
    assert.deepEqual(await Promise.all(inFlight), Array(20).fill("answered with 0 nodes"));
    // Once it is gone, a new request fails at once with connection refused rather than hanging.
    const after = await core.listNode().then(() => undefined, (e: unknown) => e);
    assert.ok(after instanceof TypeError, String(after));
    assert.equal((after.cause as { code?: string } | undefined)?.code, "ECONNREFUSED");
  } finally {
    await sim.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadKubeConfig() clients reuse one TLS connection for sequential requests", async () => {
  await using sim = await startKubeSim({ tls: true });
  await using proxy = startProxy({ port: Number(new URL(sim.url).port) });
  const dir = await Deno.makeTempDir({ prefix: "http1_" });
  try {
    const kubeconfig = join(dir, "kubeconfig");
    await Deno.writeTextFile(
      kubeconfig,
      sim.kubeconfig().replace(sim.url, `https://127.0.0.1:${proxy.port}`),
    );
    const core = loadKubeConfig({ kubeconfig }).makeApiClient(CoreV1Api);
    for (let i = 0; i < 20; i++) await core.readNamespace({ name: "default" });
    // client-node alone opened (and kept) a new connection, with a new TLS handshake, for every request;
    // one pool may open a second connection while the first is being released.
    assert.ok(proxy.connections <= 2, `${proxy.connections} connections for 20 requests`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

// config.ts's useHttp1 replaces a private method of client-node: an upgrade that renames it or stops calling it must fail here.
Deno.test("useHttp1() replaces client-node's private KubeConfig.createDispatcher, which every request and watch still calls", async () => {
  const upgrade =
    "@kubernetes/client-node changed: kube/config.ts no longer pools connections or pins HTTP/1.1";
  const proto = KubeConfig.prototype as unknown as Record<string, unknown>;
  assert.equal(typeof proto.createDispatcher, "function", `${upgrade} (KubeConfig.createDispatcher is gone)`);
  await using sim = await startKubeSim({ tls: true });
  const kc = new KubeConfig();
  kc.loadFromString(sim.kubeconfig());
  useHttp1(kc);
  const target = kc as unknown as { createDispatcher: (...args: unknown[]) => unknown };
  const ours = target.createDispatcher;
  const handed: unknown[] = [];
  target.createDispatcher = (...args) => {
    const dispatcher = ours(...args);
    handed.push(dispatcher);
    return dispatcher;
  };
  await kc.makeApiClient(CoreV1Api).listNode();
  const watching = await new Watch(kc).watch("/api/v1/nodes", {}, () => {}, () => {});
  watching.abort();
  assert.equal(handed.length, 2, `${upgrade} (requests no longer ask KubeConfig.createDispatcher)`);
  assert.ok(handed[0] !== undefined && handed[0] === handed[1], "one pooled dispatcher for both");
});

Deno.test("useHttp1() says what changed when client-node has no createDispatcher to replace", () => {
  const kc = new KubeConfig();
  Object.defineProperty(kc, "createDispatcher", { value: undefined });
  assert.throws(() => useHttp1(kc), /no longer has the private KubeConfig\.createDispatcher/);
});
