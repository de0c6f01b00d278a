/**
 * Cloud Firewalls of a Service's NodeBalancer: `firewall-id` attaches the named firewall (detaching the one
 * it replaces, as the Go CCM does); `firewall-acl` keeps a CCM-managed firewall's rules in line with the
 * annotation and the Service's ports; with neither, the NodeBalancer has no firewall (as the Go CCM: removing
 * `firewall-id` detaches that firewall). A managed firewall carries the Service's ownership tag; only such a
 * firewall is ever deleted (when the ACL goes, or with the Service), and only when its devices, re-read just
 * before, show nothing else on it: one someone has since attached elsewhere is only detached. Attached
 * firewalls come from the NodeBalancer detail cache and every change is written back to it, so an unchanged
 * Service costs no call. `firewallChanges` says beforehand what `reconcileFirewall` would change, for `/plan`.
 */
import type { Firewall, UpdateFirewallRules } from "@linode/api-v4";
import type { NodeBalancerCache } from "../../../cache/nodebalancers.ts";
import type { FirewallState } from "../../../cache/types.ts";
import type { FirewallApi } from "../../../linode/client.ts";
import type { PlanChange } from "../../loop/shadow.ts";
import { type DesiredFirewall, sameFirewallRules } from "./rules.ts";

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

/** The firewall's devices, read now: the one that is `nbId`, and how many others there are. */
async function devicesOf(deps: FirewallDeps, firewallId: number, nbId: number) {
  const devices = await deps.firewalls.listDevices(firewallId);
  const isNb = (d: (typeof devices)[number]) => d.entity.type === "nodebalancer" && d.entity.id === nbId;
  return { device: devices.find(isNb), others: devices.filter((d) => !isNb(d)).length };
}

/** Detaches `nbId` from a firewall (the device id needs one listing). */
async function detach(deps: FirewallDeps, firewallId: number, nbId: number): Promise<void> {
  const { device } = await devicesOf(deps, firewallId, nbId);
  if (device) await deps.firewalls.deleteDevice(firewallId, device.id);
}

/**
 * Takes `nbId` off a firewall. One of ours that, read just now, protects nothing else is deleted (which
 * detaches it too); any other is only detached, so a user's firewall, or one of ours someone has since
 * attached elsewhere, survives.
 */
async function release(deps: FirewallDeps, fw: FirewallState, nbId: number, ownershipTag: string) {
  const { device, others } = await devicesOf(deps, fw.id, nbId);
  if (fw.tags.includes(ownershipTag) && others === 0) {
    await deps.firewalls.delete(fw.id);
    return `deleted firewall ${fw.id}`;
  }
  if (device) await deps.firewalls.deleteDevice(fw.id, device.id);
  return `detached firewall ${fw.id}`;
}

/** Deletes a detached firewall of ours when, read just now, nothing else uses it. */
async function deleteIfUnused(deps: FirewallDeps, fw: FirewallState, ownershipTag: string): Promise<void> {
  if (!fw.tags.includes(ownershipTag)) return;
  if ((await deps.firewalls.listDevices(fw.id)).length === 0) await deps.firewalls.delete(fw.id);
}

/**
 * Moves the NodeBalancer onto `firewallId`. The API takes one enabled firewall per NodeBalancer, so the old
 * one is detached first; should the attach fail, the old one goes back on, so the NodeBalancer is not left
 * open. A replaced firewall of ours is deleted only once the new one is on.
 */
async function attachById(
  deps: FirewallDeps,
  nbId: number,
  attached: readonly FirewallState[],
  firewallId: number,
  ownershipTag: string,
): Promise<string[]> {
  if (attached.length === 1 && attached[0]?.id === firewallId) return [];
  const replaced = attached.filter((f) => f.id !== firewallId);
  for (const fw of replaced) await detach(deps, fw.id, nbId);
  if (!attached.some((f) => f.id === firewallId)) {
    try {
      await deps.firewalls.createDevice(firewallId, { id: nbId, type: "nodebalancer" });
    } catch (e) {
      for (const fw of replaced) {
        await deps.firewalls.createDevice(fw.id, { id: nbId, type: "nodebalancer" }).catch(() => {});
      }
      throw e;
    }
  }
  for (const fw of replaced) await deleteIfUnused(deps, fw, ownershipTag);
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
    return await releaseAll(deps, nbId, attached, ownershipTag);
  } catch (e) {
    deps.cache.details.forget(nbId);
    throw e;
  }
}

/** No firewall wanted: every attached one is released (ours deleted when unused, others detached). */
async function releaseAll(
  deps: FirewallDeps,
  nbId: number,
  attached: readonly FirewallState[],
  ownershipTag: string,
): Promise<string[]> {
  const done: string[] = [];
  for (const fw of attached) done.push(await release(deps, fw, nbId, ownershipTag));
  if (done.length) deps.cache.details.setFirewalls(nbId, []);
  return done;
}

/** Releases every firewall of ours on the NodeBalancer (before it is deleted or handed over). */
export async function releaseManaged(
  deps: FirewallDeps,
  nbId: number,
  ownershipTag: string,
): Promise<string[]> {
  const attached = await deps.cache.details.firewalls(nbId);
  const managed = attached.filter((f) => f.tags.includes(ownershipTag));
  const done: string[] = [];
  for (const fw of managed) done.push(await release(deps, fw, nbId, ownershipTag));
  if (managed.length) deps.cache.details.setFirewalls(nbId, attached.filter((f) => !managed.includes(f)));
  return done;
}

// ---------------------------------------------------------------------------------------------------------
// What reconciling would change, for `/plan`.

function rulesSummary(rules: UpdateFirewallRules | FirewallState["rules"]): string {
  const r = rules as { inbound?: unknown[]; outbound?: unknown[]; inbound_policy?: string };
  return `inbound ${r.inbound_policy ?? "?"}: ${r.inbound?.length ?? 0} rules, outbound: ${
    r.outbound?.length ?? 0
  } rules`;
}

/**
 * What `reconcileFirewall` would change on NodeBalancer `nbId` given its attached firewalls: the same
 * decisions, as field changes (empty when it would make no call).
 */
export function firewallChanges(
  attached: readonly FirewallState[],
  firewall: DesiredFirewall,
  ownershipTag: string,
): PlanChange[] {
  const ids = attached.map((f) => `firewall ${f.id}`);
  if (firewall.kind === "id") {
    const only = attached.length === 1 && attached[0]?.id === firewall.firewallId;
    return only ? [] : [{ field: "firewalls", old: ids, new: [`firewall ${firewall.firewallId}`] }];
  }
  // No firewall annotation: every attached firewall comes off, as the Go CCM does (see firewall/reconcile.ts).
  if (firewall.kind === "none") return ids.length === 0 ? [] : [{ field: "firewalls", old: ids, new: [] }];
  const [fw] = attached;
  if (!fw || attached.length > 1) {
    return [{ field: "firewalls", old: ids, new: [`new firewall ${firewall.label}`] }];
  }
  const changes: PlanChange[] = [];
  const field = `firewalls[${fw.id}]`;
  if (!sameFirewallRules(fw.rules, firewall.rules)) {
    changes.push({ field: `${field}.rules`, old: rulesSummary(fw.rules), new: rulesSummary(firewall.rules) });
  }
  if (!fw.tags.includes(ownershipTag)) {
    changes.push({ field: `${field}.tags`, old: [...fw.tags], new: [...fw.tags, ownershipTag] });
  }
  return changes;
}
