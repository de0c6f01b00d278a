/**
 * The Lease on the wire (coordination.k8s.io/v1) and optimistic reads and writes of it, with the
 * semantics of client-go's LeaseLock: every update carries the resourceVersion of the last read.
 */
import { type CoordinationV1Api, type V1Lease, V1MicroTime } from "@kubernetes/client-node";
import { isConflict, isNotFound, KubeApiError, signalOptions, toKubeApiError } from "../kube/requests.ts";

/** The leader-election fields of a Lease, parsed from the wire. */
export interface LeaseRecord {
  /** `<hostname>_<uuid>` of the holder; "" when the Lease is free or released. */
  readonly holderIdentity: string;
  readonly leaseDurationSec: number;
  /** Epoch milliseconds (the wire carries microseconds). */
  readonly acquireTimeMs: number | undefined;
  /** Epoch milliseconds (the wire carries microseconds). */
  readonly renewTimeMs: number | undefined;
  readonly leaseTransitions: number;
}

/** Namespace and name of one Lease. */
export interface LeaseKey {
  readonly namespace: string;
  readonly name: string;
}

/** A Lease as read or written: its record, the whole object (for the next update) and a fingerprint. */
export interface LeaseSnapshot {
  readonly record: LeaseRecord;
  readonly lease: V1Lease;
  /** The spec as received, serialised: changes whenever the holder writes (client-go's observedRawRecord). */
  readonly fingerprint: string;
}

/** Per-call options of a `LeaseApi`. */
export interface LeaseCallOptions {
  /** Aborts the request (per-request timeout). */
  signal?: AbortSignal;
}

/** Thrown when the apiserver refuses a write because the Lease changed (409 Conflict) or already exists. */
export class LeaseConflictError extends Error {
  override name = "LeaseConflictError";
}

/** Thrown when a Lease request fails for any other reason (status 0 when no HTTP answer came back). */
export class LeaseApiError extends Error {
  override name = "LeaseApiError";
  constructor(message: string, readonly status: number, options?: ErrorOptions) {
    super(message, options);
  }
}

/** Lease reads and writes; `KubeLeaseApi` implements it with client-node. */
export interface LeaseApi {
  /** The Lease, or undefined when it does not exist. */
  get(key: LeaseKey, options?: LeaseCallOptions): Promise<LeaseSnapshot | undefined>;
  /** Creates the Lease; `LeaseConflictError` when it already exists. */
  create(key: LeaseKey, record: LeaseRecord, options?: LeaseCallOptions): Promise<LeaseSnapshot>;
  /** Replaces `base` (same resourceVersion) with `record`; `LeaseConflictError` on 409. */
  replace(base: LeaseSnapshot, record: LeaseRecord, options?: LeaseCallOptions): Promise<LeaseSnapshot>;
}

/** A holder identity as client-go builds it for leader election: `<hostname>_<uuid>`. */
export function newIdentity(hostname: string): string {
  return `${hostname}_${crypto.randomUUID()}`;
}

/** Parses a MicroTime as it comes back (a string; a Date when the caller built it) into epoch ms. */
export function parseMicroTime(value: unknown): number | undefined {
  const ms = value instanceof Date
    ? value.getTime()
    : typeof value === "string"
    ? Date.parse(value)
    : Number.NaN;
  return Number.isFinite(ms) ? ms : undefined;
}

/** Reads the leader-election record out of a Lease object. */
export function toLeaseRecord(lease: V1Lease): LeaseRecord {
  const spec = lease.spec ?? {};
  return {
    holderIdentity: spec.holderIdentity ?? "",
    leaseDurationSec: spec.leaseDurationSeconds ?? 0,
    acquireTimeMs: parseMicroTime(spec.acquireTime),
    renewTimeMs: parseMicroTime(spec.renewTime),
    leaseTransitions: spec.leaseTransitions ?? 0,
  };
}

function microTime(ms: number | undefined): V1MicroTime | undefined {
  return ms === undefined ? undefined : new V1MicroTime(ms);
}

/** Builds the Lease spec for `record`; times serialise with 6 fractional digits as the apiserver requires. */
export function toLeaseSpec(record: LeaseRecord): NonNullable<V1Lease["spec"]> {
  return {
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSec,
    acquireTime: microTime(record.acquireTimeMs),
    renewTime: microTime(record.renewTimeMs),
    leaseTransitions: record.leaseTransitions,
  };
}

/** Wraps a Lease object read from (or written to) the apiserver. */
export function toSnapshot(lease: V1Lease): LeaseSnapshot {
  return { record: toLeaseRecord(lease), lease, fingerprint: JSON.stringify(lease.spec ?? {}) };
}

/** `LeaseApi` over client-node's `CoordinationV1Api` (`KubeClients.coordination` from `kube/clients.ts`). */
export class KubeLeaseApi implements LeaseApi {
  readonly #api: CoordinationV1Api;

  constructor(api: CoordinationV1Api) {
    this.#api = api;
  }

  async get(key: LeaseKey, options?: LeaseCallOptions): Promise<LeaseSnapshot | undefined> {
    try {
      return toSnapshot(await this.#api.readNamespacedLease(key, signalOptions(options?.signal)));
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw toLeaseError(e, "read", key);
    }
  }

  async create(key: LeaseKey, record: LeaseRecord, options?: LeaseCallOptions): Promise<LeaseSnapshot> {
    const body: V1Lease = {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: key.name, namespace: key.namespace },
      spec: toLeaseSpec(record),
    };
    try {
      const created = await this.#api.createNamespacedLease(
        { namespace: key.namespace, body },
        signalOptions(options?.signal),
      );
      return toSnapshot(created);
    } catch (e) {
      throw toLeaseError(e, "create", key);
    }
  }

  async replace(
    base: LeaseSnapshot,
    record: LeaseRecord,
    options?: LeaseCallOptions,
  ): Promise<LeaseSnapshot> {
    const key = { namespace: base.lease.metadata?.namespace ?? "", name: base.lease.metadata?.name ?? "" };
    // Keep the metadata of the last read (resourceVersion makes the update optimistic), replace the spec.
    const body: V1Lease = { ...base.lease, spec: toLeaseSpec(record) };
    try {
      const replaced = await this.#api.replaceNamespacedLease(
        { ...key, body },
        signalOptions(options?.signal),
      );
      return toSnapshot(replaced);
    } catch (e) {
      throw toLeaseError(e, "update", key);
    }
  }
}

/** Works with a plain client-node client (`ApiException`) and with `kube/clients.ts` (`KubeApiError`). */
function toLeaseError(e: unknown, action: string, key: LeaseKey): Error {
  const what = `Lease ${key.namespace}/${key.name}`;
  // ApiException text embeds whole response bodies: keep only the KubeApiError made from it.
  const cause = toKubeApiError(e);
  const status = cause instanceof KubeApiError ? cause.status : 0;
  if (isConflict(cause)) return new LeaseConflictError(`Cannot ${action} ${what}: HTTP 409`, { cause });
  const detail = status ? `HTTP ${status}` : "no response";
  return new LeaseApiError(`Cannot ${action} ${what}: ${detail}`, status, { cause });
}
