/**
 * `/readyz` of a CCM that runs the service controller, as a kubelet probe sees it: the Service informer
 * counts (the controller cannot act before it has listed), the Secret informer does not (RBAC may forbid
 * Secrets; only HTTPS Services need them, and they wait with a Warning).
 */
import assert from "node:assert/strict";
import { annotationKey } from "../controllers/service/annotations/table.ts";
import type { CcmWorld } from "./ccm_fixture.ts";
import { freePort } from "./process.ts";
import { type ServiceWorld, startServiceWorld, until } from "./service_fixture.ts";

interface Answer {
  status: number;
  body: string;
}

/** `GET /readyz?verbose` on the running CCM, trusting only the certificate it serves. */
async function readyz(world: CcmWorld): Promise<Answer> {
  const server = world.ccm.server;
  if (!server) throw new TypeError("The CCM does not serve: give it --secure-port");
  using client = Deno.createHttpClient({ caCerts: [server.certPem] });
  const res = await fetch(`${server.url}/readyz?verbose`, { client });
  return { status: res.status, body: await res.text() };
}

/** A CCM that serves on loopback, with one Node; `forbid` answers 403 to listing that resource. */
async function servingWorld(forbid: "services" | "secrets"): Promise<ServiceWorld> {
  const world = await startServiceWorld({
    flags: ["--bind-address=127.0.0.1", `--secure-port=${freePort()}`],
  });
  world.addNode("node-1", "192.168.0.11");
  const route = forbid === "secrets" ? "/api/v1/namespaces/*/secrets/*" : `/api/v1/${forbid}`;
  world.kube.faults.add({ method: "GET", route, status: 403, message: "forbidden" });
  return world;
}

function hasIngress(world: ServiceWorld, name: string): boolean {
  return (world.service(name)?.status?.loadBalancer?.ingress?.length ?? 0) > 0;
}

Deno.test("service: /readyz is not ready while Services cannot be listed, and ready once they are", async () => {
  await using world = await servingWorld("services");
  await world.start({ waitForSync: false });
  await world.waitFor(() => world.ccm.nodes.synced, { what: "the Node informer synced" });
  const before = await readyz(world);
  assert.equal(before.status, 500, before.body);
  assert.match(before.body, /\[-\]informer-sync failed: services not synced yet\n/);

  world.kube.faults.clear();
  // The informer lists again after its backoff, on the fake clock.
  let after = before;
  for (let i = 0; i < 120 && after.status !== 200; i++) {
    await world.tick(1_000);
    after = await readyz(world);
  }
  assert.equal(after.status, 200, after.body);
  assert.match(after.body, /\[\+\]informer-sync ok/);
  world.addService("web");
  await until(world, () => hasIngress(world, "web"), "web to get an ingress");
});

Deno.test("service: forbidden Secrets hold back neither /readyz nor Services without TLS; HTTPS ones wait with a Warning", async () => {
  await using world = await servingWorld("secrets");
  await world.start();
  const ready = await readyz(world);
  assert.equal(ready.status, 200, ready.body);
  assert.match(ready.body, /\[\+\]informer-sync ok/);
  assert.match(ready.body, /\[\+\]informer-watch ok/);

  world.addService("web");
  world.addService("tls", {
    ports: [{ port: 443 }],
    annotations: {
      [annotationKey("port-443")]: JSON.stringify({ protocol: "https", "tls-secret-name": "tls-cert" }),
    },
  });
  await until(world, () => hasIngress(world, "web"), "web to get an ingress");
  await until(world, () => world.events("SyncLoadBalancerFailed", "tls").length > 0, "a Warning for tls");
  assert.match(
    world.events("SyncLoadBalancerFailed", "tls")[0]?.message ?? "",
    /Cannot read TLS Secret default\/tls-cert/,
  );
  assert.equal(world.nodeBalancers().length, 1, "only web's");
});
