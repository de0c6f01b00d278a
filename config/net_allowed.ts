/**
 * The servers a Config names (the Linode API of `LINODE_URL`, the apiserver, the listen address) must be
 * allowed by the process's net permission. `deno task start`, the binary and the image grant only the hosts of
 * their `--allow-net` list (deploy/net-allow, built into the binary by `deno task compile`; the image's
 * `CCM_ALLOW_NET` build argument); a server outside it would fail later with a bare "NotCapable" on the first
 * request, so it is reported at start (exit 2), naming the setting and how to allow it, like `readable.ts`.
 */
import type { KubeSource } from "./env.ts";
import type { ServeConfig } from "./types.ts";

/** Whether `host` (`name:port`, `[v6]:port`) may be connected to or listened on; `checkNet` asks Deno. */
export type NetCheck = (host: string) => boolean;

/** One server a setting names, as Deno's net permission spells it: `host:port`. */
export interface NetTarget {
  readonly setting: string;
  readonly host: string;
  /** "connect to" or "listen on", for the message. */
  readonly action: "connect to" | "listen on";
}

/** Asks Deno whether `host` is granted (anything else, a prompt included, is a refusal). */
export function checkNet(host: string): boolean {
  return Deno.permissions.querySync({ name: "net", host }).state === "granted";
}

/** `host:port` of an address and port, brackets around IPv6 as Deno's permission syntax wants them. */
export function hostPort(hostname: string, port: number | string): string {
  const bare = hostname.replace(/^\[(.*)\]$/, "$1");
  return bare.includes(":") ? `[${bare}]:${port}` : `${bare}:${port}`;
}

/** `host:port` of a URL, with the scheme's default port (443 for https, 80 for http); undefined if unparsable. */
export function urlHostPort(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  const port = parsed.port || (parsed.protocol === "http:" ? "80" : "443");
  return hostPort(parsed.hostname, port);
}

/** How to allow a refused server: where each way of running the CCM takes its list. */
export function netDeniedReason(): string {
  return "this process may not (it holds only the hosts of its --allow-net list): add it to deploy/net-allow " +
    "(deno task manifest --net-allow writes that file from a configuration) for deno task start, then run " +
    "deno task compile again for the binary; for the image, build with --build-arg CCM_ALLOW_NET=<host:port,...> " +
    "(docs/security.md)";
}

/** One problem line per target `check` refuses, naming the setting, the server and how to allow it. */
export function refusedServers(targets: readonly NetTarget[], check: NetCheck): string[] {
  return targets.filter((t) => !check(t.host)).map((t) =>
    `${t.setting}: cannot ${t.action} ${t.host}: ${netDeniedReason()}`
  );
}

/** What `configTargets` reads. */
export interface NetSettings {
  readonly linodeUrl: string;
  readonly kube: KubeSource;
  readonly serve: Pick<ServeConfig, "bindAddress" | "securePort">;
}

/**
 * The servers known from flags and environment alone: `LINODE_URL`, `--master` or the in-cluster service, and
 * the listen address. A kubeconfig file's server is checked once the file is loaded (`kubeConfigTarget`).
 */
export function configTargets(s: NetSettings): NetTarget[] {
  const targets: NetTarget[] = [];
  const linode = urlHostPort(s.linodeUrl);
  if (linode) targets.push({ setting: "LINODE_URL", host: linode, action: "connect to" });
  const k = s.kube;
  const master = k.master ? urlHostPort(k.master) : undefined;
  if (master) targets.push({ setting: "--master", host: master, action: "connect to" });
  else if (k.kind === "in-cluster") {
    targets.push({
      setting: "KUBERNETES_SERVICE_HOST, KUBERNETES_SERVICE_PORT",
      host: hostPort(k.serviceHost, k.servicePort),
      action: "connect to",
    });
  }
  if (s.serve.securePort !== null) {
    const listen = hostPort(s.serve.bindAddress, s.serve.securePort);
    targets.push({ setting: "--bind-address, --secure-port", host: listen, action: "listen on" });
  }
  return targets;
}

/** The server of a loaded kubeconfig as a target named by `setting` (`--kubeconfig /path`). */
export function kubeConfigTarget(setting: string, server: string): NetTarget[] {
  const host = urlHostPort(server);
  return host ? [{ setting: `${setting} (server ${server})`, host, action: "connect to" }] : [];
}
