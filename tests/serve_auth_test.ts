/**
 * The secure port's delegated authentication and authorisation against the Kubernetes emulator: the server of
 * `server/serve.ts` with the `DelegatedAuth` that `wiring/serve_auth.ts` builds (real client-node review calls),
 * the emulator's TokenReview and SubjectAccessReview over its stored RBAC, time on a FakeClock.
 */
import assert from "node:assert/strict";
import { FakeClock } from "../common/clock.ts";
import { componentLogger } from "../common/log.ts";
import { parseConfig } from "../config/config.ts";
import { startFixture } from "../kube/testdata/fixtures.ts";
import { Registry } from "../common/metrics.ts";
import { startServer } from "../server/serve.ts";
import { delegatedAuth } from "../wiring/serve_auth.ts";

const TOKENREVIEWS = "POST /apis/authentication.k8s.io/v1/tokenreviews";
const SARS = "POST /apis/authorization.k8s.io/v1/subjectaccessreviews";
const PROMETHEUS = "tok-prometheus-0a1b2c3d4e5f";
const NOBODY = "tok-nobody-9f8e7d6c5b4a";

function config(args: string[] = []) {
  const env = {
    LINODE_API_TOKEN: "tok-linode",
    LINODE_REGION: "us-east",
    KUBERNETES_SERVICE_HOST: "10.0.0.1",
    KUBERNETES_SERVICE_PORT: "443",
  };
  const parsed = parseConfig(args, env);
  if (parsed.kind !== "run") throw new TypeError("not a run config");
  return parsed.config;
}

/** A ClusterRole granting `get` on `urls`, bound to the ServiceAccount monitoring/prometheus. */
function grantToPrometheus(kube: Awaited<ReturnType<typeof startFixture>>["kube"], urls: string[]): void {
  kube.store.create("rbac.authorization.k8s.io/clusterroles", {
    metadata: { name: "ccm-metrics-reader" },
    rules: [{ nonResourceURLs: urls, verbs: ["get"] }],
  });
  kube.store.create("rbac.authorization.k8s.io/clusterrolebindings", {
    metadata: { name: "prometheus-ccm-metrics" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "ccm-metrics-reader" },
    subjects: [{ kind: "ServiceAccount", name: "prometheus", namespace: "monitoring" }],
  });
}

async function world(args: string[] = []) {
  const fixture = await startFixture();
  const { kube } = fixture;
  kube.identities.add(PROMETHEUS, { username: "system:serviceaccount:monitoring:prometheus", uid: "u-1" });
  kube.identities.add(NOBODY, { username: "nobody" });
  const clock = new FakeClock();
  const kc = fixture.clients.kc;
  const metrics = new Registry();
  const auth = delegatedAuth(config(args), { authn: kc, authz: kc }, {
    clock,
    metrics,
    userAgent: "test",
  });
  const server = await startServer({
    hostname: "127.0.0.1",
    port: 0,
    tls: "self-signed",
    registry: new Registry(),
    checks: { healthz: [], readyz: [] },
    leading: () => true,
    plan: () => ({ actions: [] }),
    auth,
    clock,
    // The tests below send 200 requests at once from one address.
    limits: { maxConnections: 1_000, maxConnectionsPerAddress: 1_000 },
    log: componentLogger("serve"),
  });
  const client = Deno.createHttpClient({ caCerts: [server.certPem] });
  return {
    kube,
    clock,
    reviews: () => [kube.calls.count(TOKENREVIEWS), kube.calls.count(SARS)],
    decisions: (decision: string) =>
      metrics.counter("ccm_secure_port_requests_total", "", ["decision"]).get({ decision }),
    avoided: (reason: string) =>
      metrics.counter("ccm_secure_port_token_reviews_avoided_total", "", ["reason"]).get({ reason }),
    reviewed: (result: string) =>
      metrics.counter("ccm_secure_port_token_reviews_total", "", ["result"]).get({ result }),
    async get(path: string, token?: string): Promise<number> {
      const headers = token ? { authorization: `Bearer ${token}` } : undefined;
      const res = await fetch(`${server.url}${path}`, { client, headers });
      await res.body?.cancel();
      return res.status;
    },
    async [Symbol.asyncDispose]() {
      client.close();
      await server.close();
      await fixture[Symbol.asyncDispose]();
    },
  };
}

Deno.test("secure port: no token 401, unknown token 401, token without permission 403, health paths open", async () => {
  await using w = await world();
  for (const path of ["/metrics", "/plan", "/no-such-path"]) assert.equal(await w.get(path), 401, path);
  assert.deepEqual(w.reviews(), [0, 0], "nothing to review without a token");
  for (const path of ["/healthz", "/readyz", "/livez"]) assert.equal(await w.get(path), 200, path);
  assert.equal(await w.get("/metrics", "tok-unknown"), 401);
  assert.equal(await w.get("/metrics", NOBODY), 403);
  assert.equal(await w.get("/metrics", PROMETHEUS), 403, "no RBAC grants it yet");
  assert.deepEqual(
    ["always_allowed", "unauthorized", "forbidden", "allowed"].map(w.decisions),
    [3, 4, 2, 0],
    "ccm_secure_port_requests_total counts each decision",
  );
});

Deno.test("secure port: a ClusterRole on nonResourceURLs /metrics allows /metrics and nothing else", async () => {
  await using w = await world();
  grantToPrometheus(w.kube, ["/metrics"]);
  assert.equal(await w.get("/metrics", PROMETHEUS), 200);
  assert.equal(await w.get("/plan", PROMETHEUS), 403);
  assert.equal(await w.get("/metrics", NOBODY), 403);
  // The emulator's own token is a system:masters admin: allowed without a SubjectAccessReview.
  const [, sarsBefore] = w.reviews();
  assert.equal(await w.get("/plan", w.kube.token), 200);
  assert.equal(w.reviews()[1], sarsBefore);
});

Deno.test("secure port: reviews are cached for their TTLs, a denial too", async () => {
  await using w = await world(["--authorization-webhook-cache-unauthorized-ttl=5s"]);
  for (let i = 0; i < 5; i++) assert.equal(await w.get("/metrics", PROMETHEUS), 403);
  assert.deepEqual(w.reviews(), [1, 1], "one TokenReview and one SubjectAccessReview for five scrapes");
  grantToPrometheus(w.kube, ["/metrics"]);
  await w.clock.advance(4_999);
  assert.equal(await w.get("/metrics", PROMETHEUS), 403, "the denial is cached for 5 s");
  await w.clock.advance(1);
  assert.equal(await w.get("/metrics", PROMETHEUS), 200);
  assert.deepEqual(w.reviews(), [1, 2], "the token answer (10 s) is still cached");
  await w.clock.advance(5_000);
  assert.equal(await w.get("/metrics", PROMETHEUS), 200);
  assert.deepEqual(w.reviews(), [2, 2], "token answer expired after 10 s; the allowance (10 s) not yet");
});

Deno.test("secure port: a failing review never allows, and is not cached", async () => {
  await using w = await world();
  grantToPrometheus(w.kube, ["/metrics"]);
  const stopTokenFault = w.kube.faults.add({
    route: "/apis/authentication.k8s.io/v1/tokenreviews",
    status: 500,
  });
  assert.equal(await w.get("/metrics", PROMETHEUS), 401);
  assert.equal(await w.get("/metrics", w.kube.token), 401, "not even an admin token is taken on trust");
  stopTokenFault();
  const stopSarFault = w.kube.faults.add({
    route: "/apis/authorization.k8s.io/v1/subjectaccessreviews",
    status: 503,
  });
  assert.equal(await w.get("/metrics", PROMETHEUS), 500);
  assert.equal(await w.get("/metrics", PROMETHEUS), 500, "the failure was not cached as a denial");
  assert.equal(w.decisions("review_failed"), 4);
  stopSarFault();
  assert.equal(await w.get("/metrics", PROMETHEUS), 200);
});

Deno.test("secure port: --authorization-always-allow-paths replaces the default; a trailing * matches a prefix", async () => {
  await using w = await world(["--authorization-always-allow-paths=healthz,/metri*"]);
  assert.equal(await w.get("/healthz"), 200);
  assert.equal(await w.get("/metrics"), 200);
  assert.equal(await w.get("/readyz"), 401, "no longer in the list");
  assert.deepEqual(w.reviews(), [0, 0]);
});

Deno.test("secure port: 200 concurrent requests with one unknown token cost one TokenReview", async () => {
  await using w = await world();
  // The apiserver takes its time: every request arrives while the first review is in flight.
  w.kube.faults.add({ route: "/apis/authentication.k8s.io/v1/tokenreviews", latencyMs: 300 });
  const statuses = await Promise.all(
    Array.from({ length: 200 }, () => w.get("/metrics", "tok-made-up-0001")),
  );
  assert.deepEqual(new Set(statuses), new Set([401]));
  assert.deepEqual(w.reviews(), [1, 0], "one TokenReview for 200 requests");
  assert.equal(w.reviewed("unauthenticated"), 1);
  assert.equal(w.avoided("coalesced") + w.avoided("cached"), 199);
});

Deno.test("secure port: made-up tokens spend a budget of 10 TokenReviews, then get 401 unreviewed; known tokens still work", async () => {
  await using w = await world();
  grantToPrometheus(w.kube, ["/metrics"]);
  assert.equal(await w.get("/metrics", PROMETHEUS), 200, "Prometheus's token authenticates once: known");
  const madeUp = (n: number, from = 0) =>
    Promise.all(Array.from({ length: n }, (_, i) => w.get("/metrics", `tok-made-up-${from + i}`)));
  assert.deepEqual(new Set(await madeUp(200)), new Set([401]));
  assert.deepEqual(w.reviews()[0], 1 + 10, "200 made-up tokens cost 10 TokenReviews");
  assert.equal(w.avoided("limited"), 190);

  await w.clock.advance(10_000); // every cached answer expires; the budget refills to 10
  await madeUp(20, 1_000);
  assert.equal(w.reviews()[0], 1 + 10 + 10);
  assert.equal(await w.get("/metrics", PROMETHEUS), 200, "a known token is reviewed whatever the budget");
  assert.equal(w.reviews()[0], 1 + 10 + 10 + 1);
  assert.equal(await w.get("/metrics", NOBODY), 401, "a token never seen waits for the budget");
  assert.equal(w.reviews()[0], 1 + 10 + 10 + 1);
  await w.clock.advance(1_000);
  assert.equal(
    await w.get("/metrics", NOBODY),
    403,
    "one review a second: it authenticates, and is not allowed",
  );
  assert.equal(w.reviewed("authenticated"), 3);
});
