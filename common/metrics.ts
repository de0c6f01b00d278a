/**
 * A small Prometheus registry: counters, gauges and histograms with labels, rendered in the
 * text exposition format (version 0.0.4). One Registry per process, passed in as a dependency.
 */

/** Label values keyed by label name. */
export type Labels = Readonly<Record<string, string>>;

const DEFAULT_BUCKETS_SEC = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

function labelKey(names: readonly string[], labels: Labels | undefined): string {
  return JSON.stringify(names.map((n) => labels?.[n] ?? ""));
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

function renderLabels(names: readonly string[], values: readonly string[], extra?: [string, string]): string {
  const pairs = names.map((n, i) => `${n}="${escapeLabel(values[i] ?? "")}"`);
  if (extra) pairs.push(`${extra[0]}="${escapeLabel(extra[1])}"`);
  return pairs.length ? `{${pairs.join(",")}}` : "";
}

function formatValue(v: number): string {
  if (v === Infinity) return "+Inf";
  if (v === -Infinity) return "-Inf";
  return Number.isNaN(v) ? "NaN" : String(v);
}

interface Metric {
  readonly name: string;
  render(): string[];
}

abstract class Scalar implements Metric {
  readonly #values = new Map<string, number>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    readonly type: "counter" | "gauge",
  ) {}

  protected add(labels: Labels | undefined, by: number): void {
    const key = labelKey(this.labelNames, labels);
    this.#values.set(key, (this.#values.get(key) ?? 0) + by);
  }

  protected put(labels: Labels | undefined, value: number): void {
    this.#values.set(labelKey(this.labelNames, labels), value);
  }

  protected drop(labels: Labels | undefined): void {
    this.#values.delete(labelKey(this.labelNames, labels));
  }

  /** Current value for these labels (0 when never touched). */
  get(labels?: Labels): number {
    return this.#values.get(labelKey(this.labelNames, labels)) ?? 0;
  }

  /** Sum over every label combination. */
  total(): number {
    let sum = 0;
    for (const v of this.#values.values()) sum += v;
    return sum;
  }

  render(): string[] {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} ${this.type}`];
    for (const [key, v] of this.#values) {
      lines.push(`${this.name}${renderLabels(this.labelNames, JSON.parse(key))} ${formatValue(v)}`);
    }
    return lines;
  }
}

/** A monotonically increasing count. */
export class Counter extends Scalar {
  constructor(name: string, help: string, labelNames: readonly string[]) {
    super(name, help, labelNames, "counter");
  }

  /** Adds `by` (default 1). */
  inc(labels?: Labels, by = 1): void {
    if (by < 0) throw new RangeError(`Cannot decrease counter ${this.name}`);
    this.add(labels, by);
  }
}

/** A value that goes up and down. */
export class Gauge extends Scalar {
  constructor(name: string, help: string, labelNames: readonly string[]) {
    super(name, help, labelNames, "gauge");
  }

  /** Sets the value. */
  set(labels: Labels | undefined, value: number): void {
    this.put(labels, value);
  }

  /** Adds `by` (default 1). */
  inc(labels?: Labels, by = 1): void {
    this.add(labels, by);
  }

  /** Subtracts `by` (default 1). */
  dec(labels?: Labels, by = 1): void {
    this.add(labels, -by);
  }

  /** Removes the series of these labels from the exposition (a state that ended, not one that is 0). */
  remove(labels?: Labels): void {
    this.drop(labels);
  }
}

interface Series {
  counts: number[];
  sum: number;
  count: number;
}

/** A distribution of observations in cumulative buckets. */
export class Histogram implements Metric {
  readonly #series = new Map<string, Series>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    readonly buckets: readonly number[] = DEFAULT_BUCKETS_SEC,
  ) {}

  /** Records one observation. */
  observe(labels: Labels | undefined, value: number): void {
    const key = labelKey(this.labelNames, labels);
    let s = this.#series.get(key);
    if (!s) {
      s = { counts: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.#series.set(key, s);
    }
    this.buckets.forEach((le, i) => {
      if (value <= le) s.counts[i]! += 1;
    });
    s.sum += value;
    s.count += 1;
  }

  /** Number of observations for these labels. */
  count(labels?: Labels): number {
    return this.#series.get(labelKey(this.labelNames, labels))?.count ?? 0;
  }

  render(): string[] {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const [key, s] of this.#series) {
      const values: string[] = JSON.parse(key);
      this.buckets.forEach((le, i) => {
        lines.push(
          `${this.name}_bucket${renderLabels(this.labelNames, values, ["le", String(le)])} ${s.counts[i]}`,
        );
      });
      lines.push(`${this.name}_bucket${renderLabels(this.labelNames, values, ["le", "+Inf"])} ${s.count}`);
      lines.push(`${this.name}_sum${renderLabels(this.labelNames, values)} ${s.sum}`);
      lines.push(`${this.name}_count${renderLabels(this.labelNames, values)} ${s.count}`);
    }
    return lines;
  }
}

/**
 * Holds every metric of the process. Asking twice for the same name returns the same metric,
 * so modules can declare what they use without a central list.
 */
export class Registry {
  readonly #metrics = new Map<string, Metric>();

  #get<M extends Metric>(name: string, make: () => M, kind: new (...a: never[]) => M): M {
    const existing = this.#metrics.get(name);
    if (existing) {
      if (!(existing instanceof kind)) {
        throw new TypeError(`Metric ${name} is already registered as another type`);
      }
      return existing;
    }
    const m = make();
    this.#metrics.set(name, m);
    return m;
  }

  /** A counter named `name` (created on first use). */
  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    return this.#get(name, () => new Counter(name, help, labelNames), Counter);
  }

  /** A gauge named `name` (created on first use). */
  gauge(name: string, help: string, labelNames: readonly string[] = []): Gauge {
    return this.#get(name, () => new Gauge(name, help, labelNames), Gauge);
  }

  /** A histogram named `name` (created on first use); buckets in the unit of the name. */
  histogram(
    name: string,
    help: string,
    labelNames: readonly string[] = [],
    buckets?: readonly number[],
  ): Histogram {
    return this.#get(name, () => new Histogram(name, help, labelNames, buckets), Histogram);
  }

  /** The whole registry in Prometheus text format. */
  render(): string {
    const lines: string[] = [];
    for (const m of this.#metrics.values()) lines.push(...m.render());
    return lines.join("\n") + "\n";
  }
}
