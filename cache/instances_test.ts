import assert from "node:assert/strict";
import { FakeClock } from "../common/clock.ts";
import { Registry } from "../common/metrics.ts";
import { heapAfterGc } from "../tests/chaos/resources.ts";
import { InstanceCache, type InstanceSource, withInstance } from "./instances.ts";
import { vpcAddressesByLinode } from "./instance_index.ts";
import { VpcIpCache } from "./vpc_ips.ts";
import { selectVpcs, VpcCache } from "./vpcs.ts";
import type { LinodeInstance, Vpc, VpcIp } from "./types.ts";

function linode(id: number, over: Partial<LinodeInstance> = {}): LinodeInstance {
  return {
    id,
    label: `n${id}`,
    region: "us-east",
    type: "g6",
    status: "running",
    ipv4: [`45.0.0.${id}`],
    ipv6: null,
    tags: [],
    ...over,
  };
}

class FakeSource implements InstanceSource {
  instances: LinodeInstance[] = [];
  filters: (Record<string, unknown> | undefined)[] = [];
  list(filter?: Record<string, unknown>): Promise<LinodeInstance[]> {
    this.filters.push(filter);
    return Promise.resolve(this.instances.map((i) => ({ ...i })));
  }
}

function vpcIp(linodeId: number, address: string | null, range: string | null = null): VpcIp {
  return {
    address,
    address_range: range,
    linode_id: linodeId,
    vpc_id: 5,
    subnet_id: 6,
    config_id: 7,
    interface_id: 8,
  };
}

Deno.test("InstanceCache.view() lists every region with the tag +contains X-Filter and indexes every IP", async () => {
  const source = new FakeSource();
  source.instances = [linode(1, { ipv4: ["45.0.0.1", "192.168.0.1"], ipv6: "2600::1/128" })];
  const vpcIps = {
    addresses: () => Promise.resolve(snap([vpcIp(1, "10.0.0.1")])),
    peekAddresses: () => snap([vpcIp(1, "10.0.0.1")]),
    onChange: () => () => {},
  };
  const cache = new InstanceCache(source, {
    clock: new FakeClock(),
    metrics: new Registry(),
    tagFilter: "k8s",
    vpcIps,
  });
  source.instances = [{ ...(source.instances[0] as LinodeInstance), tags: ["pool-k8s-a"] }];
  const { data } = await cache.view();
  assert.deepEqual(source.filters, [{ tags: { "+contains": "k8s" } }]);
  for (const ip of ["45.0.0.1", "192.168.0.1", "2600::1", "10.0.0.1"]) assert.equal(data.byIp(ip)?.id, 1, ip);
  assert.equal(data.byLabel("n1")?.id, 1);
  assert.deepEqual(data.vpcIpv4(1), ["10.0.0.1"]);
  assert.equal(cache.vpcAgeMs(), 0);
});

Deno.test("InstanceCache.view() keeps a written-through Linode out unless it passes the tag and VPC rules", async () => {
  const source = new FakeSource();
  source.instances = [linode(1, { tags: ["k8s"] })];
  const vpcIps = {
    addresses: () => Promise.resolve(snap([vpcIp(1, "10.0.0.1")])),
    peekAddresses: () => snap([vpcIp(1, "10.0.0.1")]),
    onChange: () => () => {},
  };
  const cache = new InstanceCache(source, {
    clock: new FakeClock(),
    metrics: new Registry(),
    tagFilter: "k8s",
    vpcIps,
  });
  await cache.view();
  cache.recordInstance(linode(2, { tags: ["k8s"] })); // tagged, but no VPC address
  cache.recordInstance(linode(3)); // untagged
  const { data } = await cache.view();
  assert.deepEqual([data.byId(1)?.id, data.byId(2), data.byId(3), data.size], [1, undefined, undefined, 1]);
});

function snap<T>(data: T) {
  return { data, ageMs: 0, stale: false, suspicious: false, generation: 1 };
}

Deno.test("InstanceCache.view() reports the instance list's age, not the older VPC addresses'", async () => {
  const clock = new FakeClock();
  const vpcIps = {
    addresses: () => Promise.resolve({ ...snap([vpcIp(1, "10.0.0.1")]), ageMs: 50_000 }),
    peekAddresses: () => ({ ...snap([vpcIp(1, "10.0.0.1")]), ageMs: 50_000 }),
    onChange: () => () => {},
  };
  const cache = new InstanceCache(new FakeSource(), { clock, metrics: new Registry(), vpcIps });
  await cache.view();
  await clock.advance(300);
  assert.equal((await cache.view()).ageMs, 300);
  assert.equal(cache.vpcAgeMs(), 50_000);
});

Deno.test("InstanceCache.onChange() reports the ids that changed in a refresh or a write", async () => {
  const source = new FakeSource();
  source.instances = [linode(1), linode(2), linode(3)];
  const clock = new FakeClock();
  const cache = new InstanceCache(source, { clock, metrics: new Registry(), ttlMs: 1000 });
  const seen: number[][] = [];
  cache.onChange((ids) => seen.push([...ids].sort()));
  await cache.view();
  source.instances = [linode(1, { status: "offline" }), linode(2), linode(4)];
  await clock.advance(1001);
  await cache.view();
  cache.recordInstance(linode(2, { label: "renamed" }));
  cache.forgetInstance(4);
  assert.deepEqual(seen, [[1, 2, 3], [1, 3, 4], [2], [4]]);
  assert.equal(cache.peek()?.data.byLabel("renamed")?.id, 2);
  assert.equal(cache.peek()?.data.byId(4), undefined);
});

Deno.test("InstanceCache: a re-list that finds the Linodes it holds keeps its index and reports nothing", async () => {
  const source = new FakeSource();
  source.instances = [linode(1), linode(2)];
  const clock = new FakeClock();
  const cache = new InstanceCache(source, { clock, metrics: new Registry(), ttlMs: 1000 });
  const seen: number[][] = [];
  cache.onChange((ids) => seen.push([...ids].sort()));
  const first = await cache.view();
  await clock.advance(1001);
  const again = await cache.view();
  assert.equal(source.filters.length, 2, "listed again");
  assert.equal(again.data, first.data, "the same index, not rebuilt");
  assert.equal(again.generation, first.generation);
  source.instances = [linode(1), linode(2, { ipv4: ["45.0.0.9"] })];
  await clock.advance(1001);
  const changed = await cache.view();
  assert.notEqual(changed.generation, first.generation);
  assert.equal(changed.data.byIp("45.0.0.9")?.id, 2);
  assert.deepEqual(seen, [[1, 2], [2]]);
});

Deno.test("InstanceCache: a re-list that lists a Linode recorded by a targeted read in its own place is no change", async () => {
  const source = new FakeSource();
  source.instances = [linode(1), linode(3)];
  const clock = new FakeClock();
  const cache = new InstanceCache(source, { clock, metrics: new Registry(), ttlMs: 1000 });
  await cache.view();
  // A targeted read records Linode 2 after Linode 3; the listing has it between 1 and 3.
  cache.recordInstance(linode(2));
  const recorded = await cache.view();
  source.instances = [linode(1), linode(2), linode(3)];
  const seen: number[][] = [];
  cache.onChange((ids) => seen.push([...ids].sort()));
  await clock.advance(1001);
  const again = await cache.view();
  assert.equal(source.filters.length, 2, "listed again");
  assert.equal(again.data, recorded.data, "the same index, not rebuilt");
  assert.equal(again.generation, recorded.generation);
  assert.deepEqual(seen, []);
});

Deno.test("InstanceCache.view() without a filter sends none", async () => {
  const source = new FakeSource();
  await new InstanceCache(source, { clock: new FakeClock(), metrics: new Registry() }).view();
  assert.deepEqual(source.filters, [undefined]);
});

const VPCS: Vpc[] = [
  {
    id: 1,
    label: "a",
    region: "us-east",
    subnets: [{ id: 11, label: "default" }, { id: 12, label: "pods" }],
  },
  { id: 2, label: "b", region: "us-east", subnets: [{ id: 21, label: "default" }] },
];

Deno.test("selectVpcs() picks VPCs by name and id, and subnets by name and id", () => {
  assert.deepEqual(selectVpcs(VPCS, { vpcNames: ["a"] }).map((v) => v.id), [1]);
  assert.deepEqual(selectVpcs(VPCS, { vpcNames: ["a"], vpcIds: [1, 2] }).map((v) => v.id), [1, 2]);
  const picked = selectVpcs(VPCS, { vpcIds: [1], subnetNames: ["pods"] });
  assert.deepEqual(picked[0]?.subnets.map((s) => s.id), [12]);
  assert.deepEqual(selectVpcs(VPCS, { vpcIds: [1], subnetIds: [11] })[0]?.subnets.map((s) => s.id), [11]);
  assert.throws(() => selectVpcs(VPCS, { vpcNames: ["missing"] }), /Cannot find VPC named missing/);
});

Deno.test("VpcIpCache.get() lists each configured VPC and nothing when none is configured", async () => {
  const listed: number[] = [];
  const ipSource = {
    listIps: (id: number) => {
      listed.push(id);
      return Promise.resolve([vpcIp(id, `10.0.0.${id}`)]);
    },
  };
  const opts = { clock: new FakeClock(), metrics: new Registry() };
  const none = new VpcIpCache(
    ipSource,
    new VpcCache({ list: () => Promise.resolve(VPCS) }, {}, opts),
    opts,
  );
  assert.deepEqual((await none.get()).data, []);
  assert.deepEqual(listed, []);
  const vpcs = new VpcCache({ list: () => Promise.resolve(VPCS) }, { vpcNames: ["a", "b"] }, opts);
  const ips = new VpcIpCache(ipSource, vpcs, opts);
  assert.equal((await ips.get()).data.length, 2);
  assert.deepEqual(listed, [1, 2]);
});

Deno.test("vpcAddressesByLinode() keeps IPv4 and SLAAC addresses, only from the given subnets", () => {
  const v6 = (linodeId: number, subnet: number, slaac: string, isPublic: boolean): VpcIp => ({
    ...vpcIp(linodeId, null),
    subnet_id: subnet,
    ipv6_addresses: [{ slaac_address: slaac }],
    ipv6_is_public: isPublic,
  });
  const ips = [
    vpcIp(1, "10.0.0.1"),
    vpcIp(1, null, "10.9.0.0/24"),
    v6(1, 6, "2600::1", false),
    { ...vpcIp(2, "10.1.0.2"), subnet_id: 7 },
    v6(2, 7, "2600::2", true),
  ];
  assert.deepEqual(Object.fromEntries(vpcAddressesByLinode(ips)), {
    1: { ipv4: ["10.0.0.1"], ipv6: [{ address: "2600::1", isPublic: false }] },
    2: { ipv4: ["10.1.0.2"], ipv6: [{ address: "2600::2", isPublic: true }] },
  });
  assert.deepEqual([...vpcAddressesByLinode(ips, new Set([6])).keys()], [1]);
  assert.deepEqual([...vpcAddressesByLinode(ips, new Set()).keys()], []);
});

Deno.test("InstanceCache keeps no copy of an earlier VPC address listing once the cache holds a newer one", async () => {
  const opts = { clock: new FakeClock(), metrics: new Registry() };
  const vpcs = new VpcCache({ list: () => Promise.resolve(VPCS) }, { vpcNames: ["a"] }, opts);
  const ipSource = { listIps: () => Promise.resolve([vpcIp(1, "10.0.0.1"), vpcIp(2, "10.0.0.2")]) };
  const vpcIps = new VpcIpCache(ipSource, vpcs, opts);
  const source = new FakeSource();
  source.instances = [linode(1), linode(2)];
  const cache = new InstanceCache(source, { ...opts, vpcIps });
  const first = new WeakRef((await cache.view()).data);
  const firstListing = new WeakRef(vpcIps.peekAddresses()?.data ?? []);
  // The write-through of a confirmed 404 replaces the cached listing; the index follows it.
  cache.forgetInstance(2);
  const now = cache.peek();
  assert.equal(now?.data.byId(2), undefined);
  assert.deepEqual(now?.data.vpcAddresses(1).ipv4, ["10.0.0.1"]);
  await heapAfterGc();
  assert.equal(first.deref(), undefined, "the earlier index is gone");
  assert.equal(firstListing.deref(), undefined, "and so is the listing it was built from");
});

Deno.test("withInstance() replaces a Linode in place and puts a new one where a listing by id has it", () => {
  const ids = (list: readonly LinodeInstance[]) => list.map((i) => `${i.id}:${i.label}`);
  const list = [linode(1), linode(3), linode(5)];
  assert.deepEqual(ids(withInstance(list, linode(3, { label: "renamed" }))), ["1:n1", "3:renamed", "5:n5"]);
  assert.deepEqual(ids(withInstance(list, linode(4))), ["1:n1", "3:n3", "4:n4", "5:n5"]);
  assert.deepEqual(ids(withInstance(list, linode(0))), ["0:n0", "1:n1", "3:n3", "5:n5"]);
  assert.deepEqual(ids(withInstance(list, linode(9))), ["1:n1", "3:n3", "5:n5", "9:n9"]);
  assert.deepEqual(ids(list), ["1:n1", "3:n3", "5:n5"], "the input is not changed");
});
