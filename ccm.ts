/**
 * Runs one CCM process from a validated Config: builds its parts (`wiring/parts.ts`), starts the informers
 * and the health server, and runs the controllers of `wiring/controllers.ts` while it leads. `main.ts` calls
 * it with the real clock; the demo, the bench and the scenario tests call it against the emulators.
 */
import type { Config } from "./config/config.ts";
import { LeadershipReadiness, runLeadership } from "./lease/leadership.ts";
import { KubeLeaseApi } from "./lease/lease.ts";
import { LeaseWatch } from "./lease/watch.ts";
import type { LinodeClient } from "./linode/client.ts";
import { checkToken, watchTokenHealth } from "./linode/token.ts";
import { componentLogger, type Logger } from "./common/log.ts";
import { type HealthCheck, type RunningServer, startServer } from "./server/serve.ts";
import type { Informer, KubeObject } from "./kube/informer.ts";
import { IMPLEMENTED, runControllers } from "./wiring/controllers.ts";
import {
  buildParts,
  type CcmParts,
  expireLinodeCaches,
  informersOf,
  type PartsDeps,
  runInformers,
  waitForInformers,
} from "./wiring/parts.ts";

/** What the process provides: time, metrics, identity. */
export interface CcmDeps extends PartsDeps {
  /** Period of `--enable-token-health-checker` (default 5 min, as the Go CCM; tests shorten it). */
  tokenHealthPeriodMs?: number;
  /** Receives the running process's parts once wired (demo view, tests). */
  onStarted?: (ccm: RunningCcm) => void;
}

/** The parts of a running CCM that the demo and tests look at. */
export interface RunningCcm extends CcmParts {
  readonly server: RunningServer | null;
}

/**
 * How a CCM run ended: stopped on request (exit 0); leadership lost, a failed leader term (the controllers or
 * their setup threw; the Lease was released), or the Linode API token rejected by
 * `--enable-token-health-checker` (exit 1: the supervisor restarts the process, which re-reads the token).
 */
export type CcmOutcome = "stopped" | "lost" | "failed" | "token-invalid";

/** Where the token came from, for messages: the variable (and file), never the token. */
function tokenOrigin(config: Config): string {
  const t = config.linode.token;
  return t.kind === "env" ? "LINODE_API_TOKEN" : `LINODE_API_TOKEN_FILE=${t.path}`;
}

/** `--enable-token-health-checker` at start: a 401 or an unreachable API stops the CCM, as in the Go CCM. */
async function assertTokenAccepted(linode: LinodeClient, config: Config, signal: AbortSignal): Promise<void> {
  let status;
  try {
    status = await checkToken(linode, signal);
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    throw new Error(`cannot check the linode api token from ${tokenOrigin(config)}: ${reason}`);
  }
  if (status === "invalid") {
    throw new Error(`the linode api token from ${tokenOrigin(config)} is invalid: GET /profile answered 401`);
  }
}

/**
 * `--enable-token-health-checker` after start: checks until `run` aborts. At the first 401 it aborts `run`
 * (the controllers stop and the Lease is released) and resolves true.
 */
async function watchForRevokedToken(
  parts: { linode: LinodeClient; config: Config; deps: CcmDeps; log: Logger },
  run: AbortController,
): Promise<boolean> {
  const { linode, config, deps, log } = parts;
  if (!config.linode.tokenHealthCheck) return false;
  const result = await watchTokenHealth({
    client: linode,
    clock: deps.clock,
    metrics: deps.metrics,
    log: componentLogger("token-health"),
    periodMs: deps.tokenHealthPeriodMs,
  }, run.signal);
  if (result !== "invalid") return false;
  log.error("the linode api token from {origin} is no longer valid (401): stopping the controllers", {
    origin: tokenOrigin(config),
  });
  run.abort(new DOMException("linode api token rejected", "AbortError"));
  return true;
}

/** How a run ended once it is over: a revoked token wins over how the controllers stopped. */
async function outcomeOf(
  run: AbortController,
  tokenRevoked: Promise<boolean>,
  ended: CcmOutcome,
): Promise<CcmOutcome> {
  run.abort();
  return (await tokenRevoked) ? "token-invalid" : ended;
}

/**
 * `/readyz` checks: every informer the controllers need (`informersOf`) synced, and watching (a re-connecting
 * watch serves stale data). A failing check names the informers that fail it.
 */
function informerChecks(parts: CcmParts): HealthCheck[] {
  const informers = informersOf(parts);
  const failing = (bad: (i: Informer<KubeObject>) => boolean, why: string) => () => {
    const names = informers.filter(bad).map((i) => i.resource);
    return names.length === 0 || `${names.join(", ")} ${why}`;
  };
  return [
    { name: "informer-sync", check: failing((i) => !i.synced, "not synced yet") },
    { name: "informer-watch", check: failing((i) => i.synced && !i.healthy, "watch is re-connecting") },
  ];
}

async function startHealthServer(parts: CcmParts, readiness: HealthCheck): Promise<RunningServer | null> {
  const s = parts.config.serve;
  const tls = s.tlsCertFile && s.tlsPrivateKeyFile
    ? { certFile: s.tlsCertFile, keyFile: s.tlsPrivateKeyFile }
    : "self-signed" as const;
  return await startServer({
    hostname: s.bindAddress,
    port: s.securePort,
    tls,
    registry: parts.metrics,
    checks: { healthz: [], readyz: [...informerChecks(parts), readiness] },
    // In dry run the fence is open for decisions, but this process leads nothing.
    leading: () => parts.fence.leading && !parts.config.dryRun,
    plan: () => ({ ...parts.shadow.report(), orphanedNodeBalancers: parts.orphanCheck.list() }),
    auth: parts.auth,
    clock: parts.clock,
    log: componentLogger("serve"),
  });
}

function reportConfig(config: Config, log: Logger): void {
  for (const flag of config.ignoredFlags) {
    log.warning("flag {flag} is accepted for compatibility but not implemented: it has no effect", { flag });
  }
  for (const warning of config.warnings) log.warning("{warning}", { warning });
  for (const name of config.controllers) {
    if (!IMPLEMENTED.has(name)) {
      log.warning("controller {name} is not available in this release yet", { name });
    }
  }
}

/**
 * Runs the CCM until `signal` aborts ("stopped"), leadership is lost ("lost"), a leader term fails ("failed")
 * or the token is revoked.
 */
export async function runCcm(config: Config, deps: CcmDeps, stopSignal: AbortSignal): Promise<CcmOutcome> {
  const log = componentLogger("ccm");
  reportConfig(config, log);
  const parts = buildParts(config, deps);
  const { clock, metrics, fence, linode, events } = parts;
  if (config.linode.tokenHealthCheck) await assertTokenAccepted(linode, config, stopSignal);
  // Ends this run: the caller's stop, or a revoked token.
  const run = new AbortController();
  const signal = run.signal;
  const forwardStop = () => run.abort(stopSignal.reason);
  if (stopSignal.aborted) forwardStop();
  stopSignal.addEventListener("abort", forwardStop, { once: true });
  const tokenRevoked = watchForRevokedToken({ linode, config, deps, log }, run);
  const stopInformers = new AbortController();
  const informerRun = runInformers(parts, stopInformers.signal);
  const onStartedLeading = async (term: AbortSignal) => {
    expireLinodeCaches(parts);
    await waitForInformers(parts, term).catch(() => {});
    if (!term.aborted) await runControllers(parts, term);
  };
  let server: RunningServer | null = null;
  const readiness = new LeadershipReadiness();
  // Everything started above is stopped in `finally`, also when serving fails to start (port taken, bad TLS files).
  try {
    server = await startHealthServer(parts, readiness);
    deps.onStarted?.({ ...parts, server });
    if (config.dryRun) {
      // Taking the Lease would stop the CCM that runs the cluster now (the fence is open: no election).
      log.info(
        "dry run: taking no part in leader election (the Lease {namespace}/{name} is left alone); " +
          "controllers start now, record what they would do on /plan and write nothing",
        { namespace: config.leaderElection.namespace, name: config.leaderElection.name },
      );
    }
    const le = config.leaderElection;
    const coordination = parts.kube.coordination;
    const outcome = await runLeadership(
      le,
      {
        api: new KubeLeaseApi(coordination),
        // A standby sees a release at once through it; polling every retry period stays the fallback.
        watch: new LeaseWatch(parts.kube.kc, coordination, le, {
          clock,
          metrics,
          log: componentLogger("lease-watch"),
        }),
        fence,
        clock,
        log: componentLogger("lease"),
        metrics,
        identity: parts.identity,
        readiness,
      },
      onStartedLeading,
      signal,
    );
    return await outcomeOf(run, tokenRevoked, outcome);
  } finally {
    stopSignal.removeEventListener("abort", forwardStop);
    run.abort();
    await tokenRevoked;
    stopInformers.abort();
    await informerRun.catch(() => {});
    await events.flush().catch(() => {});
    await server?.close();
  }
}
