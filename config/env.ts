/**
 * Environment variables (the Go CCM's names and defaults) and the value parsers shared with flags:
 * Go booleans, durations and integers, CIDRs, IP addresses, the Linode API URL. Pure: `config.ts` hands in the variables it read.
 */
import { checkMasterUrl, checkRegion, checkServiceEndpoint, checkTimerSeconds } from "./checks.ts";
import { cidrFamily, parseIpv4 } from "../common/net.ts";
import { type TokenOptions, type TokenSource, tokenSource } from "./token_env.ts";

export { Secret } from "./secret.ts";
export type { TokenFileCheck, TokenOptions, TokenSource } from "./token_env.ts";

/** The environment variables read, with defaults, for `--help`. `readConfig` reads exactly these. */
export const ENV_VARS: readonly { name: string; def: string; help: string }[] = Object.freeze([
  { name: "LINODE_API_TOKEN", def: "", help: "Linode API token, used when the token file cannot be read" },
  {
    name: "LINODE_API_TOKEN_FILE",
    def: "/var/run/secrets/linode/api-token",
    help: "file holding the token (preferred when readable at start), re-read when it changes",
  },
  {
    name: "LINODE_API_TOKEN_CACHE_TTL_SECONDS",
    def: "60",
    help: "seconds a token read from the file is used before the file is read again",
  },
  { name: "LINODE_REGION", def: "", help: "required: region of the cluster's Linodes" },
  { name: "LINODE_URL", def: "https://api.linode.com/v4", help: "API URL; last path segment is the version" },
  { name: "LINODE_REQUEST_TIMEOUT_SECONDS", def: "120", help: "timeout of one Linode API request" },
  { name: "LINODE_INSTANCE_CACHE_TTL", def: "15", help: "seconds between Linode instance list refreshes" },
  {
    name: "LINODE_ROUTES_CACHE_TTL_SECONDS",
    def: "60",
    help: "seconds between VPC lookups by name, and before the VPC IP list is re-read while a route write " +
      "fails (otherwise it is re-read every --node-status-update-frequency; docs/freshness.md)",
  },
  { name: "LINODE_EXTERNAL_SUBNET", def: "", help: "CIDR of private addresses to report as external" },
  {
    name: "LINODE_HOSTNAME_ONLY_INGRESS",
    def: "false",
    help: "report only hostnames in LoadBalancer ingress",
  },
  {
    name: "SENTRY_DSN",
    def: "",
    help: "report failed syncs and fatal errors to this Sentry DSN (secrets scrubbed)",
  },
  {
    name: "SENTRY_ENVIRONMENT",
    def: "",
    help: "Sentry environment; required with SENTRY_DSN (as the Go CCM)",
  },
  { name: "SENTRY_RELEASE", def: "unknown", help: "Sentry release" },
  { name: "KUBECONFIG", def: "", help: "kubeconfig path when --kubeconfig is not given (first entry)" },
  { name: "KUBERNETES_SERVICE_HOST", def: "", help: "in-cluster API host (set by Kubernetes)" },
  { name: "KUBERNETES_SERVICE_PORT", def: "", help: "in-cluster API port (set by Kubernetes)" },
]);

/** The environment as `config.ts` sees it. */
export type Env = Readonly<Record<string, string | undefined>>;

/** Where the Kubernetes API credentials come from; assignable to `kube/config.ts`'s `KubeConfigSource`. */
export type KubeSource =
  | {
    readonly kind: "kubeconfig";
    readonly kubeconfig: string;
    readonly from: "flag" | "env";
    readonly master?: string;
  }
  | {
    readonly kind: "in-cluster";
    readonly serviceHost: string;
    readonly servicePort: string;
    readonly master?: string;
  }
  | { readonly kind: "master"; readonly master: string };

const TRUE_WORDS = new Set(["1", "t", "T", "TRUE", "true", "True"]);
const FALSE_WORDS = new Set(["0", "f", "F", "FALSE", "false", "False"]);

/** Go's `strconv.ParseBool`: `undefined` when `text` is not one of its twelve spellings. */
export function parseGoBool(text: string): boolean | undefined {
  if (TRUE_WORDS.has(text)) return true;
  if (FALSE_WORDS.has(text)) return false;
  return undefined;
}

const DURATION_UNIT_NS: Readonly<Record<string, number>> = {
  ns: 1,
  us: 1e3,
  "\u00b5s": 1e3,
  "\u03bcs": 1e3,
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};

/** Go's `time.ParseDuration` (`15s`, `1m30s`, `1.5h`, `100ms`, `0`), in milliseconds; `undefined` if invalid. */
export function parseGoDuration(text: string): number | undefined {
  let rest = text;
  const sign = rest.startsWith("-") ? -1 : 1;
  if (rest.startsWith("-") || rest.startsWith("+")) rest = rest.slice(1);
  if (rest === "0") return 0;
  if (rest === "") return undefined;
  let ns = 0;
  while (rest !== "") {
    // Go requires a unit on every number: a bare "15" is an error, which catches seconds-vs-ms mistakes.
    const m = /^(\d*)(?:\.(\d*))?([^\d.]*)/.exec(rest);
    if (!m || m[0] === "") return undefined;
    const [all, whole = "", frac, unit = ""] = m;
    const scale = DURATION_UNIT_NS[unit];
    if ((whole === "" && !frac) || scale === undefined) return undefined;
    ns += Number(`${whole || "0"}.${frac || "0"}`) * scale;
    rest = rest.slice(all.length);
  }
  return Number.isFinite(ns) ? (sign * ns) / 1e6 : undefined;
}

/** Go's `strconv.ParseInt(text, 0, 64)` (decimal, `0x`, `0o`, `0b`, leading-zero octal) as a safe integer. */
export function parseGoInt(text: string): number | undefined {
  const m = /^([+-]?)(?:0[xX]([0-9a-fA-F]+)|0[oO]([0-7]+)|0[bB]([01]+)|0([0-7]*)|([1-9]\d*))$/.exec(text);
  if (!m) return undefined;
  const [, sign, hex, oct, bin, zeroOct, dec] = m;
  const magnitude = hex !== undefined
    ? parseInt(hex, 16)
    : oct !== undefined
    ? parseInt(oct, 8)
    : bin !== undefined
    ? parseInt(bin, 2)
    : zeroOct !== undefined
    ? (zeroOct === "" ? 0 : parseInt(zeroOct, 8))
    : Number(dec);
  const value = sign === "-" ? -magnitude : magnitude;
  return Number.isSafeInteger(value) ? value : undefined;
}

/** Go's `strconv.ParseFloat` for plain decimal and exponent forms. */
export function parseGoFloat(text: string): number | undefined {
  return /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text) ? Number(text) : undefined;
}

/** Splits a pflag slice value on commas, trimming blanks and dropping empty entries. */
export function splitList(text: string): string[] {
  return text.split(",").map((s) => s.trim()).filter((s) => s !== "");
}

/** `true` for `localhost` and loopback addresses (127.0.0.0/8, `::1`), the only hosts allowed over http. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  if (host === "localhost" || host === "::1" || host === "0:0:0:0:0:0:0:1") return true;
  return parseIpv4(host) !== undefined && host.startsWith("127.");
}

/** The Linode API location: `url` without a trailing slash, split into `baseUrl` + `/` + `apiVersion`. */
export interface LinodeUrl {
  readonly url: string;
  readonly baseUrl: string;
  readonly apiVersion: string;
}

/** Parses `LINODE_URL`; returns a problem line instead when it is unusable. */
export function parseLinodeUrl(text: string): LinodeUrl | string {
  const accepted = "use https://HOST/v4, or http:// only for 127.0.0.1, ::1 or localhost";
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return `LINODE_URL: invalid URL "${text}" (${accepted})`;
  }
  if (u.protocol !== "https:" && u.protocol !== "http:") {
    return `LINODE_URL: unsupported scheme (${accepted})`;
  }
  if (u.username || u.password || u.search || u.hash) {
    return `LINODE_URL: must not carry credentials, a query or a fragment (${accepted})`;
  }
  if (u.protocol === "http:" && !isLoopbackHost(u.hostname)) {
    return `LINODE_URL: http:// is only allowed for loopback hosts, not ${u.hostname} (${accepted})`;
  }
  const path = u.pathname.replace(/\/+$/, "");
  const slash = path.lastIndexOf("/");
  const apiVersion = path.slice(slash + 1);
  if (apiVersion === "") return `LINODE_URL: no API version in the path (${accepted})`;
  const baseUrl = `${u.origin}${path.slice(0, slash)}`;
  return { url: `${baseUrl}/${apiVersion}`, baseUrl, apiVersion };
}

/** The Linode part of the environment. */
export interface LinodeEnv {
  readonly token: TokenSource;
  readonly region: string;
  /** `LINODE_URL` without a trailing slash, ending in the API version. */
  readonly url: string;
  readonly requestTimeoutMs: number;
  readonly instanceCacheTtlMs: number;
  readonly routesCacheTtlMs: number;
  /** `LINODE_EXTERNAL_SUBNET`, or `null`. */
  readonly externalSubnet: string | null;
  readonly hostnameOnlyIngress: boolean;
}

function value(env: Env, name: string): string | undefined {
  const v = env[name]?.trim();
  return v === "" ? undefined : v;
}

function seconds(env: Env, name: string, def: number, problems: string[]): number {
  const text = value(env, name);
  if (text === undefined) return def * 1000;
  return checkTimerSeconds(name, text, problems) ? Number(text) * 1000 : def * 1000;
}

/** Reads and checks the Linode variables, appending one line per problem to `problems`. */
export function parseLinodeEnv(env: Env, problems: string[], options: TokenOptions = {}): LinodeEnv {
  const region = value(env, "LINODE_REGION") ?? "";
  if (region === "") {
    problems.push("LINODE_REGION: not set (the region of the cluster's Linodes, e.g. us-east)");
  } else checkRegion(region, problems);
  const parsed = parseLinodeUrl(value(env, "LINODE_URL") ?? "https://api.linode.com/v4");
  if (typeof parsed === "string") problems.push(parsed);
  const externalSubnet = value(env, "LINODE_EXTERNAL_SUBNET") ?? null;
  // Only private IPv4 addresses are re-labelled external, so only an IPv4 network means anything here.
  if (externalSubnet !== null && cidrFamily(externalSubnet) !== 4) {
    problems.push(
      `LINODE_EXTERNAL_SUBNET: invalid IPv4 CIDR "${externalSubnet}" (use an IPv4 network such as ` +
        "172.24.0.0/16; IPv6 is not accepted)",
    );
  }
  const hostnameText = value(env, "LINODE_HOSTNAME_ONLY_INGRESS");
  const hostnameOnlyIngress = hostnameText === undefined ? false : parseGoBool(hostnameText);
  if (hostnameOnlyIngress === undefined) {
    problems.push(`LINODE_HOSTNAME_ONLY_INGRESS: invalid boolean "${hostnameText}" (use true or false)`);
  }
  return {
    token: tokenSource((name) => value(env, name), options, problems),
    region,
    url: typeof parsed === "string" ? "" : parsed.url,
    requestTimeoutMs: seconds(env, "LINODE_REQUEST_TIMEOUT_SECONDS", 120, problems),
    instanceCacheTtlMs: seconds(env, "LINODE_INSTANCE_CACHE_TTL", 15, problems),
    routesCacheTtlMs: seconds(env, "LINODE_ROUTES_CACHE_TTL_SECONDS", 60, problems),
    externalSubnet,
    hostnameOnlyIngress: hostnameOnlyIngress ?? false,
  };
}

/**
 * Chooses the Kubernetes credentials like client-go's `BuildConfigFromFlags`: `--kubeconfig`, else
 * `KUBECONFIG` (first entry), else in-cluster, else `--master` alone.
 */
export function chooseKubeSource(
  flags: { kubeconfig: string; master: string },
  env: Env,
  problems: string[],
): KubeSource {
  const master = flags.master === "" ? {} : { master: flags.master };
  if (flags.master !== "") checkMasterUrl(flags.master, problems);
  if (flags.kubeconfig !== "") {
    return { kind: "kubeconfig", kubeconfig: flags.kubeconfig, from: "flag", ...master };
  }
  const fromEnv = (value(env, "KUBECONFIG") ?? "").split(":").find((p) => p !== "");
  if (fromEnv !== undefined) return { kind: "kubeconfig", kubeconfig: fromEnv, from: "env", ...master };
  const serviceHost = value(env, "KUBERNETES_SERVICE_HOST");
  const servicePort = value(env, "KUBERNETES_SERVICE_PORT");
  if (serviceHost !== undefined && servicePort !== undefined) {
    checkServiceEndpoint(serviceHost, servicePort, problems);
    return { kind: "in-cluster", serviceHost, servicePort, ...master };
  }
  if (flags.master !== "") return { kind: "master", master: flags.master };
  problems.push(
    "--kubeconfig: no Kubernetes API to talk to (set --kubeconfig, KUBECONFIG or --master, or run in a pod " +
      "with KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT)",
  );
  return { kind: "master", master: "" };
}
