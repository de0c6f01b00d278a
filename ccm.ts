/**
 * Wires one CCM process from a validated Config: clients → cache → informers → lease → controllers → serve.
 * `main.ts` calls it with the real clock; the demo and end-to-end tests call it against the emulators.
 */
import type { KubeConfig, V1Node } from "@kubernetes/client-node";
import { InstanceCache } from "./cache/instances.ts";
import { VpcIpCache } from "./cache/vpc_ips.ts";
import { VpcCache } from "./cache/vpcs.ts";
import type { Clock } from "./common/clock.ts";
import type { Config, ControllerName } from "./config/config.ts";
import {
  kubeNodeWriter,
  type NodeControllersDeps,
  startNodeControllers,
} from "./controllers/node/cloud_node.ts";
import { parseIpv4Cidr } from "./controllers/node/addresses.ts";
import { type KubeClients, makeKubeClients, nodeSource } from "./kube/clients.ts";
import { kubeConfigSecrets, type KubeConfigSource, loadKubeConfig } from "./kube/config.ts";
import { EventRecorder } from "./kube/events.ts";
import { Informer } from "./kube/informer.ts";
import { ALWAYS_LEADING, type Fence, SwitchFence } from "./lease/fence.ts";
import { LeadershipReadiness, runLeadership } from "./lease/leadership.ts";
import { KubeLeaseApi, newIdentity } from "./lease/lease.ts";
import { LeaseWatch } from "./lease/watch.ts";
import { LinodeClient } from "./linode/client.ts";
import { fileToken, staticToken, type TokenSource } from "./linode/token.ts";
import { checkToken, watchTokenHealth } from "./linode/token_health.ts";
import { componentLogger, type Logger } from "./common/log.ts";
import type { Registry } from "./server/metrics.ts";
import { type HealthCheck, type RunningServer, startServer } from "./server/serve.ts";
import { readTlsFiles } from "./server/tls.ts";

/** What the process provides: time, metrics, identity. */
export interface CcmDeps {
  clock: Clock;
  metrics: Registry;
  /** This machine's hostname: the first half of the Lease holder identity. */
  hostname: string;
  /** Service-account folder for in-cluster config (tests point it elsewhere). */
  serviceAccountDir?: string;
  /** Period of `--enable-token-health-checker` (default 5 min, as the Go CCM; tests shorten it). */
  tokenHealthPeriodMs?: number;
  /** Receives the running process's parts once wired (demo view, tests). */
  onStarted?: (ccm: RunningCcm) => void;
}

/** The parts of a running CCM that the demo and tests look at. */
export interface RunningCcm {
  readonly identity: string;
  readonly fence: Fence;
  readonly linode: LinodeClient;
  readonly kube: KubeClients;
  readonly nodes: Informer<V1Node>;
  readonly instances: InstanceCache;
  readonly server: RunningServer | null;
  /** The secrets redacted from Events, for the process's log sink: the Linode token, the kube credentials. */
  readonly secrets: () => readonly string[];
}

/**
 * How a CCM run ended: stopped on request (exit 0); leadership lost, a failed leader term (the controllers or
 * their setup threw; the Lease was released), or the Linode API token rejected by
 * `--enable-token-health-checker` (exit 1: the supervisor restarts the process, which re-reads the token).
 */
export type CcmOutcome = "stopped" | "lost" | "failed" | "token-invalid";

/** Controllers this release implements; the others are accepted and reported as not yet available. */
const IMPLEMENTED: ReadonlySet<ControllerName> = new Set(["cloud-node", "cloud-node-lifecycle"]);

function tokenSource(config: Config, clock: Clock): TokenSource {
  const t = config.linode.token;
  return t.kind === "env" ? staticToken(t.token.reveal()) : fileToken(t.path, { clock });
}

function kubeSource(config: Config, serviceAccountDir?: string): KubeConfigSource {
  const k = config.kube;
  if (k.kind === "kubeconfig") return { kubeconfig: k.kubeconfig, master: k.master };
  if (k.kind === "in-cluster") {
    return { serviceHost: k.serviceHost, servicePort: k.servicePort, master: k.master, serviceAccountDir };
  }
  return { master: k.master, serviceAccountDir };
}

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
 * The secrets to keep out of logs and Events: the Linode token as last read (from the variable or the file)
 * and the kubeconfig's credentials. Asked per line or Event, so rotated tokens are covered.
 */
function secretsOf(tokens: TokenSource, kc: KubeConfig): () => readonly string[] {
  return () => {
    const token = tokens.current();
    return token === undefined ? kubeConfigSecrets(kc) : [token, ...kubeConfigSecrets(kc)];
  };
}

async function startHealthServer(
  config: Config,
  deps: CcmDeps,
  parts: { nodes: Informer<V1Node>; fence: Fence; readiness: LeadershipReadiness },
): Promise<RunningServer | null> {
  const { nodes, fence, readiness } = parts;
  const s = config.serve;
  const tls = s.tlsCertFile && s.tlsPrivateKeyFile
    ? await readTlsFiles(s.tlsCertFile, s.tlsPrivateKeyFile)
    : "self-signed" as const;
  const synced: HealthCheck = { name: "informer-sync", check: () => nodes.synced || "nodes not synced yet" };
  const watching: HealthCheck = {
    name: "informer-watch",
    check: () => nodes.healthy || !nodes.synced || "nodes watch is re-connecting",
  };
  return await startServer({
    hostname: s.bindAddress,
    port: s.securePort,
    tls,
    registry: deps.metrics,
    checks: { healthz: [], readyz: [synced, watching, readiness] },
    leading: () => fence.leading,
    log: componentLogger("serve"),
  });
}

/** Runs the enabled controllers until `term` aborts (one leadership term). */
async function runControllers(config: Config, deps: NodeControllersDeps, term: AbortSignal): Promise<void> {
  const options = {
    externalSubnet: config.linode.externalSubnet ? parseIpv4Cidr(config.linode.externalSubnet) : undefined,
    statusUpdateFrequencyMs: config.nodes.statusUpdateFrequencyMs,
    workers: config.nodes.concurrentSyncs,
    monitorPeriodMs: config.nodes.monitorPeriodMs,
  };
  await startNodeControllers(deps, options, { enabled: config.controllers, logFor: componentLogger }).run(
    term,
  );
}

function reportConfig(config: Config, log: Logger): void {
  for (const flag of config.ignoredFlags) {
    log.info("flag {flag} is accepted for compatibility and has no effect", { flag });
  }
  for (const warning of config.warnings) log.warning("{warning}", { warning });
  for (const name of config.controllers) {
    if (!IMPLEMENTED.has(name)) {
      log.warning("controller {name} is not available in this release yet", { name });
    }
  }
}

/** Runs the CCM until `signal` aborts ("stopped"), leadership is lost ("lost") or the token is revoked. */
export async function runCcm(config: Config, deps: CcmDeps, stopSignal: AbortSignal): Promise<CcmOutcome> {
  const log = componentLogger("ccm");
  reportConfig(config, log);
  const { clock, metrics } = deps;
  const fence = config.leaderElection.enabled ? new SwitchFence(false) : ALWAYS_LEADING;
  const kc = loadKubeConfig(kubeSource(config, deps.serviceAccountDir));
  const kube = makeKubeClients(kc, { metrics, fence });
  const tokens = tokenSource(config, clock);
  const secrets = secretsOf(tokens, kc);
  const linode = new LinodeClient({
    baseUrl: config.linode.url,
    token: tokens,
    timeoutMs: config.linode.requestTimeoutMs,
    fence,
    metrics,
    log: componentLogger("linode"),
    clock,
    logRequests: config.linode.debug,
  });
  if (config.linode.tokenHealthCheck) await assertTokenAccepted(linode, config, stopSignal);
  // Ends this run: the caller's stop, or a revoked token.
  const run = new AbortController();
  const signal = run.signal;
  const forwardStop = () => run.abort(stopSignal.reason);
  if (stopSignal.aborted) forwardStop();
  stopSignal.addEventListener("abort", forwardStop, { once: true });
  const tokenRevoked = watchForRevokedToken({ linode, config, deps, log }, run);
  const v = config.vpc;
  const vpcs = new VpcCache(linode.vpcs, {
    vpcNames: v.names,
    vpcIds: v.ids,
    subnetNames: v.subnetNames,
    subnetIds: v.subnetIds,
  }, { clock, metrics, ttlMs: config.linode.routesCacheTtlMs });
  const vpcIps = new VpcIpCache(linode.vpcs, vpcs, { clock, metrics, ttlMs: config.linode.routesCacheTtlMs });
  const instances = new InstanceCache(linode.instances, {
    clock,
    metrics,
    region: config.linode.region,
    tagFilter: config.linode.tagFilter ?? undefined,
    ttlMs: config.linode.instanceCacheTtlMs,
    vpcIps: vpcs.configured ? vpcIps : undefined,
  });
  const nodes = new Informer(kc, nodeSource(kube.core), { log: componentLogger("informer"), metrics, clock });
  const events = new EventRecorder(kube.core, {
    log: componentLogger("events"),
    clock,
    host: deps.hostname,
    secrets,
  });
  const identity = newIdentity(deps.hostname);
  const stopInformers = new AbortController();
  const informerRun = nodes.start(stopInformers.signal);
  const controllers: NodeControllersDeps = {
    nodes,
    instances,
    linode: linode.instances,
    writer: kubeNodeWriter(kube.core),
    events,
    log,
    metrics,
    clock,
  };
  const onStartedLeading = async (term: AbortSignal) => {
    await nodes.waitForSync(term).catch(() => {});
    if (!term.aborted) await runControllers(config, controllers, term);
  };
  let server: RunningServer | null = null;
  const readiness = new LeadershipReadiness();
  // Everything started above is stopped in `finally`, also when serving fails to start (port taken, bad TLS files).
  try {
    server = await startHealthServer(config, deps, { nodes, fence, readiness });
    deps.onStarted?.({ identity, fence, linode, kube, nodes, instances, server, secrets });
    const le = config.leaderElection;
    const outcome = await runLeadership(
      le,
      {
        api: new KubeLeaseApi(kube.coordination),
        // A standby sees a release at once through it; polling every retry period stays the fallback.
        watch: new LeaseWatch(kc, kube.coordination, le, {
          clock,
          metrics,
          log: componentLogger("lease-watch"),
        }),
        fence,
        clock,
        log: componentLogger("lease"),
        metrics,
        identity,
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
