/**
 * Process gauges refreshed at every scrape of `/metrics`: resident memory under the name Prometheus' process
 * collector (and the Go CCM's client_golang) uses, and the V8 heap, which `deno task bench` reads from the
 * CCM process to report memory at each cluster size. `Deno.memoryUsage()` needs no permission.
 */
import type { Registry } from "../common/metrics.ts";

/** Sets the process gauges in `registry` to the current values. */
export function recordProcessMetrics(registry: Registry): void {
  const m = Deno.memoryUsage();
  registry.gauge("process_resident_memory_bytes", "Resident memory size in bytes.").set(undefined, m.rss);
  registry.gauge("ccm_heap_used_bytes", "V8 heap in use, in bytes.").set(undefined, m.heapUsed);
  registry.gauge("ccm_heap_total_bytes", "V8 heap reserved, in bytes.").set(undefined, m.heapTotal);
}
