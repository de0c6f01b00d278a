/**
 * client-node's connection handling, fixed in two ways for a long-running controller:
 * - HTTP/1.1 only. Its undici 8 agent offers `h2` by ALPN, and HTTP/2 runs on Deno's nghttp2 binding, which
 *   aborts the whole process (`find_stream_on_goaway_func` assertion, or a segfault) when the server sends
 *   GOAWAY with streams open: kube-apiserver does that on shutdown and, with `--goaway-chance`, at random.
 * - One connection pool per cluster and TLS material (kubeconfigs with `proxy-url` keep client-node's own
 *   proxy agents: neither pooled nor limited to HTTP/1.1). client-node builds a new undici Agent for every
 *   request, so every request paid a new TCP and TLS handshake (~45 ms instead of ~1 ms on loopback).
 *   Agents are reused while the CA, client certificate and key stay the same; a rotated certificate file
 *   gives a new key and a new pool.
 */
import type { Cluster, KubeConfig } from "@kubernetes/client-node";
import { Agent, type Dispatcher } from "undici";

type CreateDispatcher = (cluster: Cluster | null, agentOptions: unknown) => Dispatcher | undefined;

/** Pools kept per KubeConfig (distinct servers or TLS material); the oldest is closed beyond this. */
const MAX_POOLS = 4;

function poolKey(cluster: Cluster | null, connect: unknown): string {
  return JSON.stringify([cluster?.server ?? "", connect]);
}

/** Makes `kc` use pooled, HTTP/1.1-only dispatchers for every request and watch; returns `kc`. */
export function useHttp1(kc: KubeConfig): KubeConfig {
  // Why a private method: client-node offers no public way to give its API clients and watches a dispatcher.
  // Both get one from `KubeConfig.applySecurityAuthentication`, which calls the private `createDispatcher`
  // for every request; replacing it on this instance is the one place where pooling and the HTTP/1.1 pin
  // reach every request. `createDispatcherOptions` is its public half and builds the TLS options we pool by.
  // http1_test.ts fails, naming this file, when an upgrade renames the method or stops calling it.
  const target = kc as unknown as { createDispatcher?: CreateDispatcher };
  if (typeof target.createDispatcher !== "function") {
    throw new TypeError(
      "Cannot pin Kubernetes connections to HTTP/1.1: @kubernetes/client-node no longer has the private " +
        "KubeConfig.createDispatcher that kube/http1.ts replaces (written for 2.0.1)",
    );
  }
  const original = target.createDispatcher.bind(kc);
  const pools = new Map<string, Agent>();
  target.createDispatcher = (cluster, agentOptions) => {
    const options = kc.createDispatcherOptions(
      cluster,
      agentOptions as Parameters<KubeConfig["createDispatcherOptions"]>[1],
    );
    if (options.type !== "agent") return original(cluster, agentOptions);
    const key = poolKey(cluster, options.connect);
    let agent = pools.get(key);
    if (!agent) {
      agent = new Agent({ connect: options.connect, allowH2: false });
      pools.set(key, agent);
      for (const [oldKey, old] of pools) {
        if (pools.size <= MAX_POOLS) break;
        pools.delete(oldKey);
        old.close().catch(() => {});
      }
    }
    return agent;
  };
  return kc;
}
