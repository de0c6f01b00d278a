/** Helpers for the emulator's tests: real client-node clients, status assertions, builders, polling. */
import assert from "node:assert/strict";
import { ApiException, CoordinationV1Api, CoreV1Api, KubeConfig, type V1Node } from "@kubernetes/client-node";
import type { KubeSim } from "../server.ts";

/** client-node clients pointed at an emulator through its own kubeconfig. */
export function clientsFor(
  kube: KubeSim,
): { kc: KubeConfig; core: CoreV1Api; coordination: CoordinationV1Api } {
  const kc = new KubeConfig();
  kc.loadFromString(kube.kubeconfig());
  return { kc, core: kc.makeApiClient(CoreV1Api), coordination: kc.makeApiClient(CoordinationV1Api) };
}

/** Awaits a rejected client call, asserts its HTTP code, and returns the Status body. */
export async function rejectsWith(call: Promise<unknown>, code: number): Promise<Record<string, unknown>> {
  try {
    await call;
  } catch (e) {
    assert.ok(e instanceof ApiException, `expected ApiException, got ${String(e)}`);
    assert.equal(e.code, code, `expected HTTP ${code}, got ${e.code}: ${String(e.body)}`);
    // client-node drops the body of responses its spec declares without one (401).
    const body: unknown = typeof e.body === "string" ? JSON.parse(e.body) : e.body ?? {};
    assert.ok(typeof body === "object" && body !== null);
    return body as Record<string, unknown>;
  }
  assert.fail(`expected HTTP ${code}, but the call succeeded`);
}

/** Polls `condition` every 5 ms until true; fails after `timeoutMs`. */
export async function waitFor(condition: () => boolean, options: { timeoutMs?: number; what?: string } = {}) {
  const deadline = Date.now() + (options.timeoutMs ?? 5000);
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${options.what ?? "condition"}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Drops client-node's model classes so results compare with plain literals. */
export function plain<T>(value: T): unknown {
  return JSON.parse(JSON.stringify(value));
}

/** What `node()` builds. */
export interface NodeSpec {
  name: string;
  labels?: Record<string, string>;
  providerID?: string;
  taints?: { key: string; value?: string; effect: string }[];
  addresses?: { type: string; address: string }[];
}

/** A Node with defaults: no taints, one InternalIP, Ready. */
export function node(spec: NodeSpec): V1Node {
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: { name: spec.name, labels: spec.labels },
    spec: { providerID: spec.providerID, taints: spec.taints },
    status: {
      addresses: spec.addresses ?? [{ type: "InternalIP", address: "10.0.0.1" }],
      conditions: [{ type: "Ready", status: "True" }],
    },
  };
}
