import assert from "node:assert/strict";
import { startProxy } from "../sim/proxy.ts";
import { KEY, leaseApiFor, startCluster } from "./testdata/fixtures.ts";
import {
  LeaseApiError,
  LeaseConflictError,
  type LeaseRecord,
  newIdentity,
  parseMicroTime,
  toLeaseSpec,
} from "./lease.ts";

const MICRO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
const T0 = Date.UTC(2026, 0, 2, 3, 4, 5, 678);

function record(overrides: Partial<LeaseRecord> = {}): LeaseRecord {
  return {
    holderIdentity: "node-a_7c1e",
    leaseDurationSec: 15,
    acquireTimeMs: T0,
    renewTimeMs: T0 + 2000,
    leaseTransitions: 3,
    ...overrides,
  };
}

const MICRO_TIMES: { input: unknown; want: number | undefined }[] = [
  { input: "2026-01-02T03:04:05.678000Z", want: T0 },
  { input: "2026-01-02T03:04:05.678999Z", want: T0 },
  { input: "2026-01-02T03:04:05Z", want: T0 - 678 },
  { input: new Date(T0), want: T0 },
  { input: "yesterday", want: undefined },
  { input: undefined, want: undefined },
  { input: 12, want: undefined },
];

for (const c of MICRO_TIMES) {
  Deno.test(`parseMicroTime() reads ${JSON.stringify(c.input)}`, () => {
    assert.equal(parseMicroTime(c.input), c.want);
  });
}

Deno.test("toLeaseSpec() serialises times with 6 fractional digits", () => {
  const json = JSON.parse(JSON.stringify(toLeaseSpec(record())));
  assert.deepEqual(json, {
    holderIdentity: "node-a_7c1e",
    leaseDurationSeconds: 15,
    acquireTime: "2026-01-02T03:04:05.678000Z",
    renewTime: "2026-01-02T03:04:07.678000Z",
    leaseTransitions: 3,
  });
});

Deno.test("newIdentity() is <hostname>_<uuid>", () => {
  assert.match(
    newIdentity("node-a"),
    /^node-a_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
  );
  assert.notEqual(newIdentity("node-a"), newIdentity("node-a"));
});

Deno.test("KubeLeaseApi.create() writes the Lease fields on the wire and get() reads them back", async () => {
  await using cluster = await startCluster();
  const api = cluster.api();
  assert.equal(await api.get(KEY), undefined);
  const created = await api.create(KEY, record());
  assert.deepEqual(created.record, record());

  const raw = await cluster.rawLease();
  const spec = raw.spec as Record<string, unknown>;
  assert.match(String(spec.acquireTime), MICRO_TIME);
  assert.match(String(spec.renewTime), MICRO_TIME);
  assert.equal(spec.holderIdentity, "node-a_7c1e");
  assert.equal(spec.leaseDurationSeconds, 15);
  assert.equal(spec.leaseTransitions, 3);

  const read = await api.get(KEY);
  assert.ok(read);
  assert.deepEqual(read.record, record());
  assert.equal(read.lease.metadata?.resourceVersion, created.lease.metadata?.resourceVersion);
  assert.equal(read.fingerprint, created.fingerprint);
});

Deno.test("KubeLeaseApi.replace() is optimistic: a stale resourceVersion gets LeaseConflictError", async () => {
  await using cluster = await startCluster();
  const api = cluster.api();
  const base = await api.create(KEY, record());
  const renewed = await api.replace(base, record({ renewTimeMs: T0 + 4000 }));
  assert.notEqual(renewed.lease.metadata?.resourceVersion, base.lease.metadata?.resourceVersion);
  assert.notEqual(renewed.fingerprint, base.fingerprint);
  assert.equal(renewed.record.renewTimeMs, T0 + 4000);

  await assert.rejects(api.replace(base, record({ holderIdentity: "node-b_1" })), LeaseConflictError);
  await assert.rejects(api.create(KEY, record()), LeaseConflictError);
  assert.equal((await api.get(KEY))?.record.holderIdentity, "node-a_7c1e");
});

Deno.test("KubeLeaseApi.get() aborts a hung request on its signal", async () => {
  await using cluster = await startCluster();
  await using proxy = startProxy({ port: Number(new URL(cluster.url).port) });
  const api = leaseApiFor(cluster.kubeconfig, proxy.url);
  await proxy.cut({ mode: "blackhole" });
  // The blackholed request would hang for good: rejecting at all is the abort working.
  await assert.rejects(api.get(KEY, { signal: AbortSignal.timeout(150) }), (e: unknown) => {
    assert.ok(e instanceof LeaseApiError);
    assert.equal(e.status, 0);
    return true;
  });
});
