/**
 * A list+watch of the one leader Lease, so a standby sees every change the moment it happens instead of at its
 * next poll (client-go polls every retry period plus up to 120 % jitter: 2 to 4.4 s by default): a release,
 * and each renewal, which tells it to the millisecond when an unrenewed Lease expires. Polling stays the
 * fallback: while the watch is down, the standby simply polls as before.
 */
import type { CoordinationV1Api, KubeConfig, V1Lease } from "@kubernetes/client-node";
import type { Clock } from "../common/clock.ts";
import type { Logger } from "../common/log.ts";
import { Informer, type ResourceSource } from "../kube/informer.ts";
import { signalOptions } from "../kube/requests.ts";
import type { Registry } from "../common/metrics.ts";
import { type LeaseKey, type LeaseSnapshot, toSnapshot } from "./lease.ts";

/**
 * What a candidate learns from the watch: every change of the Lease, the moment it happens. A release (holder
 * cleared) means "take it now"; a renewal restarts the candidate's expiry clock, so it knows to the
 * millisecond when an unrenewed Lease expires; a deletion frees nothing early (see `LeaderElector`).
 */
export interface LeaseChanges {
  /** Calls `listener` with the Lease after each change seen, or `undefined` once it is deleted; returns a remover. */
  onChange(listener: (lease: LeaseSnapshot | undefined) => void): () => void;
}

/** Options of a `LeaseWatch`. */
export interface LeaseWatchOptions {
  clock: Clock;
  log: Logger;
  metrics: Registry;
}

/** Lists and watches the single Lease `key` (a field selector on its name). */
function leaseSource(api: CoordinationV1Api, key: LeaseKey): ResourceSource<V1Lease> {
  return {
    resource: "leases",
    path: `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(key.namespace)}/leases`,
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    list: (selectors, signal) =>
      api.listNamespacedLease({ namespace: key.namespace, ...selectors }, signalOptions(signal)),
  };
}

/** Watches one Lease and reports when it is freed; `run` it for as long as a candidate campaigns. */
export class LeaseWatch implements LeaseChanges {
  readonly #informer: Informer<V1Lease>;
  readonly #listeners = new Set<(lease: LeaseSnapshot | undefined) => void>();

  constructor(kc: KubeConfig, api: CoordinationV1Api, key: LeaseKey, options: LeaseWatchOptions) {
    this.#informer = new Informer(kc, leaseSource(api, key), {
      ...options,
      fieldSelector: `metadata.name=${key.name}`,
    });
    this.#informer.onChange((kind, lease) => {
      const seen = kind === "delete" ? undefined : toSnapshot(lease);
      for (const listener of this.#listeners) listener(seen);
    });
  }

  /** True while the watch is established (otherwise candidates only poll). */
  get healthy(): boolean {
    return this.#informer.healthy;
  }

  onChange(listener: (lease: LeaseSnapshot | undefined) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Lists and watches until `signal` aborts, restarting itself after failures. */
  run(signal: AbortSignal): Promise<void> {
    return this.#informer.start(signal);
  }
}
