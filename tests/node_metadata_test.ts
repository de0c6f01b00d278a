/**
 * The Go CCM's own node controller (cloud/linode/node_controller.go), which its cloud's `Initialize` starts
 * whatever `--controllers` says: with upstream's cloud-node left out, the host-uuid label, the private-ip and
 * public-ipv6 annotations and a missing providerID are still kept, and nothing else of the Node is touched.
 */
import assert from "node:assert/strict";
import type { V1Node } from "@kubernetes/client-node";
import { addNodes, type CcmWorld, kubeletNode, REGION, startWorld } from "./ccm_fixture.ts";

const HOST_UUID = "node.k8s.linode.com/host-uuid";
const PRIVATE_IP = "node.k8s.linode.com/private-ip";
const PUBLIC_IPV6 = "node.k8s.linode.com/public-ipv6";
const UNINITIALIZED = "node.cloudprovider.kubernetes.io/uninitialized";
const IPV6 = "2600:3c03::f03c:91ff:fe24:3a2f/128";
const WITHOUT_CLOUD_NODE = "--controllers=cloud-node-lifecycle,service";

function linode(world: CcmWorld, label: string) {
  return world.linode.world.addInstance({
    label,
    region: REGION,
    type: "g6-standard-2",
    ipv4: ["45.79.70.1", "192.168.140.1"],
    ipv6: IPV6,
  });
}

/** Reconciles the runtime counted for `controller`, whatever their result. */
function reconciles(world: CcmWorld, controller: string): number {
  const prefix = `ccm_reconciles_total{controller="${controller}",`;
  return world.metrics.render().split("\n").filter((l) => l.startsWith(prefix))
    .reduce((sum, l) => sum + Number(l.split(" ").at(-1)), 0);
}

const metadataOf = (n: V1Node | undefined) => ({
  uuid: n?.metadata?.labels?.[HOST_UUID],
  privateIp: n?.metadata?.annotations?.[PRIVATE_IP],
  ipv6: n?.metadata?.annotations?.[PUBLIC_IPV6],
});

Deno.test("without cloud-node in --controllers, node metadata is still kept as the Go CCM keeps it, and nothing else", async () => {
  await using world = await startWorld({ flags: [WITHOUT_CLOUD_NODE] });
  const a = linode(world, "m-0");
  const b = linode(world, "m-1");
  const c = linode(world, "m-2");
  const addresses = [{ type: "Hostname", address: "m-0" }];
  addNodes(
    world,
    // Initialised by someone earlier, metadata missing.
    kubeletNode("m-0", { providerID: `linode://${a.id}`, taints: [], addresses }),
    // Registered without a providerID and without the uninitialized taint: found by its name.
    kubeletNode("m-1", { taints: [], addresses: [{ type: "Hostname", address: "m-1" }] }),
    // Waiting for upstream's cloud-node, which does not run: its taint stays.
    kubeletNode("m-2"),
  );
  await world.start();
  for (const [name, l] of [["m-0", a], ["m-1", b], ["m-2", c]] as const) {
    await world.waitFor(() => metadataOf(world.node(name)).uuid === l.host_uuid, {
      what: `${name} host-uuid`,
    });
    assert.deepEqual(metadataOf(world.node(name)), {
      uuid: l.host_uuid,
      privateIp: "192.168.140.1",
      ipv6: IPV6,
    });
    assert.equal(world.node(name)?.spec?.providerID, `linode://${l.id}`);
  }
  await world.settle();
  // Upstream's cloud-node is off: no addresses, no region or instance-type labels, the taint left on.
  assert.deepEqual(world.node("m-0")?.status?.addresses, addresses);
  assert.equal(world.node("m-0")?.metadata?.labels?.["topology.kubernetes.io/region"], undefined);
  assert.equal(world.node("m-0")?.metadata?.labels?.["node.kubernetes.io/instance-type"], undefined);
  assert.ok(
    (world.node("m-2")?.spec?.taints ?? []).some((t) => t.key === UNINITIALIZED),
    "m-2 still tainted",
  );
  const statusWrites = world.kube.calls.log.filter((c) => c.key === "PATCH /api/v1/nodes/{name}/status");
  assert.equal(statusWrites.length, 0, "no Node status written");
  assert.ok(reconciles(world, "node-metadata") > 0);
  assert.equal(reconciles(world, "cloud-node"), 0);
});

Deno.test("node metadata follows the Linode through a status period, and a settled Node costs no write", async () => {
  await using world = await startWorld({ flags: [WITHOUT_CLOUD_NODE] });
  const a = linode(world, "m-0");
  addNodes(world, kubeletNode("m-0", { providerID: `linode://${a.id}`, taints: [] }));
  await world.start();
  await world.waitFor(() => metadataOf(world.node("m-0")).uuid === a.host_uuid, { what: "host-uuid" });
  await world.settle();
  const before = world.nodeWrites("m-0");
  // A status period over the same Linode: nothing to write.
  const periodMs = world.config.nodes.statusUpdateFrequencyMs;
  await world.tick(periodMs + 1_000, 30_000);
  assert.equal(world.nodeWrites("m-0"), before, "no write over unchanged metadata");
  // The Linode moves host (a new host UUID) and gains another IPv6; the next period's listing carries them.
  const rec = world.linode.world.instances.require(a.id);
  rec.linode = { ...rec.linode, host_uuid: "0f0e0d0c0b0a", ipv6: "2600:3c03::1/128" };
  await world.advanceUntil(() => metadataOf(world.node("m-0")).uuid === "0f0e0d0c0b0a", {
    what: "new host-uuid",
    stepMs: 30_000,
  });
  await world.waitFor(() => metadataOf(world.node("m-0")).ipv6 === "2600:3c03::1/128", { what: "new ipv6" });
  assert.equal(world.calls("GET /v4/linode/instances/{id}"), 0, "from the listing, no read per Node");
});

Deno.test("with cloud-node in --controllers, node-metadata does not run beside it", async () => {
  await using world = await startWorld({ flags: ["--controllers=cloud-node,service"] });
  const a = linode(world, "m-0");
  addNodes(world, kubeletNode("m-0"));
  await world.start();
  await world.waitFor(() => (world.node("m-0")?.spec?.taints ?? []).length === 0, { what: "initialised" });
  await world.settle();
  assert.deepEqual(metadataOf(world.node("m-0")), {
    uuid: a.host_uuid,
    privateIp: "192.168.140.1",
    ipv6: IPV6,
  });
  assert.ok(reconciles(world, "cloud-node") > 0);
  assert.equal(reconciles(world, "node-metadata"), 0);
});
