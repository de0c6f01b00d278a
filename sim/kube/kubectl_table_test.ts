import assert from "node:assert/strict";
import { FakeClock } from "../../common/clock.ts";
import { kubeletNode, registerNode } from "../kubelet.ts";
import { hasKubectl, type KubectlResult, openKubectl } from "./testdata/kubectl_support.ts";
import { type KubeSim, startKubeSim } from "./server.ts";

/** kubectl's table output as header names and rows of cells (tabwriter pads columns by at least 3 spaces). */
function parseTable(result: KubectlResult): { header: string[]; rows: string[][] } {
  assert.equal(result.code, 0, result.stderr);
  const [header = "", ...lines] = result.stdout.trimEnd().split("\n");
  const split = (line: string) => line.trimEnd().split(/ {3,}/);
  return { header: split(header), rows: lines.map(split) };
}

function addresses(internal: string, external?: string) {
  const list = [{ type: "InternalIP", address: internal }];
  if (external) list.push({ type: "ExternalIP", address: external });
  return list;
}

/** Four Nodes, three Services and two Events, created 3m10s before kubectl looks. */
async function seed(kube: KubeSim, clock: FakeClock): Promise<void> {
  const at = clock.now();
  registerNode(
    kube,
    kubeletNode("demo-node-1", {
      nowMs: at,
      labels: { "node-role.kubernetes.io/control-plane": "" },
      addresses: addresses("10.0.0.1", "45.79.0.1"),
    }),
  );
  registerNode(kube, kubeletNode("demo-node-2", { nowMs: at, addresses: addresses("10.0.0.2") }));
  kube.store.patch("nodes", "demo-node-2", { spec: { unschedulable: true } }, { type: "merge" });
  registerNode(
    kube,
    kubeletNode("demo-node-3", { nowMs: at, ready: false, addresses: addresses("10.0.0.3") }),
  );
  registerNode(kube, kubeletNode("demo-node-4", { nowMs: at, addresses: addresses("10.0.0.4") }));
  const service = (name: string, type: string, port: number) => ({
    metadata: { name, namespace: "default" },
    spec: { type, selector: { app: name }, ports: [{ port, protocol: "TCP" }] },
  });
  kube.store.create("services", service("web", "LoadBalancer", 80));
  kube.store.create("services", service("api", "LoadBalancer", 8080));
  kube.store.create("services", service("db", "ClusterIP", 5432));
  const ingress = { status: { loadBalancer: { ingress: [{ ip: "45.79.100.1" }] } } };
  kube.store.patch("services", "web", ingress, {
    type: "merge",
    subresource: "status",
    namespace: "default",
  });
  await clock.advance(130_000);
  const seen = new Date(clock.now()).toISOString();
  kube.store.create("events", {
    metadata: { name: "demo-node-3.1", namespace: "default" },
    involvedObject: { kind: "Node", name: "demo-node-3" },
    type: "Warning",
    reason: "NodeNotReady",
    message: "Node demo-node-3 status is now: NodeNotReady",
    firstTimestamp: seen,
    lastTimestamp: seen,
    count: 1,
  });
  kube.store.create("events.k8s.io/events", {
    metadata: { name: "web.1", namespace: "default" },
    regarding: { kind: "Service", name: "web", namespace: "default" },
    type: "Normal",
    reason: "EnsuredLoadBalancer",
    note: "Ensured load balancer",
    eventTime: seen.replace("Z", "000Z"),
    reportingController: "cloud-controller-manager",
    reportingInstance: "ccm-1",
    action: "Ensure",
  });
  await clock.advance(60_000);
}

type Run = (args: string[]) => Promise<KubectlResult>;

/** A seeded TLS emulator on a fake clock, and a function that runs kubectl against it. */
async function withKubectl(fn: (run: Run, kube: KubeSim) => Promise<void>): Promise<void> {
  const clock = new FakeClock();
  await using kube = await startKubeSim({ tls: true, clock });
  await seed(kube, clock);
  await using kubectl = await openKubectl(kube);
  await fn((args) => kubectl.run(args), kube);
}

Deno.test({
  name: "kubectl get nodes prints the apiserver's columns, -o wide adds addresses and system info",
  ignore: !hasKubectl(),
  async fn() {
    await withKubectl(async (run, kube) => {
      const wide = parseTable(await run(["get", "nodes", "-o", "wide"]));
      assert.deepEqual(wide.header, [
        "NAME",
        "STATUS",
        "ROLES",
        "AGE",
        "VERSION",
        "INTERNAL-IP",
        "EXTERNAL-IP",
        "OS-IMAGE",
        "KERNEL-VERSION",
        "CONTAINER-RUNTIME",
      ]);
      const system = ["Debian GNU/Linux 12 (bookworm)", "6.1.0-28-cloud-amd64", "containerd://1.7.24"];
      assert.deepEqual(wide.rows, [
        ["demo-node-1", "Ready", "control-plane", "3m10s", "v1.32.0", "10.0.0.1", "45.79.0.1", ...system],
        [
          "demo-node-2",
          "Ready,SchedulingDisabled",
          "<none>",
          "3m10s",
          "v1.32.0",
          "10.0.0.2",
          "<none>",
          ...system,
        ],
        ["demo-node-3", "NotReady", "<none>", "3m10s", "v1.32.0", "10.0.0.3", "<none>", ...system],
        ["demo-node-4", "Ready", "<none>", "3m10s", "v1.32.0", "10.0.0.4", "<none>", ...system],
      ]);
      const narrow = parseTable(await run(["get", "nodes"]));
      assert.deepEqual(narrow.header, ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]);
      // Two pages of up to three (limit/continue) print as one table under one header.
      const before = kube.calls.count("GET /api/v1/nodes");
      const paged = parseTable(await run(["get", "nodes", "--chunk-size=3"]));
      assert.deepEqual(paged.rows, narrow.rows);
      assert.equal(kube.calls.count("GET /api/v1/nodes") - before, 2);
      const selected = parseTable(await run(["get", "nodes", "-l", "node-role.kubernetes.io/control-plane"]));
      assert.deepEqual(selected.rows.map((r) => r[0]), ["demo-node-1"]);
      const single = parseTable(await run(["get", "node", "demo-node-3"]));
      assert.deepEqual(single.rows, [["demo-node-3", "NotReady", "<none>", "3m10s", "v1.32.0"]]);
      const labels = parseTable(await run(["get", "node", "demo-node-1", "--show-labels"]));
      assert.match(labels.rows[0]?.at(-1) ?? "", /kubernetes\.io\/hostname=demo-node-1/);
    });
  },
});

Deno.test({
  name: "kubectl get svc and get events print the apiserver's columns",
  ignore: !hasKubectl(),
  async fn() {
    await withKubectl(async (run) => {
      const svc = parseTable(await run(["get", "svc", "-o", "wide"]));
      assert.deepEqual(svc.header, [
        "NAME",
        "TYPE",
        "CLUSTER-IP",
        "EXTERNAL-IP",
        "PORT(S)",
        "AGE",
        "SELECTOR",
      ]);
      const byName = new Map(svc.rows.map((r) => [r[0], r]));
      assert.match(
        byName.get("web")?.join("|") ?? "",
        /^web\|LoadBalancer\|10\.96\.\d+\.\d+\|45\.79\.100\.1\|80:3\d{4}\/TCP\|3m10s\|app=web$/,
      );
      assert.match(
        byName.get("api")?.join("|") ?? "",
        /^api\|LoadBalancer\|10\.96\.\d+\.\d+\|<pending>\|8080:3\d{4}\/TCP\|/,
      );
      assert.match(
        byName.get("db")?.join("|") ?? "",
        /^db\|ClusterIP\|10\.96\.\d+\.\d+\|<none>\|5432\/TCP\|3m10s\|app=db$/,
      );
      const all = parseTable(await run(["get", "svc", "-A"]));
      assert.deepEqual(all.header.slice(0, 2), ["NAMESPACE", "NAME"]);
      assert.deepEqual(all.rows.map((r) => r.slice(0, 2)), [["default", "api"], ["default", "db"], [
        "default",
        "web",
      ]]);

      const events = parseTable(await run(["get", "events"]));
      assert.deepEqual(events.header, ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]);
      assert.deepEqual(events.rows, [
        [
          "60s",
          "Warning",
          "NodeNotReady",
          "node/demo-node-3",
          "Node demo-node-3 status is now: NodeNotReady",
        ],
      ]);
      const v1 = parseTable(await run(["get", "events.v1.events.k8s.io"]));
      assert.deepEqual(v1.rows, [[
        "60s",
        "Normal",
        "EnsuredLoadBalancer",
        "service/web",
        "Ensured load balancer",
      ]]);
    });
  },
});
