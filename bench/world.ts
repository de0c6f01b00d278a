/**
 * The benchmarks' world: the demo world without seeded Nodes or Services, Kubernetes over plain HTTP (the
 * CCM trusts it through its kubeconfig), and a VPC subnet large enough for thousands of Linodes. Scenarios
 * create Linodes and Nodes separately, so they can warm the CCM's cache before the Nodes register.
 */
import { type DemoWorld, startDemoWorld } from "../sim/mod.ts";

/** Label of the benchmark VPC (pass it as `--vpc-names` to read addresses from it). */
export const BENCH_VPC = "bench-vpc";

/** Starts both emulators with an empty cluster and the benchmark VPC. */
export function startBenchWorld(): Promise<DemoWorld> {
  return startDemoWorld({ nodes: 0, services: 0, tls: false, vpcLabel: BENCH_VPC, subnet: "10.0.0.0/16" });
}
