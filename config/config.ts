/**
 * Flags + environment → one validated, deeply frozen `Config`. `parseConfig` is pure and reports every
 * problem at once; `readConfig` is the only reader of `Deno.args` and `Deno.env` in the program. The types
 * live in `types.ts`, the flag sections in `sections.ts` and `controllers.ts`; this module re-exports what
 * callers import from it, and reads the Sentry variables and prints a `Config` itself.
 */
import { redactSecrets } from "../common/log.ts";
import { helpText, parseArgs, type ParsedArgs, readFlags } from "./flags.ts";
import {
  chooseKubeSource,
  type Env,
  ENV_VARS,
  envValue,
  parseLinodeEnv,
  Secret,
  type TokenFileCheck,
} from "./env.ts";
import { ignoredFlags, linodeFlags, parseFlagSections } from "./sections.ts";
import { checkRead, deniedReason, type ReadCheck, unreadableFiles } from "./readable.ts";
import {
  checkNet,
  configTargets,
  type NetCheck,
  netDeniedReason,
  refusedServers,
  urlHostPort,
} from "./net_allowed.ts";
import type { Config, LinodeConfig, ParseResult, SentryConfig } from "./types.ts";
import { VERSION } from "./version.ts";
import { type LintParse, parseLintArgs } from "./lint_args.ts";

export { helpText, Secret };
export type { Env, KubeSource, TokenSource } from "./env.ts";
export type { LogFormat, LogLevel } from "../common/log.ts";
export { CONTROLLER_NAMES } from "./types.ts";
export type {
  Config,
  ControllerName,
  LeaderElectionConfig,
  LinodeConfig,
  LogConfig,
  NodeConfig,
  ParseResult,
  RouteConfig,
  SentryConfig,
  ServeConfig,
  ServiceConfig,
  VpcConfig,
} from "./types.ts";
export type { LintConfig, LintDefaults, LintParse } from "./lint_args.ts";

/** The command line or environment is unusable: exit 2 and print `message` (one line per problem). */
export class ConfigError extends Error {
  override name = "ConfigError";
  /** One line per problem, each naming the flag or variable. */
  readonly problems: readonly string[];
  /** Builds the error from its problem lines. */
  constructor(problems: readonly string[]) {
    super(problems.join("\n"));
    this.problems = Object.freeze([...problems]);
  }
}

/** Options of `parseConfig`. */
export interface ParseOptions {
  /** Checks `LINODE_API_TOKEN_FILE` at start (`readConfig` reads it once); skipped when absent. */
  checkTokenFile?: TokenFileCheck;
  /** Checks that the kubeconfig and TLS files may be read (`readConfig` asks Deno); skipped when absent. */
  checkRead?: ReadCheck;
  /** Checks that the servers named may be connected to or listened on (`readConfig` asks Deno). */
  checkNet?: NetCheck;
}

/** Variables that the emulators replace in `--dev`, so a real token or cluster is never used there. */
const DEV_REPLACED = [
  "LINODE_API_TOKEN",
  "LINODE_API_TOKEN_FILE",
  "LINODE_URL",
  "KUBECONFIG",
  "KUBERNETES_SERVICE_HOST",
  "KUBERNETES_SERVICE_PORT",
];

function deepFreeze<T>(value: T): T {
  if (value instanceof Set) {
    const deny = () => {
      throw new TypeError("Config is read-only");
    };
    Object.assign(value, { add: deny, delete: deny, clear: deny });
  } else if (typeof value === "object" && value !== null && !(value instanceof Secret)) {
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return Object.freeze(value);
}

function build(args: ParsedArgs, env: Env, dev: boolean, options: ParseOptions): Config {
  const flags = readFlags(args.values);
  const p = [...args.problems];
  const warnings: string[] = [];
  const provider = flags.get("cloud-provider");
  if (provider !== "linode") p.push(`--cloud-provider: unsupported provider "${provider}" (only linode)`);
  const sections = parseFlagSections(flags, { problems: p, warnings });
  // `--dev` never looks at the default token file: a real token must not reach the emulators.
  const tokenFile = dev ? { defaultTokenFile: null } : {};
  const linodeEnv = parseLinodeEnv(env, p, {
    checkTokenFile: options.checkTokenFile,
    warnings,
    ...tokenFile,
  });
  const kube = chooseKubeSource({ kubeconfig: flags.get("kubeconfig"), master: flags.get("master") }, env, p);
  if (options.checkRead) {
    // The token file was checked while reading it (`checkTokenFile`).
    const named = { kube, serve: sections.serve, linode: linodeEnv };
    p.push(...unreadableFiles(named, options.checkRead, ["LINODE_API_TOKEN_FILE"]));
  }
  if (options.checkNet) {
    const targets = configTargets({ linodeUrl: linodeEnv.url, kube, serve: sections.serve });
    p.push(...refusedServers(targets, options.checkNet));
  }
  if (p.length > 0) {
    const token = envValue(env, "LINODE_API_TOKEN") ?? "";
    throw new ConfigError(p.map((line) => redactSecrets(line, [token])));
  }
  const linode: LinodeConfig = { ...linodeEnv, ...linodeFlags(flags) };
  const sentry = parseSentryEnv(env, warnings, options.checkNet);
  const ignored = ignoredFlags(args.values);
  return deepFreeze({ ...sections, dev, kube, linode, sentry, ignoredFlags: ignored, warnings });
}

/**
 * The Sentry settings, read as the Go CCM reads them: nothing without `SENTRY_DSN`; a DSN without
 * `SENTRY_ENVIRONMENT` (or one that is not a URL) only warns and reports nothing; `SENTRY_RELEASE` defaults
 * to `unknown`. A DSN whose host the net permission refuses (`checkNet`, asked at start like `LINODE_URL`) also
 * only warns: reports could never leave. Never a start failure: Sentry is optional, and a Go CCM manifest
 * that sets `SENTRY_DSN` must still start under the default net list. Warnings never print the DSN (it holds
 * a key), only its `host:port`.
 */
export function parseSentryEnv(env: Env, warnings: string[], checkNet?: NetCheck): SentryConfig | null {
  const dsn = envValue(env, "SENTRY_DSN");
  if (dsn === undefined) return null;
  const environment = envValue(env, "SENTRY_ENVIRONMENT");
  if (environment === undefined) {
    warnings.push("SENTRY_ENVIRONMENT: not set, so errors are not reported to Sentry (as the Go CCM)");
    return null;
  }
  let url: URL | undefined;
  try {
    url = new URL(dsn);
  } catch {
    url = undefined;
  }
  if (!url || !url.username || !/^https?:$/.test(url.protocol)) {
    warnings.push("SENTRY_DSN: not a Sentry DSN (https://KEY@HOST/PROJECT), so errors are not reported");
    return null;
  }
  const host = urlHostPort(`${url.protocol}//${url.host}`);
  if (checkNet && host && !checkNet(host)) {
    warnings.push(
      `SENTRY_DSN: cannot connect to ${host}: ${netDeniedReason()}; errors are not reported until then`,
    );
    return null;
  }
  return Object.freeze({
    dsn: new Secret(dsn),
    environment,
    release: envValue(env, "SENTRY_RELEASE") ?? "unknown",
  });
}

/** The config as a plain object for one startup log line: token `***`, sets as sorted arrays. */
export function describeConfig(config: Config): Record<string, unknown> {
  const json = JSON.stringify(config, (_key, value: unknown) => {
    if (value instanceof Set) return [...value].sort();
    if (value instanceof Secret) return "***";
    return value;
  });
  return JSON.parse(json);
}

/**
 * Parses the command line and environment. Pure: throws `ConfigError` listing every problem. `--help`
 * and `--version` win over errors; `--dev` defers the Linode and Kubernetes settings to `resolve`.
 */
export function parseConfig(args: readonly string[], env: Env, options: ParseOptions = {}): ParseResult {
  const parsed = parseArgs(args);
  if (parsed.help) return { kind: "help", text: helpText() };
  if (parsed.version === "raw") return { kind: "version", text: JSON.stringify({ version: VERSION }) };
  if (parsed.version) return { kind: "version", text: `linode-cloud-controller-manager v${VERSION}` };
  if (parsed.values.get("dev") !== true) return { kind: "run", config: build(parsed, env, false, options) };
  const problems = [...parsed.problems];
  for (const name of ["kubeconfig", "master"]) {
    if (parsed.values.has(name)) problems.push(`--${name}: not allowed with --dev (it uses its own cluster)`);
  }
  // Check the flags now, so mistakes show before the emulators start.
  const devEnv: Env = { LINODE_API_TOKEN: "dev", LINODE_REGION: "us-east", KUBECONFIG: "dev" };
  build({ ...parsed, problems }, devEnv, true, {});
  const kept = Object.fromEntries(Object.entries(env).filter(([k]) => !DEV_REPLACED.includes(k)));
  return {
    kind: "dev",
    resolve: (emulatorEnv) => build(parsed, { ...kept, ...emulatorEnv }, true, options),
  };
}

/** Reads a token file once at start: why it cannot be used (never its content), or `undefined`. */
export function checkTokenFile(path: string): string | undefined {
  try {
    return Deno.readTextFileSync(path).trim() === "" ? "it is empty" : undefined;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return "not found";
    if (e instanceof Deno.errors.NotCapable) return deniedReason();
    if (e instanceof Deno.errors.PermissionDenied) return "no permission to read it (file mode or owner)";
    return "cannot read it";
  }
}

function readEnv(): Env {
  const env: Record<string, string | undefined> = {};
  for (const { name } of ENV_VARS) {
    try {
      env[name] = Deno.env.get(name);
    } catch {
      // Not granted by the permission set: treat as unset, like `--ignore-env` does.
      env[name] = undefined;
    }
  }
  return env;
}

/** Reads `Deno.args` and the variables in `ENV_VARS`, and parses them; throws `ConfigError`. */
export function readConfig(): ParseResult {
  return parseConfig(Deno.args, readEnv(), { checkTokenFile, checkRead, checkNet });
}

/** Parses the arguments after `lint`; throws `ConfigError` (exit 2) listing every usage problem. */
export function parseLintConfig(args: readonly string[], env: Env): LintParse {
  const parsed = parseLintArgs(args, env);
  if (parsed.kind === "problems") throw new ConfigError(parsed.problems);
  return parsed;
}

/**
 * Reads `Deno.args` after the word `lint` (or `args`, for the `lint-services` launcher) and the variables in
 * `ENV_VARS`; throws `ConfigError`.
 */
export function readLintConfig(args: readonly string[] = Deno.args.slice(1)): LintParse {
  return parseLintConfig(args, readEnv());
}
