import assert from "node:assert/strict";
import { addNodes, kubeletNode, REGION, startWorld } from "./ccm_fixture.ts";

Deno.test("runCcm() --dry-run plans the shutdown taint and the deletion of a gone Linode's Node, asks the API once, writes nothing", async () => {
  await using world = await startWorld({ flags: ["--dry-run"] });
  const linodes = world.linode.world.addInstances(4, (i) => ({ label: `w-${i}`, region: REGION }));
  const [stopped, gone] = linodes;
  assert.ok(stopped && gone);
  addNodes(
    world,
    ...linodes.map((l, i) =>
      kubeletNode(l.label, { providerID: `linode://${l.id}`, taints: [], ready: i > 1 })
    ),
  );
  world.linode.world.setStatus(stopped.id, "offline");
  world.linode.world.deleteInstance(gone.id);
  await world.start();
  await world.tick(120_000, 5_000);
  const actions = world.ccm.shadow.pending().filter((a) => a.controller === "cloud-node-lifecycle");
  assert.deepEqual(actions.map((a) => `${a.action} ${a.object}`), ["taint-shutdown w-0", "delete-node w-1"]);
  assert.equal(
    world.calls("GET /v4/linode/instances/{id}"),
    1,
    "a 404 is remembered: the id is never reused",
  );
  assert.ok(world.node("w-1"), "not deleted");
  assert.deepEqual(world.node("w-0")?.spec?.taints, []);
  assert.deepEqual(world.kube.calls.log.map((c) => c.key).filter((k) => !/^(GET|WATCH) /.test(k)), []);
  assert.deepEqual(world.linode.calls.log.filter((c) => c.method !== "GET"), []);
});
