/**
 * The CCM's Kubernetes traffic for the RBAC test: every controller (`--controllers=*`, the route controller
 * on) started through `runCcm` against the emulators, then a scripted story that drives each code path that
 * talks to the apiserver. The Kubernetes emulator's audit log is the result. A step whose controller this
 * build lacks still acts (its traffic, if any, counts) but is not waited for, so a controller that lands
 * later adds its traffic here without a change to this file.
 *
 * `deno task rbac` prints the rules this traffic needs; `deno task rbac --write` puts them into deploy/ccm.yaml.
 */
import type { CoreV1Event, V1Node, V1Service } from "@kubernetes/client-node";
import { runCcm } from "../ccm.ts";
import { systemClock } from "../common/clock.ts";
import { captureLogs } from "../common/log.ts";
import { type ControllerName, parseConfig } from "../config/config.ts";
import { generateSelfSignedCert } from "../server/tls.ts";
import { Registry } from "../common/metrics.ts";
import type { AuditEntry } from "../sim/kube/audit.ts";
import { type DemoWorld, startDemoWorld } from "../sim/demo_world.ts";
import { kubeletNode, registerNode, setNodeReady, UNINITIALIZED_TAINT } from "../sim/kubelet.ts";
import { FAST_LEASE, freePort, leaseFlags, waitFor } from "./process.ts";

/** The namespace of the Lease (the default `--leader-elect-resource-namespace`). */
export const CCM_NAMESPACE = "kube-system";
const LB = "service.beta.kubernetes.io/linode-loadbalancer-";
const SHUTDOWN_TAINT = "node.cloudprovider.kubernetes.io/shutdown";

/** One scripted step: what to change, which controller answers, and how to tell it has. */
interface TrafficStep {
  readonly name: string;
  readonly controller: ControllerName;
  act(world: DemoWorld): void | Promise<void>;
  done(world: DemoWorld): boolean;
}

function node(world: DemoWorld, name: string): V1Node | undefined {
  return world.kube.store.get("nodes", name) as V1Node | undefined;
}

function isInitialised(n: V1Node | undefined): boolean {
  return n !== undefined && !(n.spec?.taints ?? []).some((t) => t.key === UNINITIALIZED_TAINT.key);
}

function linodeId(world: DemoWorld, label: string): number {
  return world.linode.world.listInstances().find((l) => l.label === label)?.id ?? 0;
}

function services(world: DemoWorld): V1Service[] {
  return world.kube.store.list("services") as V1Service[];
}

function hasIngress(svc: V1Service | undefined): boolean {
  return (svc?.status?.loadBalancer?.ingress?.length ?? 0) > 0;
}

async function addTlsService(world: DemoWorld): Promise<void> {
  const { certPem, keyPem } = await generateSelfSignedCert({ hosts: ["store.example.com"] });
  world.kube.store.create("namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: "shop" } });
  world.kube.store.create("secrets", {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "store-tls", namespace: "shop" },
    type: "kubernetes.io/tls",
    stringData: { "tls.crt": certPem, "tls.key": keyPem },
  });
  world.kube.store.create("services", {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name: "store",
      namespace: "shop",
      annotations: { [`${LB}port-443`]: '{"protocol": "https", "tls-secret-name": "store-tls"}' },
    },
    spec: { type: "LoadBalancer", selector: { app: "store" }, ports: [{ name: "https", port: 443 }] },
  });
}

/** The story, in order. Each step's traffic is whatever the controllers do about it. */
const STEPS: readonly TrafficStep[] = [
  {
    name: "the demo Nodes are initialised",
    controller: "cloud-node",
    act: () => {},
    done: (w) => w.kube.store.list("nodes").every((n) => isInitialised(n as V1Node)),
  },
  {
    name: "a Node changes under the CCM's patch (409): it reads the Node again",
    controller: "cloud-node",
    act: (w) => {
      w.kube.faults.add({ method: "PATCH", route: "/api/v1/nodes/{name}", status: 409, times: 1 });
      w.addNode("demo-node-4");
    },
    done: (w) => isInitialised(node(w, "demo-node-4")),
  },
  {
    name: "a Node without a Linode gets its InstanceNotFound Warning again (Event count patched)",
    controller: "cloud-node",
    act: (w) => w.registerNode("ghost-node"),
    done: (w) =>
      (w.kube.store.list("events") as unknown as CoreV1Event[]).some((e) =>
        e.involvedObject?.name === "ghost-node" && e.reason === "InstanceNotFound" && (e.count ?? 0) >= 2
      ),
  },
  {
    name: "a shut-down Linode's Node gets the shutdown taint",
    controller: "cloud-node-lifecycle",
    act: (w) => {
      w.linode.world.setStatus(linodeId(w, "demo-node-2"), "offline");
      setNodeReady(w.kube, "demo-node-2", false);
    },
    done: (w) => (node(w, "demo-node-2")?.spec?.taints ?? []).some((t) => t.key === SHUTDOWN_TAINT),
  },
  {
    name: "a deleted Linode's Node is deleted",
    controller: "cloud-node-lifecycle",
    act: (w) => {
      w.linode.world.deleteInstance(linodeId(w, "demo-node-3"));
      setNodeReady(w.kube, "demo-node-3", false);
    },
    done: (w) => node(w, "demo-node-3") === undefined,
  },
  {
    name: "LoadBalancer Services, one with a TLS Secret in its own namespace, get NodeBalancers",
    controller: "service",
    act: addTlsService,
    done: (w) => services(w).filter((s) => s.spec?.type === "LoadBalancer").every(hasIngress),
  },
  {
    name: "a Service is changed and another deleted (its finalizer released)",
    controller: "service",
    act: (w) => {
      w.kube.store.patch("services", "web", { metadata: { annotations: { [`${LB}throttle`]: "5" } } }, {
        type: "merge",
        namespace: "default",
      });
      w.kube.store.delete("services", "api", "default");
    },
    done: (w) =>
      w.kube.store.get("services", "api", "default") === undefined &&
      w.linode.world.nodeBalancers().some((nb) => nb.client_conn_throttle === 5),
  },
  {
    name: "a Node that registers without a pod CIDR gets one (node IPAM's spec patch)",
    controller: "nodeipam",
    act: (w) => registerNode(w.kube, kubeletNode("ipam-node", { taints: [] })),
    done: (w) => (node(w, "ipam-node")?.spec?.podCIDRs?.length ?? 0) > 0,
  },
  {
    name: "the pod CIDRs of running Nodes are routed: NetworkUnavailable is False",
    controller: "route",
    act: () => {},
    done: (w) =>
      ["demo-node-1", "demo-node-4"].every((name) =>
        node(w, name)?.status?.conditions?.some((c) =>
          c.type === "NetworkUnavailable" && c.status === "False"
        )
      ),
  },
];

/** The token of Prometheus's ServiceAccount in the story. */
const PROMETHEUS_TOKEN = "tok-rbac-traffic-prometheus";

/**
 * Prometheus scrapes `/metrics` with its ServiceAccount token, as deploy/monitoring.yaml sets it up: the CCM
 * reviews the token (TokenReview) and the access (SubjectAccessReview), which its own RBAC must allow.
 */
async function scrapeMetrics(world: DemoWorld, server: { url: string; certPem: string }): Promise<void> {
  world.kube.identities.add(PROMETHEUS_TOKEN, { username: "system:serviceaccount:monitoring:prometheus" });
  world.kube.store.create("rbac.authorization.k8s.io/clusterroles", {
    metadata: { name: "ccm-metrics-reader" },
    rules: [{ nonResourceURLs: ["/metrics"], verbs: ["get"] }],
  });
  world.kube.store.create("rbac.authorization.k8s.io/clusterrolebindings", {
    metadata: { name: "prometheus-ccm-metrics" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "ccm-metrics-reader" },
    subjects: [{ kind: "ServiceAccount", name: "prometheus", namespace: "monitoring" }],
  });
  using client = Deno.createHttpClient({ caCerts: [server.certPem] });
  const res = await fetch(`${server.url}/metrics`, {
    client,
    headers: { authorization: `Bearer ${PROMETHEUS_TOKEN}` },
  });
  await res.body?.cancel();
  if (res.status !== 200) throw new Error(`Prometheus's scrape of /metrics answered ${res.status}`);
}

/** What the scenario observed. */
export interface Traffic {
  /** Every distinct request the CCM made (resource and non-resource), in first-seen order. */
  readonly requests: readonly AuditEntry[];
  /** Steps not waited for: their controller is not in this build. */
  readonly skipped: readonly string[];
}

/** The flags: every controller, routes and node IPAM on for the demo VPC, short periods so each path runs soon. */
const FLAGS = [
  "--controllers=*",
  "--enable-route-controller",
  "--vpc-names=demo-vpc",
  "--cluster-cidr=10.192.0.0/10",
  "--allocate-node-cidrs",
  "--disable-ipv6-node-cidr-allocation",
  "--route-reconciliation-period=1s",
  "--node-monitor-period=200ms",
  "--bind-address=127.0.0.1",
  ...leaseFlags(FAST_LEASE),
];

/** Controllers this build reports as not available (its startup warning names them). */
function unavailable(lines: readonly string[]): Set<string> {
  const names = new Set<string>();
  for (const line of lines) {
    const record = JSON.parse(line) as { message?: string; name?: unknown };
    if (record.message?.includes("is not available") && typeof record.name === "string") {
      names.add(record.name);
    }
  }
  return names;
}

/** Runs the story against a fresh demo world and returns the CCM's traffic. */
export async function runTrafficScenario(): Promise<Traffic> {
  const logs = await captureLogs("warning");
  await using world = await startDemoWorld({ nodes: 3, services: 2 });
  const flags = [...FLAGS, `--secure-port=${freePort()}`];
  const parsed = parseConfig(flags, { ...world.env, LINODE_INSTANCE_CACHE_TTL: "1" });
  if (parsed.kind !== "run") throw new TypeError(`Cannot run the CCM: parseConfig gave "${parsed.kind}"`);
  const stop = new AbortController();
  let server: { url: string; certPem: string } | null = null;
  const deps = {
    clock: systemClock,
    metrics: new Registry(),
    hostname: "rbac-traffic",
    onStarted: (ccm: { server: typeof server }) => server = ccm.server,
  };
  const run = runCcm(parsed.config, deps, stop.signal);
  const skipped: string[] = [];
  try {
    await waitFor(() => logs.lines.length > 0 || isInitialised(node(world, "demo-node-1")), {
      what: "the CCM to start",
    });
    for (const step of STEPS) {
      await step.act(world);
      if (unavailable(logs.lines).has(step.controller)) skipped.push(`${step.name} (${step.controller})`);
      else await waitFor(() => step.done(world), { what: step.name, timeoutMs: 30_000 });
    }
    if (!server) throw new Error("The CCM serves nothing: the secure port is needed for the scrape");
    await scrapeMetrics(world, server);
  } finally {
    stop.abort();
    await run;
  }
  return { requests: world.kube.audit.distinct(), skipped };
}

if (import.meta.main) {
  const { deriveRules, replaceRuleBlock, renderRules } = await import("../deploy/rbac.ts");
  const traffic = await runTrafficScenario();
  const derived = deriveRules(traffic.requests.filter((r) => r.resourceRequest), CCM_NAMESPACE);
  const path = new URL("../deploy/ccm.yaml", import.meta.url);
  const out = (text: string) => Deno.stdout.writeSync(new TextEncoder().encode(text));
  for (const step of traffic.skipped) out(`skipped (controller not in this build): ${step}\n`);
  if (Deno.args.includes("--write")) {
    const text = replaceRuleBlock(Deno.readTextFileSync(path), "cluster", derived.cluster);
    Deno.writeTextFileSync(path, replaceRuleBlock(text, "namespace", derived.namespace));
    out(`rewrote the rules of ${path.pathname}\n`);
  } else {
    out(`ClusterRole rules:\n${renderRules(derived.cluster)}Role rules (${CCM_NAMESPACE}):\n`);
    out(renderRules(derived.namespace));
  }
}
