import assert from "node:assert/strict";
import { addNodes, kubeletNode, startNodeWorld, UNINITIALIZED, waitFor } from "./node_fixture.ts";

const isInitialised = (n: { spec?: { taints?: { key: string }[] } } | undefined) =>
  n !== undefined && !(n.spec?.taints ?? []).some((t) => t.key === UNINITIALIZED.key);

Deno.test("startNodeControllers() initialises a node found by label, in the Go CCM's address order", async () => {
  await using world = await startNodeWorld();
  const l = world.linode.world.addInstance({
    label: "worker-1",
    region: "us-east",
    type: "g6-standard-2",
    ipv4: ["45.79.10.1", "192.168.130.7"],
  });
  const other = { key: "dedicated", value: "db", effect: "NoExecute" };
  addNodes(world, kubeletNode("worker-1", { taints: [other, UNINITIALIZED], labels: { team: "a" } }));
  await world.start();
  await waitFor(() => isInitialised(world.node("worker-1")), "worker-1 initialised");
  const n = world.node("worker-1");
  const privateIp = "192.168.130.7";
  assert.equal(n?.spec?.providerID, `linode://${l.id}`);
  assert.deepEqual(n?.spec?.taints, [other]);
  assert.deepEqual(n?.status?.addresses, [
    { type: "Hostname", address: "worker-1" },
    { type: "InternalIP", address: privateIp },
    { type: "ExternalIP", address: "45.79.10.1" },
    ...(l.ipv6 ? [{ type: "ExternalIP", address: l.ipv6.replace(/\/128$/, "") }] : []),
  ]);
  assert.deepEqual(n?.metadata?.labels, {
    "kubernetes.io/hostname": "worker-1",
    team: "a",
    "node.kubernetes.io/instance-type": "g6-standard-2",
    "beta.kubernetes.io/instance-type": "g6-standard-2",
    "topology.kubernetes.io/region": "us-east",
    "failure-domain.beta.kubernetes.io/region": "us-east",
    "node.k8s.linode.com/host-uuid": l.host_uuid,
  });
  assert.equal(n?.metadata?.annotations?.["node.k8s.linode.com/private-ip"], privateIp);
  assert.deepEqual(n?.status?.conditions?.map((c) => c.type), ["Ready"]);
});
