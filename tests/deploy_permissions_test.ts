/** The `ccm` permission set (what `deno task start` and the compiled binary run with), tried for real. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ccmPermissions, REPO_DIR } from "../deploy/artifacts.ts";

/** The in-cluster `--allow-net` list `deno task start` and the image use when nothing else is configured. */
const DEFAULT_NET = Deno.readTextFileSync(join(REPO_DIR, "deploy/net-allow.default")).trim();

/** Runs `main.ts` (or `script`) as `deno task start` does with the default list; the child's env only. */
async function runCcm(args: string[], env: Record<string, string>, extraRead: string[] = []) {
  const read = extraRead.length ? [`--allow-read=${[...ccmPermissions().read, ...extraRead].join(",")}`] : [];
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-P=ccm", `--allow-net=${DEFAULT_NET}`, ...read, "--ignore-env", "main.ts", ...args],
    cwd: REPO_DIR,
    env: { HOME: Deno.env.get("HOME") ?? "/root", NO_COLOR: "1", ...env },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
}

const IN_CLUSTER = {
  LINODE_API_TOKEN: "tok-permissions-test",
  LINODE_REGION: "us-east",
  KUBERNETES_SERVICE_HOST: "10.96.0.1",
  KUBERNETES_SERVICE_PORT: "443",
};

Deno.test("the ccm permission set refuses the Linode Metadata service, other hosts, PKI keys, writes, processes and FFI", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-P=ccm", "--ignore-env", "tests/permission_probe.ts"],
    cwd: REPO_DIR,
    env: { HOME: "/root", NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  assert.deepEqual(JSON.parse(new TextDecoder().decode(out.stdout)), {
    "fetch Linode Metadata (IPv4)": "NotCapable",
    "fetch Linode Metadata (IPv6)": "NotCapable",
    "connect Linode Metadata (link-local)": "NotCapable",
    "fetch a host outside the list": "NotCapable",
    "connect to the Linode API over plain HTTP": "NotCapable",
    "connect to the apiserver on another port": "NotCapable",
    "listen on another port": "NotCapable",
    "may connect to the Linode API": "granted",
    "may connect to the in-cluster apiserver (kubeadm)": "granted",
    "may listen on the secure port": "granted",
    "read /etc/shadow": "NotCapable",
    "read the cluster admin kubeconfig": "NotCapable",
    "read the cluster CA key": "NotCapable",
    "read a home folder": "NotCapable",
    "read a missing credential": "NotFound",
    "write /tmp": "NotCapable",
    "run a process": "NotCapable",
    "load a library": "NotCapable",
    "read HOME": "undefined",
    "read the hostname": "allowed",
  });
});

Deno.test("a LINODE_URL, in-cluster apiserver or listen address outside the net list stops the CCM at start (exit 2)", async () => {
  const refused = await runCcm(["--secure-port=10300"], {
    ...IN_CLUSTER,
    LINODE_URL: "https://linode.example.test/v4",
    KUBERNETES_SERVICE_HOST: "127.0.0.3",
  });
  assert.equal(refused.code, 2, refused.stderr);
  const lines = refused.stderr.split("\n");
  for (
    const want of [
      /^LINODE_URL: cannot connect to linode\.example\.test:443: this process may not .*deploy\/net-allow.*CCM_ALLOW_NET/,
      /^KUBERNETES_SERVICE_HOST, KUBERNETES_SERVICE_PORT: cannot connect to 127\.0\.0\.3:443: /,
      /^--bind-address, --secure-port: cannot listen on 0\.0\.0\.0:10300: /,
    ]
  ) assert.ok(lines.some((l) => want.test(l)), `${want} in:\n${refused.stderr}`);
  // The default list allows the in-cluster defaults: what stops this run is the missing service account.
  const allowed = await runCcm([], IN_CLUSTER);
  assert.equal(allowed.code, 2, allowed.stderr);
  assert.doesNotMatch(allowed.stderr, /cannot (connect to|listen on)/);
  assert.match(allowed.stderr, /in-cluster config/);
});

Deno.test("a kubeconfig whose server is outside the net list stops the CCM at start (exit 2) naming it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "net_permission_" });
  try {
    const kubeconfig = join(dir, "kubeconfig");
    await Deno.writeTextFile(
      kubeconfig,
      [
        "apiVersion: v1",
        "kind: Config",
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.5:6443', insecure-skip-tls-verify: true}}]",
        "users: [{name: u, user: {token: tok-kube}}]",
        "contexts: [{name: x, context: {cluster: c, user: u}}]",
        "current-context: x",
      ].join("\n"),
    );
    const env = {
      LINODE_API_TOKEN: "tok-permissions-test",
      LINODE_REGION: "us-east",
      KUBECONFIG: kubeconfig,
    };
    const refused = await runCcm([], env, [dir]);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(
      refused.stderr,
      /KUBECONFIG [^ ]+kubeconfig \(server https:\/\/127\.0\.0\.5:6443\): cannot connect to 127\.0\.0\.5:6443: this process may not/,
    );
    assert.ok(!refused.stderr.includes("tok-kube"), "the kubeconfig token was printed");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("docs/security.md lists the ccm set's read paths, allowed and refused hosts as deno.json has them", () => {
  const doc = Deno.readTextFileSync(join(REPO_DIR, "docs/security.md"));
  const p = ccmPermissions();
  const row = (name: string) => doc.split("\n").find((l) => l.startsWith(`| ${name} `)) ?? "";
  // The "granted" column only: the "why" column quotes other names.
  const listed = (line: string) => [...(line.split("|")[2] ?? "").matchAll(/`([^`]+)`/g)].map((m) => m[1]);
  assert.deepEqual(listed(row("read")), p.read, "the read row");
  assert.deepEqual(listed(row("net")), p.net, "the net row");
  assert.deepEqual(listed(row("net (refused)")), p.denyNet, "the refused hosts");
});

Deno.test("deno task start and lint-services never prompt; the lint set reads no file, runs nothing, writes nothing", () => {
  const config = JSON.parse(Deno.readTextFileSync(join(REPO_DIR, "deno.json")));
  const tasks = config.tasks as Record<string, string>;
  // A prompt would hang a service, or let a terminal user widen the set by pressing "y".
  assert.match(tasks.start ?? "", /^[^|;&]* deno run -P=ccm [^|;&]*--no-prompt /);
  assert.match(
    tasks["lint-services"] ?? "",
    /^deno run --no-prompt -P=lint-launch --allow-run=\$\(deno eval /,
  );
  const { lint, "lint-launch": launch } = config.permissions;
  assert.deepEqual(
    Object.keys(lint).sort(),
    ["env", "net"],
    "read comes only from --allow-read=<given files>",
  );
  assert.deepEqual(lint.net.deny, ccmPermissions().denyNet, "the Linode Metadata service stays refused");
  assert.deepEqual(Object.keys(launch), ["env"], "the launcher reads no file and reaches no host");
});
