import assert from "node:assert/strict";
import { join } from "node:path";
import { CoreV1Api } from "@kubernetes/client-node";
import { generateCertificates } from "../sim/kube/tls.ts";
import { startKubeSim } from "../sim/kube/server.ts";
import { startProxy } from "../sim/proxy.ts";
import { loadKubeConfig } from "./config.ts";

/** A TLS listener that offers h2 and http/1.1 and records what each client chose, then hangs up. */
async function alpnRecorder() {
  const certs = await generateCertificates();
  const listener = Deno.listenTls({
    hostname: "127.0.0.1",
    port: 0,
    cert: certs.certPem,
    key: certs.keyPem,
    alpnProtocols: ["h2", "http/1.1"],
  });
  const chosen: (string | null)[] = [];
  const accepting = (async () => {
    for await (const conn of listener) {
      try {
        chosen.push((await conn.handshake()).alpnProtocol);
      } catch {
        chosen.push("handshake failed");
      }
      conn.close();
    }
  })();
  return {
    certs,
    port: (listener.addr as Deno.NetAddr).port,
    chosen,
    async close() {
      listener.close();
      await accepting.catch(() => {});
    },
  };
}

Deno.test("loadKubeConfig() clients offer only http/1.1 over TLS (HTTP/2 GOAWAY aborts Deno's nghttp2)", async () => {
  const server = await alpnRecorder();
  const dir = await Deno.makeTempDir({ prefix: "http1_" });
  try {
    const kubeconfig = join(dir, "kubeconfig");
    const ca = btoa(server.certs.caPem);
    await Deno.writeTextFile(
      kubeconfig,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{
          name: "c",
          cluster: { server: `https://127.0.0.1:${server.port}`, "certificate-authority-data": ca },
        }],
        users: [{ name: "u", user: { token: "t" } }],
        contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
        "current-context": "x",
      }),
    );
    const core = loadKubeConfig({ kubeconfig }).makeApiClient(CoreV1Api);
    await assert.rejects(core.listNode());
    assert.deepEqual(server.chosen.slice(0, 1), ["http/1.1"]);
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadKubeConfig() clients keep working while the HTTPS apiserver shuts down under them", async () => {
  const sim = await startKubeSim({ tls: true });
  const dir = await Deno.makeTempDir({ prefix: "http1_" });
  try {
    const kubeconfig = join(dir, "kubeconfig");
    await sim.writeKubeconfig(kubeconfig);
    const core = loadKubeConfig({ kubeconfig }).makeApiClient(CoreV1Api);
    await core.listNode();
    // Requests in flight while the server closes: over HTTP/2 this GOAWAY aborted the process.
    const inFlight = Array.from({ length: 20 }, () => core.listNode().catch(() => "failed"));
    await sim.close();
    await Promise.all(inFlight);
  } finally {
    await sim.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadKubeConfig() clients reuse one TLS connection for sequential requests", async () => {
  await using sim = await startKubeSim({ tls: true });
  await using proxy = startProxy({ port: Number(new URL(sim.url).port) });
  const dir = await Deno.makeTempDir({ prefix: "http1_" });
  try {
    const kubeconfig = join(dir, "kubeconfig");
    await Deno.writeTextFile(
      kubeconfig,
      sim.kubeconfig().replace(sim.url, `https://127.0.0.1:${proxy.port}`),
    );
    const core = loadKubeConfig({ kubeconfig }).makeApiClient(CoreV1Api);
    for (let i = 0; i < 20; i++) await core.readNamespace({ name: "default" });
    // client-node alone opened (and kept) a new connection, with a new TLS handshake, for every request;
    // one pool may open a second connection while the first is being released.
    assert.ok(proxy.connections <= 2, `${proxy.connections} connections for 20 requests`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
