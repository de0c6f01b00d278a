import assert from "node:assert/strict";
import { ContractLog } from "./contract.ts";
import { startLinodeSim } from "./server.ts";
import { apiFetch } from "./testdata/test_client.ts";

const NODE = { label: "node-1", address: "192.168.128.5:30080" };

Deno.test("ContractLog records what @linode/validation refuses, UI-only rules as warnings with why", () => {
  const log = new ContractLog();
  log.check("POST /v4/nodebalancers/{id}/configs/{id}/nodes", { ...NODE, label: "ab" }, "ccm");
  log.check("PUT /v4beta/linode/instances/{id}/interfaces/{id}", { vpc: { ipv4: { ranges: [] } } }, "ccm");
  log.check("GET /v4/nodebalancers", undefined, "ccm");
  log.check("POST /v4/nodebalancers/{id}/configs/{id}/nodes", { ...NODE, label: "xy" }, "ccm");
  const found = log.findings().map((f) => [f.route, f.path, f.severity]);
  assert.deepEqual(found, [
    ["POST /nodebalancers/{id}/configs/{id}/nodes", "label", "violation"],
    ["POST /nodebalancers/{id}/configs/{id}/nodes", "address", "warning"],
    ["POST /nodebalancers/{id}/configs/{id}/nodes", "port", "warning"],
    ["PUT /linode/instances/{id}/interfaces/{id}", "vpc.subnet_id", "warning"],
    ["PUT /linode/instances/{id}/interfaces/{id}", "vlan.vlan_label", "warning"],
  ]);
  assert.deepEqual(log.violations().map((f) => [f.message, f.userAgent, f.count]), [[
    "Label should be between 3 and 32 characters.",
    "ccm",
    2,
  ]], "the same finding is kept once, counted");
  assert.ok(log.findings().filter((f) => f.severity === "warning").every((f) => (f.why ?? "").length > 20));
  log.reset();
  assert.deepEqual(log.findings(), []);
});

Deno.test("a sim started with contract: true checks each POST/PUT body by route, refused or not", async () => {
  await using sim = await startLinodeSim({ contract: true });
  const good = {
    label: "ccm-good",
    region: "us-east",
    configs: [{ port: 80, protocol: "tcp", nodes: [NODE] }],
  };
  assert.equal((await apiFetch(sim, "POST", "/nodebalancers", JSON.stringify(good))).status, 200);
  assert.deepEqual(
    sim.contract?.violations(),
    [],
    "port and bare-address rules are the form's, not the API's",
  );
  const bad = { ...good, label: "ccm-bad", configs: [{ port: 70000, protocol: "tcp", nodes: [NODE] }] };
  assert.equal((await apiFetch(sim, "POST", "/nodebalancers", JSON.stringify(bad))).status, 400);
  assert.deepEqual(sim.contract?.violations().map((f) => [f.route, f.path]), [
    ["POST /nodebalancers", "configs[0].port"],
  ]);
  const plain = await startLinodeSim();
  await plain.close();
  assert.equal(plain.contract, undefined, "off by default");
});
