/**
 * What the controllers keep of the informer's Nodes: nothing once the informer has replaced them. A heap
 * snapshot of an idle 5,000-Node CCM found every Node as it was at start (still tainted uninitialised,
 * decoded into client-node models) held by the suspended `run` of cloud-node: the loop over the first
 * `nodes.list()` sat in the same async function as the await that lasts the whole term, and V8 keeps such a
 * loop's iterator, with its array, for as long as the function is suspended.
 */
import assert from "node:assert/strict";
import type { V1Node } from "@kubernetes/client-node";
import { setNodeReady } from "../sim/kubelet.ts";
import { heapAfterGc } from "./chaos/resources.ts";
import { addNodes, isInitialised, kubeletNode } from "./ccm_fixture.ts";
import { startRouteWorld, until } from "./route_fixture.ts";

const COUNT = 6;

Deno.test("controllers keep no Node object the informer has replaced", async () => {
  await using w = await startRouteWorld({
    flags: [
      "--leader-elect=true",
      "--controllers=cloud-node,cloud-node-lifecycle,service",
      "--allocate-node-cidrs",
      "--disable-ipv6-node-cidr-allocation",
    ],
  });
  // Another candidate leads: the informers sync, and the controllers wait for its Lease to run out.
  w.kube.store.create("leases", {
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: { name: "cloud-controller-manager", namespace: "kube-system" },
    spec: {
      holderIdentity: "another-ccm",
      leaseDurationSeconds: 15,
      acquireTime: new Date().toISOString(),
      renewTime: new Date().toISOString(),
      leaseTransitions: 0,
    },
  });
  const names = Array.from({ length: COUNT }, (_, i) => `worker-${i}`);
  for (const name of names) w.addLinode(name);
  addNodes(w, ...names.map((name) => kubeletNode(name)));
  const ccm = await w.start();
  // What every controller's first look at the Nodes will see: nothing changes them before it leads.
  const first = ccm.nodes.list().map((n) => new WeakRef<V1Node>(n));
  assert.equal(first.length, COUNT);
  assert.ok(first.every((ref) => !isInitialised(ref.deref())), "captured before any controller ran");
  const routed = () =>
    names.every((n) => isInitialised(w.node(n)) && w.condition(n) === "False/RouteCreated");
  await until(w, routed, "initialised and routed after taking the Lease");
  // Every Node changes once more (a kubelet status update), so the informer replaces each object again.
  for (const name of names) setNodeReady(w.kube, name, false);
  const notReady = () =>
    ccm.nodes.list().every((n) => n.status?.conditions?.some((c) => c.status === "False"));
  await until(w, notReady, "the informer's new objects");
  await heapAfterGc();
  const kept = first.filter((ref) => ref.deref() !== undefined).map((ref) => ref.deref()?.metadata?.name);
  assert.deepEqual(kept, [], "Node objects the informer replaced are still held");
});
