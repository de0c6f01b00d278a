/**
 * Shared pieces of the leader-election end-to-end tests (no tests here; named like `lease/fixtures_test.ts`):
 * a demo world with a Lease recorder, replicas spawned as real processes, and the timing bounds of
 * client-go's election checked against the Lease writes the emulator committed.
 */
import assert from "node:assert/strict";
import type { V1Node } from "@kubernetes/client-node";
import { type DemoWorld, startDemoWorld } from "../sim/demo_world.ts";
import {
  type CcmProcess,
  FAST_LEASE,
  leaseFlags,
  LeaseHistory,
  type LeaseTiming,
  spawnCcm,
  waitFor,
} from "./process.ts";

/** The counter key of a standby's poll: a leader renews with PUT only, so every GET comes from a candidate. */
const LEASE_GET = "GET /apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}";

/** A demo world whose Lease writes are recorded. */
export interface ElectionWorld extends AsyncDisposable {
  readonly world: DemoWorld;
  readonly lease: LeaseHistory;
  readonly timing: LeaseTiming;
  /**
   * Starts one replica with `timing`; `kubeconfig` overrides the world's (to go through a proxy), `flags` are
   * added to the lease flags.
   */
  spawn(name: string, options?: { kubeconfig?: string; flags?: readonly string[] }): CcmProcess;
}

/**
 * Starts the emulators with `nodes` demo Nodes (and `services` LoadBalancer Services, default none) and
 * records the leader Lease; replicas use `timing`.
 */
export async function startElectionWorld(
  options: { nodes?: number; services?: number; timing?: LeaseTiming } = {},
): Promise<ElectionWorld> {
  const timing = options.timing ?? FAST_LEASE;
  const world = await startDemoWorld({ nodes: options.nodes ?? 1, services: options.services ?? 0 });
  const lease = new LeaseHistory(world.kube);
  const dir = world.kubeconfigPath.replace(/\/[^/]+$/, "");
  return {
    world,
    lease,
    timing,
    spawn: (name, options = {}) =>
      spawnCcm([...leaseFlags(timing), ...(options.flags ?? [])], {
        env: {
          ...world.env,
          LINODE_INSTANCE_CACHE_TTL: "1",
          ...(options.kubeconfig ? { KUBECONFIG: options.kubeconfig } : {}),
        },
        readDirs: [dir],
        name,
      }),
    async [Symbol.asyncDispose]() {
      lease[Symbol.dispose]();
      await world.close();
    },
  };
}

/** The identity a process logged when it became leader, if it did. */
export function identityOf(p: CcmProcess): string | undefined {
  const line = p.logs(/^became leader/)[0];
  return line ? String(line.record.identity) : undefined;
}

/** Waits until the Lease names a holder that one of `procs` logged as its own; returns that process. */
export async function waitForLeader(ew: ElectionWorld, procs: readonly CcmProcess[]): Promise<CcmProcess> {
  let leader: CcmProcess | undefined;
  await waitFor(() => {
    leader = procs.find((p) => ew.lease.holder !== "" && identityOf(p) === ew.lease.holder);
    return leader !== undefined;
  }, { what: `a leader among ${procs.map((p) => p.name).join(", ")}` });
  assert.ok(leader);
  return leader;
}

/**
 * Waits until every standby in `standbys` has started campaigning and has read the Lease at least once, so
 * each has an observed record and its expiry clock runs from that (client-go's observedTime).
 */
export async function waitForCampaigning(ew: ElectionWorld, standbys: readonly CcmProcess[]): Promise<void> {
  // Logged just before the elector starts; its first GET follows at once.
  await Promise.all(standbys.map((p) => p.waitForLog(/^(secure serving disabled|serving \/healthz)/)));
  const calls = ew.world.kube.calls;
  const before = calls.count(LEASE_GET);
  // Each standby polls every retryPeriod × [1, 2.2): 2 polls per standby cannot all come from the others.
  await waitFor(() => calls.count(LEASE_GET) >= before + 2 * standbys.length, {
    what: `${standbys.length} standbys polling the Lease`,
  });
}

/**
 * Asserts a takeover after the holder died: the new holder waited out the old record's lease duration (never
 * stealing a live Lease) and counted one transition. How soon it took over is timing, which these process
 * tests leave to the elector's fake-clock tests (`lease/elector_test.ts`): a loaded machine must not fail them.
 */
export function assertTakeoverAfterExpiry(ew: ElectionWorld, oldHolder: string, newHolder: string): void {
  const last = ew.lease.lastBy(oldHolder);
  const takeover = ew.lease.writes.find((w) => w.holder === newHolder && last && w.atMs >= last.atMs);
  assert.ok(last && takeover, "the Lease records the old and the new holder");
  const gapMs = takeover.atMs - last.atMs;
  // The standby saw the last renew no earlier than its commit, and waits leaseDuration from then: a lower
  // bound that load can only widen.
  assert.ok(gapMs >= ew.timing.leaseDurationMs, `took a live Lease: ${gapMs} ms after the last renew`);
  assert.equal(takeover.transitions, last.transitions + 1);
}

/**
 * Asserts a hand-over after a release: the next write after the release is the new holder's acquisition, and
 * the new holder acted on the release (it logged so before it led, from its watch or a poll that read the
 * released Lease first), rather than on an expiry.
 */
export function assertTakeoverAfterRelease(
  ew: ElectionWorld,
  oldHolder: string,
  newLeader: CcmProcess,
): void {
  const newHolder = identityOf(newLeader);
  const i = ew.lease.writes.findIndex((w, i) =>
    w.holder === "" && ew.lease.writes[i - 1]?.holder === oldHolder
  );
  const released = ew.lease.writes[i];
  const takeover = ew.lease.writes[i + 1];
  assert.ok(released && takeover, "the Lease records the release and the new holder");
  assert.equal(takeover.holder, newHolder, "the first write after the release is the new holder's");
  assert.equal(takeover.transitions, released.transitions + 1);
  // From its watch, or from a poll that happened to read the Lease between the release and the watch event.
  const seen = newLeader.logs(/^lease .* (was released: trying to take it now|found released: taking it)/).at(
    -1,
  );
  const became = newLeader.logs(/^became leader/)[0];
  assert.ok(
    seen && became && newLeader.lines.indexOf(seen) < newLeader.lines.indexOf(became),
    newLeader.output,
  );
}

/** When a process stopped leading: its kill, or the commit of its release or loss (before it logs). */
export interface Term {
  readonly proc: CcmProcess;
  readonly startMs: number;
  readonly endMs: number;
}

/**
 * Asserts at most one leader at any time: each term runs from the process's "became leader" log to the
 * end given by `endOf` (its SIGKILL, or the Lease release it committed), and terms never overlap.
 */
export function assertOneLeaderAtATime(
  procs: readonly CcmProcess[],
  endOf: (p: CcmProcess) => number,
): Term[] {
  const terms = procs.flatMap((proc) =>
    proc.logs(/^became leader/).map((line) => ({ proc, startMs: line.atMs, endMs: endOf(proc) }))
  ).sort((a, b) => a.startMs - b.startMs);
  terms.forEach((t, i) => {
    const next = terms[i + 1];
    if (next) assert.ok(t.endMs <= next.startMs, `${t.proc.name} still led when ${next.proc.name} began`);
  });
  return terms;
}

/** Waits until the leader has initialised Node `name` as Linode `linodeId` (providerID set, no taint left). */
export async function waitForInitialised(ew: ElectionWorld, name: string, linodeId: number): Promise<void> {
  await waitFor(() => {
    const n = ew.world.kube.store.get("nodes", name) as V1Node | undefined;
    return n?.spec?.providerID === `linode://${linodeId}` && (n.spec.taints ?? []).length === 0;
  }, { what: `${name} initialised` });
}

/** Adds a Node now and waits until the leader initialises it: proof that the controllers run. */
export async function assertControllersRun(ew: ElectionWorld, name: string): Promise<void> {
  await waitForInitialised(ew, name, ew.world.addNode(name));
}
