import assert from "node:assert/strict";
import * as yaml from "js-yaml";
import {
  kubeconfigServer,
  NetAllowError,
  netAllowList,
  netAllowMain,
  parseNetAllowArgs,
} from "./net_allow.ts";
import {
  DEFAULT_OUT,
  parseGenerateArgs,
  rbacOnly,
  renderManifest,
  secretYaml,
  UsageError,
} from "./generate.ts";

const TEMPLATE = Deno.readTextFileSync(new URL("./ccm.yaml", import.meta.url));
const TOKEN = "f3c1a9e07b2d4c6e8a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f";

Deno.test("renderManifest() puts the Secret (token and region, base64) before deploy/ccm.yaml", () => {
  const text = renderManifest({ token: TOKEN, region: "nl-ams" }, TEMPLATE);
  const docs = yaml.loadAll(text) as { kind: string; data?: Record<string, string> }[];
  assert.deepEqual(docs.map((d) => d.kind), [
    "Secret",
    ...(yaml.loadAll(TEMPLATE) as { kind: string }[]).map((d) => d.kind),
  ]);
  assert.equal(atob(docs[0]?.data?.apiToken ?? ""), TOKEN);
  assert.equal(atob(docs[0]?.data?.region ?? ""), "nl-ams");
  assert.ok(text.endsWith(TEMPLATE), "the rest is the template as it is");
  assert.ok(!text.includes(TOKEN), "the token appears only base64-encoded");
});

Deno.test("renderManifest() replaces the image, and only the image", () => {
  const image = "registry.example.com/ccm@sha256:" + "a".repeat(64);
  const text = renderManifest({ token: TOKEN, region: "us-east", image }, TEMPLATE);
  assert.equal(
    text,
    secretYaml(TOKEN, "us-east") + "---\n" + TEMPLATE.replace(/image: .*/, `image: ${image}`),
  );
});

const BAD: { name: string; input: { token: string; region: string; image?: string }; error: RegExp }[] = [
  { name: "an empty token", input: { token: "", region: "us-east" }, error: /token is empty/ },
  {
    name: "a token with a space",
    input: { token: "a b", region: "us-east" },
    error: /token is empty or contains spaces/,
  },
  {
    name: "an upper-case region",
    input: { token: TOKEN, region: "US-EAST" },
    error: /--region: not a Linode region/,
  },
  { name: "a token given as the region", input: { token: TOKEN, region: TOKEN }, error: /--region/ },
  {
    name: "an image with a quote",
    input: { token: TOKEN, region: "us-east", image: 'x"y' },
    error: /--image/,
  },
];

for (const c of BAD) {
  Deno.test(`renderManifest() refuses ${c.name}, without echoing the token`, () => {
    assert.throws(() => renderManifest(c.input, TEMPLATE), (e: unknown) => {
      assert.ok(e instanceof UsageError);
      assert.match(e.message, c.error);
      assert.ok(!e.message.includes(TOKEN));
      return true;
    });
  });
}

Deno.test("parseGenerateArgs() takes --name=value and --name value, and needs --region", () => {
  assert.deepEqual(parseGenerateArgs(["--region", "us-east", "--token-file=-"]), {
    rbacOnly: false,
    region: "us-east",
    tokenFile: "-",
    image: undefined,
    out: "ccm-linode.yaml",
  });
  assert.throws(() => parseGenerateArgs(["--token-file=t"]), /--region is required/);
  assert.throws(() => parseGenerateArgs(["--region"]), /--region needs a value/);
  assert.throws(() => parseGenerateArgs([TOKEN, "us-east"]), (e: unknown) => {
    assert.ok(
      e instanceof UsageError && /positional arguments/.test(e.message) && !e.message.includes(TOKEN),
    );
    return true;
  });
  assert.throws(() => parseGenerateArgs([`--token=${TOKEN}`]), (e: unknown) => {
    assert.ok(
      e instanceof UsageError && /unknown flag --token\n/.test(e.message) && !e.message.includes(TOKEN),
    );
    return true;
  });
});

Deno.test("rbacOnly() keeps the ServiceAccount and its RBAC, without the DaemonSet; --rbac-only needs no region", () => {
  const docs = yaml.loadAll(rbacOnly(TEMPLATE)) as { kind: string }[];
  assert.deepEqual(docs.map((d) => d.kind), [
    "ServiceAccount",
    "ClusterRole",
    "ClusterRoleBinding",
    "Role",
    "RoleBinding",
  ]);
  assert.deepEqual(parseGenerateArgs(["--rbac-only"]).out, "ccm-rbac.yaml");
});

Deno.test("deno task manifest's default output (it holds the token) is ignored by git", async () => {
  assert.equal(parseGenerateArgs(["--region=us-east"]).out, DEFAULT_OUT);
  const ignored = await new Deno.Command("git", {
    args: ["check-ignore", "--quiet", "--no-index", DEFAULT_OUT],
    cwd: new URL("..", import.meta.url),
  }).output();
  assert.equal(ignored.code, 0, `${DEFAULT_OUT} is not in .gitignore`);
});

Deno.test("netAllowList() lists the Linode API, the apiserver and the listen address as host:port", () => {
  assert.equal(
    netAllowList({
      linodeUrl: "https://api.linode.com/v4",
      apiservers: ["https://127.0.0.5:6443", "https://api.linode.com"],
      listen: "0.0.0.0:10258",
    }),
    "api.linode.com:443,127.0.0.5:6443,0.0.0.0:10258",
  );
  assert.equal(
    netAllowList({ linodeUrl: "http://127.0.0.1/v4", apiservers: [], listen: "[::]:1" }),
    "127.0.0.1:80,[::]:1",
  );
  assert.equal(netAllowList({ linodeUrl: "https://a.test", apiservers: [], listen: null }), "a.test:443");
  assert.throws(() => netAllowList({ linodeUrl: "ftp://a", apiservers: [], listen: null }), NetAllowError);
  assert.throws(
    () => netAllowList({ linodeUrl: "https://a", apiservers: [], listen: "10258" }),
    NetAllowError,
  );
  assert.throws(() => parseNetAllowArgs(["--net-allow"]), /--kubeconfig=<file> or --apiserver=<url>/);
});

Deno.test("kubeconfigServer() reads the server of the current context", () => {
  const text = [
    "clusters:",
    "- name: a",
    "  cluster: {server: 'https://a:6443'}",
    "- name: b",
    "  cluster: {server: 'https://b:443'}",
    "contexts:",
    "- name: ctx",
    "  context: {cluster: b, user: u}",
    "current-context: ctx",
  ].join("\n");
  assert.equal(kubeconfigServer(text, "k"), "https://b:443");
  assert.throws(() => kubeconfigServer("clusters: []", "k"), /names no server/);
});

Deno.test("deploy/net-allow.default is the ccm permission set's net list and the Dockerfile's CCM_ALLOW_NET default", () => {
  const root = new URL("..", import.meta.url);
  const list = Deno.readTextFileSync(new URL("deploy/net-allow.default", root)).trim();
  const denoJson = JSON.parse(Deno.readTextFileSync(new URL("deno.json", root)));
  assert.deepEqual(denoJson.permissions.ccm.net.allow, list.split(","));
  const dockerfile = Deno.readTextFileSync(new URL("Dockerfile", root));
  assert.equal(/^ARG CCM_ALLOW_NET="([^"]*)"$/m.exec(dockerfile)?.[1], list);
  assert.match(dockerfile, /printf '%s\\n' "\$CCM_ALLOW_NET" > deploy\/net-allow \\\n && deno task compile/);
  for (const task of ["start", "compile"]) {
    assert.ok(
      denoJson.tasks[task].includes(
        "--allow-net=$(cat deploy/net-allow 2>/dev/null || cat deploy/net-allow.default)",
      ),
      `deno task ${task} reads the list`,
    );
  }
});

Deno.test("deno task manifest --net-allow writes the list from a kubeconfig, or exits 2 naming the problem", async () => {
  const dir = await Deno.makeTempDir({ prefix: "net_allow_" });
  try {
    const kubeconfig = `${dir}/kubeconfig`;
    await Deno.writeTextFile(
      kubeconfig,
      "clusters: [{name: c, cluster: {server: 'https://192.0.2.10:6443'}}]\n" +
        "contexts: [{name: x, context: {cluster: c}}]\ncurrent-context: x\n",
    );
    const out = `${dir}/net-allow`;
    const args = ["--net-allow", `--kubeconfig=${kubeconfig}`, "--listen=127.0.0.1:10258", `--out=${out}`];
    assert.equal(await netAllowMain(args, { linodeUrl: "https://linode.example/v4" }), 0);
    assert.equal(await Deno.readTextFile(out), "linode.example:443,192.0.2.10:6443,127.0.0.1:10258\n");
    assert.equal(await netAllowMain(["--net-allow", `--kubeconfig=${dir}/absent`, `--out=${out}`], {}), 2);
    assert.equal(await netAllowMain(["--net-allow", "--apiserver=https://a:1", "--bogus=1"], {}), 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
