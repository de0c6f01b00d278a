/** Shared fixtures of the lease tests: a kube emulator, candidates with their own path to it, samplers. */
import { KubeConfig } from "@kubernetes/client-node";
import { type Clock, type FakeClock, systemClock } from "../../common/clock.ts";
import { makeKubeClients } from "../../kube/clients.ts";
import { componentLogger } from "../../common/log.ts";
import { Registry } from "../../common/metrics.ts";
import { type KubeSim, startKubeSim } from "../../sim/mod.ts";
import { startProxy, type TcpProxy } from "../../sim/proxy.ts";
import {
  type ElectionOutcome,
  type LeaderCallbacks,
  LeaderElector,
  type LeaderElectorDeps,
} from "../elector.ts";
import { SwitchFence } from "../../common/write_guard.ts";
import { LeaseWatch } from "../watch.ts";
import {
  KubeLeaseApi,
  type LeaseApi,
  type LeaseCallOptions,
  type LeaseKey,
  type LeaseRecord,
  type LeaseSnapshot,
  newIdentity,
} from "../lease.ts";

/** Short durations, passed as options (the defaults are main's business). */
export const LEASE_MS = 1000;
export const RENEW_DEADLINE_MS = 700;
export const RETRY_MS = 150;
export const KEY: LeaseKey = { namespace: "kube-system", name: "linode-cloud-controller-manager" };

/** Resolves once `condition()` holds; rejects after `timeoutMs`. Polls every 5 ms. */
export async function waitFor(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > until) throw new Error(`Condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** A KubeConfig for the emulator, optionally pointed at another URL (a proxy in front of it). */
function kubeConfigFor(kubeconfigYaml: string, serverUrl?: string): KubeConfig {
  const base = new KubeConfig();
  base.loadFromString(kubeconfigYaml);
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: base.clusters.map((c) => ({ ...c, server: serverUrl ?? c.server, skipTLSVerify: true })),
    users: base.users,
    contexts: base.contexts,
    currentContext: base.currentContext,
  });
  return kc;
}

/** A `LeaseApi` over the production clients (`makeKubeClients`), to the emulator or to `serverUrl`. */
export function leaseApiFor(kubeconfigYaml: string, serverUrl?: string): KubeLeaseApi {
  const kc = kubeConfigFor(kubeconfigYaml, serverUrl);
  return new KubeLeaseApi(makeKubeClients(kc, { metrics: new Registry() }).coordination);
}

/** One call a `RecordingLeaseApi` passed on. */
export interface LeaseCall {
  op: "get" | "create" | "replace";
  /** `clock.monotonic()` of the candidate's clock when the call started. */
  at: number;
}

/** Passes every call to `inner` and records it; `gate` can hold a call's result (to line up a race). */
export class RecordingLeaseApi implements LeaseApi {
  readonly calls: LeaseCall[] = [];
  gate: ((op: LeaseCall["op"]) => Promise<void>) | undefined;
  #stuck: PromiseWithResolvers<void> | undefined;
  /** Passes calls to `inner`, stamping each with `clock.monotonic()`. */
  constructor(readonly inner: LeaseApi, readonly clock: Pick<Clock, "monotonic"> = systemClock) {}

  /** From now on every call hangs, deaf to its abort signal, until `unstick()`: a loop stuck in a request. */
  stick(): void {
    this.#stuck = Promise.withResolvers();
  }

  /** Lets stuck calls go on (with their signals, by now aborted). */
  unstick(): void {
    this.#stuck?.resolve();
    this.#stuck = undefined;
  }

  /** Calls started and not yet answered. */
  inFlight = 0;

  async #record(op: LeaseCall["op"]): Promise<void> {
    this.calls.push({ op, at: this.clock.monotonic() });
    await this.#stuck?.promise;
  }

  /** Counts `call` in `inFlight` until it settles. */
  async #track<T>(call: () => Promise<T>): Promise<T> {
    this.inFlight++;
    try {
      return await call();
    } finally {
      this.inFlight--;
    }
  }

  /** Writes (create and replace) that have been answered, and nothing in flight. */
  settledWrites(n: number): boolean {
    return this.inFlight === 0 && this.writes.length === n;
  }

  /** Start times of the writes (create and replace). */
  get writes(): number[] {
    return this.calls.filter((c) => c.op !== "get").map((c) => c.at);
  }

  get(key: LeaseKey, options?: LeaseCallOptions): Promise<LeaseSnapshot | undefined> {
    return this.#track(async () => {
      await this.#record("get");
      const result = await this.inner.get(key, options);
      await this.gate?.("get");
      return result;
    });
  }

  create(key: LeaseKey, record: LeaseRecord, options?: LeaseCallOptions): Promise<LeaseSnapshot> {
    return this.#track(async () => {
      await this.#record("create");
      return await this.inner.create(key, record, options);
    });
  }

  replace(base: LeaseSnapshot, record: LeaseRecord, options?: LeaseCallOptions): Promise<LeaseSnapshot> {
    return this.#track(async () => {
      await this.#record("replace");
      return await this.inner.replace(base, record, options);
    });
  }
}

/** One replica: an elector with its own fence, metrics, recorded API and (optionally) its own proxy. */
export class Candidate {
  readonly fence = new SwitchFence();
  readonly metrics = new Registry();
  readonly identity = newIdentity("node-" + crypto.randomUUID().slice(0, 4));
  readonly api: RecordingLeaseApi;
  readonly elector: LeaderElector;
  readonly events: string[] = [];
  readonly #abort = new AbortController();
  #outcome: Promise<ElectionOutcome> | undefined;

  constructor(api: LeaseApi, readonly proxy?: TcpProxy, options: Partial<LeaderElectorDeps> = {}) {
    this.api = new RecordingLeaseApi(api, options.clock ?? systemClock);
    this.elector = new LeaderElector({
      api: this.api,
      clock: systemClock,
      log: componentLogger("leader"),
      metrics: this.metrics,
      identity: this.identity,
      ...KEY,
      leaseDurationMs: LEASE_MS,
      renewDeadlineMs: RENEW_DEADLINE_MS,
      retryPeriodMs: RETRY_MS,
      fence: this.fence,
      ...options,
    });
  }

  /** Starts `run`; the default callbacks record "started" and "stopped" in `events`. */
  start(callbacks?: LeaderCallbacks): this {
    this.#outcome = this.elector.run(
      this.#abort.signal,
      callbacks ?? {
        onStartedLeading: async (term) => {
          this.events.push("started");
          await new Promise((r) => term.addEventListener("abort", r, { once: true }));
          this.events.push("stopped");
        },
      },
    );
    return this;
  }

  /** The settled outcome of `run` (after `stop()`, or once it was lost). */
  get outcome(): Promise<ElectionOutcome> {
    if (!this.#outcome) throw new Error("Candidate not started");
    return this.#outcome;
  }

  /** Aborts `run` (SIGTERM) and awaits its outcome. */
  async stop(): Promise<ElectionOutcome> {
    this.#abort.abort();
    const outcome = await this.outcome;
    await this.proxy?.close();
    return outcome;
  }
}

/** The emulator plus factories for candidates talking to it directly or through a proxy. */
export interface Cluster extends AsyncDisposable {
  readonly url: string;
  readonly kubeconfig: string;
  /** A `LeaseApi` straight to the emulator. */
  api(): KubeLeaseApi;
  /** A candidate with its own TCP proxy to the emulator (so it alone can be cut off). */
  candidate(options?: Partial<LeaderElectorDeps>): Candidate;
  /** The Lease as the emulator serves it, raw JSON. */
  rawLease(): Promise<Record<string, unknown>>;
  /** The holder the emulator's store has now ("" when released, undefined when there is no Lease). */
  holder(): string | undefined;
  /** The emulator, for faults and counters. */
  readonly kube: KubeSim;
  /** A running watch of the Lease (production `LeaseWatch`), stopped when the cluster closes. */
  watch(clock: Clock): LeaseWatch;
}

/** Starts the kube emulator; closing the cluster stops candidates, proxies and the emulator. */
export async function startCluster(): Promise<Cluster> {
  const kube = await startKubeSim();
  const kubeconfig = kube.kubeconfig();
  const candidates: Candidate[] = [];
  const watches: { stop: AbortController; running: Promise<void> }[] = [];
  const serverPort = Number(new URL(kube.url).port);
  return {
    url: kube.url,
    kubeconfig,
    api: () => leaseApiFor(kubeconfig),
    candidate(options) {
      const proxy = startProxy({ port: serverPort });
      const api = leaseApiFor(kubeconfig, proxy.url);
      const candidate = new Candidate(api, proxy, options);
      candidates.push(candidate);
      return candidate;
    },
    kube,
    watch(clock) {
      const kc = kubeConfigFor(kubeconfig);
      const coordination = makeKubeClients(kc, { metrics: new Registry() }).coordination;
      const watch = new LeaseWatch(kc, coordination, KEY, {
        clock,
        metrics: new Registry(),
        log: componentLogger("lease-watch"),
      });
      const stop = new AbortController();
      watches.push({ stop, running: watch.run(stop.signal) });
      return watch;
    },
    holder() {
      const lease = kube.store.get("leases", KEY.name, KEY.namespace) as {
        spec?: { holderIdentity?: string };
      };
      return lease === undefined ? undefined : lease.spec?.holderIdentity ?? "";
    },
    async rawLease() {
      const url = `${kube.url}/apis/coordination.k8s.io/v1/namespaces/${KEY.namespace}/leases/${KEY.name}`;
      const res = await fetch(url, { headers: { authorization: `Bearer ${kube.token}` } });
      return await res.json();
    },
    async [Symbol.asyncDispose]() {
      await Promise.all(candidates.map((c) => c.stop().catch(() => undefined)));
      for (const w of watches) w.stop.abort();
      await Promise.all(watches.map((w) => w.running));
      await kube.close();
    },
  };
}

/** The candidates whose fence is on now. */
export function leaders(candidates: readonly Candidate[]): Candidate[] {
  return candidates.filter((c) => c.fence.leading);
}

/** A jitter source that counts its draws: a draw means the candidate failed an attempt and is about to sleep. */
export function countingRandom(value = 0.5): { draws: number; random: () => number } {
  const r = { draws: 0, random: () => (r.draws++, value) };
  return r;
}

/**
 * Advances `clock` by `stepMs` until `condition()` holds, letting real I/O (HTTP to the emulator) run between
 * steps; returns the fake time advanced. Throws after `maxSteps`.
 */
export async function advanceUntil(
  clock: FakeClock,
  stepMs: number,
  condition: () => boolean,
  maxSteps = 20,
): Promise<number> {
  let advancedMs = 0;
  for (let step = 0; !condition(); step++) {
    if (step >= maxSteps) throw new Error(`Condition not met within ${advancedMs} ms of fake time`);
    await clock.advance(stepMs);
    advancedMs += stepMs;
    await waitFor(condition, 1000).catch(() => {});
  }
  return advancedMs;
}
