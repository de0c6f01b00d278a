import assert from "node:assert/strict";
import { PatchStrategy, setHeaderOptions, type V1Node } from "@kubernetes/client-node";
import { startKubeSim } from "./server.ts";
import { clientsFor, node, rejectsWith } from "./testdata/test_support.ts";

const MERGE = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);

function withCidrs(name: string, spec: { podCIDR?: string; podCIDRs?: string[] }): V1Node {
  const n = node({ name });
  return { ...n, spec: { ...n.spec, ...spec } };
}

function causes(status: Record<string, unknown>): string[] {
  const details = status.details as { causes?: { field?: string; message?: string }[] } | undefined;
  return (details?.causes ?? []).map((c) => `${c.field}: ${c.message}`);
}

const CONVERSIONS: { name: string; spec: { podCIDR?: string; podCIDRs?: string[] }; want: unknown }[] = [
  {
    name: "fills podCIDRs from podCIDR",
    spec: { podCIDR: "10.192.1.0/24" },
    want: { podCIDR: "10.192.1.0/24", podCIDRs: ["10.192.1.0/24"] },
  },
  {
    name: "fills podCIDR from podCIDRs[0]",
    spec: { podCIDRs: ["10.192.1.0/24", "2600::/112"] },
    want: { podCIDR: "10.192.1.0/24", podCIDRs: ["10.192.1.0/24", "2600::/112"] },
  },
  {
    name: "takes podCIDR when the two differ",
    spec: { podCIDR: "10.192.2.0/24", podCIDRs: ["10.192.1.0/24", "2600::/112"] },
    want: { podCIDR: "10.192.2.0/24", podCIDRs: ["10.192.2.0/24"] },
  },
];

for (const c of CONVERSIONS) {
  Deno.test(`createNode() ${c.name}, as the v1 conversion does`, async () => {
    await using kube = await startKubeSim();
    const { core } = clientsFor(kube);
    const created = await core.createNode({ body: withCidrs("n1", c.spec) });
    assert.deepEqual({ podCIDR: created.spec?.podCIDR, podCIDRs: created.spec?.podCIDRs }, c.want);
  });
}

const INVALID: { name: string; podCIDRs: string[]; want: string[] }[] = [
  {
    name: "not a CIDR",
    podCIDRs: ["10.192.1.0"],
    want: [
      'spec.podCIDRs[0]: Invalid value: "10.192.1.0": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)',
    ],
  },
  {
    name: "two of one family",
    podCIDRs: ["10.192.1.0/24", "10.192.2.0/24"],
    want: [
      'spec.podCIDRs: Invalid value: ["10.192.1.0/24","10.192.2.0/24"]: may specify no more than one CIDR for each IP family',
    ],
  },
  {
    name: "three",
    podCIDRs: ["10.192.1.0/24", "2600::/112", "2601::/112"],
    want: [
      'spec.podCIDRs: Invalid value: ["10.192.1.0/24","2600::/112","2601::/112"]: may specify no more than one CIDR for each IP family',
    ],
  },
];

for (const c of INVALID) {
  Deno.test(`createNode() refuses podCIDRs: ${c.name}`, async () => {
    await using kube = await startKubeSim();
    const { core } = clientsFor(kube);
    const status = await rejectsWith(
      core.createNode({ body: withCidrs("n1", { podCIDRs: c.podCIDRs }) }),
      422,
    );
    assert.deepEqual(causes(status).map((m) => m.replace(/^(spec[^:]*): /, "$1: ")), c.want);
  });
}

Deno.test("patchNode() sets pod CIDRs once; changing or clearing them is Forbidden, repeating them is a no-op", async () => {
  await using kube = await startKubeSim();
  const { core } = clientsFor(kube);
  await core.createNode({ body: node({ name: "n1" }) });
  const cidrs = ["10.192.1.0/24", "2600:3c05:0:1001:0:c::/112"];
  const set = await core.patchNode(
    { name: "n1", body: { spec: { podCIDR: cidrs[0], podCIDRs: cidrs } } },
    MERGE,
  );
  assert.deepEqual(set.spec?.podCIDRs, cidrs);
  const again = await core.patchNode(
    { name: "n1", body: { spec: { podCIDR: cidrs[0], podCIDRs: cidrs } } },
    MERGE,
  );
  assert.equal(again.metadata?.resourceVersion, set.metadata?.resourceVersion);
  const forbidden = 'spec.podCIDRs: Forbidden: node updates may not change podCIDR except from "" to valid';
  for (
    const body of [{ spec: { podCIDR: "10.192.2.0/24" } }, { spec: { podCIDRs: [cidrs[0]] } }, {
      spec: { podCIDR: null, podCIDRs: null },
    }]
  ) {
    const status = await rejectsWith(core.patchNode({ name: "n1", body }, MERGE), 422);
    assert.deepEqual(causes(status), [forbidden], JSON.stringify(body));
  }
  assert.deepEqual((await core.readNode({ name: "n1" })).spec?.podCIDRs, cidrs);
});

Deno.test("patchNode() sets spec.providerID once; changing or clearing it is Forbidden, repeating it is a no-op", async () => {
  await using kube = await startKubeSim();
  const { core } = clientsFor(kube);
  await core.createNode({ body: node({ name: "n1" }) });
  const set = await core.patchNode({ name: "n1", body: { spec: { providerID: "linode://123" } } }, MERGE);
  assert.equal(set.spec?.providerID, "linode://123");
  const again = await core.patchNode({ name: "n1", body: { spec: { providerID: "linode://123" } } }, MERGE);
  assert.equal(again.metadata?.resourceVersion, set.metadata?.resourceVersion);
  const forbidden =
    'spec.providerID: Forbidden: node updates may not change providerID except from "" to valid';
  for (const body of [{ spec: { providerID: "linode://456" } }, { spec: { providerID: null } }]) {
    const status = await rejectsWith(core.patchNode({ name: "n1", body }, MERGE), 422);
    assert.deepEqual(causes(status), [forbidden], JSON.stringify(body));
  }
  assert.equal((await core.readNode({ name: "n1" })).spec?.providerID, "linode://123");
  // A Node created with an empty providerID may still get one.
  await core.createNode({ body: { ...node({ name: "n2" }), spec: { providerID: "" } } });
  const later = await core.patchNode({ name: "n2", body: { spec: { providerID: "linode://9" } } }, MERGE);
  assert.equal(later.spec?.providerID, "linode://9");
});
