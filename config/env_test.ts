import assert from "node:assert/strict";
import { inspect } from "node:util";
import {
  chooseKubeSource,
  cidrFamily,
  isIpAddress,
  isLoopbackHost,
  parseLinodeEnv,
  parseLinodeUrl,
  Secret,
} from "./env.ts";

const CIDRS: [string, 4 | 6 | undefined][] = [
  ["10.0.0.0/8", 4],
  ["10.0.0.1/8", 4],
  ["0.0.0.0/0", 4],
  ["172.24.0.0/16", 4],
  ["fd00::/56", 6],
  ["2600:3c0f::/128", 6],
  ["10.0.0.0/33", undefined],
  ["10.0.0.0", undefined],
  ["10.0.0/8", undefined],
  ["010.0.0.0/8", undefined],
  ["fd00::/129", undefined],
  ["fe80::1%eth0/64", undefined],
  ["10.0.0.0/-1", undefined],
  ["", undefined],
];
for (const [text, want] of CIDRS) {
  Deno.test(`cidrFamily() reads "${text}" as ${want}`, () => assert.equal(cidrFamily(text), want));
}

Deno.test("isIpAddress() accepts IPv4 and IPv6 without zones", () => {
  assert.deepEqual(["0.0.0.0", "::", "127.0.0.1", "fe80::1%eth0", "localhost", "1.2.3"].map(isIpAddress), [
    true,
    true,
    true,
    false,
    false,
    false,
  ]);
});

const LOOPBACK: [string, boolean][] = [
  ["localhost", true],
  ["LOCALHOST", true],
  ["127.0.0.1", true],
  ["127.8.9.10", true],
  ["[::1]", true],
  ["::1", true],
  ["128.0.0.1", false],
  ["127.0.0.1.example.com", false],
  ["example.com", false],
  ["[::2]", false],
];
for (const [host, want] of LOOPBACK) {
  Deno.test(`isLoopbackHost() says ${want} for ${host}`, () => assert.equal(isLoopbackHost(host), want));
}

const URLS: [string, { url: string; baseUrl: string; apiVersion: string } | RegExp][] = [
  ["https://api.linode.com/v4", {
    url: "https://api.linode.com/v4",
    baseUrl: "https://api.linode.com",
    apiVersion: "v4",
  }],
  ["https://api.linode.com/v4beta/", {
    url: "https://api.linode.com/v4beta",
    baseUrl: "https://api.linode.com",
    apiVersion: "v4beta",
  }],
  ["http://127.0.0.1:8080/v4", {
    url: "http://127.0.0.1:8080/v4",
    baseUrl: "http://127.0.0.1:8080",
    apiVersion: "v4",
  }],
  ["http://[::1]:9/api/v4", {
    url: "http://[::1]:9/api/v4",
    baseUrl: "http://[::1]:9/api",
    apiVersion: "v4",
  }],
  ["http://localhost/v4", { url: "http://localhost/v4", baseUrl: "http://localhost", apiVersion: "v4" }],
  ["http://example.com/v4", /http:\/\/ is only allowed for loopback hosts, not example\.com/],
  ["https://api.linode.com", /no API version/],
  ["https://api.linode.com/", /no API version/],
  ["ftp://api.linode.com/v4", /unsupported scheme/],
  ["not a url", /invalid URL/],
  ["https://user:pw@api.linode.com/v4", /must not carry credentials/],
];
for (const [text, want] of URLS) {
  Deno.test(`parseLinodeUrl() handles ${text}`, () => {
    const got = parseLinodeUrl(text);
    if (want instanceof RegExp) {
      assert.equal(typeof got, "string");
      assert.match(String(got), want);
      assert.match(String(got), /^LINODE_URL: /);
    } else assert.deepEqual(got, want);
  });
}

Deno.test("Secret prints as *** through every printing path", () => {
  const secret = new Secret("tok-abcdef123456");
  const holder = { token: secret };
  for (
    const printed of [
      String(secret),
      `${secret}`,
      JSON.stringify(holder),
      Deno.inspect(holder),
      inspect(holder),
    ]
  ) {
    assert.ok(!printed.includes("tok-abcdef123456"), printed);
    assert.ok(printed.includes("***"), printed);
  }
  assert.equal(secret.reveal(), "tok-abcdef123456");
});

Deno.test("parseLinodeEnv() trims the token and reads every variable", () => {
  const problems: string[] = [];
  const env = parseLinodeEnv({
    LINODE_API_TOKEN: "  tok-xyz\n",
    LINODE_REGION: "us-ord",
    LINODE_URL: "http://127.0.0.1:4000/v4beta",
    LINODE_REQUEST_TIMEOUT_SECONDS: "30",
    LINODE_INSTANCE_CACHE_TTL: "5",
    LINODE_ROUTES_CACHE_TTL_SECONDS: "90",
    LINODE_EXTERNAL_SUBNET: "172.24.0.0/16",
    LINODE_HOSTNAME_ONLY_INGRESS: "1",
  }, problems);
  assert.deepEqual(problems, []);
  assert.equal(env.token.kind === "env" && env.token.token.reveal(), "tok-xyz");
  assert.deepEqual(
    [env.region, env.url, env.requestTimeoutMs, env.instanceCacheTtlMs, env.routesCacheTtlMs],
    ["us-ord", "http://127.0.0.1:4000/v4beta", 30_000, 5_000, 90_000],
  );
  assert.equal(env.externalSubnet, "172.24.0.0/16");
  assert.equal(env.hostnameOnlyIngress, true);
});

Deno.test("parseLinodeEnv() treats blank variables as unset", () => {
  const problems: string[] = [];
  parseLinodeEnv({ LINODE_API_TOKEN: " ", LINODE_API_TOKEN_FILE: "", LINODE_REGION: "" }, problems);
  assert.deepEqual(problems, [
    "LINODE_REGION: not set (the region of the cluster's Linodes, e.g. us-east)",
    "LINODE_API_TOKEN: not set (set LINODE_API_TOKEN or LINODE_API_TOKEN_FILE)",
  ]);
});

Deno.test("chooseKubeSource() prefers --kubeconfig, then KUBECONFIG, then in-cluster, then --master", () => {
  const inCluster = { KUBERNETES_SERVICE_HOST: "127.0.0.1", KUBERNETES_SERVICE_PORT: "443" };
  const cases: [{ kubeconfig: string; master: string }, Record<string, string>, unknown][] = [
    [{ kubeconfig: "/a", master: "" }, { KUBECONFIG: "/b" }, {
      kind: "kubeconfig",
      kubeconfig: "/a",
      from: "flag",
    }],
    [{ kubeconfig: "", master: "" }, { KUBECONFIG: ":/b:/c" }, {
      kind: "kubeconfig",
      kubeconfig: "/b",
      from: "env",
    }],
    [{ kubeconfig: "", master: "https://m" }, { KUBECONFIG: "/b" }, {
      kind: "kubeconfig",
      kubeconfig: "/b",
      from: "env",
      master: "https://m",
    }],
    [{ kubeconfig: "", master: "" }, inCluster, {
      kind: "in-cluster",
      serviceHost: "127.0.0.1",
      servicePort: "443",
    }],
    [{ kubeconfig: "", master: "https://m" }, {}, { kind: "master", master: "https://m" }],
  ];
  for (const [flags, env, want] of cases) {
    const problems: string[] = [];
    assert.deepEqual(chooseKubeSource(flags, env, problems), want);
    assert.deepEqual(problems, []);
  }
});

Deno.test("chooseKubeSource() needs both in-cluster variables", () => {
  const problems: string[] = [];
  chooseKubeSource({ kubeconfig: "", master: "" }, { KUBERNETES_SERVICE_HOST: "127.0.0.1" }, problems);
  assert.equal(problems.length, 1);
  assert.match(problems[0] ?? "", /^--kubeconfig: no Kubernetes API/);
});
