/**
 * Every call declared in client.ts, driven through `LinodeClient` against the emulator: counted once under its
 * route template (the one the emulator saw), in `ccm_linode_requests_total` and under its linodego method; and
 * each method takes its per-call options after its arguments.
 */
import assert from "node:assert/strict";
import { type LinodeSim, startLinodeSim } from "../sim/linode/server.ts";
import { GO_CLIENT_METRIC } from "./caller.ts";
import { type CallOptions, LINODE_CALLS, type LinodeClient } from "./client.ts";
import { clientFor } from "./testdata/test_support.ts";

/** One call of a declared endpoint (`nodeBalancers.get`), made with `options`. */
interface Step {
  call: string;
  send: (client: LinodeClient, options?: CallOptions) => Promise<unknown>;
}

/** Firewall rules that accept everything. */
function rules() {
  return { inbound_policy: "ACCEPT" as const, outbound_policy: "ACCEPT" as const, inbound: [], outbound: [] };
}

/** A world with one of everything, and a call of every declared endpoint on it (deletes last). */
async function everyCall(sim: LinodeSim): Promise<Step[]> {
  const vpc = sim.world.createVpc({
    label: "v",
    region: "us-east",
    subnets: [{ label: "s", ipv4: "10.0.0.0/16" }],
  });
  const subnetId = vpc.subnets[0]?.id ?? 0;
  const legacy = sim.world.addInstance({
    label: "legacy",
    region: "us-east",
    vpc: { vpcId: vpc.id, subnetId },
  });
  const modern = sim.world.addInstance({
    label: "modern",
    region: "us-east",
    interfaceGeneration: "linode",
    vpc: { vpcId: vpc.id, subnetId },
  });
  const node = (i: number) => ({ label: `node-${i}`, address: `192.168.130.${i}:30080` });
  const configs = [80, 443].map((port) => ({ port, protocol: "tcp", nodes: [node(10), node(11)] }));
  const nb = sim.world.addNodeBalancer({ label: "ccm-nb", region: "us-east", configs });
  const spare = sim.world.addNodeBalancer({ label: "spare", region: "us-east", configs: [] });
  const [kept, dropped] = nb.configs;
  const [keptNode, droppedNode] = kept?.nodes ?? [];
  const fw = sim.world.firewallStore.create({
    label: "ccm-fw",
    rules: rules(),
    devices: { linodes: [legacy.id] },
  });
  const spareFw = sim.world.firewallStore.create({ label: "spare-fw", rules: rules() });
  const ip = sim.world.reservedIps.reserve({ region: "us-east" });
  // Looked up by another client, so that only the steps count on the one under test.
  const lookup = clientFor(sim).client;
  const [config] = await lookup.instances.listConfigs(legacy.id);
  const iface = config?.interfaces?.find((i) => i.purpose === "vpc");
  const linodeIface = (await lookup.interfaces.list(modern.id)).find((i) => i.vpc);
  const [device] = await lookup.firewalls.listDevices(fw.id);
  assert.ok(kept && dropped && keptNode && droppedNode && config && iface && linodeIface && device);
  const step = (call: string, send: Step["send"]): Step => ({ call, send });
  return [
    step("profile.getProfile", (c, o) => c.getProfile(o)),
    step("instances.list", (c, o) => c.instances.list({ region: "us-east" }, o)),
    step("instances.get", (c, o) => c.instances.get(legacy.id, o)),
    step("instances.listConfigs", (c, o) => c.instances.listConfigs(legacy.id, o)),
    step(
      "instances.updateConfigInterface",
      (c, o) =>
        c.instances.updateConfigInterface(legacy.id, config.id, iface.id, { ip_ranges: ["10.1.2.0/24"] }, o),
    ),
    step("interfaces.list", (c, o) => c.interfaces.list(modern.id, o)),
    step("interfaces.get", (c, o) => c.interfaces.get(modern.id, linodeIface.id, o)),
    step(
      "interfaces.updateVpcRanges",
      (c, o) => c.interfaces.updateVpcRanges(modern.id, linodeIface.id, { ranges: ["10.0.9.0/24"] }, o),
    ),
    step("vpcs.list", (c, o) => c.vpcs.list(undefined, o)),
    step("vpcs.get", (c, o) => c.vpcs.get(vpc.id, o)),
    step("vpcs.listIps", (c, o) => c.vpcs.listIps(vpc.id, undefined, o)),
    step("vpcs.listIpv6s", (c, o) => c.vpcs.listIpv6s(vpc.id, o)),
    step("vpcs.listAllIps", (c, o) => c.vpcs.listAllIps(undefined, o)),
    step("nodeBalancers.list", (c, o) => c.nodeBalancers.list(undefined, o)),
    step("nodeBalancers.get", (c, o) => c.nodeBalancers.get(nb.id, o)),
    step(
      "nodeBalancers.create",
      (c, o) => c.nodeBalancers.create({ label: "created", region: "us-east", configs: [] }, o),
    ),
    step("nodeBalancers.update", (c, o) => c.nodeBalancers.update(nb.id, { label: "ccm-nb-2" }, o)),
    step("nodeBalancers.listConfigs", (c, o) => c.nodeBalancers.listConfigs(nb.id, o)),
    step(
      "nodeBalancers.createConfig",
      (c, o) => c.nodeBalancers.createConfig(nb.id, { port: 8080, protocol: "tcp", nodes: [node(13)] }, o),
    ),
    step(
      "nodeBalancers.updateConfig",
      (c, o) =>
        c.nodeBalancers.updateConfig(nb.id, kept.id, { port: 80, protocol: "tcp", check_passive: false }, o),
    ),
    step("nodeBalancers.rebuildConfig", (c, o) =>
      c.nodeBalancers.rebuildConfig(nb.id, kept.id, {
        port: 80,
        protocol: "tcp",
        nodes: [{ ...node(10), id: keptNode.id }, node(11)],
      }, o)),
    step("nodeBalancers.listConfigNodes", (c, o) => c.nodeBalancers.listConfigNodes(nb.id, kept.id, o)),
    step(
      "nodeBalancers.createConfigNode",
      (c, o) => c.nodeBalancers.createConfigNode(nb.id, dropped.id, node(12), o),
    ),
    step(
      "nodeBalancers.updateConfigNode",
      (c, o) => c.nodeBalancers.updateConfigNode(nb.id, kept.id, keptNode.id, { weight: 50 }, o),
    ),
    step("nodeBalancers.listFirewalls", (c, o) => c.nodeBalancers.listFirewalls(nb.id, o)),
    step("firewalls.list", (c, o) => c.firewalls.list(undefined, o)),
    step("firewalls.get", (c, o) => c.firewalls.get(fw.id, o)),
    step("firewalls.create", (c, o) => c.firewalls.create({ label: "created-fw", rules: rules() }, o)),
    step("firewalls.update", (c, o) => c.firewalls.update(fw.id, { label: "ccm-fw-2" }, o)),
    step("firewalls.getRules", (c, o) => c.firewalls.getRules(fw.id, o)),
    step("firewalls.updateRules", (c, o) => c.firewalls.updateRules(fw.id, rules(), o)),
    step("firewalls.listDevices", (c, o) => c.firewalls.listDevices(fw.id, o)),
    step(
      "firewalls.createDevice",
      (c, o) => c.firewalls.createDevice(fw.id, { id: nb.id, type: "nodebalancer" }, o),
    ),
    step("firewalls.deleteDevice", (c, o) => c.firewalls.deleteDevice(fw.id, device.id, o)),
    step("firewalls.delete", (c, o) => c.firewalls.delete(spareFw.id, o)),
    step(
      "nodeBalancers.deleteConfigNode",
      (c, o) => c.nodeBalancers.deleteConfigNode(nb.id, dropped.id, dropped.nodes[0]?.id ?? 0, o),
    ),
    step("nodeBalancers.deleteConfig", (c, o) => c.nodeBalancers.deleteConfig(nb.id, dropped.id, o)),
    step("nodeBalancers.delete", (c, o) => c.nodeBalancers.delete(spare.id, o)),
    step("reservedIps.deleteReservedIpv4", (c, o) => c.reservedIps.deleteReservedIpv4(ip.address, o)),
  ];
}

/** Every declared endpoint by `resource.method`, with its `METHOD /route` and linodego method. */
function declared(): Map<string, { route: string; goMethod: string }> {
  const all = new Map<string, { route: string; goMethod: string }>();
  for (const [resource, table] of Object.entries(LINODE_CALLS)) {
    for (const [name, { route, goMethod }] of Object.entries(table)) {
      all.set(`${resource}.${name}`, { route, goMethod });
    }
  }
  return all;
}

Deno.test("LINODE_CALLS: every declared call is counted once under its route template and linodego method", async () => {
  await using sim = await startLinodeSim();
  const steps = await everyCall(sim);
  const endpoints = declared();
  assert.ok(endpoints.size > 30, `${endpoints.size} calls declared`);
  assert.deepEqual(
    steps.map((s) => s.call).sort(),
    [...endpoints.keys()].sort(),
    "the steps make every call",
  );
  const { client, metrics } = clientFor(sim);
  const requests = metrics.counter("ccm_linode_requests_total", "", ["method", "route", "status"]);
  const goCalls = metrics.counter(GO_CLIENT_METRIC, "", ["method", "result"]);
  for (const { call, send } of steps) {
    const endpoint = endpoints.get(call);
    assert.ok(endpoint);
    const { route, goMethod } = endpoint;
    const [method = "", template = ""] = route.split(" ");
    const seen = `${method} /v4${template}`;
    const before = {
      client: client.callCounts()[route] ?? 0,
      sim: sim.calls.count(seen),
      total: sim.calls.total(),
    };
    await send(client);
    assert.equal(client.callCounts()[route], before.client + 1, `${call} counted as ${route}`);
    assert.equal(sim.calls.count(seen), before.sim + 1, `${call} sent as ${seen}`);
    assert.equal(sim.calls.total(), before.total + 1, `${call} sent one request`);
    const status = String(sim.calls.log.at(-1)?.status);
    assert.match(status, /^2\d\d$/, `${call} answered ${status}`);
    assert.equal(requests.get({ method, route: template, status: "200" }) ?? 0, client.callCounts()[route]);
    assert.equal(
      goCalls.get({ method: goMethod, result: "ok" }),
      1,
      `${call} counted as linodego's ${goMethod}`,
    );
  }
  assert.equal(goCalls.total(), steps.length, "one linodego count per call, none under a route");
});

Deno.test("LINODE_CALLS: linodego methods are one per route template, named as linodego names them", () => {
  const endpoints = [...declared().values()];
  for (const { goMethod } of endpoints) {
    assert.match(goMethod, /^(Get|List|ListAll|Create|Update|Delete|Rebuild)[A-Z]\w+$/);
  }
  const routes = new Map(endpoints.map((e) => [e.route, e.goMethod]));
  assert.equal(routes.size, endpoints.length, "no route declared twice");
  assert.equal(new Set(routes.values()).size, routes.size, "no linodego method for two routes");
});

Deno.test("LinodeClient: every method takes its per-call options after its arguments", async () => {
  await using sim = await startLinodeSim();
  const steps = await everyCall(sim);
  const { client } = clientFor(sim);
  const sent = sim.calls.total();
  const reason = new Error("stopped by its signal");
  for (const { call, send } of steps) {
    const outcome = await send(client, { signal: AbortSignal.abort(reason) }).then(
      () => "answered",
      (e) => e,
    );
    assert.equal(outcome, reason, `${call} saw its signal`);
  }
  assert.equal(sim.calls.total(), sent, "nothing sent");
  assert.deepEqual(client.callCounts(), {});
});
