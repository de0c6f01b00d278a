import assert from "node:assert/strict";
import { join } from "node:path";
import { HttpMethod, RequestContext } from "@kubernetes/client-node";
import { FakeClock } from "../common/clock.ts";
import { KubeConfigError, kubeConfigSecrets, kubeSecretsSource, loadKubeConfig } from "./config.ts";

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
