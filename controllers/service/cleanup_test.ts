import assert from "node:assert/strict";
import type { V1Service } from "@kubernetes/client-node";
import type { NodeBalancerSummary } from "../../cache/types.ts";
import { service } from "./testdata/fixtures.ts";
import { findOrphans } from "./cleanup.ts";
import { ownershipTag } from "./ownership.ts";

const LIVE_UID = "0f1e2d3c-4b5a-4697-8877-665544332211";
const GONE_UID = "99999999-4b5a-4697-8877-665544332211";

function nb(id: number, tags: string[], over: Partial<NodeBalancerSummary> = {}): NodeBalancerSummary {
  return {
    id,
    label: `ccm-${id}`,
    region: "us-east",
    hostname: `nb-${id}.linodeusercontent.com`,
    ipv4: `172.16.0.${id}`,
    ipv6: null,
    tags,
    ...over,
  };
}

function withStatus(svc: V1Service, ingress: { ip?: string; hostname?: string }[]): V1Service {
  return { ...svc, status: { loadBalancer: { ingress } } };
}

const CASES: {
  name: string;
  nbs: NodeBalancerSummary[];
  services: V1Service[];
  orphans: number[];
  doubt?: boolean;
}[] = [
  {
    name: "lists the cluster's NodeBalancers no Service ties to, Go CCM's and ours",
    nbs: [
      nb(1, ["kubernetes", "prod"]),
      nb(2, [ownershipTag("kubernetes", GONE_UID)]),
      nb(3, ["other-cluster"]),
    ],
    services: [service()],
    orphans: [1, 2],
  },
  {
    name: "never lists one whose ownership tag names a Service that exists",
    nbs: [nb(1, ["kubernetes", ownershipTag("kubernetes", LIVE_UID)])],
    services: [service({ uid: LIVE_UID })],
    orphans: [],
  },
  {
    name: "never lists one at a Service's status address or hostname",
    nbs: [nb(1, ["kubernetes"]), nb(2, ["kubernetes"], { hostname: "api.example" })],
    services: [
      withStatus(service({ name: "a" }), [{ ip: "172.16.0.1" }]),
      withStatus(service({ name: "b" }), [{ hostname: "api.example" }]),
    ],
    orphans: [],
  },
  {
    name: "never lists one a Service names in nodebalancer-id, even with another cluster's ownership tag",
    nbs: [nb(7, ["kubernetes", ownershipTag("kubernetes", GONE_UID)])],
    services: [service({ annotations: { "nodebalancer-id": "7" } })],
    orphans: [],
  },
  {
    name: "reports doubt when a Service's nodebalancer-id cannot be read",
    nbs: [nb(1, ["kubernetes"])],
    services: [service({ annotations: { "nodebalancer-id": "seven" } })],
    orphans: [1],
    doubt: true,
  },
  {
    name: "ignores NodeBalancers of another cluster, whatever their ownership tag",
    nbs: [nb(1, ["staging", ownershipTag("staging", GONE_UID)])],
    services: [],
    orphans: [],
  },
];

for (const c of CASES) {
  Deno.test(`findOrphans() ${c.name}`, () => {
    const found = findOrphans(c.nbs, c.services, "kubernetes");
    assert.deepEqual(found.orphans.map((o) => o.id), c.orphans);
    assert.equal(found.doubt, c.doubt ?? false);
  });
}
