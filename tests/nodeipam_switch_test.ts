/**
 * Node IPAM on a cluster switched from the Go CCM (its Nodes hold pod CIDRs it allocated), and in shadow mode.
 */
import assert from "node:assert/strict";
import { addNodes, kubeletNode, startWorld } from "./ccm_fixture.ts";
import { startSwitch } from "./go_ccm_fixture.ts";
import { startRouteWorld, until } from "./route_fixture.ts";

const IPAM = ["--allocate-node-cidrs", "--cluster-cidr=10.192.0.0/10", "--disable-ipv6-node-cidr-allocation"];

Deno.test("runCcm() after the switch with node IPAM: Nodes keep their pod CIDRs; a new Node without one gets a free range and its route", async () => {
  await using sw = await startSwitch({ flags: IPAM });
  const { go, ccm } = sw;
  await ccm.start();
  await ccm.waitFor(() => sw.adopted(), { what: "adopted" });
  const vpc = go.linode.world.vpcs.list().find((v) => v.label === go.vpcLabel);
  const linodeId = go.linode.world.addInstance({
    label: "go-node-new",
    region: go.region,
    vpc: { vpcId: vpc?.id ?? 0, subnetId: go.subnetId },
  }).id;
  addNodes(ccm, kubeletNode("go-node-new"));
  const cidrOf = (name: string) => ccm.node(name)?.spec?.podCIDRs?.[0];
  await ccm.advanceUntil(() => cidrOf("go-node-new") !== undefined, { what: "the pod CIDR", stepMs: 1_000 });
  const seeded = go.nodes.map((n) => n.podCidr);
  assert.ok(!seeded.includes(cidrOf("go-node-new") ?? ""), `${cidrOf("go-node-new")} is not a seeded Node's`);
  assert.equal(cidrOf("go-node-new"), "10.192.3.0/24", "the first range no Node holds");
  await ccm.advanceUntil(() => go.linode.world.ipRanges(linodeId).includes(cidrOf("go-node-new") ?? "?"), {
    what: "the new Node routed",
    stepMs: 1_000,
  });
  for (const node of go.nodes) {
    assert.equal(ccm.nodeWrites(node.name), 0, `${node.name}: recorded, not written`);
    assert.equal(cidrOf(node.name), node.podCidr);
  }
});

Deno.test("runCcm() --dry-run with node IPAM: the allocation is on /plan and nothing is written", async () => {
  await using w = await startWorld({ flags: ["--controllers=", "--dry-run", ...IPAM] });
  addNodes(w, kubeletNode("a", { taints: [] }), kubeletNode("has", { taints: [], podCidr: "10.192.0.0/24" }));
  await w.start();
  const pending = () => w.ccm.shadow.report().pending.filter((a) => a.controller === "nodeipam");
  await w.advanceUntil(() => pending().length > 0, { what: "the planned allocation", stepMs: 1_000 });
  await w.tick(30_000, 5_000);
  assert.deepEqual(pending().map((a) => [a.action, a.object, a.changes]), [[
    "allocate-pod-cidrs",
    "a",
    [{ field: "spec.podCIDRs", old: [], new: ["10.192.1.0/24"] }],
  ]]);
  assert.deepEqual([w.nodeWrites("a"), w.nodeWrites("has")], [0, 0]);
  assert.equal(w.node("a")?.spec?.podCIDRs, undefined);
});

Deno.test("runCcm() --dry-run with node IPAM and routes: the plan holds the allocation and the route it leads to", async () => {
  await using w = await startRouteWorld({
    flags: [
      "--controllers=",
      "--dry-run",
      "--allocate-node-cidrs",
      "--disable-ipv6-node-cidr-allocation",
    ],
  });
  const id = w.addLinode("worker-1");
  await w.start();
  w.addNode("worker-1", id);
  const pending = () => w.ccm.shadow.report().pending;
  await until(w, () => pending().some((a) => a.action === "add-ranges"), "the planned route");
  const planned = pending().map((a) => [a.controller, a.action, a.changes.map((c) => c.new)]);
  // node-metadata runs whatever --controllers says, as the Go CCM's node controller: its update is held too.
  const metadata = planned.filter(([controller]) => controller === "node-metadata");
  const hostUuid = w.linode.world.instances.require(id).linode.host_uuid;
  assert.ok(
    metadata.length === 1 && JSON.stringify(metadata[0]).includes(hostUuid),
    JSON.stringify(metadata),
  );
  assert.deepEqual(planned.filter(([controller]) => controller !== "node-metadata"), [
    ["nodeipam", "allocate-pod-cidrs", [["10.192.0.0/24"]]],
    ["route", "add-ranges", [["10.192.0.0/24"]]],
    ["route", "set-condition", ["False/RouteCreated"]],
  ]);
  assert.deepEqual(w.linode.world.ipRanges(id), [], "nothing written");
  assert.equal(w.nodeWrites("worker-1"), 0);
});
