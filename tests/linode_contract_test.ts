import assert from "node:assert/strict";
import { startLinodeSim } from "../sim/linode/server.ts";
import { assertContractKept } from "./ccm_fixture.ts";
import { startServiceWorld, until } from "./service_fixture.ts";

const PREFIX = "service.beta.kubernetes.io/linode-loadbalancer-";

Deno.test("the scenarios' Linode emulator checks every body the CCM sends against @linode/validation", async () => {
  await using w = await startServiceWorld();
  w.addNode("node-1", "192.168.140.11");
  w.addNode("node-2", "192.168.140.12");
  await w.start();
  w.addService("web", {
    ports: [{ port: 80 }, { port: 443 }],
    annotations: { [`${PREFIX}firewall-acl`]: JSON.stringify({ allowList: { ipv4: ["203.0.113.0/24"] } }) },
  });
  await until(
    w,
    () => w.nodeBalancerOf("web") !== undefined && w.linode.world.firewalls().length === 1,
    "web",
  );
  w.addNode("node-3", "192.168.140.13");
  await until(w, () => (w.nodeBalancerOf("web")?.configs[0]?.nodes.length ?? 0) === 3, "node-3 added");
  w.kube.store.delete("services", "web", "default");
  await until(w, () => w.nodeBalancers().length === 0, "web deleted");
  const contract = w.linode.contract;
  assert.ok(contract, "on in every scenario world");
  const routes = new Set(contract.findings().map((f) => f.route));
  assert.ok(routes.has("POST /nodebalancers"), `the checks ran: ${[...routes].join(", ")}`);
  assert.deepEqual(contract.violations(), []);
});

Deno.test("assertContractKept() fails a scenario on a body the CCM sent that the schemas refuse, not on a test's own", async () => {
  await using sim = await startLinodeSim({ contract: true });
  const post = (userAgent: string) =>
    fetch(`${sim.url}/nodebalancers/1/configs/2/nodes`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${sim.token}`,
        "user-agent": userAgent,
        "content-type": "application/json",
      },
      body: JSON.stringify({ label: "x", address: "192.168.128.5:80" }),
    }).then((r) => r.body?.cancel());
  await post("a-test/1.0");
  assertContractKept(sim);
  await post("linode-cloud-controller-manager/0.1.0 (replica-a)");
  assert.throws(() => assertContractKept(sim), /nodes label: Label should be between 3 and 32 characters/);
});
