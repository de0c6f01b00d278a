/**
 * Environment variables (the Go CCM's names and defaults), where the Linode API token comes from, and the value
 * parsers shared with flags: Go booleans, durations, integers and CSV lists, CIDRs, IP addresses, the Linode API
 * URL. Pure: `config.ts` hands in the variables it read. A variable is read through `envValue`, which takes only
 * the names declared in `ENV_VARS`.
 */
import { checkMasterUrl, checkRegion, checkServiceEndpoint, checkTimerSeconds } from "./checks.ts";
import { cidrFamily, parseIpv4 } from "../common/net.ts";

const VARS = [
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
] as const;

/** The name of a variable this CCM reads. */
export type EnvName = typeof VARS[number]["name"];

/** The environment variables read, with defaults, for `--help`. `readConfig` reads exactly these. */
export const ENV_VARS: readonly { readonly name: EnvName; readonly def: string; readonly help: string }[] =
  Object
    .freeze(VARS);

/** The environment as `config.ts` sees it. */
export type Env = Readonly<Record<string, string | undefined>>;

/** A declared variable, trimmed; `undefined` when unset or blank. */
export function envValue(env: Env, name: EnvName): string | undefined {
  const v = env[name]?.trim();
  return v === "" ? undefined : v;
}

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

/** A secret string that prints as `***` everywhere (JSON, template strings, `Deno.inspect`). */
export class Secret {
  readonly #value: string;
  /** Wraps `value`. */
  constructor(value: string) {
    this.#value = value;
  }
  /** The secret itself: pass it straight to the client that needs it, never to a logger. */
  reveal(): string {
    return this.#value;
  }
  /** `***`. */
  toString(): string {
    return "***";
  }
  /** `***`. */
  toJSON(): string {
    return "***";
  }
  /** `***` for `Deno.inspect` and `console.log`. */
  [Symbol.for("Deno.customInspect")](): string {
    return "***";
  }
  /** `***` for `node:util` inspect. */
  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return "***";
  }
}

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

/**
 * The first record of `text` as Go's `encoding/csv` reads it with its defaults, which is how pflag reads a
 * StringSlice flag: commas separate items, nothing is trimmed, an item may be quoted (`"a,b"`, with `""` for a
 * quote inside), a quote elsewhere is an error. Returns the items, or why it cannot be read.
 */
export function readCsv(text: string): string[] | string {
  if (text === "") return []; // pflag's special case: an empty value is an empty list
  const s = text.replaceAll("\r\n", "\n").replace(/\r$/, "").replace(/^\n+/, "");
  if (s === "") return "no items";
  const items: string[] = [];
  let i = 0;
  for (;;) {
    if (s[i] !== '"') {
      let end = i;
      while (end < s.length && s[end] !== "," && s[end] !== "\n") end++;
      const item = s.slice(i, end);
      if (item.includes('"')) return "a quote inside an unquoted item";
      items.push(item);
      if (s[end] !== ",") return items;
      i = end + 1;
      continue;
    }
    let item = "";
    for (i++;;) {
      const quote = s.indexOf('"', i);
      if (quote < 0) return "a quoted item is not closed";
      item += s.slice(i, quote);
      i = quote + 1;
      if (s[i] === '"') (item += '"', i++);
      else break;
    }
    items.push(item);
    if (i >= s.length || s[i] === "\n") return items;
    if (s[i] !== ",") return "text after a closing quote";
    i++;
  }
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

/**
 * Where the Linode API token comes from, as the Go CCM decides it: the token file (`LINODE_API_TOKEN_FILE`,
 * else `/var/run/secrets/linode/api-token`) when it can be read at start, else `LINODE_API_TOKEN`;
 * `LINODE_API_TOKEN_CACHE_TTL_SECONDS` sets how long a token read from the file is used.
 */
/** Reads one variable, trimmed; `undefined` when unset or blank. */
export type ReadVar = (name: EnvName) => string | undefined;

/** Where the Linode API token comes from. */
export type TokenSource =
  | { readonly kind: "env"; readonly token: Secret }
  | { readonly kind: "file"; readonly path: string; readonly cacheTtlMs: number };

/** Where the Go CCM looks for the token when `LINODE_API_TOKEN_FILE` is not set. */
export const DEFAULT_TOKEN_FILE = "/var/run/secrets/linode/api-token";

/** How long a token read from the file is used (the Go CCM's default, one minute). */
export const DEFAULT_TOKEN_CACHE_TTL_MS = 60_000;

/** Checks a token file at start: returns why it cannot be used, or `undefined` when it can. */
export type TokenFileCheck = (path: string) => string | undefined;

/** How `parseLinodeEnv` finds the token. */
export interface TokenOptions {
  /** Checks the token file at start (`readConfig` reads it once); without it a named file is taken as usable. */
  checkTokenFile?: TokenFileCheck;
  /** The file tried when `LINODE_API_TOKEN_FILE` is unset (`null` in `--dev`); default `DEFAULT_TOKEN_FILE`. */
  defaultTokenFile?: string | null;
  /** Receives lines worth a warning at start (a token file passed over, a cache TTL ignored). */
  warnings?: string[];
}

/** `LINODE_API_TOKEN_CACHE_TTL_SECONDS`, read as leniently as the Go CCM: anything but a positive integer is the default. */
function tokenCacheTtlMs(read: ReadVar, warnings: string[]): number {
  const text = read("LINODE_API_TOKEN_CACHE_TTL_SECONDS");
  if (text === undefined) return DEFAULT_TOKEN_CACHE_TTL_MS;
  const seconds = /^[+-]?\d+$/.test(text) ? Number(text) : NaN;
  if (Number.isSafeInteger(seconds) && seconds > 0) return seconds * 1000;
  warnings.push(
    `LINODE_API_TOKEN_CACHE_TTL_SECONDS: "${text}" is not a positive whole number of seconds; using 60 (as the Go CCM)`,
  );
  return DEFAULT_TOKEN_CACHE_TTL_MS;
}

/**
 * The Go CCM's order: the token file (`LINODE_API_TOKEN_FILE`, else `DEFAULT_TOKEN_FILE`) when it can be read at
 * start, else `LINODE_API_TOKEN`; neither usable is a problem naming both.
 */
export function tokenSource(read: ReadVar, options: TokenOptions, problems: string[]): TokenSource {
  const warnings = options.warnings ?? [];
  const token = read("LINODE_API_TOKEN");
  const named = read("LINODE_API_TOKEN_FILE");
  const defaultFile = options.defaultTokenFile === undefined ? DEFAULT_TOKEN_FILE : options.defaultTokenFile;
  const path = named ?? defaultFile ?? undefined;
  const cacheTtlMs = tokenCacheTtlMs(read, warnings);
  // Without a checker only a file the user named is assumed readable; the default path is a guess.
  const why = path === undefined
    ? "not set"
    : options.checkTokenFile
    ? options.checkTokenFile(path)
    : named === undefined
    ? "not checked"
    : undefined;
  if (path !== undefined && why === undefined) return Object.freeze({ kind: "file", path, cacheTtlMs });
  if (token !== undefined) {
    if (named !== undefined) {
      warnings.push(
        `LINODE_API_TOKEN_FILE: cannot use ${named}: ${why}; using LINODE_API_TOKEN instead (as the Go CCM)`,
      );
    }
    return Object.freeze({ kind: "env", token: new Secret(token) });
  }
  if (named !== undefined) {
    problems.push(
      `LINODE_API_TOKEN_FILE: cannot use ${named}: ${why} (and LINODE_API_TOKEN, the fallback, is not set)`,
    );
  } else {
    const file = path === undefined ? "" : `, and the token file ${path} cannot be used` +
      (why === "not checked" ? "" : `: ${why}`);
    problems.push(`LINODE_API_TOKEN: not set${file} (set LINODE_API_TOKEN or LINODE_API_TOKEN_FILE)`);
  }
  return Object.freeze({ kind: "env", token: new Secret("") });
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

function seconds(env: Env, name: EnvName, def: number, problems: string[]): number {
  const text = envValue(env, name);
  if (text === undefined) return def * 1000;
  return checkTimerSeconds(name, text, problems) ? Number(text) * 1000 : def * 1000;
}

/** Reads and checks the Linode variables, appending one line per problem to `problems`. */
export function parseLinodeEnv(env: Env, problems: string[], options: TokenOptions = {}): LinodeEnv {
  const region = envValue(env, "LINODE_REGION") ?? "";
  if (region === "") {
    problems.push("LINODE_REGION: not set (the region of the cluster's Linodes, e.g. us-east)");
  } else checkRegion(region, problems);
  const parsed = parseLinodeUrl(envValue(env, "LINODE_URL") ?? "https://api.linode.com/v4");
  if (typeof parsed === "string") problems.push(parsed);
  const externalSubnet = envValue(env, "LINODE_EXTERNAL_SUBNET") ?? null;
  // Only private IPv4 addresses are re-labelled external, so only an IPv4 network means anything here.
  if (externalSubnet !== null && cidrFamily(externalSubnet) !== 4) {
    problems.push(
      `LINODE_EXTERNAL_SUBNET: invalid IPv4 CIDR "${externalSubnet}" (use an IPv4 network such as ` +
        "172.24.0.0/16; IPv6 is not accepted)",
    );
  }
  const hostnameText = envValue(env, "LINODE_HOSTNAME_ONLY_INGRESS");
  const hostnameOnlyIngress = hostnameText === undefined ? false : parseGoBool(hostnameText);
  if (hostnameOnlyIngress === undefined) {
    problems.push(`LINODE_HOSTNAME_ONLY_INGRESS: invalid boolean "${hostnameText}" (use true or false)`);
  }
  return {
    token: tokenSource((name) => envValue(env, name), options, problems),
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
  const fromEnv = (envValue(env, "KUBECONFIG") ?? "").split(":").find((p) => p !== "");
  if (fromEnv !== undefined) return { kind: "kubeconfig", kubeconfig: fromEnv, from: "env", ...master };
  const serviceHost = envValue(env, "KUBERNETES_SERVICE_HOST");
  const servicePort = envValue(env, "KUBERNETES_SERVICE_PORT");
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
