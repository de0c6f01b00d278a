import assert from "node:assert/strict";
import { ApiException } from "@kubernetes/client-node";
import {
  describeRequest,
  isConflict,
  isNotFound,
  KubeApiError,
  requestAttributes,
  toKubeApiError,
} from "./requests.ts";

const BASE = "http://127.0.0.1:6443";
const CASES = [
  { method: "GET", path: "/api/v1/nodes", verb: "list", resource: "nodes" },
  { method: "GET", path: "/api/v1/nodes?watch=true&resourceVersion=5", verb: "watch", resource: "nodes" },
  { method: "GET", path: "/api/v1/nodes/n1", verb: "get", resource: "nodes" },
  { method: "PATCH", path: "/api/v1/nodes/n1/status", verb: "patch", resource: "nodes/status" },
  { method: "DELETE", path: "/api/v1/nodes/n1", verb: "delete", resource: "nodes" },
  { method: "GET", path: "/api/v1/services", verb: "list", resource: "services" },
  {
    method: "PATCH",
    path: "/api/v1/namespaces/ns/services/s/status",
    verb: "patch",
    resource: "services/status",
  },
  { method: "POST", path: "/api/v1/namespaces/default/events", verb: "create", resource: "events" },
  { method: "GET", path: "/api/v1/namespaces/kube-system", verb: "get", resource: "namespaces" },
  {
    method: "PUT",
    path: "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/ccm",
    verb: "update",
    resource: "leases",
  },
  { method: "DELETE", path: "/api/v1/namespaces/ns/events", verb: "deletecollection", resource: "events" },
];

for (const c of CASES) {
  Deno.test(`describeRequest() ${c.method} ${c.path}`, () => {
    assert.deepEqual(describeRequest(c.method, BASE + c.path), { verb: c.verb, resource: c.resource });
  });
}

/** `requestAttributes()`: what the apiserver's RequestInfo makes of a request (verb, group, resource, ...). */
const ATTRIBUTES: [string, string, string][] = [
  ["GET", "/api/v1/namespaces/kube-system", "get  namespaces  kube-system kube-system"],
  ["GET", "/api/v1/namespaces/ns1/status", "get  namespaces status ns1 ns1"],
  ["GET", "/api/v1/namespaces/default/secrets/tls", "get  secrets  default tls"],
  ["GET", "/api/v1/services?watch=1", "watch  services   "],
  ["GET", "/api/v1/watch/nodes", "watch  nodes   "],
  [
    "GET",
    "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases?fieldSelector=metadata.name%3Dccm",
    "list coordination.k8s.io leases  kube-system ccm",
  ],
  [
    "POST",
    "/apis/authorization.k8s.io/v1/subjectaccessreviews",
    "create authorization.k8s.io subjectaccessreviews   ",
  ],
  ["PATCH", "/api/v1/namespaces/a/services/b/status", "patch  services status a b"],
  ["DELETE", "/api/v1/namespaces/a/events", "deletecollection  events  a "],
];

for (const [method, path, want] of ATTRIBUTES) {
  Deno.test(`requestAttributes() ${method} ${path}`, () => {
    const a = requestAttributes(method, BASE + path);
    assert.equal([a.verb, a.group, a.resource, a.subresource, a.namespace, a.name].join(" "), want);
  });
}

Deno.test("toKubeApiError() keeps status, reason and message of a Status body", () => {
  const body = JSON.stringify({
    kind: "Status",
    code: 409,
    reason: "Conflict",
    message: "precondition failed",
  });
  const e = toKubeApiError(new ApiException(409, "Unknown API Status Code!", body, { "retry-after": "3" }));
  assert.ok(e instanceof KubeApiError);
  assert.equal(e.status, 409);
  assert.equal(e.reason, "Conflict");
  assert.equal(e.retryAfterSec, 3);
  assert.match(e.message, /HTTP 409 Conflict: precondition failed/);
  assert.ok(isConflict(e) && !isNotFound(e));
});

Deno.test("toKubeApiError() copes with a non-JSON body and passes other errors through", () => {
  const e = toKubeApiError(new ApiException(502, "Unknown", "<html>bad gateway</html>", {}));
  assert.ok(e instanceof KubeApiError);
  assert.equal(e.reason, "HTTP502");
  const other = new TypeError("x");
  assert.equal(toKubeApiError(other), other);
});
