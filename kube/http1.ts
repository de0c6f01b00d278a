/**
 * Keeps client-node on HTTP/1.1. Its undici 8 agent offers `h2` by ALPN, and HTTP/2 runs on Deno's
 * nghttp2 binding, which aborts the whole process (`find_stream_on_goaway_func` assertion, or a segfault)
 * when the server sends GOAWAY while streams are open: kube-apiserver does that on shutdown and, with
 * `--goaway-chance`, at random. A controller must survive its apiserver, so every TLS connection offers
 * `http/1.1` only, as long watches and client-go's HTTP/1.1 fallback have always worked.
 */
import type { Cluster, KubeConfig } from "@kubernetes/client-node";
import { Agent, type Dispatcher } from "undici";

type CreateDispatcher = (cluster: Cluster | null, agentOptions: unknown) => Dispatcher | undefined;

/** Makes `kc` build HTTP/1.1-only dispatchers for every request and watch; returns `kc`. */
export function useHttp1(kc: KubeConfig): KubeConfig {
  // `createDispatcher` is private in the typings; `createDispatcherOptions` is its public, tested half.
  const target = kc as unknown as { createDispatcher: CreateDispatcher };
  const original = target.createDispatcher.bind(kc);
  target.createDispatcher = (cluster, agentOptions) => {
    const options = kc.createDispatcherOptions(
      cluster,
      agentOptions as Parameters<KubeConfig["createDispatcherOptions"]>[1],
    );
    if (options.type === "agent") return new Agent({ connect: options.connect, allowH2: false });
    return original(cluster, agentOptions);
  };
  return kc;
}
