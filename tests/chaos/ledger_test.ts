/** The write ledger judges writes by their sender's Lease terms, and can fail. */
import assert from "node:assert/strict";
import { startKubeSim } from "../../sim/kube/server.ts";
import { startLinodeSim } from "../../sim/linode/server.ts";
import { identityOf, WriteLedger } from "./ledger.ts";

const LEASE = { name: "cloud-controller-manager", namespace: "kube-system" };

Deno.test("WriteLedger reports a write whose sender no longer holds the Lease, and none within a term", async () => {
  await using linode = await startLinodeSim();
  await using kube = await startKubeSim();
  using ledger = new WriteLedger(linode, kube);
  const write = async (identity: string) => {
    const response = await fetch(`${linode.url}/vpcs`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${linode.token}`,
        "user-agent": `linode-cloud-controller-manager/0.1.0 (${identity})`,
      },
      body: "{}",
    });
    await response.body?.cancel();
  };
  const holder = (holderIdentity: string) =>
    kube.store.patch("leases", LEASE.name, { spec: { holderIdentity } }, {
      type: "merge",
      namespace: LEASE.namespace,
    });
  kube.store.create("leases", { metadata: LEASE, spec: { holderIdentity: "host_a" } });
  await write("host_a");
  holder("host_b");
  await write("host_b");
  await write("host_a");
  holder("");
  await write("host_b");
  assert.deepEqual(ledger.terms.map((t) => t.identity), ["host_a", "host_b", ""]);
  assert.equal(ledger.writes.length, 4);
  assert.deepEqual(ledger.interleavings(), [
    "linode POST /v4/vpcs (400) by host_a while the Lease named host_b",
    "linode POST /v4/vpcs (400) by host_b while the Lease named nobody",
  ]);
});

Deno.test("identityOf() reads the identity the CCM puts in its User-Agent, nothing else", () => {
  assert.equal(identityOf("linode-cloud-controller-manager/0.1.0 (node-a_1234)"), "node-a_1234");
  assert.equal(identityOf("linodejs"), "");
  assert.equal(identityOf("kubectl/v1.32.0 (linux/amd64) kubernetes/abc"), "");
});
