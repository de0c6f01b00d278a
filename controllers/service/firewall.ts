/**
 * Cloud Firewalls of a Service's NodeBalancer: `firewall-id` attaches the named firewall (detaching the one
 * it replaces, as the Go CCM does); `firewall-acl` keeps a CCM-managed firewall's rules in line with the
 * annotation and the Service's ports. A managed firewall carries the Service's ownership tag; only such a
 * firewall is ever deleted (when the ACL goes, or with the Service). Attached firewalls come from the
 * NodeBalancer detail cache and every change is written back to it, so an unchanged Service costs no call.
 */
import type { Firewall, UpdateFirewallRules } from "@linode/api-v4";
import type { NodeBalancerCache } from "../../cache/nodebalancers.ts";
import type { FirewallState } from "../../cache/types.ts";
import type { FirewallApi } from "../../linode/firewalls.ts";
import type { DesiredFirewall } from "./desired.ts";
import { sameFirewallRules } from "./firewall_compare.ts";

/** The firewall calls the service controller makes. `LinodeClient.firewalls` implements it. */
export type FirewallWrites = Pick<
  FirewallApi,
  "get" | "create" | "update" | "updateRules" | "delete" | "createDevice" | "deleteDevice" | "listDevices"
>;

/** What firewall handling reads and writes. */
export interface FirewallDeps {
  firewalls: FirewallWrites;
  cache: Pick<NodeBalancerCache, "details">;
}

/**
 * Before a NodeBalancer is created: the firewall to create it with, made now for an ACL so the NodeBalancer
 * is never reachable without it.
 */
export async function firewallForCreate(
  deps: FirewallDeps,
  firewall: DesiredFirewall,
): Promise<{ firewallId?: number; created?: Firewall }> {
  if (firewall.kind === "id") return { firewallId: firewall.firewallId };
  if (firewall.kind === "none") return {};
  const body = { label: firewall.label, tags: [...firewall.tags], rules: firewall.rules };
  const created = await deps.firewalls.create(body);
  return { firewallId: created.id, created };
}

/** Detaches `nbId` from a firewall, and deletes the firewall when it is ours and protects nothing else. */
async function release(deps: FirewallDeps, fw: FirewallState, nbId: number, ownershipTag: string) {
  const others = fw.entities.filter((e) => !(e.type === "nodebalancer" && e.id === nbId));
  if (fw.tags.includes(ownershipTag) && others.length === 0) {
    await deps.firewalls.delete(fw.id);
    return;
  }
  const devices = await deps.firewalls.listDevices(fw.id);
  const device = devices.find((d) => d.entity.type === "nodebalancer" && d.entity.id === nbId);
  if (device) await deps.firewalls.deleteDevice(fw.id, device.id);
}

async function attachById(
  deps: FirewallDeps,
  nbId: number,
  attached: readonly FirewallState[],
  firewallId: number,
  ownershipTag: string,
): Promise<string[]> {
  if (attached.length === 1 && attached[0]?.id === firewallId) return [];
  if (!attached.some((f) => f.id === firewallId)) {
    await deps.firewalls.createDevice(firewallId, { id: nbId, type: "nodebalancer" });
  }
  for (const fw of attached) if (fw.id !== firewallId) await release(deps, fw, nbId, ownershipTag);
  deps.cache.details.setFirewalls(nbId, [await deps.firewalls.get(firewallId)]);
  return [`attached firewall ${firewallId}`];
}

async function syncAcl(
  deps: FirewallDeps,
  nbId: number,
  attached: readonly FirewallState[],
  acl: { label: string; tags: readonly string[]; rules: UpdateFirewallRules },
  ownershipTag: string,
): Promise<string[]> {
  if (attached.length > 1) {
    throw new Error(
      `Cannot apply firewall-acl: NodeBalancer ${nbId} has ${attached.length} firewalls attached`,
    );
  }
  const [fw] = attached;
  if (!fw) {
    const body = {
      label: acl.label,
      tags: [...acl.tags],
      rules: acl.rules,
      devices: { nodebalancers: [nbId] },
    };
    const created = await deps.firewalls.create(body);
    deps.cache.details.setFirewalls(nbId, [created]);
    return [`created firewall ${created.id}`];
  }
  const done: string[] = [];
  let next: FirewallState = fw;
  if (!sameFirewallRules(fw.rules, acl.rules)) {
    next = { ...next, rules: await deps.firewalls.updateRules(fw.id, acl.rules) };
    done.push(`updated the rules of firewall ${fw.id}`);
  }
  // As the Go CCM, an ACL takes over the one firewall attached; the tag makes it ours to delete later.
  if (!fw.tags.includes(ownershipTag)) {
    next = { ...next, tags: (await deps.firewalls.update(fw.id, { tags: [...fw.tags, ownershipTag] })).tags };
    done.push(`took over firewall ${fw.id}`);
  }
  if (done.length) deps.cache.details.setFirewalls(nbId, [next]);
  return done;
}

/** Brings the NodeBalancer's firewalls in line with the plan; returns what changed (empty: no call made). */
export async function reconcileFirewall(
  deps: FirewallDeps,
  nbId: number,
  firewall: DesiredFirewall,
  ownershipTag: string,
): Promise<string[]> {
  const attached = await deps.cache.details.firewalls(nbId);
  try {
    if (firewall.kind === "id") {
      return await attachById(deps, nbId, attached, firewall.firewallId, ownershipTag);
    }
    if (firewall.kind === "acl") return await syncAcl(deps, nbId, attached, firewall, ownershipTag);
    return await releaseManaged(deps, nbId, ownershipTag);
  } catch (e) {
    deps.cache.details.forget(nbId);
    throw e;
  }
}

/** Detaches (and deletes, when nothing else uses it) every firewall of ours on the NodeBalancer. */
export async function releaseManaged(
  deps: FirewallDeps,
  nbId: number,
  ownershipTag: string,
): Promise<string[]> {
  const attached = await deps.cache.details.firewalls(nbId);
  const managed = attached.filter((f) => f.tags.includes(ownershipTag));
  for (const fw of managed) await release(deps, fw, nbId, ownershipTag);
  if (managed.length) deps.cache.details.setFirewalls(nbId, attached.filter((f) => !managed.includes(f)));
  return managed.map((f) => `removed firewall ${f.id}`);
}
