import assert from "node:assert/strict";
import {
  createNodeBalancer,
  deleteNodeBalancer,
  getNodeBalancer,
  getNodeBalancerConfigNodes,
  getNodeBalancerConfigs,
  getNodeBalancers,
  updateNodeBalancer,
} from "@linode/api-v4";
import type { LinodeSim } from "./server.ts";
import { startLinodeSim } from "./server.ts";
import { failure, rawCall, withSim } from "./testdata/test_client.ts";

/** A node body as api-v4 takes it: address and port apart (it joins them as "ip:port"). */
function node(label: string, address: string, port = 30080) {
  return { label, address, port, weight: 100, mode: "accept" as const };
}

async function createOne(sim: LinodeSim) {
  return await withSim(sim, () =>
    createNodeBalancer({
      label: "svc-web",
      region: "us-east",
      tags: ["kubernetes"],
      client_conn_throttle: 5,
      configs: [
        {
          port: 80,
          protocol: "tcp",
          algorithm: "roundrobin",
          nodes: [node("n-1", "192.168.128.2"), node("n-2", "192.168.130.3")],
        },
        { port: 443, protocol: "tcp", nodes: [node("n-1", "192.168.128.2", 30443)] },
      ],
    }));
}

/** POSTs a raw create body and returns the failure (the call must fail). */
function refused(sim: LinodeSim, body: unknown) {
  return failure(withSim(sim, () => rawCall("POST", "/nodebalancers", body)));
}

function created(sim: LinodeSim, body: unknown) {
  return withSim(sim, () => rawCall("POST", "/nodebalancers", body)) as Promise<
    { id: number; [k: string]: unknown }
  >;
}

Deno.test("createNodeBalancer() creates configs and nodes inline with the fields the API derives", async () => {
  await using sim = await startLinodeSim();
  const nb = await createOne(sim);
  assert.equal(nb.label, "svc-web");
  assert.match(nb.ipv4, /^172\.232\.\d+\.\d+$/);
  assert.equal(nb.hostname, `nb-${nb.ipv4.replaceAll(".", "-")}.newark.nodebalancer.linode.com`);
  const [a = 0, b = 0, c = 0, d = 0] = nb.ipv4.split(".").map(Number);
  assert.equal(nb.ipv6, `2600:3c03:1::${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`);
  assert.deepEqual([nb.type, nb.client_conn_throttle, nb.client_udp_sess_throttle], ["common", 5, 0]);
  assert.deepEqual(nb.tags, ["kubernetes"]);
  assert.deepEqual([nb.frontend_address_type, nb.frontend_vpc_subnet_id, nb.lke_cluster], [
    "public",
    null,
    null,
  ]);
  const configs = await withSim(sim, () => getNodeBalancerConfigs(nb.id));
  assert.deepEqual(configs.data.map((c) => c.port), [80, 443]);
  const first = configs.data[0];
  assert.ok(first);
  assert.deepEqual(
    [first.stickiness, first.check, first.check_interval, first.check_timeout, first.check_attempts],
    ["none", "none", 31, 30, 3],
  );
  assert.deepEqual([first.ssl_cert, first.ssl_key, first.cipher_suite], [null, null, "recommended"]);
  assert.deepEqual(first.nodes_status, { up: 0, down: 0 }, "new nodes are neither up nor down");
  const nodes = await withSim(sim, () => getNodeBalancerConfigNodes(nb.id, first.id));
  assert.deepEqual(nodes.data.map((n) => [n.label, n.address, n.mode, n.weight, n.status, n.vpc_config_id]), [
    ["n-1", "192.168.128.2:30080", "accept", 100, "Unknown", null],
    ["n-2", "192.168.130.3:30080", "accept", 100, "Unknown", null],
  ]);
  assert.equal(sim.world.nodeBalancers()[0]?.configs[1]?.nodes[0]?.address, "192.168.128.2:30443");
});

Deno.test("createNodeBalancer() names hosts by IP in regions opened after the original eleven", async () => {
  await using sim = await startLinodeSim();
  const nb = await created(sim, { label: "svc-ord", region: "us-ord" });
  assert.equal(nb.hostname, `${String(nb.ipv4).replaceAll(".", "-")}.ip.linodeusercontent.com`);
  assert.equal(nb.label, "svc-ord");
  const unnamed = await created(sim, { region: "us-ord" });
  assert.equal(unnamed.label, `nodebalancer${unnamed.id}`);
});

Deno.test("createNodeBalancer() refuses labels, regions, throttles, tags and types the API refuses", async () => {
  await using sim = await startLinodeSim();
  await created(sim, { label: "svc_ok-1", region: "us-east" });
  const cases: [unknown, string, string][] = [
    [{ label: "ab", region: "us-east" }, "label", "Label must be between 3 and 32 characters"],
    [{ label: "a".repeat(33), region: "us-east" }, "label", "Label must be between 3 and 32 characters"],
    [
      { label: "svc.web", region: "us-east" },
      "label",
      "Label may only contain letters, numbers, dashes and underscores",
    ],
    [
      { label: "svc web", region: "us-east" },
      "label",
      "Label may only contain letters, numbers, dashes and underscores",
    ],
    [{ label: "svc_ok-1", region: "us-east" }, "label", "Label must be unique"],
    [{ label: "svc-x" }, "region", "region is required"],
    [{ label: "svc-x", region: "moon-1" }, "region", "region is not valid"],
    [
      { label: "svc-x", region: "us-east", client_conn_throttle: 21 },
      "client_conn_throttle",
      "Must be an integer between 0 and 20",
    ],
    [
      { label: "svc-x", region: "us-east", client_conn_throttle: -1 },
      "client_conn_throttle",
      "Must be an integer between 0 and 20",
    ],
    [
      { label: "svc-x", region: "us-east", client_udp_sess_throttle: 30 },
      "client_udp_sess_throttle",
      "Must be an integer between 0 and 20",
    ],
    [
      { label: "svc-x", region: "us-east", tags: ["ok-tag", "x"] },
      "tags[1]",
      "Tags must be between 3 and 50 characters",
    ],
    [{ label: "svc-x", region: "us-east", tags: "k8s" }, "tags", "tags must be an array of strings"],
    [
      { label: "svc-x", region: "us-east", type: "huge" },
      "type",
      "Must be one of common, premium, premium_40gb",
    ],
  ];
  for (const [body, field, reason] of cases) {
    assert.deepEqual(
      await refused(sim, body),
      { status: 400, errors: [{ field, reason }] },
      JSON.stringify(body),
    );
  }
  const premium = await created(sim, {
    label: "svc-p",
    region: "us-east",
    type: "premium",
    client_conn_throttle: 20,
    client_udp_sess_throttle: 20,
    tags: ["a".repeat(50)],
  });
  assert.deepEqual([premium.type, premium.client_conn_throttle, premium.client_udp_sess_throttle], [
    "premium",
    20,
    20,
  ]);
  assert.equal(sim.world.nodeBalancers().length, 2, "refused creates leave nothing behind");
});

Deno.test("createNodeBalancer() checks inline configs and their nodes, refusing the whole body on any error", async () => {
  await using sim = await startLinodeSim();
  const base = { label: "svc-c", region: "us-east" };
  const dupPort = await refused(sim, { ...base, configs: [{ port: 80 }, { port: 80, protocol: "tcp" }] });
  assert.deepEqual(dupPort.errors, [{ field: "configs[1].port", reason: "Port 80 is already configured" }]);
  const badNode = await refused(sim, {
    ...base,
    configs: [{ port: 80, nodes: [{ label: "node-1", address: "45.79.1.2:80" }] }],
  });
  assert.deepEqual(badNode.errors, [{
    field: "configs[0].nodes[0].address",
    reason: "Must be a private IPv4 address",
  }]);
  const badConfig = await refused(sim, { ...base, configs: [{ port: 70000 }] });
  assert.equal(badConfig.errors[0]?.field, "configs[0].port");
  const notObject = await refused(sim, { ...base, configs: [42] });
  assert.deepEqual(notObject.errors, [{ field: "configs[0]", reason: "Must be an object" }]);
  assert.equal(sim.world.nodeBalancers().length, 0);
  const shared = await created(sim, {
    ...base,
    type: "premium",
    configs: [{ port: 53, protocol: "udp" }, { port: 53, protocol: "tcp" }],
  });
  const ports = await withSim(sim, () => getNodeBalancerConfigs(shared.id));
  assert.deepEqual(
    ports.data.map((c) => [c.port, c.protocol]),
    [[53, "udp"], [53, "tcp"]],
    "UDP and TCP may share a port",
  );
});

Deno.test("getNodeBalancers(), getNodeBalancer(), updateNodeBalancer() and deleteNodeBalancer() work end to end", async () => {
  await using sim = await startLinodeSim();
  const nb = await createOne(sim);
  const other = await created(sim, { label: "svc-other", region: "us-ord" });
  const list = await withSim(sim, () => getNodeBalancers({}, { label: "svc-web" }));
  assert.deepEqual(list.data.map((n) => n.id), [nb.id]);
  const byIp = await withSim(sim, () => getNodeBalancers({}, { ipv4: nb.ipv4 }));
  assert.deepEqual(byIp.data.map((n) => n.id), [nb.id]);
  const updated = await withSim(
    sim,
    () => updateNodeBalancer(nb.id, { label: "svc-web-2", tags: ["a-1", "b-2"], client_conn_throttle: 0 }),
  );
  assert.deepEqual([updated.label, updated.client_conn_throttle], ["svc-web-2", 0]);
  assert.deepEqual((await withSim(sim, () => getNodeBalancer(nb.id))).tags, ["a-1", "b-2"]);
  const update = (id: number, body: unknown) =>
    failure(withSim(sim, () => rawCall("PUT", `/nodebalancers/${id}`, body)));
  assert.deepEqual(await update(other.id, { label: "svc-web-2" }), {
    status: 400,
    errors: [{ field: "label", reason: "Label must be unique" }],
  });
  assert.equal((await update(nb.id, { label: "a.b.c" })).errors[0]?.field, "label");
  assert.equal((await update(nb.id, { client_conn_throttle: 99 })).errors[0]?.field, "client_conn_throttle");
  assert.equal((await update(nb.id, { region: "us-west" })).errors[0]?.field, "region");
  await withSim(sim, () => deleteNodeBalancer(nb.id));
  assert.equal((await failure(withSim(sim, () => getNodeBalancer(nb.id)))).status, 404);
  assert.equal((await failure(withSim(sim, () => deleteNodeBalancer(nb.id)))).status, 404);
  assert.deepEqual(sim.world.nodeBalancers().map((n) => n.id), [other.id]);
  assert.equal(sim.calls.count("DELETE /v4/nodebalancers/{id}"), 2);
});
