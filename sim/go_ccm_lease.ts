/**
 * The Go CCM's hold on the leader Lease, as its running replica keeps it: client-go renews
 * `kube-system/cloud-controller-manager` every retry period (2 s) with a 15 s lease duration. The holder writes
 * straight into the Kubernetes emulator's store (it stands for another process, not for a client under test)
 * and runs on an injected clock, so a test on a `FakeClock` decides exactly when the Go CCM stops renewing.
 */
import type { Clock } from "../common/clock.ts";
import type { KubeSim } from "./kube/server.ts";

/** The Lease both CCMs elect on (`--leader-elect-resource-namespace` / `-name` defaults). */
export const CCM_LEASE = { namespace: "kube-system", name: "cloud-controller-manager" } as const;

/** client-go's defaults, which the Go CCM's manifests keep. */
const LEASE_DURATION_SEC = 15;
const RETRY_PERIOD_MS = 2_000;

/** A Lease MicroTime: RFC 3339 with 6 fractional digits, as a real apiserver stores it. */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

/** The Go CCM replica holding the Lease until `stop()`. */
export interface GoCcmLeaseHolder {
  /** `<pod name>_<uuid>`, as client-go forms it. */
  readonly identity: string;
  /** True until `stop()`: the holder renews every retry period. */
  readonly renewing: boolean;
  /** Renewals written so far (the first write included). */
  readonly renewals: number;
  /** Stops renewing and leaves the Lease as it is, like a Go CCM scaled to zero (it does not release). */
  stop(): void;
}

/** Writes the Lease as held by the Go CCM and keeps renewing it on `clock` until `stop()` or `signal`. */
export function holdGoCcmLease(kube: KubeSim, clock: Clock, signal: AbortSignal): GoCcmLeaseHolder {
  const identity = `linode-cloud-controller-manager-7c9d5b8f4-x2kqp_${crypto.randomUUID()}`;
  const stopper = new AbortController();
  const both = AbortSignal.any([signal, stopper.signal]);
  let renewals = 0;
  const acquired = clock.now() - 3_600_000;
  const write = () => {
    const spec = {
      holderIdentity: identity,
      leaseDurationSeconds: LEASE_DURATION_SEC,
      acquireTime: microTime(acquired),
      renewTime: microTime(clock.now()),
      leaseTransitions: 2,
    };
    const existing = kube.store.get("leases", CCM_LEASE.name, CCM_LEASE.namespace);
    if (existing) {
      kube.store.patch("leases", CCM_LEASE.name, { spec }, { type: "merge", namespace: CCM_LEASE.namespace });
    } else {
      kube.store.create("leases", {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: { name: CCM_LEASE.name, namespace: CCM_LEASE.namespace },
        spec,
      });
    }
    renewals++;
  };
  write();
  const loop = async () => {
    while (!both.aborted) {
      await clock.sleep(RETRY_PERIOD_MS, both).catch(() => {});
      if (both.aborted) return;
      // Another identity in the Lease means it was taken over while we slept: client-go stops leading.
      const held = kube.store.get("leases", CCM_LEASE.name, CCM_LEASE.namespace) as
        | { spec?: { holderIdentity?: string } }
        | undefined;
      if (held?.spec?.holderIdentity !== identity) return stopper.abort();
      write();
    }
  };
  // The loop only sleeps on the clock and writes to the in-process store; it ends with the signal.
  loop().catch(() => stopper.abort());
  return {
    identity,
    get renewing() {
      return !both.aborted;
    },
    get renewals() {
      return renewals;
    },
    stop: () => stopper.abort(),
  };
}
