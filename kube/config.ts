/**
 * Loads the KubeConfig the way client-go's `BuildConfigFromFlags` does: a kubeconfig file (with `--master`
 * overriding its server), or in-cluster from the service-account folder. Environment values arrive through
 * `source`; this module reads files only.
 *
 * Every KubeConfig it loads has client-node's connection handling fixed in two ways for a long-running
 * controller (`useHttp1`):
 * - HTTP/1.1 only. Its undici 8 agent offers `h2` by ALPN, and HTTP/2 runs on Deno's nghttp2 binding, which
 *   aborts the whole process (`find_stream_on_goaway_func` assertion, or a segfault) when the server sends
 *   GOAWAY with streams open: kube-apiserver does that on shutdown and, with `--goaway-chance`, at random.
 * - One connection pool per cluster and TLS material (kubeconfigs with `proxy-url` keep client-node's own
 *   proxy agents: neither pooled nor limited to HTTP/1.1). client-node builds a new undici Agent for every
 *   request, so every request paid a new TCP and TLS handshake (~45 ms instead of ~1 ms on loopback).
 *   Agents are reused while the CA, client certificate and key stay the same; a rotated certificate file
 *   gives a new key and a new pool.
 */
import { dirname, isAbsolute, join } from "node:path";
import { type Cluster, KubeConfig, type User } from "@kubernetes/client-node";
import { Agent, type Dispatcher } from "undici";
import { load, YAMLException } from "js-yaml";
import type { Clock } from "../common/clock.ts";

/** The service-account folder of every pod. */
export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

/** Where to load credentials from; values come from flags and env via `config.ts`. */
export interface KubeConfigSource {
  /** `--kubeconfig` or `KUBECONFIG` (first entry). Empty: in-cluster. */
  kubeconfig?: string;
  /** `--master`: overrides the server of the kubeconfig, or of the in-cluster config. */
  master?: string;
  /** `KUBERNETES_SERVICE_HOST` and `KUBERNETES_SERVICE_PORT`, for in-cluster config. */
  serviceHost?: string;
  servicePort?: string;
  /** The service-account folder (default `SERVICE_ACCOUNT_DIR`; tests point it at a temp dir). */
  serviceAccountDir?: string;
}

/** The kubeconfig cannot be used; the program should exit 2 with this message. Never holds credentials. */
export class KubeConfigError extends Error {
  override name = "KubeConfigError";
}

/** Loads and validates a KubeConfig from `source`; throws `KubeConfigError`. */
export function loadKubeConfig(source: KubeConfigSource): KubeConfig {
  const kc = source.kubeconfig
    ? loadFile(source.kubeconfig)
    : source.master && !(source.serviceHost && source.servicePort)
    ? masterOnly()
    : loadInCluster(source);
  if (source.master) overrideServer(kc, source.master);
  else allowPlainHttp(kc);
  return useHttp1(kc);
}

function fail(what: string, detail: string): never {
  throw new KubeConfigError(`Cannot load ${what}: ${detail}`);
}

function readText(path: string, what: string): string {
  try {
    return Deno.readTextFileSync(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) fail(what, `${path} not found`);
    // NotCapable: outside the read paths Deno was granted (the `ccm` permission set).
    if (e instanceof Deno.errors.PermissionDenied || e instanceof Deno.errors.NotCapable) {
      fail(what, `no permission to read ${path}`);
    }
    fail(what, `cannot read ${path}`);
  }
}

function parseYaml(text: string, what: string): Record<string, unknown> {
  let doc: unknown;
  try {
    doc = load(text);
  } catch (e) {
    // The YAML error text quotes the offending lines, which may hold a token: keep only the position.
    const at = e instanceof YAMLException && e.mark
      ? ` at line ${e.mark.line + 1}, column ${e.mark.column + 1}`
      : "";
    fail(what, `invalid YAML${at}`);
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) fail(what, "not a kubeconfig mapping");
  return doc as Record<string, unknown>;
}

function loadFile(path: string): KubeConfig {
  const what = `kubeconfig ${path}`;
  const doc = parseYaml(readText(path, what), what);
  const kc = new KubeConfig();
  try {
    // Already parsed: hand client-node JSON (valid YAML) so its own field mapping applies.
    kc.loadFromString(JSON.stringify(doc));
  } catch (e) {
    fail(what, e instanceof Error ? e.message : "malformed entries");
  }
  makePathsAbsolute(kc, dirname(path));
  validateCurrent(kc, what);
  return kc;
}

function makePathsAbsolute(kc: KubeConfig, root: string): void {
  const abs = (p: string | undefined) => (p && !isAbsolute(p) ? join(root, p) : p);
  for (const c of kc.clusters) c.caFile = abs(c.caFile);
  for (const u of kc.users) {
    u.certFile = abs(u.certFile);
    u.keyFile = abs(u.keyFile);
  }
}

function validateCurrent(kc: KubeConfig, what: string): void {
  const name = kc.getCurrentContext();
  if (!name) fail(what, "no current-context is set");
  const context = kc.getContextObject(name);
  if (!context) fail(what, `current-context "${name}" is not defined`);
  const cluster = kc.getCluster(context.cluster);
  if (!cluster) fail(what, `context "${name}" refers to unknown cluster "${context.cluster}"`);
  if (context.user && !kc.getUser(context.user)) {
    fail(what, `context "${name}" refers to unknown user "${context.user}"`);
  }
  requireReadable(cluster.caFile, what, "certificate-authority");
  const user = context.user ? kc.getUser(context.user) : null;
  requireReadable(user?.certFile, what, "client-certificate");
  requireReadable(user?.keyFile, what, "client-key");
}

function requireReadable(path: string | undefined, what: string, field: string): void {
  if (!path) return;
  try {
    Deno.statSync(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotCapable) {
      const embed = "embed it in the kubeconfig (kubectl config view --raw --flatten)";
      fail(what, `${field} file ${path} is not among the files this process may read: ${embed}`);
    }
    fail(what, `${field} file ${path} not found`);
  }
}

/** `--master` alone, as client-go builds it: that server, no credentials. */
function masterOnly(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromClusterAndUser({ name: "master", server: "", skipTLSVerify: false }, { name: "anonymous" });
  return kc;
}

function loadInCluster(source: KubeConfigSource): KubeConfig {
  const what = "in-cluster config";
  const dir = source.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  const host = source.serviceHost;
  const port = source.servicePort;
  if (!host || !port) {
    fail(
      what,
      "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set (pass --kubeconfig outside a pod)",
    );
  }
  const tokenFile = join(dir, "token");
  requireReadable(tokenFile, what, "service-account token");
  const caFile = join(dir, "ca.crt");
  const hasCa = exists(caFile);
  const server = `https://${host.includes(":") ? `[${host}]` : host}:${port}`;
  const cluster: Cluster = {
    name: "inCluster",
    server,
    caFile: hasCa ? caFile : undefined,
    skipTLSVerify: false,
  };
  // client-node's file auth re-reads the token every 60 s, which follows kubelet's token rotation.
  const user: User = { name: "inClusterUser", authProvider: { name: "tokenFile", config: { tokenFile } } };
  const kc = new KubeConfig();
  kc.loadFromClusterAndUser(cluster, user);
  return kc;
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

function replaceCluster(kc: KubeConfig, change: (c: Cluster) => Cluster): void {
  const current = kc.getCurrentCluster();
  if (!current) return;
  kc.clusters = kc.clusters.map((c) => (c.name === current.name ? change(c) : c));
}

function overrideServer(kc: KubeConfig, master: string): void {
  let url: URL;
  try {
    url = new URL(master);
  } catch {
    fail("kubeconfig", `--master ${master} is not a URL`);
  }
  replaceCluster(
    kc,
    (c) => ({ ...c, server: master.replace(/\/$/, ""), skipTLSVerify: plainHttp(url) || c.skipTLSVerify }),
  );
}

/** TLS verification means nothing over plain HTTP; client-node would refuse the URL unless it is skipped. */
function allowPlainHttp(kc: KubeConfig): void {
  replaceCluster(kc, (c) => (c.server.startsWith("http:") ? { ...c, skipTLSVerify: true } : c));
}

function plainHttp(url: URL): boolean {
  return url.protocol === "http:";
}

/** Credentials in `kc` that must be redacted from logs (static tokens, passwords, keys; token files read now). */
export function kubeConfigSecrets(kc: KubeConfig): string[] {
  const out = staticSecrets(kc);
  for (const file of tokenFiles(kc)) {
    const token = readTokenFile(file);
    if (token) out.push(token);
  }
  return out;
}

function staticSecrets(kc: KubeConfig): string[] {
  return kc.users.flatMap((u) => [u.token, u.password, u.keyData].filter((s): s is string => !!s));
}

function tokenFiles(kc: KubeConfig): string[] {
  return kc.users.map((u) => u.authProvider?.config?.tokenFile).filter((f): f is string =>
    typeof f === "string"
  );
}

function readTokenFile(path: string): string | undefined {
  try {
    return Deno.readTextFileSync(path).trim() || undefined;
  } catch {
    // Unreadable now: requests will fail with a clear error; nothing to redact yet.
    return undefined;
  }
}

/** Options of `kubeSecretsSource`. */
export interface KubeSecretsOptions {
  clock: Pick<Clock, "monotonic">;
  /** How long a read token file is trusted (default 60 s: client-node re-reads it as often). */
  recheckMs?: number;
}

/** Default `recheckMs`: client-node's own token-file refresh period. */
export const DEFAULT_KUBE_SECRETS_RECHECK_MS = 60_000;

/**
 * The kube credentials to redact, asked per log line and Event: token files (the kubelet rotates the
 * service-account token) are re-read at most once per `recheckMs`, not per line, and every token seen stays
 * in the list after it rotates out.
 */
export function kubeSecretsSource(kc: KubeConfig, options: KubeSecretsOptions): () => readonly string[] {
  const seen = new Set(staticSecrets(kc));
  const files = tokenFiles(kc);
  const recheckMs = options.recheckMs ?? DEFAULT_KUBE_SECRETS_RECHECK_MS;
  let readAt = -Infinity;
  let list: readonly string[] = [...seen];
  return () => {
    const now = options.clock.monotonic();
    if (files.length === 0 || now - readAt < recheckMs) return list;
    readAt = now;
    for (const file of files) {
      const token = readTokenFile(file);
      if (token) seen.add(token);
    }
    list = [...seen];
    return list;
  };
}

// ---- Connections: pooled, HTTP/1.1 only (see the top of this file).

type CreateDispatcher = (cluster: Cluster | null, agentOptions: unknown) => Dispatcher | undefined;

/** Pools kept per KubeConfig (distinct servers or TLS material); the oldest is closed beyond this. */
const MAX_POOLS = 4;

function poolKey(cluster: Cluster | null, connect: unknown): string {
  return JSON.stringify([cluster?.server ?? "", connect]);
}

/** Makes `kc` use pooled, HTTP/1.1-only dispatchers for every request and watch; returns `kc`. */
export function useHttp1(kc: KubeConfig): KubeConfig {
  // Why a private method: client-node offers no public way to give its API clients and watches a dispatcher.
  // Both get one from `KubeConfig.applySecurityAuthentication`, which calls the private `createDispatcher`
  // for every request; replacing it on this instance is the one place where pooling and the HTTP/1.1 pin
  // reach every request. `createDispatcherOptions` is its public half and builds the TLS options we pool by.
  // config_test.ts fails, naming this file, when an upgrade renames the method or stops calling it.
  const target = kc as unknown as { createDispatcher?: CreateDispatcher };
  if (typeof target.createDispatcher !== "function") {
    throw new TypeError(
      "Cannot pin Kubernetes connections to HTTP/1.1: @kubernetes/client-node no longer has the private " +
        "KubeConfig.createDispatcher that kube/config.ts replaces (written for 2.0.1)",
    );
  }
  const original = target.createDispatcher.bind(kc);
  const pools = new Map<string, Agent>();
  target.createDispatcher = (cluster, agentOptions) => {
    const options = kc.createDispatcherOptions(
      cluster,
      agentOptions as Parameters<KubeConfig["createDispatcherOptions"]>[1],
    );
    if (options.type !== "agent") return original(cluster, agentOptions);
    const key = poolKey(cluster, options.connect);
    let agent = pools.get(key);
    if (!agent) {
      agent = new Agent({ connect: options.connect, allowH2: false });
      pools.set(key, agent);
      for (const [oldKey, old] of pools) {
        if (pools.size <= MAX_POOLS) break;
        pools.delete(oldKey);
        old.close().catch(() => {});
      }
    }
    return agent;
  };
  return kc;
}
