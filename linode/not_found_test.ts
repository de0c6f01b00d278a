import assert from "node:assert/strict";
import { isNotFound, isRetryable, LinodeApiError } from "./errors.ts";
import { clientFor } from "./testdata/test_support.ts";

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
