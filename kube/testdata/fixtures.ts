/** Shared fixtures for the kube/ tests: the emulator, clients through the real loader, builders, waitFor. */
import { join } from "node:path";
import type { V1Node } from "@kubernetes/client-node";
import type { WriteGuard } from "../../common/write_guard.ts";
import type { Fence } from "../../common/write_guard.ts";
import { Registry } from "../../common/metrics.ts";
import { startKubeSim } from "../../sim/mod.ts";
import { type KubeClients, makeKubeClients } from "../clients.ts";
import { loadKubeConfig } from "../config.ts";

/** The emulator plus clients made by `loadKubeConfig` + `makeKubeClients` from its kubeconfig file. */
export interface Fixture extends AsyncDisposable {
  kube: Awaited<ReturnType<typeof startKubeSim>>;
  clients: KubeClients;
  metrics: Registry;
  kubeconfigPath: string;
  /** Clients to another server URL (a proxy in front of the emulator), same credentials. */
  clientsVia(url: string, fence?: Fence): KubeClients;
}

/** Starts the emulator and loads clients the way `main.ts` will. */
export async function startFixture(
  options: { fence?: Fence; writeGuard?: WriteGuard; sim?: Parameters<typeof startKubeSim>[0] } = {},
): Promise<Fixture> {
  const kube = await startKubeSim(options.sim);
  const dir = await Deno.makeTempDir({ prefix: "kube_fixture_" });
  const kubeconfigPath = join(dir, "kubeconfig");
  await kube.writeKubeconfig(kubeconfigPath);
  const metrics = new Registry();
  const clients = makeKubeClients(loadKubeConfig({ kubeconfig: kubeconfigPath }), {
    metrics,
    fence: options.fence,
    writeGuard: options.writeGuard,
  });
  return {
    kube,
    clients,
    metrics,
    kubeconfigPath,
    clientsVia: (url, fence) =>
      makeKubeClients(loadKubeConfig({ kubeconfig: kubeconfigPath, master: url }), { metrics, fence }),
    async [Symbol.asyncDispose]() {
      await kube.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** A Node with defaults; `labels`, `taints`, `providerID` optional. */
export function node(
  name: string,
  extra: { labels?: Record<string, string>; taints?: { key: string; value?: string; effect: string }[] } = {},
): V1Node {
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: { name, labels: extra.labels ?? {} },
    spec: { taints: extra.taints },
  };
}

/** Polls `condition` every 5 ms until it holds; throws after `timeoutMs` (default 5 s) with `what`. */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  what: string,
  options: { timeoutMs?: number } = {},
): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 5000);
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Sum of the emulator's counters whose key starts with `prefix` (`"PATCH /api/v1/nodes"`). */
export function callsStartingWith(kube: Fixture["kube"], prefix: string): number {
  let sum = 0;
  for (const [key, n] of Object.entries(kube.calls.snapshot())) if (key.startsWith(prefix)) sum += n;
  return sum;
}
