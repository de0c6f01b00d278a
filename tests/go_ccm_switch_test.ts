import assert from "node:assert/strict";
import type { V1Lease } from "@kubernetes/client-node";
import { LENIENT_REASON } from "../controllers/service/apply.ts";
import type { V1Node } from "@kubernetes/client-node";
import { CCM_LEASE, GO_CCM_LENIENT_VALUES, goCcmAddresses, LB_CLEANUP_FINALIZER } from "../sim/mod.ts";
import { backendIds, startSwitch, type Switch } from "./go_ccm_fixture.ts";
import { MAX_RETRY_WAIT_FACTOR } from "./process.ts";

const NB_WRITES = /^(POST|DELETE) \/v4\/nodebalancers(\/\{id\})?$/;

/** What customers see of the Go CCM's NodeBalancers: id, label, addresses, type, configs by port. */
function visible(sw: Switch) {
  return sw.nodeBalancers().map((nb) => ({
    id: nb.id,
    label: nb.label,
    ipv4: nb.ipv4,
    hostname: nb.hostname,
    configs: nb.configs.map((c) => ({ id: c.id, port: c.port, protocol: c.protocol })),
  }));
}

Deno.test("runCcm() after the switch from the Go CCM keeps its NodeBalancers, backends and Service status", async () => {
  await using sw = await startSwitch();
  const { go, ccm } = sw;
  const seen = visible(sw);
  const statuses = go.services.map((s) => sw.service(s.name)?.status);
  go.linode.calls.reset();
  await ccm.start();
  await ccm.waitFor(() => sw.adopted(), { what: "every Go CCM NodeBalancer adopted" });
  // A resync later, nothing more happens.
  await ccm.tick(60_000, 5_000);

  assert.deepEqual(visible(sw), seen, "same ids, labels, IPs, hostnames, config ids");
  assert.deepEqual(sw.linodeWrites().filter((k) => NB_WRITES.test(k)), [], "none created or deleted");
  assert.deepEqual(backendIds(sw.nodeBalancers()), backendIds(sw.before), "backend node ids kept");
  for (const svc of go.services) {
    const nb = sw.nodeBalancers().find((n) => n.id === svc.nodeBalancerId);
    assert.deepEqual(
      nb?.tags,
      ["kubernetes", "prod", sw.tagOf(svc), sw.clusterIdTag],
      `${svc.key}: ownership tag added`,
    );
    assert.equal(nb?.client_conn_throttle, 0, `${svc.key}: pinned throttle kept`);
  }
  // One in-place write per NodeBalancer (its tags); the routes and Nodes were already right.
  assert.deepEqual(sw.linodeWrites(), go.services.map(() => "PUT /v4/nodebalancers/{id}"));
  assert.deepEqual(go.services.map((s) => sw.service(s.name)?.status), statuses, "Service status unchanged");
  for (const svc of go.services) {
    assert.deepEqual(sw.service(svc.name)?.metadata?.finalizers, [LB_CLEANUP_FINALIZER]);
  }
  for (const node of go.nodes) {
    assert.equal(ccm.nodeWrites(node.name), 0, `${node.name} was initialised already`);
    assert.deepEqual(go.linode.world.ipRanges(node.linodeId), [node.podCidr]);
  }
});

Deno.test("runCcm() after the switch: a Node added later reaches every adopted NodeBalancer", async () => {
  await using sw = await startSwitch();
  const { go, ccm } = sw;
  await ccm.start();
  await ccm.waitFor(() => sw.adopted(), { what: "adopted" });
  const adoptedIds = backendIds(sw.nodeBalancers());
  const linodeId = go.addNode("go-node-9");
  const added = go.nodes.find((n) => n.linodeId === linodeId);
  const onEveryPort = () =>
    sw.nodeBalancers().every((nb) =>
      nb.configs.every((c) => c.nodes.some((n) => n.address.startsWith(`${added?.vpcIp}:`)))
    );
  await ccm.advanceUntil(onEveryPort, { what: "the new Node on every NodeBalancer port", stepMs: 1_000 });

  for (const nb of sw.nodeBalancers()) {
    for (const c of nb.configs) {
      const kept = Object.fromEntries(
        c.nodes.filter((n) => !n.address.startsWith(`${added?.vpcIp}:`)).map((n) => [n.address, n.id]),
      );
      assert.deepEqual(kept, adoptedIds[nb.id]?.[c.port], `NodeBalancer ${nb.id} port ${c.port}: ids kept`);
      const fresh = c.nodes.find((n) => n.address.startsWith(`${added?.vpcIp}:`));
      assert.equal(fresh?.label, "go-node-9");
    }
  }
  assert.equal(sw.nodeBalancers().length, sw.before.length, "no NodeBalancer created");
  await ccm.advanceUntil(() => go.linode.world.ipRanges(linodeId).includes(added?.podCidr ?? "?"), {
    what: "the new Node routed",
    stepMs: 1_000,
  });
});

Deno.test("runCcm() after the switch: deleting a Service deletes its adopted NodeBalancer and releases the finalizer", async () => {
  await using sw = await startSwitch();
  const { go, ccm } = sw;
  await ccm.start();
  await ccm.waitFor(() => sw.adopted(), { what: "adopted" });
  const [web, api] = go.services;
  go.kube.store.delete("services", "web", "default");
  await ccm.advanceUntil(() => sw.service("web") === undefined, { what: "web deleted", stepMs: 1_000 });

  const ids = sw.nodeBalancers().map((nb) => nb.id);
  assert.ok(!ids.includes(web?.nodeBalancerId ?? 0), "the adopted NodeBalancer is deleted");
  assert.deepEqual(ids, [api?.nodeBalancerId], "the other Service's one is kept");
  assert.equal(go.linode.calls.count("DELETE /v4/nodebalancers/{id}"), 1);
  assert.equal(go.linode.calls.count("POST /v4/nodebalancers"), 0);
});

Deno.test("runCcm() after the switch takes the Go CCM's Lease only once it stops renewing and the Lease expires", async () => {
  await using sw = await startSwitch({ flags: ["--leader-elect=true"] });
  const { go, ccm } = sw;
  const lease = () =>
    go.kube.store.get("leases", CCM_LEASE.name, CCM_LEASE.namespace) as unknown as V1Lease | undefined;
  const running = await ccm.start();
  // While the Go CCM renews, this one stands by: a minute passes, nothing is written.
  await ccm.tick(60_000, 1_000);
  assert.equal(lease()?.spec?.holderIdentity, go.lease.identity);
  assert.equal(running.fence.leading, false);
  assert.deepEqual(sw.linodeWrites(), []);
  assert.ok(!sw.adopted());

  go.lease.stop();
  // Expiry counts from the last renewal the standby saw, which is the last one written before the stop.
  const sinceRenewalMs = ccm.clock.now() - Date.parse(String(lease()?.spec?.renewTime));
  const tookMs = await ccm.advanceUntil(() => lease()?.spec?.holderIdentity === running.identity, {
    what: "the Lease taken over",
    stepMs: 1_000,
  });
  const afterRenewalMs = sinceRenewalMs + tookMs;
  assert.ok(
    afterRenewalMs >= 15_000,
    `taken ${afterRenewalMs} ms after the last renewal: before the 15 s expiry`,
  );
  // Seen at most one jittered retry wait after it was written, taken at most one wait after expiry.
  const slackMs = 2 * 2_000 * MAX_RETRY_WAIT_FACTOR + 1_000;
  assert.ok(afterRenewalMs <= 15_000 + slackMs, `taken ${afterRenewalMs} ms after the last renewal`);
  assert.equal(lease()?.spec?.leaseTransitions, 3);
  await ccm.waitFor(() => sw.adopted(), { what: "adopted once leading" });
  assert.equal(go.linode.calls.count("POST /v4/nodebalancers"), 0);
});

Deno.test("runCcm() after the switch serves lenient values, NotReady Nodes and Nodes without pod CIDRs as the Go CCM did", async () => {
  await using sw = await startSwitch({ lenientService: true, nodesWithoutPodCidr: 1, notReadyNode: true });
  const { go, ccm } = sw;
  const seen = visible(sw);
  const legacy = go.services.find((s) => s.name === "legacy");
  const statusBefore = sw.service("legacy")?.status;
  go.linode.calls.reset();
  await ccm.start();
  await ccm.waitFor(() => sw.adopted(), { what: "every Go CCM NodeBalancer adopted, the lenient one too" });
  await ccm.tick(60_000, 5_000);

  assert.deepEqual(visible(sw), seen);
  assert.deepEqual(
    backendIds(sw.nodeBalancers()),
    backendIds(sw.before),
    "the NotReady Node keeps its backends",
  );
  assert.deepEqual(sw.linodeWrites(), go.services.map(() => "PUT /v4/nodebalancers/{id}"), "only the tags");
  const nb = sw.nodeBalancers().find((n) => n.id === legacy?.nodeBalancerId);
  assert.deepEqual([nb?.client_conn_throttle, nb?.type], [20, "common"], "as the Go CCM read them");
  assert.deepEqual(sw.service("legacy")?.status, statusBefore, 'IP and hostname, as the Go CCM read "yes"');
  const warned = ccm.events(LENIENT_REASON, "legacy").map((e) => e.message ?? "").join();
  for (const key of Object.keys(GO_CCM_LENIENT_VALUES).filter((k) => !k.endsWith("check-passive"))) {
    assert.ok(warned.includes(key), `${key} named: ${warned}`);
  }
  assert.deepEqual(ccm.events("SyncLoadBalancerFailed"), []);
  for (const node of go.nodes) assert.equal(ccm.nodeWrites(node.name), 0, `${node.name} left as it was`);
  const noCidr = go.nodes.find((n) => n.name === "go-nocidr-1");
  assert.deepEqual(go.linode.world.ipRanges(noCidr?.linodeId ?? 0), [], "no pod CIDR, no route");

  const linodeId = go.addNode("go-node-9");
  const vpcIp = go.nodes.find((n) => n.linodeId === linodeId)?.vpcIp;
  await ccm.advanceUntil(
    () =>
      sw.nodeBalancers().every((n) =>
        n.configs.every((c) => c.nodes.some((b) => b.address.startsWith(`${vpcIp}:`)))
      ),
    { what: "the new Node on every NodeBalancer, the lenient Service's too", stepMs: 1_000 },
  );
});

/** Every Node as it stands: what a switch must leave exactly as the Go CCM wrote it. */
function nodesOf(sw: Switch): Record<string, V1Node | undefined> {
  return Object.fromEntries(sw.go.nodes.map((n) => [n.name, sw.ccm.node(n.name)]));
}

for (const nodeIp of ["vpc", "private"] as const) {
  Deno.test(`runCcm() after the switch from the Go CCM with kubelet --node-ip on the ${nodeIp} address writes no Node and no backend`, async () => {
    await using sw = await startSwitch({ nodeIp });
    const { go, ccm } = sw;
    const before = nodesOf(sw);
    const first = before[go.nodes[0]?.name ?? ""];
    assert.equal(first?.status?.addresses?.[0]?.address, go.nodes[0]?.nodeIp, "seeded: --node-ip first");
    go.linode.calls.reset();
    await ccm.start();
    await ccm.waitFor(() => sw.adopted(), { what: "every Go CCM NodeBalancer adopted" });
    // Past one --node-status-update-frequency (5 min): the periodic address check writes nothing either.
    await ccm.tick(6 * 60_000, 60_000);

    for (const node of go.nodes) assert.equal(ccm.nodeWrites(node.name), 0, `${node.name}: no write`);
    assert.deepEqual(nodesOf(sw), before, "every Node as the Go CCM left it");
    assert.deepEqual(backendIds(sw.nodeBalancers()), backendIds(sw.before), "no backend moved");
    assert.deepEqual(sw.linodeWrites(), go.services.map(() => "PUT /v4/nodebalancers/{id}"), "only the tags");

    // A Node joining now is initialised as the Go CCM would: its --node-ip first, the only one of its type.
    const linodeId = go.addNode("go-node-9");
    const added = go.nodes.find((n) => n.linodeId === linodeId);
    const instance = go.linode.world.instance(linodeId);
    assert.ok(added && instance);
    const backendIp = nodeIp === "vpc" ? added.vpcIp : added.privateIp;
    await ccm.advanceUntil(
      () =>
        sw.nodeBalancers().every((nb) =>
          nb.configs.every((c) => c.nodes.some((b) => b.address.startsWith(`${backendIp}:`)))
        ),
      { what: "the new Node on every NodeBalancer at its --node-ip", stepMs: 1_000 },
    );
    assert.deepEqual(ccm.node("go-node-9")?.status?.addresses, goCcmAddresses(instance, added));
  });
}
