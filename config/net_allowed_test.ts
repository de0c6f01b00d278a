import assert from "node:assert/strict";
import { type Config, parseConfig } from "./config.ts";
import { configTargets, hostPort, type NetCheck, refusedServers, urlHostPort } from "./net_allowed.ts";

const ENV = { LINODE_API_TOKEN: "t", LINODE_REGION: "us-east", KUBERNETES_SERVICE_HOST: "10.96.0.1" };

function configOf(args: string[], env: Record<string, string> = {}): Config {
  const parsed = parseConfig(args, { ...ENV, KUBERNETES_SERVICE_PORT: "443", ...env });
  if (parsed.kind !== "run") throw new TypeError(parsed.kind);
  return parsed.config;
}

function targetsOf(c: Config): string[] {
  return configTargets({ linodeUrl: c.linode.url, kube: c.kube, serve: c.serve }).map((t) =>
    `${t.setting} ${t.host}`
  );
}

Deno.test("urlHostPort() and hostPort() spell hosts as Deno's net permission does", () => {
  assert.equal(urlHostPort("https://api.linode.com/v4"), "api.linode.com:443");
  assert.equal(urlHostPort("http://127.0.0.1/v4"), "127.0.0.1:80");
  assert.equal(urlHostPort("https://[fd00::1]:6443"), "[fd00::1]:6443");
  assert.equal(urlHostPort("not a url"), undefined);
  assert.equal(hostPort("::", 10258), "[::]:10258");
  assert.equal(hostPort("0.0.0.0", 10258), "0.0.0.0:10258");
});

Deno.test("configTargets() names the Linode API, the in-cluster apiserver or --master, and the listen address", () => {
  assert.deepEqual(targetsOf(configOf([])), [
    "LINODE_URL api.linode.com:443",
    "KUBERNETES_SERVICE_HOST, KUBERNETES_SERVICE_PORT 10.96.0.1:443",
    "--bind-address, --secure-port 0.0.0.0:10258",
  ]);
  assert.deepEqual(
    targetsOf(
      configOf(["--master=https://127.0.0.5:6443", "--secure-port=0"], { LINODE_URL: "https://x.test/v4" }),
    ),
    ["LINODE_URL x.test:443", "--master 127.0.0.5:6443"],
  );
  // A kubeconfig file's server is known once it is loaded (wiring/net_check.ts).
  assert.deepEqual(targetsOf(configOf(["--kubeconfig=/etc/kubernetes/ccm.conf", "--bind-address=::"])), [
    "LINODE_URL api.linode.com:443",
    "--bind-address, --secure-port [::]:10258",
  ]);
});

Deno.test("parseConfig() with checkNet reports each refused server with the setting and how to allow it", () => {
  const allowed = new Set(["api.linode.com:443", "0.0.0.0:10258"]);
  const checkNet: NetCheck = (host) => allowed.has(host);
  const env = { ...ENV, KUBERNETES_SERVICE_PORT: "443", LINODE_URL: "https://linode.example:8443/v4" };
  assert.throws(() => parseConfig([], env, { checkNet }), (e: unknown) => {
    const lines = (e as Error).message.split("\n");
    assert.equal(lines.length, 2, lines.join("\n"));
    assert.match(
      lines[0]!,
      /^LINODE_URL: cannot connect to linode\.example:8443: this process may not .*deploy\/net-allow/,
    );
    assert.match(
      lines[1]!,
      /^KUBERNETES_SERVICE_HOST, KUBERNETES_SERVICE_PORT: cannot connect to 10\.96\.0\.1:443: .*CCM_ALLOW_NET/,
    );
    return true;
  });
  allowed.add("10.96.0.1:443");
  assert.equal(parseConfig([], { ...env, LINODE_URL: "" }, { checkNet }).kind, "run");
  assert.deepEqual(
    refusedServers([{ setting: "x", host: "h:1", action: "listen on" }], () => false).length,
    1,
  );
});

Deno.test("parseConfig() with checkNet turns Sentry off with a warning when the DSN's host is refused, and starts", () => {
  const allowed = new Set(["api.linode.com:443", "10.96.0.1:443", "0.0.0.0:10258"]);
  const checkNet: NetCheck = (host) => allowed.has(host);
  const key = "0123456789abcdef";
  const env = {
    ...ENV,
    KUBERNETES_SERVICE_PORT: "443",
    SENTRY_DSN: `https://${key}@o1.ingest.sentry.io/42`,
    SENTRY_ENVIRONMENT: "prod",
  };
  const refused = parseConfig([], env, { checkNet });
  if (refused.kind !== "run") throw new TypeError(refused.kind);
  assert.equal(refused.config.sentry, null);
  const warning = refused.config.warnings.find((w) => w.startsWith("SENTRY_DSN:")) ?? "";
  assert.match(warning, /^SENTRY_DSN: cannot connect to o1\.ingest\.sentry\.io:443: .*deploy\/net-allow/);
  assert.ok(!warning.includes(key), "the DSN's key was printed");
  allowed.add("o1.ingest.sentry.io:443");
  const granted = parseConfig([], env, { checkNet });
  if (granted.kind !== "run") throw new TypeError(granted.kind);
  assert.equal(granted.config.sentry?.environment, "prod");
  assert.ok(!granted.config.warnings.some((w) => w.startsWith("SENTRY_DSN:")));
});
