import assert from "node:assert/strict";
import {
  isNotFound,
  isRetryable,
  kindForStatus,
  LinodeApiError,
  type LinodeErrorKind,
  parseReasons,
  parseRetryAfterMs,
} from "./errors.ts";
import { clientFor } from "./testdata/test_support.ts";

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);
const RETRY_AFTER_CASES: Array<{ name: string; value: unknown; want: number | undefined }> = [
  { name: "seconds", value: "7", want: 7000 },
  { name: "fractional seconds", value: "1.5", want: 1500 },
  { name: "a number", value: 2, want: 2000 },
  { name: "an HTTP date", value: new Date(NOW + 30_000).toUTCString(), want: 30_000 },
  { name: "a date in the past as zero", value: new Date(NOW - 5_000).toUTCString(), want: 0 },
  { name: "a huge value capped", value: "100000", want: 60_000 },
  { name: "garbage as absent", value: "soon", want: undefined },
  { name: "empty as absent", value: "", want: undefined },
  { name: "a missing header as absent", value: undefined, want: undefined },
];
for (const c of RETRY_AFTER_CASES) {
  Deno.test(`parseRetryAfterMs() reads ${c.name}`, () => {
    assert.equal(parseRetryAfterMs(c.value, NOW, 60_000), c.want);
  });
}

const KIND_CASES: Array<[number, LinodeErrorKind]> = [
  [400, "client"],
  [401, "auth"],
  [403, "auth"],
  [404, "not_found"],
  [409, "client"],
  [429, "rate_limited"],
  [500, "server"],
  [503, "server"],
];
for (const [status, kind] of KIND_CASES) {
  Deno.test(`kindForStatus() maps ${status} to ${kind}`, () => assert.equal(kindForStatus(status), kind));
}

function apiError(kind: LinodeErrorKind, status: number): LinodeApiError {
  return new LinodeApiError("list linode instances", {
    kind,
    status,
    method: "GET",
    route: "/linode/instances",
  });
}

Deno.test("isRetryable() accepts 429, 5xx, timeouts and network errors only", () => {
  const retryable = (["rate_limited", "server", "timeout", "network"] as const).map((k) => apiError(k, 0));
  const final = (["not_found", "client", "auth"] as const).map((k) => apiError(k, 400));
  assert.deepEqual(retryable.map(isRetryable), [true, true, true, true]);
  assert.deepEqual(final.map(isRetryable), [false, false, false]);
  assert.equal(isRetryable(new Error("x")), false);
});

Deno.test("isNotFound() is true only for a LinodeApiError 404", () => {
  assert.equal(isNotFound(apiError("not_found", 404)), true);
  assert.equal(isNotFound(apiError("client", 400)), false);
  assert.equal(isNotFound({ kind: "not_found" }), false);
});

Deno.test("LinodeApiError() states the action, status and reasons", () => {
  const e = new LinodeApiError("create nodebalancer", {
    status: 400,
    kind: "client",
    method: "POST",
    route: "/nodebalancers",
    reasons: [{ field: "label", reason: "Label must be unique" }, { reason: "Bad region" }],
  });
  assert.equal(e.message, "Cannot create nodebalancer: HTTP 400 (label: Label must be unique; Bad region)");
  assert.equal(apiError("timeout", 0).message, "Cannot list linode instances: timed out");
  assert.equal(apiError("network", 0).message, "Cannot list linode instances: network error");
  const json = JSON.parse(JSON.stringify(e));
  assert.equal(json.status, 400);
  assert.equal(json.route, "/nodebalancers");
  assert.deepEqual(json.reasons[0], { field: "label", reason: "Label must be unique" });
});

Deno.test("parseReasons() keeps string reasons and fields, from a body or a bare array", () => {
  const body = { errors: [{ reason: "a", field: "f" }, { reason: 3 }, "junk", { reason: "b", field: 9 }] };
  assert.deepEqual(parseReasons(body), [{ reason: "a", field: "f" }, { reason: "b" }]);
  assert.deepEqual(parseReasons([{ reason: "c" }]), [{ reason: "c" }]);
  assert.deepEqual(parseReasons("<html>"), []);
});

/** A stand-in for what sits in front of the API: answers every request with `status` and `body`. */
function standIn(status: number, body: string, contentType: string) {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response(body, { status, headers: { "content-type": contentType } }),
  );
  return { url: `http://127.0.0.1:${server.addr.port}/v4`, token: "tok-not-found", server };
}

const CASES = [
  {
    name: "the API's own error body",
    status: 404,
    body: '{"errors":[{"reason":"Not found"}]}',
    type: "application/json",
    gone: true,
  },
  {
    name: "a proxy's HTML page",
    status: 404,
    body: "<html><body>404 Not Found</body></html>",
    type: "text/html",
    gone: false,
  },
  { name: "an empty body", status: 404, body: "", type: "text/plain", gone: false },
  {
    name: "JSON without errors",
    status: 404,
    body: '{"message":"no route"}',
    type: "application/json",
    gone: false,
  },
];

for (const c of CASES) {
  Deno.test(`LinodeClient: a 404 with ${c.name} ${c.gone ? "proves" : "does not prove"} the Linode gone`, async () => {
    const s = standIn(c.status, c.body, c.type);
    try {
      const { client } = clientFor(s, { maxRetries: 0 });
      const error = await client.instances.get(123).then(() => undefined, (e: unknown) => e);
      assert.ok(error instanceof LinodeApiError, String(error));
      assert.equal(isNotFound(error), c.gone);
      assert.equal(isRetryable(error), !c.gone, "an unknown is retried, never acted on");
    } finally {
      await s.server.shutdown();
    }
  });
}
