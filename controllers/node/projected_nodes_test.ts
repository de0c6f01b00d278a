import assert from "node:assert/strict";
import type { V1Node } from "@kubernetes/client-node";
import { type NodeUpdatePlan, UNINITIALIZED_TAINT_KEY } from "./addresses.ts";
import { type NodeSource, ProjectedNodes } from "./projected_nodes.ts";

type Handler = Parameters<NodeSource["onChange"]>[0];

/** An informer stand-in holding Nodes by name; `put` replaces one and tells the handlers. */
function source(...nodes: V1Node[]) {
  const byName = new Map(nodes.map((n) => [n.metadata?.name ?? "", n]));
  const handlers = new Set<Handler>();
  return {
    list: () => [...byName.values()],
    get: (name: string) => byName.get(name),
    onChange(h: Handler) {
      handlers.add(h);
      return () => handlers.delete(h);
    },
    put(node: V1Node) {
      const old = byName.get(node.metadata?.name ?? "");
      byName.set(node.metadata?.name ?? "", node);
      for (const h of handlers) h("update", node, old);
    },
  };
}

function kubeletNode(name: string, rv = "1"): V1Node {
  return {
    metadata: { name, resourceVersion: rv, labels: { kubelet: "yes" } },
    spec: {
      taints: [{ key: UNINITIALIZED_TAINT_KEY, effect: "NoSchedule" }, {
        key: "other",
        effect: "NoSchedule",
      }],
    },
    status: { addresses: [{ type: "Hostname", address: name }] },
  };
}

const INIT: NodeUpdatePlan = {
  addresses: [{ type: "Hostname", address: "n1" }, { type: "InternalIP", address: "10.0.0.2" }],
  patch: {
    metadata: { labels: { "topology.kubernetes.io/region": "us-east" } },
    spec: { providerID: "linode://7", taints: [] },
  },
};

Deno.test("ProjectedNodes shows a held initialisation on every read and tells watchers, without touching the source", () => {
  const src = source(kubeletNode("n1"), kubeletNode("n2"));
  const view = new ProjectedNodes(src);
  const events: [string, string | undefined, string | undefined][] = [];
  view.onChange((kind, node, old) => events.push([kind, node.spec?.providerID, old?.spec?.providerID]));
  view.project("n1", INIT);
  const n1 = view.get("n1");
  assert.equal(n1?.spec?.providerID, "linode://7");
  assert.deepEqual(n1?.spec?.taints?.map((t) => t.key), ["other"]);
  assert.deepEqual(n1?.metadata?.labels, { kubelet: "yes", "topology.kubernetes.io/region": "us-east" });
  assert.deepEqual(n1?.status?.addresses?.map((a) => a.address), ["n1", "10.0.0.2"]);
  assert.equal(view.list().find((n) => n.metadata?.name === "n2")?.spec?.providerID, undefined);
  assert.equal(src.get("n1")?.spec?.providerID, undefined, "the informer's copy is never changed");
  assert.deepEqual(events, [["update", "linode://7", undefined]]);
  view.project("n1", INIT);
  assert.equal(events.length, 1, "the same plan again is no change");
});

Deno.test("ProjectedNodes keeps a held update across the Node's own updates, and drops it when told", () => {
  const src = source(kubeletNode("n1"));
  const view = new ProjectedNodes(src);
  const seen: (string | undefined)[] = [];
  view.onChange((_kind, node) => seen.push(`${node.metadata?.resourceVersion} ${node.spec?.providerID}`));
  view.project("n1", INIT);
  src.put(kubeletNode("n1", "2"));
  assert.equal(view.get("n1")?.spec?.providerID, "linode://7", "a heartbeat does not drop it");
  view.project("n1", undefined);
  assert.equal(view.get("n1")?.spec?.providerID, undefined);
  assert.deepEqual(seen, ["1 linode://7", "2 linode://7", "2 undefined"]);
});

Deno.test("ProjectedNodes shows node IPAM's held pod CIDRs until the Node has its own, without touching the source", () => {
  const src = source(kubeletNode("n1"));
  const view = new ProjectedNodes(src);
  const events: (string[] | undefined)[] = [];
  view.onChange((_kind, node) => events.push(node.spec?.podCIDRs));
  view.projectPodCidrs("n1", ["10.192.0.0/24"]);
  view.projectPodCidrs("n1", ["10.192.0.0/24"]);
  assert.deepEqual([view.get("n1")?.spec?.podCIDR, view.get("n1")?.spec?.podCIDRs], ["10.192.0.0/24", [
    "10.192.0.0/24",
  ]]);
  assert.equal(src.get("n1")?.spec?.podCIDRs, undefined, "the informer's copy is never changed");
  const own = kubeletNode("n1", "2");
  own.spec = { ...own.spec, podCIDR: "10.192.5.0/24", podCIDRs: ["10.192.5.0/24"] };
  src.put(own);
  assert.deepEqual(view.get("n1")?.spec?.podCIDRs, ["10.192.5.0/24"], "a Node's own pod CIDRs win");
  view.projectPodCidrs("n1", undefined);
  assert.deepEqual(events, [["10.192.0.0/24"], ["10.192.5.0/24"], ["10.192.5.0/24"]]);
});
