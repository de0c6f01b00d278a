import assert from "node:assert/strict";
import type { UpdateFirewallRules } from "@linode/api-v4";
import { annotationKey } from "../controllers/service/annotations/table.ts";
import { ownershipTag } from "../controllers/service/ownership.ts";
import { type ServiceWorld, startServiceWorld, until, userFirewall } from "./service_fixture.ts";

const ACL = annotationKey("firewall-acl");
const FIREWALL_ID = annotationKey("firewall-id");
const OPEN: UpdateFirewallRules = {
  inbound: [],
  inbound_policy: "ACCEPT",
  outbound: [],
  outbound_policy: "ACCEPT",
};

function annotate(world: ServiceWorld, annotations: Record<string, string | null>): void {
  world.kube.store.patch("services", "web", { metadata: { annotations } }, {
    type: "merge",
    namespace: "default",
  });
}

/** The firewalls protecting the Service's NodeBalancer. */
function firewallsOfWeb(world: ServiceWorld) {
  const nb = world.nodeBalancerOf("web");
  return world.linode.world.firewalls().filter((f) =>
    f.entities.some((e) => e.type === "nodebalancer" && e.id === nb?.id)
  );
}

function allowedV4(world: ServiceWorld): string[] {
  return firewallsOfWeb(world).flatMap((f) =>
    (f.rules.inbound ?? []).flatMap((r) => r.addresses?.ipv4 ?? [])
  );
}

Deno.test("service keeps a firewall-acl firewall in line and deletes it with the ACL and the Service", async () => {
  await using world = await startServiceWorld();
  world.addNode("node-1", "192.168.0.11");
  await world.start();
  const svc = world.addService("web", {
    annotations: { [ACL]: JSON.stringify({ allowList: { ipv4: ["203.0.113.0/24"] } }) },
  });
  await until(world, () => allowedV4(world).includes("203.0.113.0/24"), "created with the NodeBalancer");
  const [fw] = firewallsOfWeb(world);
  assert.equal(fw?.rules.inbound_policy, "DROP");
  assert.ok(fw?.tags.includes(ownershipTag("kubernetes", svc.metadata?.uid ?? "")), "managed: ownership tag");

  world.linode.calls.reset();
  annotate(world, { [ACL]: JSON.stringify({ allowList: { ipv4: ["198.51.100.7/32"] } }) });
  await until(world, () => allowedV4(world).includes("198.51.100.7/32"), "rules updated");
  assert.equal(firewallsOfWeb(world)[0]?.id, fw?.id, "in place");
  assert.equal(world.linode.calls.count("PUT /v4/networking/firewalls/{id}/rules"), 1);

  annotate(world, { [ACL]: null });
  await until(
    world,
    () => world.linode.world.firewalls().length === 0,
    "managed firewall deleted with the ACL",
  );
  annotate(world, { [ACL]: JSON.stringify({ denyList: { ipv4: ["192.0.2.1/32"] } }) });
  await until(world, () => firewallsOfWeb(world)[0]?.rules.inbound_policy === "ACCEPT", "denyList firewall");
  world.kube.store.delete("services", "web", "default");
  await until(world, () => world.service("web") === undefined, "Service gone");
  assert.deepEqual(world.linode.world.firewalls(), [], "deleted with the Service");
});

Deno.test("service attaches the firewall-id firewall, moves between them, and never deletes one it did not make", async () => {
  await using world = await startServiceWorld();
  world.addNode("node-1", "192.168.0.11");
  await world.start();
  const a = await userFirewall(world, "user-fw-a", OPEN);
  const b = await userFirewall(world, "user-fw-b", OPEN);
  world.addService("web", { annotations: { [FIREWALL_ID]: String(a.id) } });
  await until(world, () => firewallsOfWeb(world).map((f) => f.id).join() === String(a.id), "attached a");
  annotate(world, { [FIREWALL_ID]: String(b.id) });
  await until(world, () => firewallsOfWeb(world).map((f) => f.id).join() === String(b.id), "moved to b");
  world.kube.store.delete("services", "web", "default");
  await until(world, () => world.service("web") === undefined, "Service gone");
  assert.deepEqual(world.linode.world.firewalls().map((f) => f.id).sort(), [a.id, b.id].sort(), "both kept");
});

Deno.test("service detaches the firewall-id firewall when the annotation goes, and keeps the firewall", async () => {
  await using world = await startServiceWorld();
  world.addNode("node-1", "192.168.0.11");
  await world.start();
  const a = await userFirewall(world, "user-fw-a", OPEN);
  world.addService("web", { annotations: { [FIREWALL_ID]: String(a.id) } });
  await until(world, () => firewallsOfWeb(world).map((f) => f.id).join() === String(a.id), "attached a");
  world.linode.calls.reset();
  annotate(world, { [FIREWALL_ID]: null });
  await until(world, () => firewallsOfWeb(world).length === 0, "a detached, as the Go CCM does");
  assert.deepEqual(world.linode.world.firewalls().map((f) => f.id), [a.id], "a user's firewall is kept");
  assert.equal(world.linode.calls.count("DELETE /v4/networking/firewalls/{id}"), 0);
});

Deno.test("service only detaches its own firewall when someone has attached it elsewhere since", async () => {
  await using world = await startServiceWorld();
  world.addNode("node-1", "192.168.0.11");
  await world.start();
  world.addService("web", {
    annotations: { [ACL]: JSON.stringify({ allowList: { ipv4: ["203.0.113.0/24"] } }) },
  });
  await until(world, () => firewallsOfWeb(world).length === 1, "a managed firewall");
  const fw = firewallsOfWeb(world)[0];
  const linodeId = world.linode.world.listInstances()[0]?.id;
  // Behind the CCM's back: its cache still says the firewall protects this NodeBalancer alone.
  await world.userCall("POST", `/networking/firewalls/${fw?.id}/devices`, { id: linodeId, type: "linode" });
  annotate(world, { [ACL]: null });
  await until(world, () => firewallsOfWeb(world).length === 0, "detached from the NodeBalancer");
  const kept = world.linode.world.firewalls().find((f) => f.id === fw?.id);
  assert.ok(kept, "the firewall survives: its devices were read again before deleting");
  assert.deepEqual(kept.entities.map((e) => [e.type, e.id]), [["linode", linodeId]]);
});
