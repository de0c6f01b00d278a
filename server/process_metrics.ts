/**
 * Process metrics refreshed at every scrape of `/metrics`, under the names Prometheus' process collector (and
 * the Go CCM's client_golang) uses for CPU, resident memory and start time, plus the V8 heap, which
 * `deno task bench` reads from the CCM process to report memory at each cluster size. `Deno.memoryUsage()` and
 * `process.cpuUsage()` need no permission.
 */
import process from "node:process";
import type { Registry } from "../common/metrics.ts";

/** Sets the process metrics in `registry` to the current values. */
export function recordProcessMetrics(registry: Registry): void {
  const m = Deno.memoryUsage();
  registry.gauge("process_resident_memory_bytes", "Resident memory size in bytes.").set(undefined, m.rss);
  registry.gauge("ccm_heap_used_bytes", "V8 heap in use, in bytes.").set(undefined, m.heapUsed);
  registry.gauge("ccm_heap_total_bytes", "V8 heap reserved, in bytes.").set(undefined, m.heapTotal);
  const cpu = registry.counter(
    "process_cpu_seconds_total",
    "Total user and system CPU time spent in seconds.",
  );
  const { user, system } = process.cpuUsage();
  // The counter only moves forward: add what was spent since the last scrape.
  cpu.inc(undefined, Math.max(0, (user + system) / 1e6 - cpu.total()));
  registry.gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.")
    .set(undefined, Math.round(performance.timeOrigin) / 1000);
}
