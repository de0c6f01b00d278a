/**
 * What a Service author (who may only edit Services) cannot take over, and what they still can: a
 * `nodebalancer-id` naming a NodeBalancer that serves someone else is refused (and the Service's deletion
 * leaves it), one made through the API for the Service is adopted and tagged; `--nodebalancer-id-adopts-any`
 * restores the Go CCM's rule. Reserved tags in the `tags` annotation are dropped; a NodeBalancer claiming two
 * owners is nobody's, for the Services and for the orphan checks of two clusters of one name; two NodeBalancers
 * claiming one Service whose status was lost are taken only with proof. docs/security.md
 * ("What a Service author can and cannot do") lists the same cases.
 */
import assert from "node:assert/strict";
import { annotationKey } from "../controllers/service/annotations/table.ts";
import { ownershipTag } from "../controllers/service/ownership.ts";
import { FakeClock } from "../common/clock.ts";
import { goCcmCreateBody } from "../sim/mod.ts";
import { REGION } from "./ccm_fixture.ts";
import { clusterIdTagOf } from "./go_ccm_fixture.ts";
import {
  type ServiceWorld,
  startSecondCluster,
  startServiceWorld,
  until,
  userNodeBalancer,
} from "./service_fixture.ts";

const NB_ID = annotationKey("nodebalancer-id");
const TAGS = annotationKey("tags");
const CLEANUP = "--cleanup-orphaned-nodebalancers";
const ADOPTS_ANY = "--nodebalancer-id-adopts-any";
/** UIDs of Services that exist in no cluster of these tests. */
const GONE_UID = "5e1f0000-dead-4bee-8f00-0000000000aa";
const OTHER_GONE_UID = "6e1f0000-beef-4bee-8f00-0000000000bb";
const FOREIGN_ID = "ccm-cluster:" + "f".repeat(32);
/** Two orphan checks (1 h apart) and a little more. */
const TWO_CHECKS_MS = 2 * 3_600_000 + 120_000;
const NB_WRITES = /^(POST|PUT|DELETE) \/v4\/nodebalancers/;

function nbWrites(w: ServiceWorld): string[] {
  return w.linode.calls.log.map((c) => c.key).filter((k) => NB_WRITES.test(k));
}

function nodeBalancer(w: ServiceWorld, id: number) {
  return w.nodeBalancers().find((nb) => nb.id === id);
}

function warning(w: ServiceWorld, reason: string, name: string): string {
  return w.events(reason, name).map((e) => e.message ?? "").join("\n");
}

function annotate(w: ServiceWorld, name: string, annotations: Record<string, string | null>): void {
  w.kube.store.patch("services", name, { metadata: { annotations } }, {
    type: "merge",
    namespace: "default",
  });
}

/** A NodeBalancer another cluster's Go CCM made: only its cluster name tag, backends at that cluster's Nodes. */
function anotherClustersNodeBalancer(w: ServiceWorld) {
  return w.linode.world.addNodeBalancer(goCcmCreateBody({
    label: "ccm-0123456789ab",
    tags: ["kubernetes"],
    ports: [{ port: 80, nodePort: 31080 }],
    backends: [{ nodeName: "their-node-1", ip: "192.168.200.7", status: "UP" }],
  }));
}

/** A NodeBalancer made by hand, then tagged as `tags` say. */
async function taggedNodeBalancer(w: ServiceWorld, tags: string[]): Promise<{ id: number; ipv4: string }> {
  const nb = await userNodeBalancer(w, `hand-made-${tags.length}-${w.nodeBalancers().length}`);
  await w.userCall("PUT", `/nodebalancers/${nb.id}`, { tags });
  return nb;
}

/** Deletes the Service and waits until it is gone (finalizer released). */
async function deleteService(w: ServiceWorld, name: string): Promise<void> {
  w.kube.store.delete("services", name, "default");
  await until(w, () => w.service(name) === undefined, `${name} gone`);
}

Deno.test("service refuses a nodebalancer-id naming an untagged NodeBalancer that backs another cluster's Nodes, and its deletion leaves it", async () => {
  await using w = await startServiceWorld();
  w.addNode("node-1", "192.168.140.11");
  await w.start();
  const theirs = anotherClustersNodeBalancer(w);
  const before = nodeBalancer(w, theirs.id);
  w.linode.calls.reset();
  w.addService("web", { annotations: { [NB_ID]: String(theirs.id) } });
  await until(w, () => w.events("SyncLoadBalancerFailed", "web").length > 0, "a Warning");
  const text = warning(w, "SyncLoadBalancerFailed", "web");
  assert.match(text, new RegExp(`NodeBalancer ${theirs.id} .*serves someone else`));
  assert.match(text, /192\.168\.200\.7:31080/, "the backend that is not this cluster's is named");
  assert.deepEqual(nbWrites(w), [], "nothing written, nothing created");
  assert.equal(w.service("web")?.status?.loadBalancer?.ingress, undefined, "no status");

  await deleteService(w, "web");
  assert.deepEqual(nodeBalancer(w, theirs.id), before, "left as it was");
  assert.deepEqual(nbWrites(w), []);
  assert.match(warning(w, "LoadBalancerNotOwned", "web"), /serves someone else/);
});

Deno.test("service refuses a nodebalancer-id naming an untagged NodeBalancer another Service of this cluster points at", async () => {
  await using w = await startServiceWorld();
  w.addNode("node-1", "192.168.140.11");
  await w.start();
  const shared = await userNodeBalancer(w, "first-ones");
  // `first` points at it too, and fails before anything is found (a value the Go CCM refuses as well).
  w.addService("first", {
    annotations: { [NB_ID]: String(shared.id), [annotationKey("check-passive")]: "maybe" },
  });
  await until(w, () => w.events("SyncLoadBalancerFailed", "first").length > 0, "first's Warning");
  w.linode.calls.reset();
  w.addService("second", { annotations: { [NB_ID]: String(shared.id) } });
  await until(w, () => w.events("SyncLoadBalancerFailed", "second").length > 0, "second's Warning");
  assert.match(
    warning(w, "SyncLoadBalancerFailed", "second"),
    /used by Service default\/first \(its nodebalancer-id\)/,
  );
  assert.deepEqual(nbWrites(w), []);
  assert.deepEqual(nodeBalancer(w, shared.id)?.tags, [], "not tagged as second's");
});

Deno.test("service adopts a NodeBalancer made through the API for it (reserved IPv4, a port without nodes) and tags it as this cluster's", async () => {
  await using w = await startServiceWorld();
  w.addNode("node-1", "192.168.140.11");
  await w.start();
  const address = w.linode.world.reservedIps.reserve({ region: REGION }).address;
  const made = await w.userCall<{ id: number; ipv4: string }>("POST", "/nodebalancers", {
    label: "made-for-web",
    region: REGION,
    ipv4: address,
    configs: [],
  });
  // A port whose only node was removed again: a config without nodes (the API refuses to create one).
  const config = await w.userCall<{ id: number }>("POST", `/nodebalancers/${made.id}/configs`, {
    port: 80,
    protocol: "tcp",
    nodes: [{ label: "placeholder", address: "192.168.140.99:80", mode: "accept" }],
  });
  const path = `/nodebalancers/${made.id}/configs/${config.id}/nodes`;
  const [placeholder] = nodeBalancer(w, made.id)?.configs[0]?.nodes ?? [];
  await w.userCall("DELETE", `${path}/${placeholder?.id}`, {});
  assert.deepEqual(nodeBalancer(w, made.id)?.configs.map((c) => c.nodes.length), [0]);
  assert.equal(made.ipv4, address);
  const svc = w.addService("web", { annotations: { [NB_ID]: String(made.id) } });
  await until(w, () => w.service("web")?.status?.loadBalancer?.ingress?.[0]?.ip === address, "adopted");
  const nb = nodeBalancer(w, made.id);
  assert.equal(nb?.label, "made-for-web", "the same NodeBalancer");
  for (const tag of [ownershipTag("kubernetes", svc.metadata?.uid ?? ""), clusterIdTagOf(w.kube)]) {
    assert.ok(nb?.tags.includes(tag), `tagged ${tag}`);
  }
  assert.deepEqual(nb?.configs.flatMap((c) => c.nodes.map((n) => n.address)), [
    "192.168.140.11:" + nodePort(w),
  ]);
  assert.equal(w.linode.calls.count("POST /v4/nodebalancers"), 1, "only the user's own create");
  assert.deepEqual(w.events("SyncLoadBalancerFailed", "web"), []);
});

function nodePort(w: ServiceWorld): number {
  return w.service("web")?.spec?.ports?.[0]?.nodePort ?? 0;
}

Deno.test("service adopts a Go CCM NodeBalancer its status and nodebalancer-id both name, though a backend's Node is gone", async () => {
  await using w = await startServiceWorld();
  w.addNode("node-1", "192.168.140.11");
  const svc = w.addService("web");
  const port = { port: 80, nodePort: svc.spec?.ports?.[0]?.nodePort ?? 0 };
  const backends = [["node-1", "192.168.140.11"], ["node-gone", "192.168.140.12"]].map(([nodeName, ip]) => ({
    nodeName: nodeName ?? "",
    ip: ip ?? "",
    status: "UP" as const,
  }));
  const go = w.linode.world.addNodeBalancer(
    goCcmCreateBody({ label: "ccm-a1b2c3d4e5f6", tags: ["kubernetes"], ports: [port], backends }),
  );
  annotate(w, "web", { [NB_ID]: String(go.id) });
  w.kube.store.patch("services", "web", { status: { loadBalancer: { ingress: [{ ip: go.ipv4 }] } } }, {
    type: "merge",
    namespace: "default",
    subresource: "status",
  });
  await w.start();
  await until(w, () => w.events("AdoptedLoadBalancer", "web").length > 0, "adopted");
  const nb = nodeBalancer(w, go.id);
  assert.ok(nb?.tags.includes(ownershipTag("kubernetes", svc.metadata?.uid ?? "")));
  assert.deepEqual(nb?.configs.flatMap((c) => c.nodes.map((n) => n.address)), [
    `192.168.140.11:${port.nodePort}`,
  ]);
  assert.deepEqual(w.events("SyncLoadBalancerFailed", "web"), []);
  assert.equal(w.linode.calls.count("POST /v4/nodebalancers"), 0);
});

Deno.test("runCcm() --nodebalancer-id-adopts-any adopts an untagged NodeBalancer serving others, as the Go CCM", async () => {
  await using w = await startServiceWorld({ flags: [ADOPTS_ANY] });
  w.addNode("node-1", "192.168.140.11");
  await w.start();
  const theirs = anotherClustersNodeBalancer(w);
  const svc = w.addService("web", { annotations: { [NB_ID]: String(theirs.id) } });
  await until(w, () => w.service("web")?.status?.loadBalancer?.ingress?.[0]?.ip === theirs.ipv4, "adopted");
  const nb = nodeBalancer(w, theirs.id);
  assert.ok(nb?.tags.includes(ownershipTag("kubernetes", svc.metadata?.uid ?? "")));
  assert.deepEqual(nb?.configs.flatMap((c) => c.nodes.map((n) => n.address)), [
    `192.168.140.11:${nodePort(w)}`,
  ]);
  await deleteService(w, "web");
  assert.equal(nodeBalancer(w, theirs.id), undefined, "and deleted with the Service, as the Go CCM does");
});

Deno.test("service drops ccm-cluster: and ccm-owner: tags from the tags annotation and keeps its NodeBalancer its own", async () => {
  await using w = await startServiceWorld();
  w.addNode("node-1", "192.168.140.11");
  await w.start();
  const forgedOwner = ownershipTag("kubernetes", GONE_UID);
  const svc = w.addService("web", { annotations: { [TAGS]: `team-a,${FOREIGN_ID},${forgedOwner}` } });
  await until(w, () => w.nodeBalancerOf("web") !== undefined, "served");
  const id = w.nodeBalancerOf("web")?.id ?? 0;
  const tags = nodeBalancer(w, id)?.tags ?? [];
  assert.ok(tags.includes("team-a"), "the other tags are served");
  assert.ok(!tags.includes(FOREIGN_ID) && !tags.includes(forgedOwner), `no reserved tag written: ${tags}`);
  assert.ok(tags.includes(ownershipTag("kubernetes", svc.metadata?.uid ?? "")));
  assert.ok(tags.includes(clusterIdTagOf(w.kube)));
  const said = warning(w, "InvalidAnnotationValue", "web");
  assert.ok(said.includes(FOREIGN_ID) && said.includes(forgedOwner), `the Warning names both: ${said}`);

  // Still its own: a change is applied, and deleting the Service deletes it.
  annotate(w, "web", { [annotationKey("throttle")]: "5" });
  await until(w, () => nodeBalancer(w, id)?.client_conn_throttle === 5, "the throttle change applied");
  await deleteService(w, "web");
  assert.equal(nodeBalancer(w, id), undefined, "deleted with its Service");
});

Deno.test("service never adopts, changes or deletes a NodeBalancer claiming two owners", async () => {
  await using w = await startServiceWorld();
  w.addNode("node-1", "192.168.140.11");
  await w.start();
  // This cluster's identity, and the ownership tags of two Services: one was copied.
  const contested = await taggedNodeBalancer(w, [
    ownershipTag("kubernetes", GONE_UID),
    ownershipTag("kubernetes", OTHER_GONE_UID),
    clusterIdTagOf(w.kube),
  ]);
  const before = nodeBalancer(w, contested.id);
  w.linode.calls.reset();
  w.addService("web", { annotations: { [NB_ID]: String(contested.id) } });
  await until(w, () => w.events("SyncLoadBalancerFailed", "web").length > 0, "a Warning");
  assert.match(warning(w, "SyncLoadBalancerFailed", "web"), /claims two owners .*belongs to nobody/);
  assert.deepEqual(nbWrites(w), []);
  await deleteService(w, "web");
  assert.deepEqual(nodeBalancer(w, contested.id), before, "left as it was");
  assert.deepEqual(nbWrites(w), []);
});

Deno.test("service whose status was lost takes neither of two NodeBalancers claiming it without proof", async () => {
  await using w = await startServiceWorld();
  w.addNode("node-1", "192.168.140.11");
  await w.start();
  // A value the sync refuses holds the Service back while two NodeBalancers come to claim it.
  const svc = w.addService("web", { annotations: { [annotationKey("check-passive")]: "maybe" } });
  await until(w, () => w.events("SyncLoadBalancerFailed", "web").length > 0, "held back");
  const tags = ["kubernetes", ownershipTag("kubernetes", svc.metadata?.uid ?? ""), clusterIdTagOf(w.kube)];
  const one = await taggedNodeBalancer(w, tags);
  const two = await taggedNodeBalancer(w, tags);
  await w.tick(20_000, 1_000); // a listing that holds both
  w.linode.calls.reset();
  annotate(w, "web", { [annotationKey("check-passive")]: null });
  const named = new RegExp(`NodeBalancers ${one.id}, ${two.id} all carry this Service's ownership tag`);
  await until(w, () => named.test(warning(w, "SyncLoadBalancerFailed", "web")), "a Warning naming both");
  assert.deepEqual(nbWrites(w), [], "neither changed, none created");
  assert.equal(w.service("web")?.status?.loadBalancer?.ingress, undefined);
});

Deno.test("service whose status was lost takes back the NodeBalancer it created, not a copy claiming it", async () => {
  await using w = await startServiceWorld();
  w.addNode("node-1", "192.168.140.11");
  await w.start();
  w.addService("web");
  await until(w, () => w.nodeBalancerOf("web") !== undefined, "served");
  const mine = w.nodeBalancerOf("web");
  const copy = await taggedNodeBalancer(w, [...mine?.tags ?? []]);
  await w.tick(20_000, 1_000);
  w.linode.calls.reset();
  w.kube.store.patch("services", "web", { status: { loadBalancer: { ingress: null } } }, {
    type: "merge",
    namespace: "default",
    subresource: "status",
  });
  await until(
    w,
    () => w.service("web")?.status?.loadBalancer?.ingress?.[0]?.ip === mine?.ipv4,
    "status back",
  );
  assert.deepEqual(
    w.linode.calls.log.filter((c) => c.path.startsWith(`/v4/nodebalancers/${copy.id}`) && c.method !== "GET"),
    [],
    "the copy untouched",
  );
});

Deno.test("two clusters of one --cluster-name with orphan cleanup: a forged identity tag deletes nothing of the other, a contested NodeBalancer is kept", async () => {
  const clock = new FakeClock();
  await using a = await startServiceWorld({ clock, flags: [CLEANUP] });
  await using b = await startSecondCluster(a, clock, [CLEANUP]);
  a.addNode("a-node-1", "192.168.128.11");
  b.addNode("b-node-1", "192.168.128.21");
  await a.start();
  await b.start();
  const idA = clusterIdTagOf(a.kube);
  const idB = clusterIdTagOf(b.kube);
  // A's Service author writes B's identity (readable from B's NodeBalancers' tags) into the tags annotation.
  a.addService("web", { annotations: { [TAGS]: idB } });
  b.addService("api");
  await until(
    a,
    () => a.nodeBalancerOf("web") !== undefined && b.nodeBalancerOf("api") !== undefined,
    "served",
  );
  const ofA = a.nodeBalancerOf("web")?.id ?? 0;
  assert.ok(!nodeBalancer(a, ofA)?.tags.includes(idB), "B's identity never written");
  // Left from before this rule: both identities on one NodeBalancer of a Service gone.
  const contested = await taggedNodeBalancer(a, [
    "kubernetes",
    ownershipTag("kubernetes", GONE_UID),
    idA,
    idB,
  ]);

  await a.tick(TWO_CHECKS_MS, 60_000);
  await b.settle();
  assert.ok(nodeBalancer(a, ofA), "A's NodeBalancer survives B's orphan checks");
  assert.ok(nodeBalancer(a, contested.id), "the contested one is kept by both");
  assert.equal(a.linode.calls.count("DELETE /v4/nodebalancers/{id}"), 0, "nothing deleted");
  for (const w of [a, b]) {
    const fate = w.ccm.orphanCheck.list().find((o) => o.id === contested.id)?.fate;
    assert.equal(fate, "kept: it claims two owners");
    const said = w.events("ContestedNodeBalancer", "kube-system").map((e) => e.message ?? "");
    assert.ok(said.some((m) => m.includes(String(contested.id))), `a Warning on kube-system: ${said}`);
  }
});
