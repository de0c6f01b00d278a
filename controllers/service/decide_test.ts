import assert from "node:assert/strict";
import type { V1Node, V1Secret, V1Service } from "@kubernetes/client-node";
import type { Vpc } from "../../cache/types.ts";
import { FakeClock } from "../../common/clock.ts";
import { generateSelfSignedCert } from "../../server/tls.ts";
import {
  planFingerprint,
  PlanMemo,
  type PlannedService,
  type PlannerDeps,
  planService,
  SubnetResolver,
} from "./decide.ts";
import { defaults, node, port, service } from "./testdata/fixtures.ts";
import { type SecretReader, TlsSecrets } from "./tls/secrets.ts";

const CLUSTER_TAG = "ccm-cluster:00112233445566778899aabbccddeeff";

/** Planner inputs over an in-memory Secret store (`secrets`, by name in `default`) and a fresh memo. */
function plannerDeps(secrets = new Map<string, V1Secret>()) {
  const reader: SecretReader = { read: (_ns, name) => Promise.resolve(secrets.get(name)) };
  const plans = new PlanMemo();
  const tagGate = { wait: Promise.resolve() };
  const deps: PlannerDeps = {
    defaults: defaults(),
    identity: { tag: async () => (await tagGate.wait, CLUSTER_TAG) },
    subnets: { resolve: () => Promise.resolve(5) },
    tls: new TlsSecrets(reader),
    plans,
  };
  return { deps, plans, tagGate };
}

function nodes(n: number): V1Node[] {
  return Array.from({ length: n }, (_, i) => node(`n${i}`, { internalIps: [`192.168.140.${i + 1}`] }));
}

/** True for a remembered plan: its backends are not planned until read. */
function remembered(plan: PlannedService): boolean {
  return typeof Object.getOwnPropertyDescriptor(plan, "desired")?.get === "function";
}

/** True when `plan` is `earlier` remembered: the same summary, nothing planned again. */
function reuses(plan: PlannedService, earlier: PlannedService): boolean {
  return remembered(plan) && plan.fingerprint === earlier.fingerprint && plan.spec === earlier.spec;
}

function backendsOf(plan: PlannedService): string[] {
  return plan.desired.configs.flatMap((c) => c.nodes.map((b) => b.address));
}

function tlsSecret(name: string, cert: string, key: string, resourceVersion: string): V1Secret {
  return {
    metadata: { name, namespace: "default", resourceVersion },
    data: { "tls.crt": btoa(cert), "tls.key": btoa(key) },
  };
}

Deno.test("planService with a memo: the same inputs reuse the plan, backends planned again only when read", async () => {
  const { deps, plans } = plannerDeps();
  const svc = service({ ports: [port(80), port(443)] });
  const list = nodes(3);
  const first = await planService(deps, svc, list);
  assert.equal(remembered(first), false);
  const again = await planService(deps, structuredClone(svc), nodes(3));
  assert.equal(remembered(again), true, "reused, backends not planned");
  assert.equal(again.fingerprint, first.fingerprint);
  assert.equal(again.spec, first.spec);
  assert.equal(plans.size, 1);
  const fresh = await planService({ ...deps, plans: undefined }, svc, list);
  assert.deepEqual(again.desired, fresh.desired, "read: the same backends as a plan made afresh");
  assert.equal(again.desired, again.desired, "planned once per sync");
  assert.equal(planFingerprint(again.desired), again.fingerprint);
  assert.equal(fresh.fingerprint, first.fingerprint);
});

Deno.test("planService with a memo: a Node change the controller reports plans again, over the new Nodes", async () => {
  const { deps, plans } = plannerDeps();
  const svc = service();
  const first = await planService(deps, svc, nodes(2));
  // Without the report the memo cannot know: that is the controller's part (nodeBackendFields on every Node event).
  plans.nodesChanged();
  const second = await planService(deps, svc, nodes(3));
  assert.equal(remembered(second), false);
  assert.notEqual(second.fingerprint, first.fingerprint);
  assert.deepEqual(backendsOf(second), ["192.168.140.1:30080", "192.168.140.2:30080", "192.168.140.3:30080"]);
});

Deno.test("planService with a memo: a changed annotation, port, current NodeBalancer shape or subnet plans again", async () => {
  const { deps, plans } = plannerDeps();
  const list = nodes(2);
  const base = await planService(deps, service(), list);
  assert.equal(remembered(base), false);
  const throttled = await planService(deps, service({ annotations: { throttle: "5" } }), list);
  assert.equal(remembered(throttled), false);
  assert.equal(throttled.desired.client_conn_throttle, 5);
  const twoPorts = await planService(
    deps,
    service({ annotations: { throttle: "5" }, ports: [port(80), port(81)] }),
    list,
  );
  assert.equal(twoPorts.desired.configs.length, 2);
  // The shape of an existing NodeBalancer is an input (lenient values keep it): both shapes are kept.
  const svc = service({ annotations: { throttle: "5" }, ports: [port(80), port(81)] });
  const shaped = await planService(deps, svc, list, { ipv6Backends: true });
  assert.equal(remembered(shaped), false);
  assert.ok(reuses(await planService(deps, svc, list), twoPorts));
  assert.ok(reuses(await planService(deps, svc, list, { ipv6Backends: true }), shaped));
  assert.equal(plans.size, 2, "an older Service's plans are dropped");
  const vpc: PlannerDeps = { ...deps, subnets: { resolve: () => Promise.resolve(6) } };
  const withSubnet = service({
    annotations: { "frontend-vpc-name": "edge", "frontend-subnet-name": "public" },
  });
  const atFive = await planService(deps, withSubnet, list);
  assert.ok(reuses(await planService(deps, withSubnet, list), atFive));
  const atSix = await planService(vpc, withSubnet, list);
  assert.equal(remembered(atSix), false, "another subnet id plans again");
  assert.equal(atSix.desired.frontendVpc?.subnet_id, 6);
});

Deno.test("planService with a memo: a rotated TLS Secret plans again with the new certificate", async () => {
  const secrets = new Map<string, V1Secret>();
  const a = await generateSelfSignedCert();
  secrets.set("web-tls", tlsSecret("web-tls", a.certPem, a.keyPem, "1"));
  const { deps } = plannerDeps(secrets);
  const svc = service({
    ports: [port(443)],
    annotations: {
      "port-443": JSON.stringify({ protocol: "https", "tls-secret-name": "web-tls" }),
    },
  });
  const list = nodes(1);
  const first = await planService(deps, svc, list);
  assert.ok(reuses(await planService(deps, svc, list), first));
  const b = await generateSelfSignedCert();
  secrets.set("web-tls", tlsSecret("web-tls", b.certPem, b.keyPem, "2"));
  assert.deepEqual(await deps.tls.refresh(), ["default/web"]);
  const rotated = await planService(deps, svc, list);
  assert.equal(remembered(rotated), false);
  assert.notEqual(rotated.desired.configs[0]?.tls?.fingerprint, first.desired.configs[0]?.tls?.fingerprint);
  assert.notEqual(planFingerprint(rotated.desired), planFingerprint(first.desired));
});

Deno.test("planService with a memo: a plan over Nodes that changed while it was made is not remembered", async () => {
  const { deps, plans, tagGate } = plannerDeps();
  const svc: V1Service = service();
  const gate = Promise.withResolvers<void>();
  tagGate.wait = gate.promise;
  const planning = planService(deps, svc, nodes(2));
  // A Node event arrives while the plan waits for the cluster identity: the listing it was given is old.
  plans.nodesChanged();
  gate.resolve();
  const stale = await planning;
  assert.equal(backendsOf(stale).length, 2);
  assert.equal(plans.size, 0);
  const next = await planService(deps, svc, nodes(3));
  assert.equal(remembered(next), false);
  assert.equal(backendsOf(next).length, 3);
});

Deno.test("PlanMemo: forget drops a Service's plans; nodesChanged drops every plan", async () => {
  const { deps, plans } = plannerDeps();
  const list = nodes(1);
  const web = await planService(deps, service({ name: "web" }), list);
  await planService(deps, service({ name: "api", uid: "aaaaaaaa-4b5a-4697-8877-665544332211" }), list);
  assert.equal(plans.size, 2);
  plans.forget("default/web");
  assert.equal(plans.size, 1);
  const again = await planService(deps, service({ name: "web" }), list);
  assert.equal(remembered(again), false);
  assert.equal(again.fingerprint, web.fingerprint);
  plans.nodesChanged();
  assert.equal(plans.size, 0);
});

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
