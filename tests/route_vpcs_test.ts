/** The route controller with several configured VPCs and both interface generations. */
import assert from "node:assert/strict";
import {
  LIST_VPC_IPS,
  PUT_CONFIG_INTERFACE,
  PUT_LINODE_INTERFACE,
  resyncs,
  startRouteWorld,
  until,
} from "./route_fixture.ts";

Deno.test("route: two configured VPCs: each Node's range goes to its interface in its own VPC", async () => {
  // A list flag given twice appends (pflag): the VPCs `cluster` and `cluster-b`.
  await using w = await startRouteWorld({ flags: ["--vpc-names=cluster-b"] });
  const b = w.linode.world.createVpc({
    label: "cluster-b",
    region: "us-east",
    subnets: [{ label: "default", ipv4: "172.16.0.0/16" }],
  });
  const inA = w.addLinode("worker-a");
  const inB = w.linode.world.addInstance({
    label: "worker-b",
    region: "us-east",
    vpc: { vpcId: b.id, subnetId: b.subnets[0]?.id ?? 0 },
  }).id;
  await w.start();
  w.addNode("worker-a", inA, "10.192.1.0/24");
  w.addNode("worker-b", inB, "10.192.2.0/24");
  await until(w, () => w.condition("worker-a") === "False/RouteCreated", "the route in VPC cluster");
  await until(w, () => w.condition("worker-b") === "False/RouteCreated", "the route in VPC cluster-b");
  assert.deepEqual(w.linode.world.ipRanges(inA), ["10.192.1.0/24"]);
  assert.deepEqual(w.linode.world.ipRanges(inB), ["10.192.2.0/24"]);
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), 2);
  assert.equal(w.calls(LIST_VPC_IPS), 2, "one listing per VPC");
  const ips = await w.ccm.linode.vpcs.listIps(b.id);
  assert.ok(ips.some((ip) => ip.address_range === "10.192.2.0/24" && ip.linode_id === inB));
});

Deno.test("route: a Linode-interface Linode gets vpc.ipv4.ranges, a config-interface Linode ip_ranges, side by side", async () => {
  await using w = await startRouteWorld();
  const modern = w.linode.world.addInstance({
    label: "worker-new",
    region: "us-east",
    interfaceGeneration: "linode",
    vpc: { vpcId: w.vpcId, subnetId: w.subnetId, ipRanges: ["10.100.0.0/24"] },
  }).id;
  const legacy = w.addLinode("worker-old");
  await w.start();
  w.addNode("worker-new", modern, "10.192.1.0/24");
  w.addNode("worker-old", legacy, "10.192.2.0/24");
  await until(w, () => w.condition("worker-new") === "False/RouteCreated", "the Linode interface route");
  await until(w, () => w.condition("worker-old") === "False/RouteCreated", "the config interface route");
  assert.deepEqual(w.linode.world.ipRanges(modern), ["10.100.0.0/24", "10.192.1.0/24"], "its own range kept");
  assert.deepEqual(w.linode.world.ipRanges(legacy), ["10.192.2.0/24"]);
  const [iface] = w.linode.world.linodeInterfaces(modern).filter((i) => i.vpc);
  assert.deepEqual(iface?.vpc?.ipv4?.ranges, [{ range: "10.100.0.0/24" }, { range: "10.192.1.0/24" }]);
  assert.equal(w.calls(PUT_LINODE_INTERFACE), 1);
  assert.equal(w.calls(PUT_CONFIG_INTERFACE), 1);
  const entry = (await w.ccm.linode.vpcs.listIps(w.vpcId)).find((ip) => ip.address_range === "10.192.1.0/24");
  assert.equal(entry?.config_id, null, "a Linode interface's entries have no config");

  w.kube.store.delete("nodes", "worker-new");
  await until(w, () => w.linode.world.ipRanges(modern).length === 1, "the removal");
  assert.deepEqual(w.linode.world.ipRanges(modern), ["10.100.0.0/24"]);
  await resyncs(w, 3);
  assert.equal(w.calls(PUT_LINODE_INTERFACE), 2, "no write repeated");
});

Deno.test("route: a range a Linode interface refuses gets the API's reason in a Warning Event", async () => {
  await using w = await startRouteWorld();
  w.addLinode("not-a-node", ["10.192.7.0/24"]);
  const modern = w.linode.world.addInstance({
    label: "worker-new",
    region: "us-east",
    interfaceGeneration: "linode",
    vpc: { vpcId: w.vpcId, subnetId: w.subnetId },
  }).id;
  await w.start();
  w.addNode("worker-new", modern, "10.192.7.0/24");
  await until(w, () => w.condition("worker-new") === "True/NoRouteCreated", "the refusal");
  const [event] = w.events("FailedToCreateRoute");
  assert.match(
    event?.message ?? "",
    /Could not create route 10\.192\.7\.0\/24 for node worker-new: .*HTTP 400/,
  );
  assert.deepEqual(w.linode.world.ipRanges(modern), []);
});
