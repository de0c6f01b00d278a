/** Cloud Firewalls: rules (versioned) and attached devices (Linodes, NodeBalancers). */
import type {
  Firewall,
  FirewallDevice,
  FirewallDeviceEntityType,
  FirewallRules,
  FirewallRuleType,
} from "@linode/api-v4";
import type { Clock } from "../../common/clock.ts";
import {
  apiTime,
  type Body,
  checkLabel,
  fieldError,
  isRecord,
  notFound,
  optEnum,
  optString,
  optStrings,
} from "./http.ts";
import type { Ids } from "./ids.ts";

/** Looks up the label of a device entity; undefined when it does not exist. */
export type EntityLookup = (type: FirewallDeviceEntityType, id: number) => string | undefined;

interface FirewallRecord {
  fw: Firewall;
  devices: Map<number, FirewallDevice>;
}

const POLICIES = ["ACCEPT", "DROP"] as const;
const PROTOCOLS = ["TCP", "UDP", "ICMP", "IPENCAP", "ALL"] as const;
const DEVICE_TYPES = ["linode", "nodebalancer"] as const;

function parseRuleList(value: unknown, field: string): FirewallRuleType[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw fieldError(field, `${field} must be an array`);
  return value.map((rule, i) => {
    const prefix = `${field}[${i}].`;
    if (!isRecord(rule)) throw fieldError(`${field}[${i}]`, "Must be an object");
    const addresses = isRecord(rule.addresses) ? rule.addresses : {};
    return {
      action: optEnum(rule, "action", POLICIES, prefix) ?? "ACCEPT",
      protocol: optEnum(rule, "protocol", PROTOCOLS, prefix) ?? "TCP",
      ports: optString(rule, "ports", prefix) ?? "",
      label: optString(rule, "label", prefix) ?? null,
      description: optString(rule, "description", prefix) ?? null,
      addresses: {
        ipv4: optStrings(addresses, "ipv4", `${prefix}addresses.`) ?? [],
        ipv6: optStrings(addresses, "ipv6", `${prefix}addresses.`) ?? [],
      },
    };
  });
}

function parseRules(value: unknown, version: number): FirewallRules {
  if (!isRecord(value)) throw fieldError("rules", "rules are required");
  const rules: FirewallRules = {
    inbound_policy: optEnum(value, "inbound_policy", POLICIES, "rules.") ?? "ACCEPT",
    outbound_policy: optEnum(value, "outbound_policy", POLICIES, "rules.") ?? "ACCEPT",
    inbound: parseRuleList(value.inbound, "rules.inbound"),
    outbound: parseRuleList(value.outbound, "rules.outbound"),
    version,
    fingerprint: "",
  };
  rules.fingerprint = fingerprintOf(JSON.stringify(rules));
  return rules;
}

function fingerprintOf(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16).padStart(8, "0");
}

/** Owns firewalls. */
export class FirewallStore {
  #byId = new Map<number, FirewallRecord>();
  readonly #ids: Ids;
  readonly #clock: Clock;
  readonly #lookup: EntityLookup;

  constructor(ids: Ids, clock: Clock, lookup: EntityLookup) {
    this.#ids = ids;
    this.#clock = clock;
    this.#lookup = lookup;
  }

  /** `POST /networking/firewalls`, devices optional. */
  create(body: Body): Firewall {
    const label = checkLabel(optString(body, "label") ?? "", "label");
    if (this.list().some((f) => f.label === label)) throw fieldError("label", "Label must be unique");
    const rules = parseRules(body.rules, 1);
    const devices = isRecord(body.devices) ? body.devices : {};
    const wanted = [
      ...this.#deviceIds(devices.linodes, "devices.linodes").map((id) => ({ id, type: "linode" as const })),
      ...this.#deviceIds(devices.nodebalancers, "devices.nodebalancers").map((id) => ({
        id,
        type: "nodebalancer" as const,
      })),
    ];
    wanted.forEach((d) => this.#checkEntity(d.type, d.id, "devices"));
    const now = apiTime(this.#clock.now());
    const fw: Firewall = {
      id: this.#ids.next("firewall"),
      label,
      status: "enabled",
      tags: optStrings(body, "tags") ?? [],
      rules,
      entities: [],
      created: now,
      updated: now,
    };
    this.#byId.set(fw.id, { fw, devices: new Map() });
    for (const d of wanted) this.addDevice(fw.id, d);
    return fw;
  }

  #deviceIds(value: unknown, field: string): number[] {
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value) || !value.every((v) => Number.isInteger(v))) {
      throw fieldError(field, "Must be an array of ids");
    }
    return value;
  }

  #checkEntity(type: FirewallDeviceEntityType, id: number, field: string): string {
    const label = this.#lookup(type, id);
    if (label === undefined) throw fieldError(field, `${type} ${id} not found`);
    if (type === "nodebalancer" && this.firewallsOf(type, id).length > 0) {
      throw fieldError(field, `NodeBalancer ${id} already has a firewall`);
    }
    return label;
  }

  #require(id: number): FirewallRecord {
    const rec = this.#byId.get(id);
    if (!rec) throw notFound();
    return rec;
  }

  /** True when the firewall exists. */
  has(id: number): boolean {
    return this.#byId.has(id);
  }

  /** One firewall, or a 404. */
  get(id: number): Firewall {
    return this.#require(id).fw;
  }

  /** Every firewall, by id. */
  list(): Firewall[] {
    return [...this.#byId.values()].map((r) => r.fw);
  }

  /** `PUT /networking/firewalls/{id}`: label, status, tags. */
  update(id: number, body: Body): Firewall {
    const { fw } = this.#require(id);
    const label = optString(body, "label");
    if (label !== undefined) checkLabel(label, "label");
    const status = optEnum(body, "status", ["enabled", "disabled"]);
    const tags = optStrings(body, "tags");
    if (label !== undefined) fw.label = label;
    if (status !== undefined) fw.status = status;
    if (tags !== undefined) fw.tags = tags;
    fw.updated = apiTime(this.#clock.now());
    return fw;
  }

  /** Deletes a firewall; false when it did not exist. */
  delete(id: number): boolean {
    return this.#byId.delete(id);
  }

  /** `PUT .../rules`: replaces the rules and bumps the version. */
  setRules(id: number, body: Body): FirewallRules {
    const { fw } = this.#require(id);
    fw.rules = parseRules(body, fw.rules.version + 1);
    fw.updated = apiTime(this.#clock.now());
    return fw.rules;
  }

  /** Devices of a firewall. */
  devices(id: number): FirewallDevice[] {
    return [...this.#require(id).devices.values()];
  }

  /** One device, or a 404. */
  device(id: number, deviceId: number): FirewallDevice {
    const device = this.#require(id).devices.get(deviceId);
    if (!device) throw notFound();
    return device;
  }

  /** `POST .../devices` with `{id, type}`. */
  addDevice(id: number, body: Body): FirewallDevice {
    const rec = this.#require(id);
    const type = optEnum(body, "type", DEVICE_TYPES);
    const entityId = body.id;
    if (type === undefined) throw fieldError("type", "type is required");
    if (typeof entityId !== "number" || !Number.isInteger(entityId)) throw fieldError("id", "id is required");
    if ([...rec.devices.values()].some((d) => d.entity.type === type && d.entity.id === entityId)) {
      throw fieldError("id", `${type} ${entityId} is already assigned to this firewall`);
    }
    const label = this.#checkEntity(type, entityId, "id");
    const url = type === "linode" ? `/v4/linode/instances/${entityId}` : `/v4/nodebalancers/${entityId}`;
    const now = apiTime(this.#clock.now());
    const device: FirewallDevice = {
      id: this.#ids.next("firewallDevice"),
      created: now,
      updated: now,
      entity: { id: entityId, type, label, url, parent_entity: null },
    };
    rec.devices.set(device.id, device);
    rec.fw.entities = [...rec.devices.values()].map((d) => d.entity);
    return device;
  }

  /** `DELETE .../devices/{did}`. */
  removeDevice(id: number, deviceId: number): void {
    const rec = this.#require(id);
    if (!rec.devices.delete(deviceId)) throw notFound();
    rec.fw.entities = [...rec.devices.values()].map((d) => d.entity);
  }

  /** Firewalls an entity is attached to. */
  firewallsOf(type: FirewallDeviceEntityType, entityId: number): Firewall[] {
    return this.list().filter((fw) => fw.entities.some((e) => e.type === type && e.id === entityId));
  }

  /** Detaches a deleted entity from every firewall. */
  forget(type: FirewallDeviceEntityType, entityId: number): void {
    for (const rec of this.#byId.values()) {
      for (const [deviceId, d] of rec.devices) {
        if (d.entity.type === type && d.entity.id === entityId) this.removeDevice(rec.fw.id, deviceId);
      }
    }
  }

  /** Forgets every firewall. */
  reset(): void {
    this.#byId.clear();
  }
}
