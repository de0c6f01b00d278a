import assert from "node:assert/strict";
import type { V1Lease, V1Node, V1Service } from "@kubernetes/client-node";
import { FakeClock } from "../common/clock.ts";
import { CCM_LEASE, GO_CCM_DEFAULT_PINS, LB_CLEANUP_FINALIZER, startGoCcmWorld } from "./go_ccm_world.ts";

function service(
  world: { kube: { store: { get(r: string, n: string, ns: string): unknown } } },
  name: string,
) {
  return world.kube.store.get("services", name, "default") as V1Service | undefined;
}

Deno.test("startGoCcmWorld() seeds NodeBalancers, Services, Nodes and routes as the Go CCM leaves them", async () => {
  await using world = await startGoCcmWorld({ tls: false });
  const nbs = world.linode.world.nodeBalancers();
  assert.equal(nbs.length, 2);
  for (const nb of nbs) {
    assert.match(nb.label, /^ccm-\d{12}$/);
    assert.deepEqual(
      nb.tags,
      ["kubernetes", "prod"],
      "cluster name and --nodebalancer-tags, no ownership tag",
    );
    assert.equal(nb.client_conn_throttle, 0);
    assert.ok(nb.configs.every((c) => c.check_passive && c.check === "connection" && c.nodes.length === 3));
    assert.deepEqual(nb.vpcs.map((v) => v.subnet_id), [world.subnetId]);
  }
  const [web, api] = world.services;
  assert.deepEqual(service(world, "web")?.status?.loadBalancer?.ingress, [{
    ip: web?.ipv4,
    hostname: web?.hostname,
  }]);
  assert.deepEqual(service(world, "api")?.status?.loadBalancer?.ingress, [{ hostname: api?.hostname }]);
  assert.deepEqual(service(world, "web")?.metadata?.finalizers, [LB_CLEANUP_FINALIZER]);
  assert.equal(
    service(world, "web")?.metadata?.annotations?.[Object.keys(GO_CCM_DEFAULT_PINS)[0] ?? ""],
    "0",
  );
  for (const n of world.nodes) {
    const node = world.kube.store.get("nodes", n.name) as V1Node | undefined;
    assert.equal(node?.spec?.providerID, `linode://${n.linodeId}`);
    assert.deepEqual(node?.spec?.taints, []);
    assert.equal(node?.status?.addresses?.[1]?.address, n.vpcIp, "the VPC address is the first InternalIP");
    assert.deepEqual(world.linode.world.ipRanges(n.linodeId), [n.podCidr]);
  }
  assert.deepEqual(world.drift, {});
});

Deno.test("startGoCcmWorld() drift adds one pending action per controller", async () => {
  await using world = await startGoCcmWorld({
    tls: false,
    drift: {
      nodeWithoutBackends: true,
      uninitialisedNode: true,
      missingRoute: true,
      unpinnedDefaults: true,
      orphanedNodeBalancer: true,
    },
  });
  const { drift } = world;
  assert.equal(drift.nodeWithoutBackends, "go-node-4");
  assert.equal(drift.uninitialisedNode, "go-node-5");
  const fresh = world.kube.store.get("nodes", "go-node-5") as V1Node | undefined;
  assert.equal(fresh?.spec?.providerID, undefined);
  assert.deepEqual(fresh?.spec?.taints?.map((t) => t.key), [
    "node.cloudprovider.kubernetes.io/uninitialized",
  ]);
  assert.deepEqual(world.linode.world.ipRanges(drift.missingRoute?.linodeId ?? 0), []);
  assert.deepEqual(drift.unpinnedServices, ["default/web"]);
  assert.deepEqual(service(world, "web")?.metadata?.annotations, {});
  const backends = world.linode.world.nodeBalancers()
    .filter((nb) => nb.id !== drift.orphanedNodeBalancerId)
    .flatMap((nb) => nb.configs.flatMap((c) => c.nodes.map((n) => n.label)));
  assert.ok(!backends.includes("go-node-4") && !backends.includes("go-node-5"));
  const orphan = world.linode.world.nodeBalancer(drift.orphanedNodeBalancerId ?? 0);
  assert.deepEqual(orphan?.tags, ["kubernetes", "prod"]);
  assert.equal(world.linode.world.nodeBalancers().length, 3);
});

Deno.test("startGoCcmWorld() lease: the Go CCM renews on the clock until stopped", async () => {
  const clock = new FakeClock();
  await using world = await startGoCcmWorld({ tls: false, clock, services: 1, nodes: 1 });
  const lease = () =>
    world.kube.store.get("leases", CCM_LEASE.name, CCM_LEASE.namespace) as V1Lease | undefined;
  assert.equal(lease()?.spec?.holderIdentity, world.lease.identity);
  assert.equal(lease()?.spec?.leaseDurationSeconds, 15);
  const first = String(lease()?.spec?.renewTime);
  await clock.advance(2_000);
  await clock.advance(0);
  assert.equal(world.lease.renewals, 2);
  assert.notEqual(String(lease()?.spec?.renewTime), first);
  world.lease.stop();
  const stopped = String(lease()?.spec?.renewTime);
  await clock.advance(30_000);
  assert.equal(world.lease.renewing, false);
  assert.equal(String(lease()?.spec?.renewTime), stopped, "left as it was, not released");
  assert.equal(lease()?.spec?.holderIdentity, world.lease.identity);
});

Deno.test("startGoCcmWorld() writes Node addresses in the Go CCM's order: VPC, then the API's ipv4 order (public first)", async () => {
  await using world = await startGoCcmWorld({ tls: false, services: 1, nodes: 1 });
  const [seeded] = world.nodes;
  const linode = world.linode.world.instance(seeded?.linodeId ?? 0);
  const node = world.kube.store.get("nodes", seeded?.name ?? "") as V1Node | undefined;
  assert.deepEqual(
    linode?.ipv4,
    [linode?.ipv4[0], seeded?.privateIp],
    "the API lists the public address first",
  );
  assert.deepEqual(node?.status?.addresses, [
    { type: "Hostname", address: "go-node-1" },
    { type: "InternalIP", address: seeded?.vpcIp },
    { type: "ExternalIP", address: linode?.ipv4[0] },
    { type: "InternalIP", address: seeded?.privateIp },
    { type: "ExternalIP", address: linode?.ipv6?.replace("/128", "") },
  ]);
  assert.equal(node?.metadata?.annotations?.["alpha.kubernetes.io/provided-node-ip"], undefined);
});

Deno.test("startGoCcmWorld() nodeIp: kubelet's --node-ip first and the only InternalIP; private backends for a private one", async () => {
  for (const nodeIp of ["vpc", "private"] as const) {
    await using world = await startGoCcmWorld({ tls: false, services: 1, nodes: 1, nodeIp });
    const [seeded] = world.nodes;
    const linode = world.linode.world.instance(seeded?.linodeId ?? 0);
    const node = world.kube.store.get("nodes", seeded?.name ?? "") as V1Node | undefined;
    const ip = nodeIp === "vpc" ? seeded?.vpcIp : seeded?.privateIp;
    assert.equal(node?.metadata?.annotations?.["alpha.kubernetes.io/provided-node-ip"], ip);
    assert.equal(node?.metadata?.annotations?.["node.k8s.linode.com/private-ip"], seeded?.privateIp);
    assert.deepEqual(node?.status?.addresses, [
      { type: "InternalIP", address: ip },
      { type: "Hostname", address: "go-node-1" },
      { type: "ExternalIP", address: linode?.ipv4[0] },
      { type: "ExternalIP", address: linode?.ipv6?.replace("/128", "") },
    ]);
    const [nb] = world.linode.world.nodeBalancers();
    assert.deepEqual(nb?.configs[0]?.nodes.map((n) => n.address.split(":")[0]), [ip]);
    assert.equal(nb?.vpcs.length, nodeIp === "vpc" ? 1 : 0);
    assert.equal(world.flags.includes("--disable-nodebalancer-vpc-backends=true"), nodeIp === "private");
  }
});
