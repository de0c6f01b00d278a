/**
 * Composition root of the Linode cloud controller manager: config → logging → runCcm; signals and exit codes.
 * Exit 0 after a clean stop, 1 when leadership was lost or the process failed, 2 on a configuration error
 * (flags, environment, or a kubeconfig that cannot be loaded). `lint` as the first argument checks Service
 * manifests instead (`lint/command.ts`: exit 0 valid, 1 invalid, 2 usage).
 */
import { type CcmOutcome, runCcm } from "./ccm.ts";
import { systemClock } from "./common/clock.ts";
import { processSignals, stopOnSignals } from "./common/signals.ts";
import { type Config, ConfigError, describeConfig, readConfig, readLintConfig } from "./config/config.ts";
import { KubeConfigError } from "./kube/config.ts";
import { componentLogger, type Logger, setupLogging, writeAllSync } from "./common/log.ts";
import { Registry } from "./common/metrics.ts";
import type { ErrorReporter } from "./common/sentry.ts";
import { VERSION } from "./config/version.ts";

function writeOut(stream: typeof Deno.stdout | typeof Deno.stderr, text: string): void {
  writeAllSync(stream, text.endsWith("\n") ? text : text + "\n");
}

/** How each outcome of `runCcm` ends the process: exit code and the last log line. */
const ENDINGS: Readonly<Record<CcmOutcome, { code: number; level: "info" | "error"; message: string }>> = {
  stopped: { code: 0, level: "info", message: "stopped" },
  lost: {
    code: 1,
    level: "error",
    message: "leadership lost: exiting so the supervisor restarts this process",
  },
  failed: {
    code: 1,
    level: "error",
    message:
      "the controllers failed (the Lease was released): exiting so the supervisor restarts this process",
  },
  "token-invalid": {
    code: 1,
    level: "error",
    message: "the linode api token was rejected: exiting so the supervisor restarts this process",
  },
};

/** Logs how the run ended and returns the exit code: 0 after a requested stop, 1 otherwise. */
export function exitCodeOf(outcome: CcmOutcome, log: Logger): number {
  const ending = ENDINGS[outcome];
  log[ending.level](ending.message);
  return ending.code;
}

async function configure(): Promise<{ config: Config; cleanup?: () => Promise<void> } | number> {
  const parsed = readConfig();
  if (parsed.kind === "help" || parsed.kind === "version") {
    writeOut(Deno.stdout, parsed.text);
    return 0;
  }
  if (parsed.kind === "run") return { config: parsed.config };
  // --dev: the emulators stand in for Linode and the cluster; loaded only here.
  const { startDemoWorld } = await import("./sim/demo_world.ts");
  const world = await startDemoWorld({});
  return { config: parsed.resolve(world.env), cleanup: () => world.close() };
}

/** `lint [files…] [flags]`: checks Service manifests, prints findings; never starts the CCM. */
async function lint(): Promise<number> {
  let parsed;
  try {
    parsed = readLintConfig();
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    writeOut(Deno.stderr, `${e.message}\nRun lint --help for usage.`);
    return 2;
  }
  if (parsed.kind === "help") {
    writeOut(Deno.stdout, parsed.text);
    return 0;
  }
  // Loaded only here, like the emulators of --dev: a normal start does not pay for it.
  const { denoLintIo, runLint } = await import("./lint/command.ts");
  return await runLint(parsed.config, denoLintIo(writeAllSync));
}

async function main(): Promise<number> {
  if (Deno.args[0] === "lint") return await lint();
  let setup;
  try {
    setup = await configure();
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    writeOut(Deno.stderr, `${e.message}\nRun with --help to list every flag and variable.`);
    return 2;
  }
  if (typeof setup === "number") return setup;
  const { config, cleanup } = setup;
  const token = config.linode.token;
  // Until runCcm hands over its list (which adds a token read from a file and the kube credentials).
  let secrets = (): readonly string[] => (token.kind === "env" ? [token.token.reveal()] : []);
  const reporter = await startReporter(config, () => secrets());
  await setupLogging({
    format: config.log.format,
    level: config.log.level,
    secrets: () => secrets(),
    report: reporter?.sink,
  });
  const log = componentLogger("main");
  if (reporter) {
    log.info("reporting errors to Sentry (environment {environment})", {
      environment: config.sentry?.environment,
    });
  }
  log.info("starting linode-cloud-controller-manager {version}", {
    version: VERSION,
    config: describeConfig(config),
  });
  using stop = stopOnSignals({ ...processSignals(), clock: systemClock, log });
  try {
    const outcome = await runCcm(config, {
      clock: systemClock,
      metrics: new Registry(),
      hostname: Deno.hostname(),
      onStarted: (ccm) => secrets = ccm.secrets,
    }, stop.signal);
    return exitCodeOf(outcome, log);
  } catch (e) {
    log.error("cannot run: {error}", { error: e instanceof Error ? e.message : String(e) });
    // An unusable kubeconfig is a configuration error like the others.
    return e instanceof KubeConfigError ? 2 : 1;
  } finally {
    // What is queued for Sentry (e.g. the error that ends the process) leaves before the exit.
    await reporter?.close(REPORT_FLUSH_MS);
    await cleanup?.();
  }
}

/** How long the exit waits for queued Sentry reports. */
const REPORT_FLUSH_MS = 2_000;

/** The Sentry reporter when `SENTRY_DSN` is set; the SDK is loaded only then. */
async function startReporter(
  config: Config,
  secrets: () => readonly string[],
): Promise<ErrorReporter | undefined> {
  if (!config.sentry) return undefined;
  const { startSentry } = await import("./common/sentry.ts");
  return startSentry({
    dsn: config.sentry.dsn.reveal(),
    environment: config.sentry.environment,
    release: config.sentry.release,
    tags: { cluster_name: config.clusterName },
    secrets,
  });
}

if (import.meta.main) Deno.exit(await main());
