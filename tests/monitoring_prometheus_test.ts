/**
 * The shipped alerts on a real Prometheus: it scrapes a running CCM (a `main.ts` process against the
 * emulators) through the secure port with a bearer token that the Kubernetes emulator's TokenReview and
 * SubjectAccessReview decide under deploy/monitoring.yaml's RBAC, and evaluates deploy/monitoring-alerts.rules.yaml
 * with every duration divided by 60 (scrape and evaluation every second: a minute of the rules is a second
 * here). A healthy run fires nothing; LinodeCCMLinodeApiErrors fires while the Linode emulator answers 500 and
 * resolves after; LinodeCCMNoLeader fires once the CCM is killed. The CCM's /metrics passes
 * `promtool check metrics`, and every family and label it serves is one the code declares.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import * as yaml from "js-yaml";
import { startDemoWorld } from "../sim/demo_world.ts";
import { generateSelfSignedCert } from "../server/tls.ts";
import { RULES_FILE } from "../deploy/prometheus_rule.ts";
import { FAST_LEASE, freePort, leaseFlags, spawnCcm } from "./process.ts";
import { declaredMetrics, JOB, promtool, ROOT, skipWithout } from "./monitoring_fixture.ts";
import {
  type ActiveAlert,
  type PrometheusProcess,
  scaleRuleDurations,
  startPrometheus,
} from "./prometheus_fixture.ts";

const LINODE_TOKEN = "tok-e2e-monitoring-7d2a9c4e1b8f3a6d5c0e9b2a7f4d1c8e";
const PROMETHEUS_TOKEN = "tok-prometheus-k8s-3f9a1c7e5b2d8a4c";
/** A minute of the shipped rules is a second here. */
const TIME_SCALE = 60;

/** deploy/monitoring.yaml's RBAC in the emulator, and a token for the ServiceAccount it binds. */
function grantPrometheus(kube: Awaited<ReturnType<typeof startDemoWorld>>["kube"]): void {
  const docs = yaml.loadAll(Deno.readTextFileSync(new URL("deploy/monitoring.yaml", ROOT))) as {
    kind: string;
    subjects?: { name: string; namespace: string }[];
  }[];
  const role = docs.find((d) => d.kind === "ClusterRole");
  const binding = docs.find((d) => d.kind === "ClusterRoleBinding");
  const sa = binding?.subjects?.[0];
  assert.ok(role && binding && sa);
  kube.store.create("rbac.authorization.k8s.io/clusterroles", role);
  kube.store.create("rbac.authorization.k8s.io/clusterrolebindings", binding);
  kube.identities.add(PROMETHEUS_TOKEN, {
    username: `system:serviceaccount:${sa.namespace}:${sa.name}`,
    uid: "prometheus-uid",
    groups: ["system:serviceaccounts", `system:serviceaccounts:${sa.namespace}`, "system:authenticated"],
  });
}

function describe(alerts: readonly ActiveAlert[]): string {
  return JSON.stringify(alerts.map((a) => `${a.labels.alertname} ${a.state}`));
}

/** Polls the active alerts until `done` holds for them; returns them. */
async function alertsUntil(
  prometheus: PrometheusProcess,
  done: (alerts: ActiveAlert[]) => boolean,
  what: string,
  timeoutMs = 45_000,
): Promise<ActiveAlert[]> {
  const deadline = Date.now() + timeoutMs;
  let alerts: ActiveAlert[] = [];
  while (Date.now() < deadline) {
    alerts = await prometheus.alerts();
    if (done(alerts)) return alerts;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`Timed out waiting for ${what}; active alerts: ${describe(alerts)}`);
}

function firing(alerts: readonly ActiveAlert[], name: string): ActiveAlert | undefined {
  return alerts.find((a) => a.labels.alertname === name && a.state === "firing");
}

/** The families and label names of an exposition, from its TYPE lines and samples. */
function exposed(text: string): Map<string, { type: string; labels: Set<string> }> {
  const out = new Map<string, { type: string; labels: Set<string> }>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) out.set(m[1]!, { type: m[2]!, labels: new Set() });
  for (const m of text.matchAll(/^([a-zA-Z_:][\w:]*?)(_bucket|_sum|_count)?(?:\{([^}]*)\})? \S+$/gm)) {
    const family = out.get(m[1]! + (m[2] ?? "")) ?? out.get(m[1]!);
    for (const l of (m[3] ?? "").matchAll(/(\w+)="/g)) family?.labels.add(l[1]!);
  }
  return out;
}

Deno.test({
  name:
    "the shipped alerts on a real Prometheus scraping a CCM: quiet when healthy, Linode errors, no leader",
  ignore: skipWithout("prometheus", "promtool"),
  async fn(t) {
    await using world = await startDemoWorld({ nodes: 2, services: 1, linodeToken: LINODE_TOKEN });
    grantPrometheus(world.kube);
    const dir = world.kubeconfigPath.replace(/\/[^/]+$/, "");
    const pem = await generateSelfSignedCert({ hosts: ["127.0.0.1"] });
    await Deno.writeTextFile(join(dir, "tls.crt"), pem.certPem);
    await Deno.writeTextFile(join(dir, "tls.key"), pem.keyPem, { mode: 0o600 });
    await Deno.writeTextFile(join(dir, "prometheus-token"), PROMETHEUS_TOKEN, { mode: 0o600 });
    const port = freePort();
    // The instance listing every second (TTL 1 s, status resync 1 s): the Linode traffic a fault shows in.
    await using ccm = spawnCcm([
      ...leaseFlags(FAST_LEASE).filter((f) => !f.startsWith("--secure-port")),
      "--bind-address=127.0.0.1",
      `--secure-port=${port}`,
      `--tls-cert-file=${join(dir, "tls.crt")}`,
      `--tls-private-key-file=${join(dir, "tls.key")}`,
      "--node-status-update-frequency=1s",
    ], { env: { ...world.env, LINODE_INSTANCE_CACHE_TTL: "1" }, readDirs: [dir], name: "ccm" });
    await ccm.waitForLog(/^became leader/);

    await using prometheus = await startPrometheus({
      scrapeConfigs: [{
        job_name: JOB,
        scheme: "https",
        authorization: { type: "Bearer", credentials_file: join(dir, "prometheus-token") },
        tls_config: { ca_file: join(dir, "tls.crt") },
        static_configs: [{ targets: [`127.0.0.1:${port}`] }],
      }],
    });
    // The rules are loaded once the target is up, as in a cluster where the CCM ran before the rules came:
    // the test's 1 s `for` would otherwise race Prometheus's first scrape.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const [target] = await prometheus.targets();
      if (target?.health === "up") break;
      if (Date.now() > deadline) throw new Error(`the CCM target never came up: ${JSON.stringify(target)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const rules = scaleRuleDurations(Deno.readTextFileSync(new URL(RULES_FILE, ROOT)), TIME_SCALE);
    await prometheus.loadRules(rules);

    await t.step("the scrape went through delegated authentication and authorisation", async () => {
      const allowed = await prometheus.query(`ccm_secure_port_requests_total{decision="allowed"}`);
      assert.ok([...allowed.values()].some((v) => v >= 1), "Prometheus's scrapes were allowed by review");
      assert.ok(world.kube.calls.count("POST /apis/authentication.k8s.io/v1/tokenreviews") >= 1);
      assert.ok(world.kube.calls.count("POST /apis/authorization.k8s.io/v1/subjectaccessreviews") >= 1);
      const always = await prometheus.query(`ccm_secure_port_requests_total{decision="always_allowed"}`);
      assert.ok([...always.values()].every((v) => v === 0), "not an always-allowed path");
    });

    await t.step("healthy: every rule evaluates, nothing fires or is pending", async () => {
      // Eight seconds: eight minutes of the rules, longer than any `for` but the slow ones' windows.
      const until = Date.now() + 8_000;
      while (Date.now() < until) {
        const alerts = await prometheus.alerts();
        assert.deepEqual(
          alerts.map((a) => `${a.labels.alertname} ${a.state}`),
          [],
          "a healthy run fires nothing",
        );
        await new Promise((r) => setTimeout(r, 250));
      }
      const evaluated = await prometheus.rules();
      assert.equal(
        evaluated.length,
        (yaml.load(rules) as { groups: { rules: unknown[] }[] }).groups[0]?.rules.length,
      );
      assert.deepEqual(evaluated.filter((r) => r.health !== "ok"), [], "every rule evaluates without error");
    });

    await t.step(
      "the Linode emulator answers 500: LinodeCCMLinodeApiErrors fires, then resolves",
      async () => {
        const fault = world.linode.faults.error(500);
        let alerts: ActiveAlert[];
        try {
          alerts = await alertsUntil(
            prometheus,
            (a) => firing(a, "LinodeCCMLinodeApiErrors") !== undefined,
            "errors",
          );
          assert.ok(
            (world.linode.faults.list().find((f) => f.id === fault)?.hits ?? 0) > 0,
            "500s were answered",
          );
        } finally {
          world.linode.faults.remove(fault);
        }
        const errors = firing(alerts, "LinodeCCMLinodeApiErrors");
        assert.equal(errors?.labels.severity, "warning");
        assert.match(
          errors?.annotations.summary ?? "",
          /^\d+(\.\d+)?% of Linode API requests fail with a 5xx/,
        );
        assert.deepEqual(
          alerts.filter((a) => a.state === "firing").map((a) => a.labels.alertname),
          [
            "LinodeCCMLinodeApiErrors",
          ],
        );
        await alertsUntil(
          prometheus,
          (a) => !a.some((x) => x.labels.alertname === "LinodeCCMLinodeApiErrors"),
          "resolved",
        );
      },
    );

    await t.step(
      "/metrics passes promtool check metrics and serves only declared families and labels",
      async () => {
        using client = Deno.createHttpClient({ caCerts: [pem.certPem] });
        const res = await fetch(`https://127.0.0.1:${port}/metrics`, {
          client,
          headers: { authorization: `Bearer ${PROMETHEUS_TOKEN}` },
        });
        const text = await res.text();
        assert.equal(res.status, 200);
        assert.ok(!text.includes(LINODE_TOKEN), "the Linode token is in /metrics");
        const checked = await promtool(["check", "metrics"], { stdin: text });
        assert.equal(checked.code, 0, checked.output);
        const declared = await declaredMetrics();
        const served = exposed(text);
        assert.ok(
          served.has("ccm_linode_requests_total") && served.size > 20,
          `${served.size} families served`,
        );
        for (const [name, family] of served) {
          const d = declared.get(name);
          assert.equal(d?.type, family.type, `${name}: served as ${family.type}, declared as ${d?.type}`);
          const allowed = new Set([...d.labels, ...(d.type === "histogram" ? ["le"] : [])]);
          assert.deepEqual(
            [...family.labels].filter((l) => !allowed.has(l)),
            [],
            `${name}: undeclared labels`,
          );
        }
      },
    );

    await t.step("the CCM is killed: LinodeCCMNoLeader fires", async () => {
      ccm.kill("SIGKILL");
      await ccm.exited(10_000);
      const alerts = await alertsUntil(
        prometheus,
        (a) => firing(a, "LinodeCCMNoLeader") !== undefined,
        "no leader",
      );
      assert.equal(firing(alerts, "LinodeCCMNoLeader")?.labels.severity, "critical");
      assert.deepEqual([...(await prometheus.query(`up{job="${JOB}"}`)).values()], [0]);
    });
  },
});
