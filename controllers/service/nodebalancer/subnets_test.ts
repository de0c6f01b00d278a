import assert from "node:assert/strict";
import { FakeClock } from "../../../common/clock.ts";
import type { Vpc } from "../../../cache/types.ts";
import { SubnetResolver } from "./subnets.ts";

function source(vpcs: Vpc[]) {
  const calls = { count: 0, fail: false };
  return {
    calls,
    vpcs,
    list: () => {
      calls.count++;
      return calls.fail ? Promise.reject(new Error("HTTP 503")) : Promise.resolve([...vpcs]);
    },
  };
}

const VPC: Vpc = { id: 1, label: "cluster", region: "us-east", subnets: [{ id: 11, label: "default" }] };
const byName = (vpcName: string, subnetName: string) => ({ kind: "names" as const, vpcName, subnetName });

Deno.test("SubnetResolver resolves IDs without a call and names from one listing", async () => {
  const src = source([VPC]);
  const r = new SubnetResolver(src, new FakeClock(), { refreshMs: 30_000 });
  assert.equal(await r.resolve({ kind: "id", subnetId: 5 }), 5);
  assert.equal(src.calls.count, 0);
  assert.equal(await r.resolve(byName("cluster", "default")), 11);
  assert.equal(await r.resolve(byName("cluster", "default")), 11);
  assert.equal(src.calls.count, 1);
});

Deno.test("SubnetResolver lists again for an unknown name at most once per refresh interval", async () => {
  const src = source([VPC]);
  const clock = new FakeClock();
  const r = new SubnetResolver(src, clock, { refreshMs: 30_000 });
  assert.equal(await r.resolve(byName("cluster", "new")), undefined);
  assert.equal(await r.resolve(byName("cluster", "new")), undefined);
  assert.equal(src.calls.count, 1, "the first listing is recent: no second one");
  src.vpcs.push({ id: 2, label: "later", region: "us-east", subnets: [{ id: 21, label: "new" }] });
  await clock.advance(30_000);
  assert.equal(await r.resolve(byName("later", "new")), 21);
  assert.equal(src.calls.count, 2);
});

Deno.test("SubnetResolver does not keep a failed listing", async () => {
  const src = source([VPC]);
  src.calls.fail = true;
  const r = new SubnetResolver(src, new FakeClock());
  await assert.rejects(r.resolve(byName("cluster", "default")));
  src.calls.fail = false;
  assert.equal(await r.resolve(byName("cluster", "default")), 11);
});
