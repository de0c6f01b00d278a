/** `main.ts lint` as a process on real files, stdin and a cluster: findings, exit codes, read-only. */
import assert from "node:assert/strict";
import { join } from "node:path";
import * as yaml from "js-yaml";
import { lintCommand } from "../lint/launch.ts";
import { startKubeSim } from "../sim/kube/server.ts";
import { ownLines, runLint } from "./lint_fixture.ts";

const A = "service.beta.kubernetes.io/linode-loadbalancer-";

function service(name: string, annotations: Record<string, string>, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace: "default", annotations },
    spec: { type: "LoadBalancer", ports: [{ port: 80, protocol: "TCP" }] },
    ...extra,
  };
}

const INVALID_YAML = `apiVersion: v1
kind: Service
metadata:
  name: web
  annotations:
    ${A}throttle: "50"
    ${A}check-passive: "yes"
spec:
  type: LoadBalancer
  ports: [{port: 80}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
---
apiVersion: v1
kind: Service
metadata:
  name: api
  annotations:
    ${A}check-interval: "5"
spec:
  type: LoadBalancer
  ports: [{port: 443}]
`;

async function withFiles(files: Record<string, string>, body: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "lint_test_" });
  try {
    for (const [name, text] of Object.entries(files)) await Deno.writeTextFile(join(dir, name), text);
    await body(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("lint prints each invalid annotation with what is accepted, and exits 1", async () => {
  await withFiles({ "svc.yaml": INVALID_YAML }, async (dir) => {
    const file = join(dir, "svc.yaml");
    const run = await runLint(["-f", file], { read: "given" });
    assert.equal(run.code, 1, run.stderr);
    assert.deepEqual(ownLines(run.stdout), [
      `${file}#1: default/web: error: ${A}check-passive="yes": expected true or false (also 1, t, T, TRUE, True, 0, f, F, FALSE, False)`,
      `${file}#1: default/web: error: ${A}throttle="50": expected a whole number from 0 to 20 (0 disables); ` +
      "used 20 on a new NodeBalancer, as the Go CCM reads it; an existing one keeps its client_conn_throttle",
      "checked 2 LoadBalancer Services: 2 invalid annotations in 1 Service",
    ]);
  });
});

Deno.test("lint exits 0 on valid manifests: a JSON List and FILE arguments", async () => {
  const list = {
    apiVersion: "v1",
    kind: "List",
    items: [service("a", { [`${A}throttle`]: "0" }), service("b", { [`${A}preserve`]: "true" })],
  };
  await withFiles(
    { "list.json": JSON.stringify(list), "one.yaml": JSON.stringify(service("c", {})) },
    async (dir) => {
      const run = await runLint([join(dir, "list.json"), join(dir, "one.yaml")], { read: "given" });
      assert.equal(run.code, 0, run.stderr);
      assert.deepEqual(ownLines(run.stdout), ["checked 3 LoadBalancer Services: every annotation is valid"]);
    },
  );
});

Deno.test("lint takes the Deployment's CCM flags: an annotation valid alone is invalid with --vpc-ids", async () => {
  const svc = service("web", { [`${A}backend-subnet-name`]: "pods" });
  await withFiles({ "svc.json": JSON.stringify(svc) }, async (dir) => {
    const file = join(dir, "svc.json");
    const alone = await runLint(["-f", file], { read: "given" });
    assert.equal(alone.code, 0, alone.stdout);
    assert.match(alone.stdout, /warning: .*backend-subnet-name: ignored: NodeBalancer backends are not VPC/);
    const withVpc = await runLint(["-f", file, "--vpc-ids", "5", "--subnet-ids=7"], { read: "given" });
    assert.equal(withVpc.code, 1, withVpc.stdout);
    assert.match(withVpc.stdout, /error: .*backend-vpc-name="": expected a label, given with the other/);
  });
});

Deno.test("lint under the binary's permissions reads stdin, and says how to read a file outside its folders", async () => {
  await withFiles({ "svc.yaml": INVALID_YAML }, async (dir) => {
    const file = join(dir, "svc.yaml");
    const piped = await runLint(["-f", "-"], { stdin: INVALID_YAML });
    assert.equal(piped.code, 1, piped.stderr);
    assert.match(piped.stdout, /^<stdin>#1: default\/web: error: .*throttle="50"/m);
    const denied = await runLint(["-f", file]);
    assert.equal(denied.code, 2);
    assert.equal(denied.stdout, "");
    assert.match(
      denied.stderr,
      new RegExp(
        `${file}: this process may read files only under /etc/kubernetes.*: pipe it in \\(lint -f - < ${file}\\)`,
      ),
    );
  });
});

Deno.test("lint --from-go-ccm notes each default that differs from the Go CCM without failing", async () => {
  const svc = service("web", { [`${A}throttle`]: "0" });
  const run = await runLint(["--from-go-ccm", "-f", "-"], { stdin: JSON.stringify(svc) });
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(ownLines(run.stdout), [
    `<stdin>: default/web: note: ${A}check-passive not set: this CCM applies false where the Go CCM applied true; ` +
    'set it to "true" to keep the Go CCM\'s behaviour',
    "checked 1 LoadBalancer Service: every annotation is valid, 1 note",
  ]);
});

const USAGE: { name: string; args: string[]; files?: Record<string, string>; stderr: RegExp }[] = [
  { name: "an unknown flag", args: ["-f", "-", "--bogus"], stderr: /--bogus: unknown flag/ },
  { name: "no file and no cluster", args: [], stderr: /--kubeconfig: no Kubernetes API to talk to/ },
  {
    name: "a missing file",
    args: ["-f", "/nonexistent/svc.yaml"],
    stderr: /\/nonexistent\/svc.yaml: not found/,
  },
  {
    name: "a file that is not YAML",
    args: ["-f", "bad.yaml"],
    files: { "bad.yaml": "a: [1,\n" },
    stderr: /bad.yaml: not YAML or JSON/,
  },
  {
    name: "files and --kubeconfig together",
    args: ["-f", "-", "--kubeconfig=/tmp/k"],
    stderr: /--kubeconfig, --master: give manifest files or a cluster, not both/,
  },
];

for (const c of USAGE) {
  Deno.test(`lint exits 2 on ${c.name}`, async () => {
    await withFiles(c.files ?? {}, async (dir) => {
      const args = c.args.map((a) => c.files?.[a] !== undefined ? join(dir, a) : a);
      const run = await runLint(args, { read: "given", stdin: "" });
      assert.equal(run.code, 2, run.stdout);
      assert.match(run.stderr, c.stderr);
    });
  });
}

Deno.test("lint --kubeconfig checks the cluster's Services with one list request and no write", async () => {
  await using kube = await startKubeSim();
  kube.store.create("namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: "shop" } });
  kube.store.create("services", service("good", { [`${A}throttle`]: "5" }));
  kube.store.create("services", {
    ...service("bad", { [`${A}check-timeout`]: "90" }),
    metadata: { name: "bad", namespace: "shop", annotations: { [`${A}check-timeout`]: "90" } },
  });
  await withFiles({}, async (dir) => {
    const kubeconfig = join(dir, "kubeconfig");
    await kube.writeKubeconfig(kubeconfig);
    kube.calls.reset();
    const all = await runLint([`--kubeconfig=${kubeconfig}`], { read: "given" });
    assert.equal(all.code, 1, all.stderr);
    assert.deepEqual(ownLines(all.stdout), [
      `cluster: shop/bad: error: ${A}check-timeout="90": expected whole seconds from 1 to 30, less than check-interval`,
      "checked 2 LoadBalancer Services: 1 invalid annotation in 1 Service",
    ]);
    const one = await runLint(["-n", "default"], { read: "given", env: { KUBECONFIG: kubeconfig } });
    assert.equal(one.code, 0, one.stderr);
    assert.deepEqual(ownLines(one.stdout), ["checked 1 LoadBalancer Service: every annotation is valid"]);
    assert.deepEqual(kube.calls.log.map((c) => c.key), [
      "GET /api/v1/services",
      "GET /api/v1/namespaces/{namespace}/services",
    ]);
  });
});

Deno.test("deno task lint-services may read the kubeconfig it is given, not the files that kubeconfig names", async () => {
  await using kube = await startKubeSim({ tls: true });
  const config = yaml.load(kube.kubeconfig()) as { clusters: { cluster: Record<string, string> }[] };
  const cluster = config.clusters[0]!.cluster;
  await withFiles({ "ca.crt": atob(cluster["certificate-authority-data"]!) }, async (dir) => {
    const embedded = join(dir, "embedded.kubeconfig");
    await kube.writeKubeconfig(embedded);
    const ok = await runLint([`--kubeconfig=${embedded}`], { read: "given" });
    assert.equal(ok.code, 0, ok.stderr);
    assert.deepEqual(ownLines(ok.stdout), ["checked 0 LoadBalancer Services: every annotation is valid"]);

    delete cluster["certificate-authority-data"];
    cluster["certificate-authority"] = join(dir, "ca.crt");
    const naming = join(dir, "naming.kubeconfig");
    await Deno.writeTextFile(naming, yaml.dump(config));
    const refused = await runLint([`--kubeconfig=${naming}`], { read: "given" });
    assert.equal(refused.code, 2);
    assert.match(
      refused.stderr,
      /certificate-authority file .*ca\.crt is not among the files this process may read: embed it/,
    );
  });
});

Deno.test("lintCommand() grants read access to the manifest files, or the kubeconfig, and nothing else", () => {
  const reads = (args: string[]) => lintCommand(args).filter((a) => a.startsWith("--allow-read"));
  assert.deepEqual(reads(["svc.yaml", "-f", "/tmp/other.yaml", "-"]), [
    "--allow-read=svc.yaml,/tmp/other.yaml",
  ]);
  assert.deepEqual(reads(["--kubeconfig=/home/me/.kube/config", "-n", "shop"]), [
    "--allow-read=/home/me/.kube/config",
  ]);
  assert.deepEqual(reads(["-f", "-"]), [], "stdin needs no file");
  assert.deepEqual(reads(["--no-such-flag"]), [], "a usage problem reads nothing");
  const command = lintCommand(["svc.yaml"]);
  assert.deepEqual(command.slice(0, 2), ["run", "--no-prompt"]);
  assert.ok(command.includes("-P=lint"));
  assert.ok(!command.some((a) => /^--allow-(net|write|run|env|sys|ffi|all)|^-A$/.test(a)), command.join(" "));
});
