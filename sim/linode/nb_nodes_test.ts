import assert from "node:assert/strict";
import {
  createNodeBalancerConfigNode,
  deleteNodeBalancerConfigNode,
  getNodeBalancerConfigNode,
  getNodeBalancerConfigNodes,
  updateNodeBalancerConfigNode,
} from "@linode/api-v4";
import type { LinodeSim } from "./server.ts";
import { startLinodeSim } from "./server.ts";
import { failure, oneSubnetVpc, rawCall, withSim } from "./testdata/test_client.ts";

type Node = Record<string, unknown> & { id: number };

/** A NodeBalancer with one config; returns the ids. */
async function withConfig(
  sim: LinodeSim,
  nb: Record<string, unknown> = {},
  config: Record<string, unknown> = {},
) {
  const created = await withSim(
    sim,
    () =>
      rawCall("POST", "/nodebalancers", {
        label: "svc-n",
        region: "us-east",
        ...nb,
        configs: [{ port: 80, protocol: "tcp", ...config }],
      }),
  ) as { id: number };
  const configs = await withSim(sim, () => rawCall("GET", `/nodebalancers/${created.id}/configs`)) as {
    data: { id: number }[];
  };
  return { nbId: created.id, configId: configs.data[0]?.id ?? 0 };
}

function postNode(sim: LinodeSim, ids: { nbId: number; configId: number }, body: unknown) {
  return withSim(
    sim,
    () => rawCall("POST", `/nodebalancers/${ids.nbId}/configs/${ids.configId}/nodes`, body),
  ) as Promise<Node>;
}

/** Node bodies a common, non-VPC TCP config refuses. */
const REFUSED: [string, Record<string, unknown>, string, string][] = [
  ["an address without a port", { address: "192.168.128.5" }, "address", "Must be in address:port format"],
  ["port 0", { address: "192.168.128.5:0" }, "address", "Must be in address:port format"],
  ["port 65536", { address: "192.168.128.5:65536" }, "address", "Must be in address:port format"],
  ["a host name", { address: "node-1:80" }, "address", "Must be in address:port format"],
  ["a public IPv4", { address: "45.79.1.2:80" }, "address", "Must be a private IPv4 address"],
  [
    "a 10/8 address without subnet_id",
    { address: "10.0.0.5:80" },
    "address",
    "Must be a private IPv4 address",
  ],
  ["an IPv6 ULA", { address: "[fd00::1]:80" }, "address", "Must be a public IPv6 address"],
  ["an IPv6 link-local address", { address: "[fe80::1]:80" }, "address", "Must be a public IPv6 address"],
  ["IPv6 without brackets", { address: "2600:3c03::1:80" }, "address", "Must be in address:port format"],
  ["no address", { address: undefined }, "address", "address is required"],
  ["no label", { label: undefined }, "label", "label is required"],
  ["a 2-character label", { label: "ab" }, "label", "Label must be between 3 and 32 characters"],
  ["a 33-character label", { label: "n".repeat(33) }, "label", "Label must be between 3 and 32 characters"],
  [
    "a label with a space",
    { label: "node 1" },
    "label",
    "Label may only contain letters, numbers, periods, dashes, and underscores",
  ],
  ["weight 0", { weight: 0 }, "weight", "Must be an integer between 1 and 255"],
  ["weight 256", { weight: 256 }, "weight", "Must be an integer between 1 and 255"],
  ["an unknown mode", { mode: "standby" }, "mode", "Must be one of accept, reject, drain, backup, none"],
  ["mode none on tcp", { mode: "none" }, "mode", "Must be one of accept, reject, drain, backup"],
  [
    "a subnet_id on a NodeBalancer without VPCs",
    { address: "10.0.0.5:80", subnet_id: 9001 },
    "subnet_id",
    "Subnet is not a backend VPC subnet of this NodeBalancer",
  ],
];

for (const [name, patch, field, reason] of REFUSED) {
  Deno.test(`createNodeBalancerConfigNode() refuses ${name}`, async () => {
    await using sim = await startLinodeSim();
    const ids = await withConfig(sim);
    const got = await failure(
      postNode(sim, ids, { label: "node-1", address: "192.168.128.5:30080", ...patch }),
    );
    assert.deepEqual(got, { status: 400, errors: [{ field, reason }] });
    assert.equal(sim.world.nodeBalancers()[0]?.configs[0]?.nodes.length, 0);
  });
}

Deno.test("createNodeBalancerConfigNode() accepts private IPv4 and public IPv6 backends; new nodes report Unknown", async () => {
  await using sim = await startLinodeSim();
  const ids = await withConfig(sim);
  const accepted: [Record<string, unknown>, string][] = [
    [{ label: "node-1", address: "192.168.128.5:30080", weight: 1, mode: "backup" }, "192.168.128.5:30080"],
    [
      { label: "a.b_c-d", address: "192.168.255.254:65535", weight: 255, mode: "drain" },
      "192.168.255.254:65535",
    ],
    [
      { label: "node-v6", address: "[2600:3C03:0::F03C:91FF:FE24:1]:30080", mode: "reject" },
      "[2600:3c03::f03c:91ff:fe24:1]:30080",
    ],
  ];
  for (const [body, address] of accepted) {
    const node = await postNode(sim, ids, body);
    assert.deepEqual([node.address, node.status, node.config_id, node.nodebalancer_id], [
      address,
      "Unknown",
      ids.configId,
      ids.nbId,
    ]);
  }
  // api-v4 takes the port apart and joins it into the address.
  const body4 = { label: "node-4", address: "192.168.128.9", port: 80 };
  const viaClient = await withSim(sim, () => createNodeBalancerConfigNode(ids.nbId, ids.configId, body4));
  assert.deepEqual(
    [viaClient.mode, viaClient.weight],
    ["accept", 100],
    "mode and weight default to accept and 100",
  );
  const taken = await failure(postNode(sim, ids, { label: "node-5", address: "192.168.128.9:80" }));
  assert.deepEqual(taken.errors, [{ field: "address", reason: "Address is already used by another node" }]);
  const all = (await withSim(sim, () => getNodeBalancerConfigNodes(ids.nbId, ids.configId))).data;
  assert.equal(all.length, 4);
  sim.world.setNodeStatus(ids.nbId, ids.configId, viaClient.id, "DOWN");
  const config = await withSim(
    sim,
    () => rawCall("GET", `/nodebalancers/${ids.nbId}/configs/${ids.configId}`),
  );
  assert.deepEqual((config as { nodes_status: unknown }).nodes_status, { up: 0, down: 1 });
});

Deno.test("updateNodeBalancerConfigNode() takes partial bodies, checks them and keeps the status of an unmoved node", async () => {
  await using sim = await startLinodeSim();
  const ids = await withConfig(sim);
  const node = await postNode(sim, ids, { label: "node-1", address: "192.168.128.5:30080" });
  sim.world.setNodeStatus(ids.nbId, ids.configId, node.id, "UP");
  const path = `/nodebalancers/${ids.nbId}/configs/${ids.configId}/nodes/${node.id}`;
  const weighted = await withSim(sim, () => rawCall("PUT", path, { weight: 7 })) as Node;
  assert.deepEqual([weighted.address, weighted.weight, weighted.status], ["192.168.128.5:30080", 7, "UP"]);
  // api-v4 takes the port apart and joins it into the address; it validates the whole node.
  const move = { label: "node-1", address: "192.168.128.6", port: 30080, weight: 7, mode: "drain" as const };
  const moved = await withSim(sim, () => updateNodeBalancerConfigNode(ids.nbId, ids.configId, node.id, move));
  assert.deepEqual([moved.address, moved.mode, moved.status], ["192.168.128.6:30080", "drain", "Unknown"]);
  assert.equal(
    (await failure(withSim(sim, () => rawCall("PUT", path, { weight: 300 })))).errors[0]?.field,
    "weight",
  );
  assert.equal(
    (await failure(withSim(sim, () => rawCall("PUT", path, { address: "8.8.8.8:80" })))).errors[0]?.field,
    "address",
  );
  assert.deepEqual(
    await withSim(sim, () => getNodeBalancerConfigNode(ids.nbId, ids.configId, node.id)),
    moved,
  );
  await withSim(sim, () => deleteNodeBalancerConfigNode(ids.nbId, ids.configId, node.id));
  assert.equal(
    (await failure(withSim(sim, () => getNodeBalancerConfigNode(ids.nbId, ids.configId, node.id)))).status,
    404,
  );
});

Deno.test("UDP nodes have no mode, and premium NodeBalancers refuse legacy private IPv4 backends", async () => {
  await using sim = await startLinodeSim();
  const udp = await withConfig(sim, { type: "premium" }, { protocol: "udp", port: 53 });
  const v6 = await postNode(sim, udp, { label: "node-1", address: "[2600:3c03::1]:30053" });
  assert.equal(v6.mode, "none");
  const moded = await failure(
    postNode(sim, udp, { label: "node-2", address: "[2600:3c03::2]:30053", mode: "accept" }),
  );
  assert.deepEqual(moded.errors, [{ field: "mode", reason: "UDP nodes do not support modes" }]);
  const legacy = await failure(postNode(sim, udp, { label: "node-3", address: "192.168.128.5:30053" }));
  assert.deepEqual(legacy.errors, [{
    field: "address",
    reason: "Premium NodeBalancers support only VPC or public IPv6 backends",
  }]);
});

Deno.test("VPC nodes must name a backend subnet of the NodeBalancer and an address inside it", async () => {
  await using sim = await startLinodeSim();
  const { subnetId } = oneSubnetVpc(sim, { ipv4: "10.0.0.0/24" });
  const other = sim.world.createVpc({
    label: "other",
    region: "us-east",
    subnets: [{ label: "sn", ipv4: "10.7.0.0/24" }],
  });
  const ids = await withConfig(sim, { type: "premium", vpcs: [{ subnet_id: subnetId }] });
  const vpcConfigs = await withSim(sim, () => rawCall("GET", `/nodebalancers/${ids.nbId}/vpcs`)) as {
    data: { id: number }[];
  };
  const node = await postNode(sim, ids, { label: "node-1", address: "10.0.0.20:30080", subnet_id: subnetId });
  assert.equal(node.vpc_config_id, vpcConfigs.data[0]?.id);
  const outside = await failure(
    postNode(sim, ids, { label: "node-2", address: "10.0.1.20:30080", subnet_id: subnetId }),
  );
  assert.deepEqual(outside.errors, [{
    field: "address",
    reason: "Address must be within the subnet's IPv4 range",
  }]);
  const foreign = await failure(
    postNode(sim, ids, { label: "node-3", address: "10.7.0.20:30080", subnet_id: other.subnets[0]?.id }),
  );
  assert.equal(foreign.errors[0]?.field, "subnet_id");
  const legacy = await failure(postNode(sim, ids, { label: "node-4", address: "192.168.128.4:30080" }));
  assert.equal(legacy.errors[0]?.field, "address", "either VPC or non-VPC backends");
  const v6 = await postNode(sim, ids, { label: "node-5", address: "[2600:3c03::5]:30080" });
  assert.equal(v6.vpc_config_id, null);
});
