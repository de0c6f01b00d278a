import assert from "node:assert/strict";
import type { V1Service } from "@kubernetes/client-node";
import { annotationKey } from "../controllers/service/annotations/table.ts";
import { ownershipTag } from "../controllers/service/ownership.ts";
import { LB_FINALIZER } from "../controllers/service/read.ts";
import { goCcmCreateBody } from "../sim/mod.ts";
import {
  backendIds,
  type ServiceWorld,
  startServiceWorld,
  until,
  userNodeBalancer,
} from "./service_fixture.ts";

const WRITES = /^(POST|PUT|DELETE) /;

function writes(world: ServiceWorld): string[] {
  return world.linode.calls.log.map((c) => c.key).filter((k) => WRITES.test(k));
}

/** A NodeBalancer as the Go CCM made it for `svc` (the emulator's seeding, from the Go CCM's create body). */
function goCcmNodeBalancer(world: ServiceWorld, svc: V1Service, ips: string[]) {
  const ports = (svc.spec?.ports ?? []).map((p) => ({ port: p.port, nodePort: p.nodePort ?? 0 }));
  const backends = ips.map((ip, i) => ({ nodeName: `node-${i + 1}`, ip, status: "UP" as const }));
  return world.linode.world.addNodeBalancer(
    goCcmCreateBody({ label: "ccm-a1b2c3d4e5f6", tags: ["kubernetes"], ports, backends }),
  );
}

/** Gives the Service the finalizer and status the Go CCM (through upstream's controller) left on it. */
function goCcmStatus(world: ServiceWorld, name: string, ingress: { ip?: string; hostname?: string }[]): void {
  world.kube.store.patch("services", name, { metadata: { finalizers: [LB_FINALIZER] } }, {
    type: "merge",
    namespace: "default",
  });
  world.kube.store.patch("services", name, { status: { loadBalancer: { ingress } } }, {
    type: "merge",
    namespace: "default",
    subresource: "status",
  });
}

async function adopted(world: ServiceWorld, name: string, uid: string): Promise<void> {
  const tag = ownershipTag("kubernetes", uid);
  await until(world, () => world.nodeBalancers().some((nb) => nb.tags.includes(tag)), `${name} adopted`);
  await until(world, () => world.events("AdoptedLoadBalancer", name).length > 0, "AdoptedLoadBalancer");
}

for (const variant of ["status IP", "status hostname only", "status IP and nodebalancer-id"] as const) {
  Deno.test(`service adopts a Go-CCM NodeBalancer by its ${variant}: same id, address and node ids`, async () => {
    await using world = await startServiceWorld();
    const ips = ["192.168.140.11", "192.168.140.12"];
    ips.forEach((ip, i) => world.addNode(`node-${i + 1}`, ip));
    // A hostname-only status comes from hostname-only-ingress, which the Service keeps.
    const hostnameOnly = variant === "status hostname only";
    const annotations = hostnameOnly ? { [annotationKey("hostname-only-ingress")]: "true" } : {};
    const svc = world.addService("web", { ports: [{ port: 80 }, { port: 443 }], annotations });
    const nb = goCcmNodeBalancer(world, svc, ips);
    if (variant === "status IP and nodebalancer-id") {
      // The Go CCM's other workflow: the annotation names the NodeBalancer its status holds.
      world.kube.store.patch("services", "web", {
        metadata: { annotations: { [annotationKey("nodebalancer-id")]: String(nb.id) } },
      }, { type: "merge", namespace: "default" });
    }
    const ingress = hostnameOnly ? [{ hostname: nb.hostname }] : [{ ip: nb.ipv4, hostname: nb.hostname }];
    goCcmStatus(world, "web", ingress);
    const before = world.nodeBalancers();
    world.linode.calls.reset();
    await world.start();
    await adopted(world, "web", svc.metadata?.uid ?? "");
    const after = world.nodeBalancers();
    assert.deepEqual(after.map((n) => [n.id, n.ipv4, n.label]), before.map((n) => [n.id, n.ipv4, n.label]));
    assert.deepEqual(backendIds(after[0]), backendIds(before[0]), "node ids kept");
    assert.deepEqual(
      after[0]?.configs.map((c) => c.id),
      before[0]?.configs.map((c) => c.id),
      "config ids kept",
    );
    // In place: tags and throttle on the NodeBalancer, and check_passive (the README's default, false, where
    // the Go CCM's code sets true) on each config. Nothing else.
    assert.deepEqual(writes(world), [
      "PUT /v4/nodebalancers/{id}",
      "PUT /v4/nodebalancers/{id}/configs/{id}",
      "PUT /v4/nodebalancers/{id}/configs/{id}",
    ]);
    assert.equal(after[0]?.client_conn_throttle, 20, "this CCM's default throttle");
    assert.deepEqual(after[0]?.configs.map((c) => c.check_passive), [false, false]);
    await until(world, () => world.events("EnsuredLoadBalancer", "web").length > 0, "EnsuredLoadBalancer");
    assert.equal(
      world.events("EnsuredLoadBalancer", "web")[0]?.message,
      "Ensured load balancer",
      "upstream's words",
    );
    // What changed is named in this CCM's own Event beside upstream's.
    const [updated] = world.events("NodeBalancerUpdated", "web");
    assert.match(updated?.message ?? "", /client_conn_throttle: 0 → 20/, "each changed default is named");
    assert.match(updated?.message ?? "", /configs\[80\/tcp\]\.check_passive: true → false/);
    assert.deepEqual(world.service("web")?.status?.loadBalancer?.ingress, ingress, "status unchanged");
  });
}

Deno.test("service adopts the NodeBalancer named by nodebalancer-id, and never creates one when it is missing", async () => {
  await using world = await startServiceWorld();
  world.addNode("node-1", "192.168.140.11");
  await world.start();
  world.addService("web", { annotations: { [annotationKey("nodebalancer-id")]: "999999" } });
  await until(world, () => world.events("SyncLoadBalancerFailed", "web").length > 0, "a Warning");
  assert.match(world.events("SyncLoadBalancerFailed", "web")[0]?.message ?? "", /999999/);
  assert.equal(world.linode.calls.count("POST /v4/nodebalancers"), 0);

  const mine = await userNodeBalancer(world, "user-made");
  world.kube.store.patch("services", "web", {
    metadata: { annotations: { [annotationKey("nodebalancer-id")]: String(mine.id) } },
  }, { type: "merge", namespace: "default" });
  await until(
    world,
    () => world.service("web")?.status?.loadBalancer?.ingress?.[0]?.ip === mine.ipv4,
    "status on the annotated NodeBalancer",
  );
  const nb = world.nodeBalancerOf("web");
  assert.equal(nb?.label, "user-made", "adopted, label kept");
  assert.deepEqual(nb?.configs.map((c) => c.port), [80]);
  assert.equal(world.linode.calls.count("POST /v4/nodebalancers"), 1, "only the test's own create");
});

Deno.test("service moving nodebalancer-id deletes the old NodeBalancer only when it is the Service's", async () => {
  await using world = await startServiceWorld();
  world.addNode("node-1", "192.168.140.11");
  await world.start();
  const first = await userNodeBalancer(world, "first-nb");
  const second = await userNodeBalancer(world, "second-nb");
  const foreign = await userNodeBalancer(world, "foreign-nb");
  const id = annotationKey("nodebalancer-id");
  const point = (nbId: number) =>
    world.kube.store.patch("services", "web", { metadata: { annotations: { [id]: String(nbId) } } }, {
      type: "merge",
      namespace: "default",
    });
  const onIp = (ip: string) => () => world.service("web")?.status?.loadBalancer?.ingress?.[0]?.ip === ip;
  world.addService("web", { annotations: { [id]: String(first.id) } });
  await until(world, onIp(first.ipv4), "on the first");
  point(second.id);
  await until(world, onIp(second.ipv4), "on the second");
  const ids = () => world.nodeBalancers().map((nb) => nb.id).sort();
  assert.deepEqual(ids(), [second.id, foreign.id].sort(), "the first (adopted, so tagged) is deleted");

  // A Service whose status names a NodeBalancer it never adopted: moving away leaves that one alone.
  world.kube.store.patch(
    "services",
    "web",
    { status: { loadBalancer: { ingress: [{ ip: foreign.ipv4 }] } } },
    {
      type: "merge",
      namespace: "default",
      subresource: "status",
    },
  );
  await until(world, onIp(second.ipv4), "status back on the second");
  assert.deepEqual(ids(), [second.id, foreign.id].sort(), "the foreign one is kept");
});

Deno.test("service with preserve keeps the NodeBalancer it moves away from, untagged", async () => {
  await using world = await startServiceWorld();
  world.addNode("node-1", "192.168.140.11");
  await world.start();
  const svc = world.addService("web", { annotations: { [annotationKey("preserve")]: "true" } });
  await until(world, () => world.nodeBalancerOf("web") !== undefined, "created");
  const created = world.nodeBalancerOf("web");
  const other = await userNodeBalancer(world, "other-nb");
  world.kube.store.patch("services", "web", {
    metadata: { annotations: { [annotationKey("nodebalancer-id")]: String(other.id) } },
  }, { type: "merge", namespace: "default" });
  await until(
    world,
    () => world.service("web")?.status?.loadBalancer?.ingress?.[0]?.ip === other.ipv4,
    "moved",
  );
  const kept = world.nodeBalancers().find((nb) => nb.id === created?.id);
  assert.ok(kept, "preserved");
  assert.ok(
    !kept.tags.includes(ownershipTag("kubernetes", svc.metadata?.uid ?? "")),
    "no longer the Service's",
  );
});
