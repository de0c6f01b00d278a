/** `main.ts` as a process against the emulators: Node initialisation, clean stop, `--leader-elect=false`. */
import assert from "node:assert/strict";
import type { V1Node } from "@kubernetes/client-node";
import { type DemoWorld, startDemoWorld } from "../sim/demo_world.ts";
import { UNINITIALIZED_TAINT } from "../sim/kubelet.ts";
import { FAST_LEASE_FLAGS, LeaseHistory, spawnCcm, waitFor } from "./process.ts";

const TOKEN = "tok-e2e-run-8d2b6f0a4c7e1953b2d8f6a0c4e7b1d9";

function dirOf(world: DemoWorld): string {
  return world.kubeconfigPath.replace(/\/[^/]+$/, "");
}

function node(world: DemoWorld, name: string): V1Node | undefined {
  return world.kube.store.get("nodes", name) as V1Node | undefined;
}

function isInitialised(n: V1Node | undefined): boolean {
  return n !== undefined && !(n.spec?.taints ?? []).some((t) => t.key === UNINITIALIZED_TAINT.key);
}

/** The demo Nodes and their Linodes, by label. */
function demoNodes(world: DemoWorld): { name: string; linodeId: number }[] {
  return world.linode.world.listInstances().map((l) => ({ name: l.label, linodeId: l.id }));
}

async function waitForInitialised(world: DemoWorld): Promise<void> {
  const names = demoNodes(world).map((n) => n.name);
  await waitFor(() => names.every((name) => isInitialised(node(world, name))), {
    what: `${names.join(", ")} initialised`,
  });
}

function assertInitialised(world: DemoWorld): void {
  for (const { name, linodeId } of demoNodes(world)) {
    const n = node(world, name);
    assert.equal(n?.spec?.providerID, `linode://${linodeId}`, name);
    assert.deepEqual(n?.spec?.taints ?? [], [], name);
    const labels = n?.metadata?.labels ?? {};
    assert.equal(labels["node.kubernetes.io/instance-type"], "g6-standard-2", name);
    assert.equal(labels["topology.kubernetes.io/region"], world.region, name);
    assert.ok(labels["node.k8s.linode.com/host-uuid"], `${name}: host-uuid label`);
  }
}

function leaseRequests(world: DemoWorld): number {
  const calls = world.kube.calls.snapshot();
  return Object.entries(calls).filter(([key]) => key.includes("/leases")).reduce((sum, [, n]) => sum + n, 0);
}

Deno.test("main() initialises the Nodes, then exits 0 on SIGTERM and releases the Lease", async () => {
  await using world = await startDemoWorld({ nodes: 3, services: 0, linodeToken: TOKEN });
  using lease = new LeaseHistory(world.kube);
  await using ccm = spawnCcm(FAST_LEASE_FLAGS, {
    env: { ...world.env, LINODE_INSTANCE_CACHE_TTL: "1" },
    readDirs: [dirOf(world)],
  });
  const became = await ccm.waitForLog(/^became leader/);
  const identity = String(became.record.identity);
  await waitForInitialised(world);
  assertInitialised(world);
  assert.equal(lease.holder, identity);
  // Three Nodes found by label from one instance list, not one Linode read per Node.
  assert.equal(world.linode.calls.count("GET /v4/linode/instances/{id}"), 0);

  const termAt = ccm.kill("SIGTERM");
  const exit = await ccm.exited(5_000);
  assert.equal(exit.code, 0, ccm.output);
  const last = lease.writes.at(-1);
  assert.equal(last?.holder, "", "the Lease is released (holderIdentity cleared)");
  assert.ok(last && last.atMs >= termAt);
  assert.equal(lease.lastBy(identity)?.holder, identity);
  assert.ok(ccm.logs(/^released leadership/).length === 1, ccm.output);
  assert.ok(ccm.logs(/^stopped$/).length === 1, ccm.output);
  assert.equal(ccm.logs(/^leadership lost/).length, 0);
  // The token never reaches the logs, though the config and every Linode call carried it.
  assert.ok(!ccm.output.includes(TOKEN), "the Linode token was printed");
  assert.ok(!ccm.output.includes(world.kube.token), "the kube token was printed");
  assert.ok(ccm.output.includes('"token":"***"'), "the config line shows the token as ***");
});

Deno.test("main() with --leader-elect=false starts the controllers at once and never touches the Lease", async () => {
  await using world = await startDemoWorld({ nodes: 2, services: 0 });
  await using ccm = spawnCcm(["--leader-elect=false", "--secure-port=0"], {
    env: { ...world.env, LINODE_INSTANCE_CACHE_TTL: "1" },
    readDirs: [dirOf(world)],
  });
  await ccm.waitForLog(/^leader election disabled/);
  await waitForInitialised(world);
  assertInitialised(world);
  ccm.kill("SIGTERM");
  assert.equal((await ccm.exited(5_000)).code, 0, ccm.output);
  assert.equal(leaseRequests(world), 0, JSON.stringify(world.kube.calls.snapshot()));
  assert.equal(ccm.logs(/became leader/).length, 0);
});
