import assert from "node:assert/strict";
import { getVPCIPs, getVPCs } from "@linode/api-v4";
import type { V1Node } from "@kubernetes/client-node";
import { startDemoWorld } from "./demo_world.ts";
import { cidrsOverlap, cidrWithin, parseCidr, parseIpv4 } from "./linode/ip.ts";
import { withSim } from "./linode/testdata/test_client.ts";

for (const generation of ["legacy_config", "linode"] as const) {
  Deno.test(`startDemoWorld() lays out the CAPL plan, and every pod CIDR is routable (${generation})`, async () => {
    await using world = await startDemoWorld({
      nodes: 4,
      services: 0,
      tls: false,
      interfaceGeneration: generation,
    });
    const [vpc] = (await withSim(world.linode, () => getVPCs())).data;
    assert.equal(vpc?.subnets[0]?.ipv4, "10.0.0.0/8");
    assert.equal(world.clusterCidr, "10.0.0.0/8");
    const cluster = parseCidr(world.clusterCidr);
    const pods = parseCidr("10.192.0.0/10");
    const addresses = (await withSim(world.linode, () => getVPCIPs(vpc?.id ?? 0))).data.map((e) =>
      e.address ?? ""
    );
    const nodes = world.kube.store.list("nodes") as V1Node[];
    assert.equal(nodes.length, 4);
    for (const node of nodes) {
      const podCidr = node.spec?.podCIDR ?? "";
      const pod = parseCidr(podCidr);
      assert.ok(
        pod && cluster && pods && cidrWithin(cluster, pod) && cidrWithin(pods, pod),
        podCidr,
      );
      assert.ok(addresses.every((a) => !cidrsOverlap(pod, { base: parseIpv4(a) ?? 0, prefix: 32 })));
      const linode = world.linode.world.listInstances().find((l) => l.label === node.metadata?.name);
      assert.equal(linode?.interface_generation, generation);
      assert.deepEqual(world.linode.world.setIpRanges(linode?.id ?? 0, [podCidr]), [podCidr]);
    }
  });
}
