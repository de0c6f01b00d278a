/** Cloud Firewall calls: firewalls, their rules and the devices they protect. */
import {
  deleteFirewall,
  deleteFirewallDevice,
  type Filter,
  getFirewall,
  getFirewallDevices,
  getFirewalls,
  updateFirewall,
  updateFirewallRules,
} from "@linode/api-v4";
import type {
  CreateFirewallPayload,
  Firewall,
  FirewallDevice,
  FirewallDevicePayload,
  FirewallRules,
  UpdateFirewallPayload,
  UpdateFirewallRules,
} from "@linode/api-v4";
import { type ApiCaller, type CallOptions, callSpec as spec } from "./caller.ts";
import { rawRequest } from "./transport.ts";

/** `/networking/firewalls` and below. */
export class FirewallApi {
  readonly #caller: ApiCaller;

  constructor(caller: ApiCaller) {
    this.#caller = caller;
  }

  /** All Cloud Firewalls matching `filter`. */
  list(filter?: Filter, options?: CallOptions): Promise<Firewall[]> {
    const s = spec("GET", "/networking/firewalls", "list firewalls", options);
    return this.#caller.list(s, (p) => getFirewalls(p, filter));
  }

  /** One firewall. */
  get(firewallId: number, options?: CallOptions): Promise<Firewall> {
    const s = spec("GET", "/networking/firewalls/{id}", `get firewall ${firewallId}`, options);
    return this.#caller.run(s, () => getFirewall(firewallId));
  }

  /** Creates a firewall (sent as is). Not retried after a timeout. */
  create(body: CreateFirewallPayload, options?: CallOptions): Promise<Firewall> {
    const s = spec("POST", "/networking/firewalls", "create firewall", options);
    return this.#caller.run(s, () => rawRequest<Firewall>("POST", "/networking/firewalls", { data: body }));
  }

  /** Updates a firewall's label, tags or status. */
  update(firewallId: number, body: UpdateFirewallPayload, options?: CallOptions): Promise<Firewall> {
    const s = spec("PUT", "/networking/firewalls/{id}", `update firewall ${firewallId}`, options);
    return this.#caller.run(s, () => updateFirewall(firewallId, body));
  }

  /** Deletes a firewall; a retry that finds it gone counts as done. */
  delete(firewallId: number, options?: CallOptions): Promise<void> {
    const s = spec("DELETE", "/networking/firewalls/{id}", `delete firewall ${firewallId}`, options);
    return this.#caller.remove(s, () => deleteFirewall(firewallId));
  }

  /** A firewall's rules (a single object, though api-v4 types it as a page). */
  getRules(firewallId: number, options?: CallOptions): Promise<FirewallRules> {
    const path = `/networking/firewalls/${firewallId}/rules`;
    const s = spec("GET", "/networking/firewalls/{id}/rules", `get rules of firewall ${firewallId}`, options);
    return this.#caller.run(s, () => rawRequest<FirewallRules>("GET", path));
  }

  /** Replaces a firewall's rules. */
  updateRules(
    firewallId: number,
    rules: UpdateFirewallRules,
    options?: CallOptions,
  ): Promise<FirewallRules> {
    const s = spec(
      "PUT",
      "/networking/firewalls/{id}/rules",
      `update rules of firewall ${firewallId}`,
      options,
    );
    return this.#caller.run(s, () => updateFirewallRules(firewallId, rules));
  }

  /** Devices (Linodes, NodeBalancers) a firewall protects. */
  listDevices(firewallId: number, options?: CallOptions): Promise<FirewallDevice[]> {
    const action = `list devices of firewall ${firewallId}`;
    const s = spec("GET", "/networking/firewalls/{id}/devices", action, options);
    return this.#caller.list(s, (p) => getFirewallDevices(firewallId, p));
  }

  /** Attaches a device to a firewall. */
  createDevice(
    firewallId: number,
    body: FirewallDevicePayload,
    options?: CallOptions,
  ): Promise<FirewallDevice> {
    const path = `/networking/firewalls/${firewallId}/devices`;
    const s = spec(
      "POST",
      "/networking/firewalls/{id}/devices",
      `attach device to firewall ${firewallId}`,
      options,
    );
    return this.#caller.run(s, () => rawRequest<FirewallDevice>("POST", path, { data: body }));
  }

  /** Detaches a device from a firewall. */
  deleteDevice(firewallId: number, deviceId: number, options?: CallOptions): Promise<void> {
    const action = `detach device ${deviceId} from firewall ${firewallId}`;
    const s = spec("DELETE", "/networking/firewalls/{id}/devices/{id}", action, options);
    return this.#caller.remove(s, () => deleteFirewallDevice(firewallId, deviceId));
  }
}
