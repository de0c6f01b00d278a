/**
 * The in-cluster install: `deno task manifest` as an operator runs it, its output through `kubectl apply`
 * (client and server dry runs, then for real) against the Kubernetes emulator, and the DaemonSet's promises
 * (control-plane placement, probes on the serving port, a locked-down container, the token as a file).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import * as yaml from "js-yaml";
import { ccmPermissions, REPO_DIR } from "../deploy/artifacts.ts";
import { ENV_VARS } from "../config/env.ts";
import { parseConfig } from "../config/config.ts";
import { VERSION } from "../config/version.ts";
import { startKubeSim } from "../sim/kube/server.ts";
import { hasTool } from "./systemd_fixture.ts";

const TOKEN = "0d4e9c2b7a1f3e5d6c8b0a9f2e4d6c8b1a3f5e7d9c0b2a4f6e8d0c1b3a5f7e9d";
const KUBECTL = hasTool("kubectl");

interface Container {
  image: string;
  args: string[];
  env: { name: string; value?: string }[];
  ports: { containerPort: number }[];
  resources: { requests: Record<string, string>; limits: Record<string, string> };
  securityContext: Record<string, unknown> & { capabilities: { drop: string[] } };
  volumeMounts: { name: string; mountPath: string }[];
  [probe: string]: unknown;
}

interface PodSpec {
  hostNetwork: boolean;
  dnsPolicy: string;
  nodeSelector: Record<string, string>;
  tolerations: { key: string; operator?: string; value?: string; effect?: string }[];
  securityContext: Record<string, unknown> & { seccompProfile: { type: string } };
  containers: Container[];
  volumes: { name: string; secret?: { secretName: string; items: { key: string; path: string }[] } }[];
}

function daemonSet(): PodSpec {
  const docs = yaml.loadAll(Deno.readTextFileSync(join(REPO_DIR, "deploy/ccm.yaml"))) as Record<
    string,
    unknown
  >[];
  const ds = docs.find((d) => d.kind === "DaemonSet") as { spec: { template: { spec: PodSpec } } };
  return ds.spec.template.spec;
}

function mebibytes(quantity: string): number {
  const m = /^(\d+)(Mi|Gi)$/.exec(quantity);
  assert.ok(m, `${quantity} is not in Mi or Gi`);
  return Number(m[1]) * (m[2] === "Gi" ? 1024 : 1);
}

async function run(cmd: string, args: string[], env: Record<string, string> = {}) {
  const out = await new Deno.Command(cmd, { args, env, cwd: REPO_DIR, stdout: "piped", stderr: "piped" })
    .output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

Deno.test("the DaemonSet runs on control-plane Nodes before they are initialised, on the host network", () => {
  const pod = daemonSet();
  assert.deepEqual(pod.nodeSelector, { "node-role.kubernetes.io/control-plane": "" });
  const tolerates = (key: string) => pod.tolerations.find((t) => t.key === key);
  assert.deepEqual(tolerates("node.cloudprovider.kubernetes.io/uninitialized"), {
    key: "node.cloudprovider.kubernetes.io/uninitialized",
    value: "true",
    effect: "NoSchedule",
  });
  for (const key of ["node-role.kubernetes.io/control-plane", "node.kubernetes.io/not-ready"]) {
    assert.equal(tolerates(key)?.operator, "Exists", key);
  }
  assert.equal(pod.hostNetwork, true);
  assert.equal(pod.dnsPolicy, "Default", "the host's resolver: cluster DNS may not run yet");
});

Deno.test("the DaemonSet probes /healthz and /readyz over HTTPS on the port its flags serve", () => {
  const [c] = daemonSet().containers;
  assert.ok(c);
  const env = {
    LINODE_API_TOKEN_FILE: "/etc/linode/token",
    LINODE_REGION: "us-east",
    KUBERNETES_SERVICE_HOST: "10.0.0.1",
    KUBERNETES_SERVICE_PORT: "443",
  };
  const parsed = parseConfig(c.args, env);
  assert.equal(parsed.kind, "run");
  const port = parsed.kind === "run" ? parsed.config.serve.securePort : 0;
  assert.equal(port, 10258);
  assert.deepEqual(c.ports.map((p) => p.containerPort), [port]);
  const probes: [string, string][] = [
    ["startupProbe", "/healthz"],
    ["livenessProbe", "/healthz"],
    ["readinessProbe", "/readyz"],
  ];
  for (const [probe, path] of probes) {
    assert.deepEqual((c[probe] as { httpGet: unknown }).httpGet, { path, port, scheme: "HTTPS" }, probe);
  }
});

Deno.test("the DaemonSet's container is locked down: non-root, read-only, no capabilities, RuntimeDefault seccomp", () => {
  const pod = daemonSet();
  const [c] = pod.containers;
  assert.ok(c);
  assert.equal(pod.securityContext.runAsNonRoot, true);
  assert.ok(Number(pod.securityContext.runAsUser) > 0);
  assert.deepEqual(pod.securityContext.seccompProfile, { type: "RuntimeDefault" });
  assert.equal(c.securityContext.readOnlyRootFilesystem, true);
  assert.equal(c.securityContext.allowPrivilegeEscalation, false);
  assert.deepEqual(c.securityContext.capabilities.drop, ["ALL"]);
  assert.equal(c.image.split(":").at(-1), VERSION, "the image tag is this release");
  const requests = mebibytes(c.resources.requests.memory ?? "");
  const limit = mebibytes(c.resources.limits.memory ?? "");
  assert.ok(requests >= 128 && limit >= 2 * requests, `memory ${requests}Mi / ${limit}Mi`);
  assert.equal(c.resources.limits.cpu, undefined, "no CPU limit: throttling would delay Lease renewals");
});

Deno.test("the DaemonSet hands the token over as a file the ccm permission set may read, and sets only known variables", () => {
  const pod = daemonSet();
  const [c] = pod.containers;
  assert.ok(c);
  const known = new Set<string>(ENV_VARS.map((v) => v.name));
  assert.deepEqual(c.env.map((e) => e.name).filter((n) => !known.has(n)), []);
  const tokenFile = c.env.find((e) => e.name === "LINODE_API_TOKEN_FILE")?.value ?? "";
  const mount = c.volumeMounts.find((m) => tokenFile.startsWith(`${m.mountPath}/`));
  assert.ok(mount, `${tokenFile} is on a mounted volume`);
  const volume = pod.volumes.find((v) => v.name === mount.name);
  assert.equal(volume?.secret?.secretName, "ccm-linode");
  assert.deepEqual(volume?.secret?.items, [{
    key: "apiToken",
    path: tokenFile.slice(mount.mountPath.length + 1),
  }]);
  assert.ok(ccmPermissions().read.some((dir) => tokenFile.startsWith(`${dir}/`)), `${tokenFile} is readable`);
  assert.equal(
    c.env.some((e) => e.name === "LINODE_API_TOKEN"),
    false,
    "the token is not in the environment",
  );
});

Deno.test(
  "deno task manifest writes a private file that kubectl applies to the emulator (dry runs, then for real)",
  {
    ignore: !KUBECTL,
  },
  async () => {
    await using kube = await startKubeSim({ tls: true });
    const dir = await Deno.makeTempDir({ prefix: "manifest_" });
    try {
      const out = join(dir, "ccm-linode.yaml");
      const kubeconfig = join(dir, "kubeconfig");
      await kube.writeKubeconfig(kubeconfig);
      const made = await run(Deno.execPath(), ["task", "manifest", "--region=us-east", `--out=${out}`], {
        LINODE_API_TOKEN: TOKEN,
        NO_COLOR: "1",
      });
      assert.equal(made.code, 0, made.stderr);
      assert.equal((await Deno.stat(out)).mode! & 0o777, 0o600);
      const env = { KUBECONFIG: kubeconfig };
      const outputs = [made.stdout, made.stderr];
      for (const dryRun of ["--dry-run=client", "--dry-run=server", undefined]) {
        const applied = await run("kubectl", ["apply", ...(dryRun ? [dryRun] : []), "-f", out], env);
        assert.equal(applied.code, 0, `kubectl apply ${dryRun ?? ""}: ${applied.stderr}`);
        assert.equal(applied.stdout.trim().split("\n").length, 7, applied.stdout);
        outputs.push(applied.stdout, applied.stderr);
      }
      const secret = kube.store.get("secrets", "ccm-linode", "kube-system") as unknown as {
        data: Record<string, string>;
      };
      assert.equal(atob(secret.data.apiToken ?? ""), TOKEN);
      assert.ok(kube.store.get("apps/daemonsets", "ccm-linode", "kube-system"), "the DaemonSet exists");
      assert.ok(
        kube.store.get("rbac.authorization.k8s.io/roles", "ccm-linode", "kube-system"),
        "the Role exists",
      );
      assert.ok(outputs.every((o) => !o.includes(TOKEN)), "the token was printed");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);
