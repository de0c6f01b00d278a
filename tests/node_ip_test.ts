/**
 * Kubelet's `--node-ip` (the `alpha.kubernetes.io/provided-node-ip` annotation) as upstream's cloud-node
 * controller applies it (k8s.io/cloud-provider v0.35.4 `updateNodeAddress`, `GetNodeAddressesFromNodeIP`): the
 * node IP first, the only address of its type; one the Linode and the Node do not list is refused.
 */
import assert from "node:assert/strict";
import { addNodes, type CcmWorld, isInitialised, kubeletNode, REGION, startWorld } from "./ccm_fixture.ts";

const IPV6 = "2600:3c03::f03c:91ff:fe24:3a2f";
/** This CCM's Warning reason (upstream only logs the error). */
const INVALID_NODE_IP_REASON = "InvalidNodeIP";

/** The run: VPC 10.0.0.5, public 45.79.50.1 (listed first by the API), private 192.168.130.5, IPv6. */
function vpcLinode(world: CcmWorld, label: string): number {
  const vpc = world.linode.world.createVpc({
    label: "cluster",
    region: REGION,
    subnets: [{ label: "default", ipv4: "10.0.0.0/24" }],
  });
  return world.linode.world.addInstance({
    label,
    region: REGION,
    ipv4: ["45.79.50.1", "192.168.130.5"],
    ipv6: `${IPV6}/128`,
    vpc: { vpcId: vpc.id, subnetId: vpc.subnets[0]?.id ?? 0, ipv4: "10.0.0.5" },
  }).id;
}

const CASES = [
  {
    nodeIp: "10.0.0.5",
    want: [
      { type: "InternalIP", address: "10.0.0.5" },
      { type: "Hostname", address: "ip-1" },
      { type: "ExternalIP", address: "45.79.50.1" },
      { type: "ExternalIP", address: IPV6 },
    ],
  },
  {
    // The VPC InternalIP is dropped: the first InternalIP (what VPC backends and `kubectl get nodes` use) moves.
    nodeIp: "192.168.130.5",
    want: [
      { type: "InternalIP", address: "192.168.130.5" },
      { type: "Hostname", address: "ip-1" },
      { type: "ExternalIP", address: "45.79.50.1" },
      { type: "ExternalIP", address: IPV6 },
    ],
  },
];

for (const c of CASES) {
  Deno.test(`cloud-node with kubelet --node-ip=${c.nodeIp} writes it first, the only InternalIP, and keeps it`, async () => {
    await using world = await startWorld({ flags: ["--vpc-names=cluster"] });
    vpcLinode(world, "ip-1");
    addNodes(world, kubeletNode("ip-1", { nodeIp: c.nodeIp }));
    await world.start();
    await world.waitFor(() => isInitialised(world.node("ip-1")), { what: "ip-1 initialised" });
    assert.deepEqual(world.node("ip-1")?.status?.addresses, c.want);
    // Through two status periods (each re-reads the Linodes): nothing more to write.
    const writes = world.nodeWrites("ip-1");
    await world.tick(2 * world.config.nodes.statusUpdateFrequencyMs, 60_000);
    assert.equal(world.nodeWrites("ip-1"), writes);
    assert.deepEqual(world.node("ip-1")?.status?.addresses, c.want);
  });
}

Deno.test("cloud-node leaves a Node uninitialised while its --node-ip is neither the Linode's nor the Node's, with upstream's error", async () => {
  await using world = await startWorld({ flags: ["--vpc-names=cluster"] });
  const id = vpcLinode(world, "ip-2");
  // Its kubelet listed no address (the annotation set another way, or changed after registration).
  addNodes(
    world,
    kubeletNode("ip-2", { nodeIp: "10.0.0.99", addresses: [{ type: "Hostname", address: "ip-2" }] }),
  );
  await world.start();
  await world.advanceUntil(() => world.events(INVALID_NODE_IP_REASON, "ip-2").length > 0, {
    what: "InvalidNodeIP Warning",
    stepMs: 1_000,
  });
  await world.tick(30_000, 1_000);
  const node = world.node("ip-2");
  assert.equal(isInitialised(node), false, "still tainted");
  assert.equal(node?.spec?.providerID, undefined);
  assert.deepEqual(node?.status?.addresses, [{ type: "Hostname", address: "ip-2" }]);
  assert.equal(world.nodeWrites("ip-2"), 0, "nothing written, as upstream's syncNode");
  const [warning] = world.events(INVALID_NODE_IP_REASON, "ip-2");
  assert.equal(warning?.type, "Warning");
  assert.equal(
    warning?.message,
    'provided node ip for node "ip-2" is not valid: failed to get node address from cloud provider that matches ip: 10.0.0.99',
  );
  // Corrected (kubelet restarted with the VPC address): initialised at the next retry.
  world.kube.store.patch("nodes", "ip-2", {
    metadata: { annotations: { "alpha.kubernetes.io/provided-node-ip": "10.0.0.5" } },
  }, { type: "merge" });
  await world.advanceUntil(() => isInitialised(world.node("ip-2")), {
    what: "ip-2 initialised",
    stepMs: 1_000,
  });
  assert.equal(world.node("ip-2")?.spec?.providerID, `linode://${id}`);
  assert.equal(world.node("ip-2")?.status?.addresses?.[0]?.address, "10.0.0.5");
});

Deno.test("cloud-node keeps an initialised Node's addresses while its --node-ip is not the Linode's, and still syncs its labels", async () => {
  await using world = await startWorld({ flags: ["--vpc-names=cluster"] });
  const id = vpcLinode(world, "ip-3");
  addNodes(world, kubeletNode("ip-3", { nodeIp: "10.0.0.5" }));
  await world.start();
  await world.waitFor(() => isInitialised(world.node("ip-3")), { what: "ip-3 initialised" });
  const addresses = world.node("ip-3")?.status?.addresses;
  // Kubelet restarted with another --node-ip: it updates only the annotation (the Node has addresses).
  world.kube.store.patch("nodes", "ip-3", {
    metadata: { annotations: { "alpha.kubernetes.io/provided-node-ip": "10.0.0.99" } },
  }, { type: "merge" });
  // Moved to another host: its host label follows at the next status period.
  const moved = world.linode.world.updateInstance(id, { newHost: true });
  await world.advanceUntil(
    () => world.node("ip-3")?.metadata?.labels?.["node.k8s.linode.com/host-uuid"] === moved.host_uuid,
    { what: "host label", stepMs: 30_000 },
  );
  assert.deepEqual(world.node("ip-3")?.status?.addresses, addresses, "addresses left as they were");
  assert.ok(world.events(INVALID_NODE_IP_REASON, "ip-3").length > 0);
});
