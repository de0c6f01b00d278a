/**
 * `deno task demo`: both emulators with a small world, two in-process CCM replicas (a leader and a standby)
 * against them, a live terminal view, and a short scripted story. Ctrl-C (or `--duration`/`--once`) stops
 * everything: the leader releases the Lease, the emulators close, the terminal is restored, exit 0.
 */
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { systemClock } from "../common/clock.ts";
import type { Config } from "../config/config.ts";
import { collectSnapshot, type SnapshotSources } from "./collect.ts";
import { DEMO_HELP, type DemoOptions, parseDemoArgs } from "./args.ts";
import { LogRing } from "./log_ring.ts";
import { type RunningReplica, startReplica, waitUntilLeading } from "./replicas.ts";
import type { StoryLine } from "./snapshot.ts";
import { runStory } from "./story.ts";
import { plainScreen, type Screen, ttyScreen, writeAll } from "./terminal.ts";
import { formatElapsed, renderFinal, renderStatusLine, renderView } from "./view.ts";
import { setupLogging } from "../common/log.ts";
import { type DemoStage, startStage } from "./worlds.ts";

const LEASE = { namespace: "kube-system", name: "cloud-controller-manager" };
const REDRAW_MS = 500;
const PLAIN_EVERY_MS = 10_000;
const FORCE_AFTER_MS = 1_000;

/** The kubeconfig path as a user would type it from the current folder. */
function displayPath(path: string): string {
  const rel = relative(Deno.cwd(), path);
  return rel.startsWith("..") ? path : rel;
}

/**
 * SIGINT/SIGTERM abort `stop`; another one a second later restores the terminal and exits at once. Ctrl-C
 * under `deno task` arrives twice (from the terminal and forwarded by the task runner): that is one request.
 */
function onSignals(stop: AbortController, screen: () => Screen | undefined): () => void {
  let firstAt = 0;
  const handler = () => {
    if (!stop.signal.aborted) {
      firstAt = systemClock.monotonic();
      return stop.abort();
    }
    if (systemClock.monotonic() - firstAt < FORCE_AFTER_MS) return;
    screen()?.close();
    Deno.exit(130);
  };
  const signals = ["SIGINT", "SIGTERM"] as const;
  for (const s of signals) Deno.addSignalListener(s, handler);
  return () => signals.forEach((s) => Deno.removeSignalListener(s, handler));
}

/** Redraws until `stop` aborts: the full view at most 2×/s on a terminal, a status line on change otherwise. */
async function drawLoop(
  screen: Screen,
  src: SnapshotSources,
  tty: boolean,
  stop: AbortSignal,
): Promise<void> {
  let last = "", lastAt = 0;
  while (!stop.aborted) {
    const s = collectSnapshot(src, systemClock.now());
    const status = renderStatusLine(s);
    const key = status.slice(status.indexOf("]"));
    if (tty || key !== last || s.nowMs - lastAt >= PLAIN_EVERY_MS) {
      const { columns, rows } = tty ? Deno.consoleSize() : { columns: 200, rows: 60 };
      screen.draw(() => renderView(s, { width: columns, height: rows }), () => status);
      last = key;
      lastAt = s.nowMs;
    }
    await systemClock.sleep(REDRAW_MS, stop).catch(() => {});
  }
}

/** Stops at the end of `--duration`, or after the story with `--once`. */
function scheduleEnd(o: DemoOptions, story: Promise<boolean>, stop: AbortController): void {
  if (o.durationSec !== undefined) {
    const timer = setTimeout(() => stop.abort(), o.durationSec * 1000);
    stop.signal.addEventListener("abort", () => clearTimeout(timer), { once: true });
  }
  if (o.once) {
    story.then(() => systemClock.sleep(2_000, stop.signal)).then(() => stop.abort(), () => {});
  }
}

/** Reports a replica that ends on its own (leadership lost, or a failure) and stops the demo. */
function watchReplica(
  r: RunningReplica,
  stop: AbortController,
  say: (text: string) => void,
): Promise<boolean> {
  return r.done.then(
    (outcome) => {
      if (stop.signal.aborted && outcome === "stopped") return true;
      say(
        `replica ${r.label} ended: ${
          outcome === "stopped" ? "stopped" : outcome === "lost" ? "leadership lost" : "token rejected"
        }`,
      );
      stop.abort();
      return false;
    },
    (e: unknown) => {
      say(`replica ${r.label} failed: ${e instanceof Error ? e.message : String(e)}`);
      stop.abort();
      return false;
    },
  );
}

/**
 * Starts replica A, lets it take the Lease, then starts replica B as the standby. When another CCM holds the
 * Lease (`leaderFirst` false), both start as standbys.
 */
async function startReplicas(
  config: Config,
  leaderFirst: boolean,
  stop: AbortSignal,
): Promise<RunningReplica[]> {
  const a = await startReplica(config, "A", systemClock);
  try {
    if (leaderFirst) await waitUntilLeading(a, systemClock, 5_000, stop);
    return [a, await startReplica(config, "B", systemClock)];
  } catch (e) {
    a.stop();
    await a.done.catch(() => {});
    throw e;
  }
}

/** Plays the story under the live view until stopped; returns the exit code and the text to leave behind. */
async function runDemo(
  o: DemoOptions,
  stage: DemoStage,
  logs: LogRing,
): Promise<{ code: number; text: string }> {
  const startedAtMs = systemClock.now();
  const tty = !o.plain && Deno.stdout.isTerminal();
  const stop = new AbortController();
  const story: StoryLine[] = [];
  const out: { screen?: Screen } = {};
  const say = (text: string) => {
    const line = { atMs: systemClock.now(), text };
    story.push(line);
    out.screen?.say(`[${formatElapsed(line.atMs - startedAtMs)}] ${text}`);
  };
  const removeSignals = onSignals(stop, () => out.screen);
  const { world } = stage;
  const kubeconfig = displayPath(world.kubeconfigPath);
  writeAll(Deno.stdout, `Linode CCM demo: kubectl --kubeconfig ${kubeconfig} get nodes -o wide\n`);
  const replicas = await startReplicas(stage.config(o.fast), stage.leaderFirst, stop.signal);
  const clean = replicas.map((r) => watchReplica(r, stop, say));
  const src: SnapshotSources = {
    world,
    replicas,
    logs,
    story,
    lease: LEASE,
    kubeconfig,
    startedAtMs,
    preview: stage.preview,
  };
  const screen = out.screen = tty ? ttyScreen(Deno.stdout) : plainScreen(Deno.stdout);
  try {
    const snapshot = () => collectSnapshot(src, systemClock.now());
    const played = runStory(stage.scenes, { clock: systemClock, startedAtMs, snapshot, say }, {
      scale: o.fast ? 0.25 : 1,
    }, stop.signal);
    scheduleEnd(o, played, stop);
    await Promise.all([drawLoop(screen, src, tty, stop.signal), played]);
  } finally {
    for (const r of replicas) r.stop();
    screen.close();
    removeSignals();
  }
  const ok = (await Promise.all(clean)).every(Boolean);
  const final = collectSnapshot(src, systemClock.now());
  const released = final.leader.holder === undefined ? "the Lease was released" : "the Lease is still held";
  return { code: ok ? 0 : 1, text: `${renderFinal(final).join("\n")}\n\nstopped: ${released}` };
}

async function main(): Promise<number> {
  let parsed;
  try {
    parsed = parseDemoArgs(Deno.args);
  } catch (e) {
    writeAll(Deno.stderr, `${e instanceof Error ? e.message : String(e)}\n`);
    return 2;
  }
  if (parsed.kind === "help") {
    writeAll(Deno.stdout, DEMO_HELP + "\n");
    return 0;
  }
  const dir = parsed.options.dir ?? join(dirname(dirname(fileURLToPath(import.meta.url))), ".demo");
  const logs = new LogRing();
  const stage = await startStage(parsed.options.world, dir);
  let result;
  try {
    const token = stage.env.LINODE_API_TOKEN ?? "";
    await setupLogging({
      format: "json",
      level: "info",
      write: (l) => logs.write(l),
      secrets: () => [token],
    });
    result = await runDemo(parsed.options, stage, logs);
  } finally {
    await stage.world.close();
  }
  writeAll(Deno.stdout, `${result.text}, emulators closed\n`);
  return result.code;
}

if (import.meta.main) Deno.exit(await main());
