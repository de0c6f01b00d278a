/**
 * Shadow-mode scenarios: the Go-CCM world (`startGoCcmWorld`) with a CCM started through `runCcm` on it, in
 * dry run or normally, one after the other on the same emulators and fake clock; `/plan` read over HTTPS
 * from the health port; and the emulators' request logs split into reads and writes.
 */
import type { PlannedAction } from "../controllers/loop/shadow.ts";
import { FakeClock } from "../common/clock.ts";
import { type GoCcmDrift, type GoCcmWorld, startGoCcmWorld } from "../sim/go_ccm_world.ts";
import { type CcmWorld, startWorld } from "./ccm_fixture.ts";

/** A Go-CCM world and the clock it and every CCM on it run on. */
export interface ShadowWorld extends AsyncDisposable {
  readonly go: GoCcmWorld;
  readonly clock: FakeClock;
  /** Starts a CCM on the world with the Go CCM's flags plus `flags`; its disposal leaves the world running. */
  ccm(flags: readonly string[]): Promise<CcmWorld>;
}

/** What `GET /plan` answers. */
export interface PlanBody {
  dryRun: boolean;
  pending: PlannedAction[];
  carriedOut: PlannedAction[];
  orphanedNodeBalancers?: Record<string, unknown>[];
}

/** Starts the Go-CCM world with `drift` on a fake clock. */
export async function startShadowWorld(
  drift: GoCcmDrift,
  options: { nodeBalancerTags?: readonly string[] } = {},
): Promise<ShadowWorld> {
  const clock = new FakeClock();
  const go = await startGoCcmWorld({ clock, drift, tls: false, nodeBalancerTags: options.nodeBalancerTags });
  return {
    go,
    clock,
    async ccm(flags) {
      const sims = { linode: go.linode, kube: go.kube, env: go.env, close: () => Promise.resolve() };
      const world = await startWorld({ sims, clock, flags: [...go.flags, ...flags] });
      await world.start();
      return world;
    },
    [Symbol.asyncDispose]: () => go.close(),
  };
}

/** A loopback port free right now, for `--secure-port` (the fixture's `--secure-port=0` disables serving). */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** The health-port flags of a CCM serving `/plan` on loopback. */
export function servingFlags(): string[] {
  return ["--bind-address=127.0.0.1", `--secure-port=${freePort()}`];
}

/** `GET path` from the CCM's health port, trusting its self-signed certificate. */
export async function fetchHealthPort(world: CcmWorld, path: string): Promise<Response> {
  const server = world.ccm.server;
  if (!server) throw new TypeError("The CCM serves nothing: start it with servingFlags()");
  const client = Deno.createHttpClient({ caCerts: [server.certPem] });
  try {
    // The emulator's admin token (system:masters): /plan needs an authenticated, authorised caller.
    const headers = { authorization: `Bearer ${world.kube.token}` };
    const res = await fetch(`${server.url}${path}`, { client, headers });
    // Read before the client closes.
    return new Response(await res.arrayBuffer(), { status: res.status, headers: res.headers });
  } finally {
    client.close();
  }
}

/** `GET /plan` from the CCM's health port. */
export async function fetchPlan(world: CcmWorld): Promise<PlanBody> {
  const res = await fetchHealthPort(world, "/plan");
  if (res.status !== 200) throw new Error(`GET /plan answered ${res.status}`);
  return await res.json();
}

/** The Linode requests other than GET, as `METHOD /v4/route/{id}`. */
export function linodeWrites(go: GoCcmWorld): string[] {
  return go.linode.calls.log.filter((c) => c.method !== "GET").map((c) => c.key);
}

/** The Kubernetes requests other than reads (GET, WATCH), as `VERB /route`. */
export function kubeWrites(go: GoCcmWorld): string[] {
  // A TokenReview or SubjectAccessReview (authenticating a scrape of /metrics or /plan) is a POST that stores
  // nothing: a question, not a write.
  return go.kube.calls.log.map((c) => c.key).filter((k) =>
    !/^(GET|WATCH) /.test(k) &&
    !/^POST \/apis\/(authentication|authorization)\.k8s\.io\/v1\/(tokenreviews|subjectaccessreviews)$/.test(k)
  );
}

/** One field one action changes: `controller object [target] field: old → new` (the unit plans compare in). */
export function fieldChanges(actions: readonly PlannedAction[]): string[] {
  const lines = actions.flatMap((a) =>
    a.changes.map((c) =>
      `${a.controller} ${a.object}${a.target ? ` [${a.target}]` : ""} ${c.field}: ${
        JSON.stringify(c.old)
      } → ${JSON.stringify(c.new)}`
    )
  );
  return [...new Set(lines)].sort();
}
