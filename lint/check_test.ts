import assert from "node:assert/strict";
import type { V1Service } from "@kubernetes/client-node";
import { defaults } from "../controllers/service/testdata/fixtures.ts";
import { formatReport, lintServices } from "./check.ts";

const A = "service.beta.kubernetes.io/linode-loadbalancer-";

function svc(annotations: Record<string, string>, type = "LoadBalancer", protocol = "TCP"): V1Service {
  return {
    metadata: { name: "web", namespace: "ns", annotations },
    spec: { type, ports: [{ port: 53, protocol }] },
  };
}

const CASES: { name: string; svc: V1Service; fromGoCcm?: boolean; want: string[] }[] = [
  { name: "says nothing about a valid Service", svc: svc({ [`${A}throttle`]: "3" }), want: [] },
  {
    name: "names the annotation, its value and what is accepted",
    svc: svc({ [`${A}check-type`]: "tcp" }),
    want: [`f: ns/web: error: ${A}check-type="tcp": expected none, connection, http or http_body`],
  },
  {
    // The controller goes on with the Go CCM's reading; lint still fails on it.
    name: "reports a value read leniently as an error, with the value used",
    svc: svc({ [`${A}nodebalancer-type`]: "huge" }),
    want: [
      `f: ns/web: error: ${A}nodebalancer-type="huge": expected common, premium or premium_40gb; used common (--default-nodebalancer-type) on a new NodeBalancer, as the Go CCM; an existing one keeps its type`,
    ],
  },
  {
    name: "warns when annotations sit on a Service that is not a LoadBalancer",
    svc: svc({ [`${A}throttle`]: "3" }, "ClusterIP"),
    want: ["f: ns/web: warning: type ClusterIP: its linode-loadbalancer annotations do nothing"],
  },
  {
    name: "notes both differing defaults with --from-go-ccm",
    svc: svc({}),
    fromGoCcm: true,
    want: [
      `f: ns/web: note: ${A}throttle not set: this CCM applies 20 where the Go CCM applied 0; set it to "0" to keep the Go CCM's behaviour`,
      `f: ns/web: note: ${A}check-passive not set: this CCM applies false where the Go CCM applied true; set it to "true" to keep the Go CCM's behaviour`,
    ],
  },
  {
    name: "leaves check-passive out for a UDP-only Service",
    svc: svc({ [`${A}throttle`]: "0" }, "LoadBalancer", "UDP"),
    fromGoCcm: true,
    want: [],
  },
];

for (const c of CASES) {
  Deno.test(`lintServices() ${c.name}`, () => {
    const report = lintServices([{ service: c.svc, where: "f" }], defaults(), { fromGoCcm: c.fromGoCcm });
    assert.deepEqual(formatReport(report).slice(0, -1), c.want);
  });
}

Deno.test("formatReport() counts invalid Services, warnings and notes", () => {
  const bad = svc({ [`${A}throttle`]: "x", [`${A}preserve`]: "maybe" });
  const report = lintServices([{ service: bad, where: "a" }, { service: svc({}), where: "b" }], defaults(), {
    fromGoCcm: true,
  });
  assert.equal(report.invalid, 1);
  assert.equal(report.checked, 2);
  assert.equal(
    formatReport(report).at(-1),
    "checked 2 LoadBalancer Services: 2 invalid annotations in 1 Service, 3 notes",
  );
});
