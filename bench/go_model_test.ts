import assert from "node:assert/strict";
import {
  GO_INSTANCE_REFRESH_SEC,
  GO_ROUTE_CACHE_SEC,
  goChurnCallsPerMin,
  goInstanceRefreshCalls,
  goNodeSetSyncCalls,
  goSteadyCallsPerMin,
  goTakeoverMs,
} from "./go_model.ts";

Deno.test("goInstanceRefreshCalls() pages instances by 500 and VPC addresses by 100, plus the IPv6 listing", () => {
  // 6 Nodes: 1 instance page, 12 VPC entries in 1 page, 1 IPv6 page.
  assert.equal(goInstanceRefreshCalls(6), 3);
  assert.equal(goInstanceRefreshCalls(1000), 2 + 20 + 1);
  assert.equal(goInstanceRefreshCalls(5000), 10 + 100 + 1);
});

Deno.test("goSteadyCallsPerMin() refreshes instances every 20 s, as the route controller PR logged", () => {
  assert.equal(GO_INSTANCE_REFRESH_SEC, 20);
  assert.equal(GO_ROUTE_CACHE_SEC, 70);
  assert.equal(goSteadyCallsPerMin(100), 3 * (1 + 2 + 1) + (60 / 70) * 2);
});

Deno.test("goNodeSetSyncCalls() is 3 + 2 x ports up to 100 backends, more pages above", () => {
  assert.equal(goNodeSetSyncCalls(10), 5);
  assert.equal(goNodeSetSyncCalls(100, 2), 7);
  assert.equal(goNodeSetSyncCalls(500), 3 + 5 + 1);
});

Deno.test("goChurnCallsPerMin() adds, per replaced Node, a route write and the pool's share of LB syncs", () => {
  const steady = goSteadyCallsPerMin(1000);
  // 50 replaced per minute, half of them in the 500-Node pool: 3 syncs x 50 Services x 9 calls.
  const want = steady + 50 * (1 + 0.5 * 3 * 50 * 9);
  assert.equal(goChurnCallsPerMin(1000, { services: 50, backends: 500, fraction: 0.05 }), want);
});

Deno.test("goTakeoverMs() spans lease - retry to lease + 2.2 x retry", () => {
  assert.deepEqual(goTakeoverMs({ leaseDurationMs: 15_000, retryPeriodMs: 2_000 }), {
    min: 13_000,
    max: 19_400,
  });
});
