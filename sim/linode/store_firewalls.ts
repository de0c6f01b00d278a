/** Cloud Firewalls: rules (versioned) and attached devices (Linodes, NodeBalancers). */
import type { Firewall, FirewallDevice, FirewallDeviceEntityType, FirewallRules } from "@linode/api-v4";
import type { Clock } from "../../common/clock.ts";
import { checkFirewallLabel, parseRules } from "./firewall_rules.ts";
import {
  apiTime,
  type Body,
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

const DEVICE_TYPES = ["linode", "nodebalancer"] as const;

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
    const label = checkFirewallLabel(optString(body, "label") ?? "");
    this.#checkUniqueLabel(label);
    const rules = parseRules(body.rules, 1, "rules.");
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

  #checkUniqueLabel(label: string, selfId?: number): void {
    if (this.list().some((f) => f.label === label && f.id !== selfId)) {
      throw fieldError("label", "Label must be unique");
    }
  }

  /**
   * The entity's label, or a 400 when it is missing or already has a firewall. The reference (v4.208) says
   * "A service can have one assigned firewall at a time" (`post-firewall-device`) and "A NodeBalancer can have
   * only one Firewall assigned to it" (`devices.nodebalancers`), while other pages still say "one enabled
   * Firewall"; the sim follows the stricter, newer wording, so a disabled firewall counts too.
   */
  #checkEntity(type: FirewallDeviceEntityType, id: number, field: string): string {
    const label = this.#lookup(type, id);
    if (label === undefined) throw fieldError(field, `${type} ${id} not found`);
    const held = this.firewallsOf(type, id)[0];
    if (held) throw fieldError(field, `${type} ${id} already has firewall ${held.id} assigned`);
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
    if (label !== undefined) this.#checkUniqueLabel(checkFirewallLabel(label), id);
    const status = optEnum(body, "status", ["enabled", "disabled"]);
    if (status === "enabled" && fw.status !== "enabled") {
      for (const e of fw.entities) {
        if (this.firewallsOf(e.type, e.id).some((o) => o.id !== id && o.status === "enabled")) {
          throw fieldError("status", `${e.type} ${e.id} already has an enabled firewall`);
        }
      }
    }
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
    fw.rules = parseRules(body, fw.rules.version + 1, "");
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
