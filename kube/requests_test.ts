import assert from "node:assert/strict";
import { ApiException } from "@kubernetes/client-node";
import { describeRequest, isConflict, isNotFound, KubeApiError, toKubeApiError } from "./requests.ts";

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
