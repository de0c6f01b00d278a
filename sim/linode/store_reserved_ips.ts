/**
 * Reserved IPv4 addresses (`/networking/reserved/ips`). Wire shape and error reasons are the API's own answers
 * recorded in linodego's fixtures ("region is not valid", "Must provide a single valid reserved ipv4 address",
 * "Address must be currently unassigned.", the limit's "technical justification" reason, 404 "Not found").
 * Not documented, so chosen here: the account limit (`limit`, 16 by default: the recording hit it after 14 new
 * addresses on an account holding 2), that a reserved address only serves resources of its own region, and that
 * deleting an assigned address leaves it on its resource as an ordinary (no longer reserved) address.
 */
import { ApiError, type Body, fieldError, notFound, optStrings } from "./http.ts";
import { formatIpv4, parseIpv4 } from "./ip.ts";
import { requireRegion } from "./regions.ts";

/** The resource a reserved address is on. */
export interface AssignedEntity {
  id: number;
  label: string;
  type: "nodebalancer" | "linode";
  url: string;
}

/** A reserved address as the API returns it. */
export interface ReservedIp {
  address: string;
  gateway: string;
  subnet_mask: string;
  prefix: number;
  type: "ipv4";
  public: true;
  rdns: string | null;
  linode_id: number | null;
  interface_id: null;
  region: string;
  vpc_nat_1_1: null;
  reserved: true;
  assigned_entity: AssignedEntity | null;
  tags: string[];
}

/** Public addresses handed out as reserved IPs; apart from NodeBalancer frontends (172.232.0.0/16). */
const RESERVED_BASE = 0xacec0000; // 172.236.0.0
const DEFAULT_LIMIT = 16;
const LIMIT_REASON = "Additional Reserved IPv4 addresses require technical justification.  " +
  "Please contact support describing your requirement.";

/** Owns the account's reserved addresses. */
export class ReservedIpStore {
  #byAddress = new Map<string, ReservedIp>();
  #seq = 0;
  /** How many addresses the account may hold. */
  limit = DEFAULT_LIMIT;

  /** `POST /networking/reserved/ips`: `{region, tags?}`. */
  reserve(body: Body): ReservedIp {
    const region = requireRegion(body.region).id;
    const tags = optStrings(body, "tags") ?? [];
    if (this.#byAddress.size >= this.limit) throw new ApiError(400, [{ reason: LIMIT_REASON }]);
    const n = RESERVED_BASE + 256 + this.#seq++;
    const address = formatIpv4(n);
    const gateway = formatIpv4(((n >>> 8) << 8) + 1);
    const ip: ReservedIp = {
      address,
      gateway,
      subnet_mask: "255.255.255.0",
      prefix: 24,
      type: "ipv4",
      public: true,
      rdns: null,
      linode_id: null,
      interface_id: null,
      region,
      vpc_nat_1_1: null,
      reserved: true,
      assigned_entity: null,
      tags,
    };
    this.#byAddress.set(address, ip);
    return ip;
  }

  /** One reserved address, or the API's 404 (malformed addresses included). */
  get(address: string): ReservedIp {
    const ip = this.#byAddress.get(address);
    if (!ip) throw notFound();
    return ip;
  }

  /** Every reserved address, in reservation order. */
  list(): ReservedIp[] {
    return [...this.#byAddress.values()];
  }

  /** `PUT .../ips/{address}`: replaces the tags. */
  update(address: string, body: Body): ReservedIp {
    const ip = this.get(address);
    const tags = optStrings(body, "tags");
    if (tags !== undefined) ip.tags = tags;
    return ip;
  }

  /** `DELETE .../ips/{address}`: a 404 when not reserved. */
  delete(address: string): void {
    this.get(address);
    this.#byAddress.delete(address);
  }

  /**
   * Checks that `value` (a create body's `ipv4`) names an unassigned reserved address of `region`; the
   * address, or a 400 on `field`.
   */
  checkAssignable(value: unknown, region: string, field = "ipv4"): string {
    // NodeBalancer create's answers without a field, as the Go CCM's end-to-end tests recorded them against the
    // API (e2e/test/lb-created-with-invalid-ip, lb-created-with-unreserved-ip: `[400] Invalid IPv4 address`,
    // `[400] IPv4 address is not reserved`); a Linode create answers "Must provide a single valid reserved ipv4
    // address" (linodego's fixtures), which no caller here meets.
    if (typeof value !== "string" || parseIpv4(value) === undefined) {
      throw new ApiError(400, [{ reason: "Invalid IPv4 address" }]);
    }
    const ip = this.#byAddress.get(value);
    if (!ip) throw new ApiError(400, [{ reason: "IPv4 address is not reserved" }]);
    if (ip.assigned_entity) throw fieldError(field, "Address must be currently unassigned.");
    if (ip.region !== region) {
      throw fieldError(field, "Reserved IP must be in the same region as the resource");
    }
    return ip.address;
  }

  /** Marks a reserved address as on `entity`; a no-op for addresses that are not reserved. */
  assign(address: string, entity: AssignedEntity): void {
    const ip = this.#byAddress.get(address);
    if (!ip) return;
    ip.assigned_entity = entity;
    ip.linode_id = entity.type === "linode" ? entity.id : null;
  }

  /** Frees a reserved address when its resource goes away (it stays reserved). */
  unassign(address: string): void {
    const ip = this.#byAddress.get(address);
    if (!ip) return;
    ip.assigned_entity = null;
    ip.linode_id = null;
  }

  /** Keeps `assigned_entity.label` in step with a renamed resource. */
  relabel(address: string, label: string): void {
    const entity = this.#byAddress.get(address)?.assigned_entity;
    if (entity) entity.label = label;
  }

  /** True when `address` is reserved. */
  has(address: string): boolean {
    return this.#byAddress.has(address);
  }

  /** Forgets every reserved address and restores the default limit. */
  reset(): void {
    this.#byAddress.clear();
    this.#seq = 0;
    this.limit = DEFAULT_LIMIT;
  }
}
