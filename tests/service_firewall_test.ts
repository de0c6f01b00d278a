import assert from "node:assert/strict";
import type { UpdateFirewallRules } from "@linode/api-v4";
import { annotationKey } from "../controllers/service/annotation_table.ts";
import { ownershipTag } from "../controllers/service/ownership.ts";
import { type ServiceWorld, startServiceWorld, waitFor } from "./service_fixture.ts";

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

Deno.test("startServiceController() keeps a firewall-acl firewall in line and deletes it with the ACL and the Service", async () => {
  await using world = await startServiceWorld();
  world.addNode("node-1", "192.168.0.11");
  await world.start();
  const svc = world.addService("web", {
    annotations: { [ACL]: JSON.stringify({ allowList: { ipv4: ["203.0.113.0/24"] } }) },
  });
  await waitFor(() => allowedV4(world).includes("203.0.113.0/24"), { what: "created with the NodeBalancer" });
  const [fw] = firewallsOfWeb(world);
  assert.equal(fw?.rules.inbound_policy, "DROP");
  assert.ok(fw?.tags.includes(ownershipTag("kubernetes", svc.metadata?.uid ?? "")), "managed: ownership tag");

  world.linode.calls.reset();
  annotate(world, { [ACL]: JSON.stringify({ allowList: { ipv4: ["198.51.100.7/32"] } }) });
  await waitFor(() => allowedV4(world).includes("198.51.100.7/32"), { what: "rules updated" });
  assert.equal(firewallsOfWeb(world)[0]?.id, fw?.id, "in place");
  assert.equal(world.linode.calls.count("PUT /v4/networking/firewalls/{id}/rules"), 1);

  annotate(world, { [ACL]: null });
  await waitFor(() => world.linode.world.firewalls().length === 0, {
    what: "managed firewall deleted with the ACL",
  });
  annotate(world, { [ACL]: JSON.stringify({ denyList: { ipv4: ["192.0.2.1/32"] } }) });
  await waitFor(() => firewallsOfWeb(world)[0]?.rules.inbound_policy === "ACCEPT", {
    what: "denyList firewall",
  });
  world.kube.store.delete("services", "web", "default");
  await waitFor(() => world.service("web") === undefined, { what: "Service gone" });
  assert.deepEqual(world.linode.world.firewalls(), [], "deleted with the Service");
});

Deno.test("startServiceController() attaches the firewall-id firewall, moves between them, and never deletes one it did not make", async () => {
  await using world = await startServiceWorld();
  world.addNode("node-1", "192.168.0.11");
  await world.start();
  const a = await world.client.firewalls.create({ label: "user-fw-a", rules: OPEN });
  const b = await world.client.firewalls.create({ label: "user-fw-b", rules: OPEN });
  world.addService("web", { annotations: { [FIREWALL_ID]: String(a.id) } });
  await waitFor(() => firewallsOfWeb(world).map((f) => f.id).join() === String(a.id), { what: "attached a" });
  annotate(world, { [FIREWALL_ID]: String(b.id) });
  await waitFor(() => firewallsOfWeb(world).map((f) => f.id).join() === String(b.id), { what: "moved to b" });
  world.kube.store.delete("services", "web", "default");
  await waitFor(() => world.service("web") === undefined, { what: "Service gone" });
  assert.deepEqual(world.linode.world.firewalls().map((f) => f.id).sort(), [a.id, b.id].sort(), "both kept");
});
