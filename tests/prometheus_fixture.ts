/**
 * A real Prometheus (the Debian package's `prometheus`) as a child process on 127.0.0.1, with its own temporary
 * config and storage: it scrapes what a test points it at and evaluates rules the test loads, and the test
 * reads its HTTP API (`/api/v1/alerts`, `/api/v1/rules`, `/api/v1/query`, `/api/v1/targets`).
 */
import { join } from "node:path";
import { freePort } from "./process.ts";
import { findTool } from "./monitoring_fixture.ts";

/** One alert as `/api/v1/alerts` lists it (active alerts: pending or firing). */
export interface ActiveAlert {
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly state: "pending" | "firing";
}

/** One scrape target's health as `/api/v1/targets` reports it. */
export interface TargetHealth {
  readonly health: "up" | "down" | "unknown";
  readonly lastError: string;
}

/** Options of `startPrometheus`. */
export interface PrometheusOptions {
  /** `scrape_configs` entries, as objects (written as JSON, which is YAML). */
  scrapeConfigs: readonly Record<string, unknown>[];
  /** Scrape and evaluation interval (default `1s`). */
  interval?: string;
}

/**
 * Divides every duration of a rules file (`[5m]` ranges, `for:`) by `factor`, in milliseconds: the shipped
 * rules, evaluated at a test's pace. Thresholds (numbers) are left alone.
 */
export function scaleRuleDurations(rulesText: string, factor: number): string {
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  const scale = (text: string): string => {
    let ms = 0;
    for (const m of text.matchAll(/(\d+)(ms|s|m|h|d)/g)) ms += Number(m[1]) * units[m[2]!]!;
    return `${Math.max(1, Math.round(ms / factor))}ms`;
  };
  return rulesText
    .replace(/\[((?:\d+(?:ms|s|m|h|d))+)\]/g, (_, d: string) => `[${scale(d)}]`)
    .replace(
      /^(\s*for: )((?:\d+(?:ms|s|m|h|d))+)\s*$/gm,
      (_, head: string, d: string) => `${head}${scale(d)}`,
    );
}

/** A running Prometheus. Dispose it: the process is killed and its folder removed. */
export class PrometheusProcess implements AsyncDisposable {
  readonly url: string;
  readonly #dir: string;
  readonly #child: Deno.ChildProcess;
  readonly #output: Promise<string>;
  readonly #options: PrometheusOptions;

  /** Spawns Prometheus on `port` with the config in `dir`; use `startPrometheus`. */
  constructor(dir: string, port: number, options: PrometheusOptions) {
    this.#dir = dir;
    this.#options = options;
    this.url = `http://127.0.0.1:${port}`;
    const binary = findTool("prometheus");
    if (!binary) throw new Error("prometheus is not installed (apt-get install prometheus)");
    this.#child = new Deno.Command(binary, {
      args: [
        `--config.file=${join(dir, "prometheus.yml")}`,
        `--storage.tsdb.path=${join(dir, "data")}`,
        `--web.listen-address=127.0.0.1:${port}`,
        "--log.level=warn",
      ],
      cwd: dir,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const decode = (s: ReadableStream<Uint8Array>) => new Response(s).text();
    this.#output = Promise.all([decode(this.#child.stdout), decode(this.#child.stderr)]).then((t) =>
      t.join("")
    );
  }

  /** Starts Prometheus with `options` and no rules; resolves once it is ready. */
  static async start(options: PrometheusOptions): Promise<PrometheusProcess> {
    const dir = await Deno.makeTempDir({ prefix: "ccm-prometheus-" });
    await Deno.writeTextFile(join(dir, "prometheus.yml"), PrometheusProcess.#config(options, []));
    const p = new PrometheusProcess(dir, freePort(), options);
    try {
      await p.#waitReady();
    } catch (e) {
      await p[Symbol.asyncDispose]();
      throw e;
    }
    return p;
  }

  async #waitReady(): Promise<void> {
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const ok = await fetch(`${this.url}/-/ready`).then(
        async (r) => (await r.body?.cancel(), r.ok),
        () => false,
      );
      if (ok) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`Prometheus did not become ready:\n${await this.#stop()}`);
  }

  static #config(options: PrometheusOptions, ruleFiles: readonly string[]): string {
    const interval = options.interval ?? "1s";
    return JSON.stringify({
      global: { scrape_interval: interval, scrape_timeout: interval, evaluation_interval: interval },
      rule_files: ruleFiles,
      scrape_configs: options.scrapeConfigs,
    });
  }

  /** Writes `rulesText` as the only rules file and reloads the config (SIGHUP); resolves once it is loaded. */
  async loadRules(rulesText: string): Promise<void> {
    const file = join(this.#dir, "rules.yaml");
    await Deno.writeTextFile(file, rulesText);
    await Deno.writeTextFile(
      join(this.#dir, "prometheus.yml"),
      PrometheusProcess.#config(this.#options, [file]),
    );
    this.#child.kill("SIGHUP");
    const deadline = Date.now() + 15_000;
    while ((await this.rules()).length === 0) {
      if (Date.now() > deadline) throw new Error(`Prometheus did not load the rules:\n${await this.#stop()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async #get<T>(path: string): Promise<T> {
    const res = await fetch(`${this.url}${path}`);
    const body = await res.json() as { status: string; data: T; error?: string };
    if (!res.ok || body.status !== "success") {
      throw new Error(`GET ${path}: ${res.status} ${body.error ?? ""}`);
    }
    return body.data;
  }

  /** The active alerts (pending and firing). */
  async alerts(): Promise<ActiveAlert[]> {
    return (await this.#get<{ alerts: ActiveAlert[] }>("/api/v1/alerts")).alerts;
  }

  /** Every loaded rule, with its health (`ok`, `err`, `unknown`) and last evaluation error. */
  async rules(): Promise<{ name: string; health: string; lastError?: string }[]> {
    const data = await this.#get<
      { groups: { rules: { name: string; health: string; lastError?: string }[] }[] }
    >(
      "/api/v1/rules",
    );
    return data.groups.flatMap((g) => g.rules);
  }

  /** The value of each series an instant query returns, by its labels as JSON. */
  async query(promql: string): Promise<Map<string, number>> {
    const data = await this.#get<{ result: { metric: Record<string, string>; value: [number, string] }[] }>(
      `/api/v1/query?query=${encodeURIComponent(promql)}`,
    );
    return new Map(data.result.map((r) => [JSON.stringify(r.metric), Number(r.value[1])]));
  }

  /** The active scrape targets' health. */
  async targets(): Promise<TargetHealth[]> {
    return (await this.#get<{ activeTargets: TargetHealth[] }>("/api/v1/targets")).activeTargets;
  }

  async #stop(): Promise<string> {
    try {
      this.#child.kill("SIGTERM");
    } catch {
      // Already ended.
    }
    await this.#child.status;
    return await this.#output;
  }

  /** Stops Prometheus and removes its folder. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.#stop();
    await Deno.remove(this.#dir, { recursive: true });
  }
}

/** Starts a Prometheus (see `PrometheusProcess`). */
export function startPrometheus(options: PrometheusOptions): Promise<PrometheusProcess> {
  return PrometheusProcess.start(options);
}
