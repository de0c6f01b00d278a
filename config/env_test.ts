import assert from "node:assert/strict";
import { inspect } from "node:util";
import { chooseKubeSource, isLoopbackHost, parseLinodeEnv, parseLinodeUrl, Secret } from "./env.ts";
import { parseSentryEnv } from "./config.ts";

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
    "LINODE_API_TOKEN: not set, and the token file /var/run/secrets/linode/api-token cannot be used " +
    "(set LINODE_API_TOKEN or LINODE_API_TOKEN_FILE)",
  ]);
});

const BASE = { LINODE_REGION: "us-east" };
const TOKEN_CASES: {
  name: string;
  env: Record<string, string>;
  readable: string[];
  want: { kind: "file"; path: string; cacheTtlMs: number } | { kind: "env" } | { problem: RegExp };
  warning?: RegExp;
}[] = [
  {
    name: "both set and the file readable: the file wins (as the Go CCM)",
    env: { LINODE_API_TOKEN: "tok", LINODE_API_TOKEN_FILE: "/t" },
    readable: ["/t"],
    want: { kind: "file", path: "/t", cacheTtlMs: 60_000 },
  },
  {
    name: "both set and the file unreadable: the variable, with a warning",
    env: { LINODE_API_TOKEN: "tok", LINODE_API_TOKEN_FILE: "/t" },
    readable: [],
    want: { kind: "env" },
    warning: /^LINODE_API_TOKEN_FILE: cannot use \/t: not found; using LINODE_API_TOKEN instead/,
  },
  {
    name: "only the variable but the default file readable: the default file",
    env: { LINODE_API_TOKEN: "tok" },
    readable: ["/var/run/secrets/linode/api-token"],
    want: { kind: "file", path: "/var/run/secrets/linode/api-token", cacheTtlMs: 60_000 },
  },
  {
    name: "only the variable and no default file: the variable, no warning",
    env: { LINODE_API_TOKEN: "tok" },
    readable: [],
    want: { kind: "env" },
  },
  {
    name: "nothing but the default file",
    env: { LINODE_API_TOKEN_CACHE_TTL_SECONDS: "5" },
    readable: ["/var/run/secrets/linode/api-token"],
    want: { kind: "file", path: "/var/run/secrets/linode/api-token", cacheTtlMs: 5_000 },
  },
  {
    name: "a cache TTL the Go CCM ignores: the default, with a warning",
    env: { LINODE_API_TOKEN_FILE: "/t", LINODE_API_TOKEN_CACHE_TTL_SECONDS: "0" },
    readable: ["/t"],
    want: { kind: "file", path: "/t", cacheTtlMs: 60_000 },
    warning: /^LINODE_API_TOKEN_CACHE_TTL_SECONDS: "0" is not a positive whole number/,
  },
  {
    name: "a named file unreadable and no variable",
    env: { LINODE_API_TOKEN_FILE: "/t" },
    readable: [],
    want: {
      problem:
        /^LINODE_API_TOKEN_FILE: cannot use \/t: not found \(and LINODE_API_TOKEN, the fallback, is not set\)$/,
    },
  },
  {
    name: "neither",
    env: {},
    readable: [],
    want: {
      problem:
        /^LINODE_API_TOKEN: not set, and the token file \/var\/run\/secrets\/linode\/api-token cannot be used: not found/,
    },
  },
];

for (const c of TOKEN_CASES) {
  Deno.test(`parseLinodeEnv() token: ${c.name}`, () => {
    const problems: string[] = [];
    const warnings: string[] = [];
    const checkTokenFile = (path: string) => c.readable.includes(path) ? undefined : "not found";
    const got = parseLinodeEnv({ ...BASE, ...c.env }, problems, { checkTokenFile, warnings }).token;
    if ("problem" in c.want) {
      assert.equal(problems.length, 1, problems.join("\n"));
      assert.match(problems[0] ?? "", c.want.problem);
      return;
    }
    assert.deepEqual(problems, []);
    if (c.want.kind === "env") {
      assert.equal(got.kind === "env" && got.token.reveal(), "tok");
    } else assert.deepEqual(got, c.want);
    if (c.warning) assert.match(warnings.join("\n"), c.warning);
    else assert.deepEqual(warnings, []);
  });
}

Deno.test("parseLinodeEnv() never tries the default token file when told not to (--dev)", () => {
  const problems: string[] = [];
  const tried: string[] = [];
  const checkTokenFile = (path: string) => (tried.push(path), undefined);
  const got = parseLinodeEnv({ ...BASE, LINODE_API_TOKEN: "dev" }, problems, {
    checkTokenFile,
    defaultTokenFile: null,
  });
  assert.deepEqual([got.token.kind, tried, problems], ["env", [], []]);
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

const DSN = "https://0123456789abcdef@o1.ingest.sentry.io/42";
const SENTRY_CASES: { name: string; env: Record<string, string>; want: unknown; warning?: RegExp }[] = [
  { name: "nothing without SENTRY_DSN", env: { SENTRY_ENVIRONMENT: "prod" }, want: null },
  {
    name: "a DSN without SENTRY_ENVIRONMENT only warns, as the Go CCM",
    env: { SENTRY_DSN: DSN },
    want: null,
    warning: /^SENTRY_ENVIRONMENT: not set/,
  },
  {
    name: "a DSN that is not one only warns, without printing it",
    env: { SENTRY_DSN: "not a url", SENTRY_ENVIRONMENT: "prod" },
    want: null,
    warning: /^SENTRY_DSN: not a Sentry DSN \(https:\/\/KEY@HOST\/PROJECT\)/,
  },
  {
    name: "release defaults to unknown",
    env: { SENTRY_DSN: DSN, SENTRY_ENVIRONMENT: "prod" },
    want: { dsn: "***", environment: "prod", release: "unknown" },
  },
  {
    name: "every variable",
    env: { SENTRY_DSN: DSN, SENTRY_ENVIRONMENT: "prod", SENTRY_RELEASE: "v1" },
    want: { dsn: "***", environment: "prod", release: "v1" },
  },
];

for (const c of SENTRY_CASES) {
  Deno.test(`parseSentryEnv() ${c.name}`, () => {
    const warnings: string[] = [];
    const got = parseSentryEnv(c.env, warnings);
    // The DSN holds a key: it prints as *** (JSON) and is revealed only to the reporter.
    assert.deepEqual(JSON.parse(JSON.stringify(got)), c.want);
    if (got) assert.equal(got.dsn.reveal(), DSN);
    if (c.warning) assert.match(warnings.join("\n"), c.warning);
    else assert.deepEqual(warnings, []);
    assert.ok(!warnings.join("\n").includes("0123456789abcdef"));
  });
}
