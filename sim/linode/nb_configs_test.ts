import assert from "node:assert/strict";
import {
  deleteNodeBalancerConfig,
  getNodeBalancerConfig,
  getNodeBalancerConfigs,
  updateNodeBalancerConfig,
} from "@linode/api-v4";
import type { LinodeSim } from "./server.ts";
import { startLinodeSim } from "./server.ts";
import { failure, rawCall, withSim } from "./testdata/test_client.ts";

async function nodeBalancer(sim: LinodeSim, type = "common"): Promise<number> {
  const nb = await withSim(
    sim,
    () => rawCall("POST", "/nodebalancers", { label: `svc-${type}`, region: "us-east", type }),
  );
  return (nb as { id: number }).id;
}

function postConfig(sim: LinodeSim, nbId: number, body: unknown) {
  return withSim(sim, () => rawCall("POST", `/nodebalancers/${nbId}/configs`, body)) as Promise<
    Record<string, unknown>
  >;
}

/** Invalid config bodies and the field the API names for each. */
const REFUSED: [string, Record<string, unknown>, string, string][] = [
  ["an unknown protocol", { protocol: "ftp" }, "protocol", "Must be one of http, https, tcp, udp"],
  ["port 0", { port: 0 }, "port", "Must be an integer between 1 and 65535"],
  ["port 65536", { port: 65536 }, "port", "Must be an integer between 1 and 65535"],
  [
    "ring_hash on tcp",
    { protocol: "tcp", algorithm: "ring_hash" },
    "algorithm",
    "Must be one of roundrobin, leastconn, source",
  ],
  [
    "http_cookie on tcp",
    { protocol: "tcp", stickiness: "http_cookie" },
    "stickiness",
    "Must be one of none, table",
  ],
  [
    "session on http",
    { protocol: "http", stickiness: "session" },
    "stickiness",
    "Must be one of none, table, http_cookie",
  ],
  [
    "proxy protocol on http",
    { protocol: "http", proxy_protocol: "v1" },
    "proxy_protocol",
    "Proxy protocol requires the tcp protocol",
  ],
  [
    "an unknown proxy protocol",
    { protocol: "tcp", proxy_protocol: "v3" },
    "proxy_protocol",
    "Must be one of none, v1, v2",
  ],
  [
    "udp on a common NodeBalancer",
    { protocol: "udp" },
    "protocol",
    "UDP is supported on premium NodeBalancers only",
  ],
  ["an unknown check", { check: "ping" }, "check", "Must be one of none, connection, http, http_body"],
  [
    "an http check without a path",
    { check: "http" },
    "check_path",
    "An HTTP path is required for http checks",
  ],
  [
    "a path with spaces",
    { check: "http", check_path: "/a b" },
    "check_path",
    "Must be a URL path of letters, digits and /-%?&=.",
  ],
  [
    "a relative path",
    { check: "http", check_path: "healthz" },
    "check_path",
    "Must be a URL path of letters, digits and /-%?&=.",
  ],
  [
    "http_body without a body",
    { check: "http_body", check_path: "/" },
    "check_body",
    "A body regex is required for http_body checks",
  ],
  [
    "timeout equal to interval",
    { check_interval: 5, check_timeout: 5 },
    "check_timeout",
    "check_timeout must be less than check_interval",
  ],
  [
    "an interval of 1",
    { check_interval: 1, check_timeout: 1 },
    "check_interval",
    "Must be an integer between 2 and 3600",
  ],
  [
    "a timeout of 31",
    { check_interval: 60, check_timeout: 31 },
    "check_timeout",
    "Must be an integer between 1 and 30",
  ],
  ["31 attempts", { check_attempts: 31 }, "check_attempts", "Must be an integer between 1 and 30"],
  [
    "a fractional interval",
    { check_interval: 5.5 },
    "check_interval",
    "Must be an integer between 2 and 3600",
  ],
  [
    "cipher none on tcp",
    { protocol: "tcp", cipher_suite: "none" },
    "cipher_suite",
    "Must be recommended or legacy",
  ],
  ["https without a certificate", { protocol: "https" }, "ssl_cert", "SSL certificate is required for https"],
  [
    "a certificate on tcp",
    { protocol: "tcp", ssl_cert: "x", ssl_key: "y" },
    "ssl_cert",
    "SSL certificates are only supported by the https protocol",
  ],
  ["a string passive flag", { check_passive: "yes" }, "check_passive", "check_passive must be a boolean"],
];

for (const [name, body, field, reason] of REFUSED) {
  Deno.test(`createNodeBalancerConfig() refuses ${name}`, async () => {
    await using sim = await startLinodeSim();
    const nbId = await nodeBalancer(sim);
    const got = await failure(postConfig(sim, nbId, { port: 80, ...body }));
    assert.deepEqual(got, { status: 400, errors: [{ field, reason }] });
    assert.equal(sim.world.nodeBalancers()[0]?.configs.length, 0);
  });
}

/** Premium-only UDP bodies refused even there. */
const REFUSED_UDP: [string, Record<string, unknown>, string, string][] = [
  ["source on udp", { algorithm: "source" }, "algorithm", "Must be one of roundrobin, leastconn, ring_hash"],
  ["table on udp", { stickiness: "table" }, "stickiness", "Must be one of none, session, source_ip"],
  [
    "passive checks on udp",
    { check_passive: true },
    "check_passive",
    "Passive checks are not supported for UDP",
  ],
  [
    "proxy protocol on udp",
    { proxy_protocol: "v2" },
    "proxy_protocol",
    "Proxy protocol requires the tcp protocol",
  ],
  [
    "a cipher suite on udp",
    { cipher_suite: "recommended" },
    "cipher_suite",
    "UDP configs have no cipher suite",
  ],
  ["udp_check_port 0", { udp_check_port: 0 }, "udp_check_port", "Must be an integer between 1 and 65535"],
];

for (const [name, body, field, reason] of REFUSED_UDP) {
  Deno.test(`createNodeBalancerConfig() refuses ${name}`, async () => {
    await using sim = await startLinodeSim();
    const nbId = await nodeBalancer(sim, "premium");
    const got = await failure(postConfig(sim, nbId, { port: 53, protocol: "udp", ...body }));
    assert.deepEqual(got, { status: 400, errors: [{ field, reason }] });
  });
}

Deno.test("createNodeBalancerConfig() accepts every documented combination and fills the API's defaults", async () => {
  await using sim = await startLinodeSim();
  const nbId = await nodeBalancer(sim, "premium");
  const accepted: Record<string, unknown>[] = [
    {
      port: 80,
      protocol: "http",
      stickiness: "http_cookie",
      algorithm: "source",
      check: "http",
      check_path: "/healthz?x=1",
    },
    {
      port: 81,
      protocol: "http",
      check: "http_body",
      check_path: "/",
      check_body: "ok",
      cipher_suite: "legacy",
    },
    { port: 25, protocol: "tcp", proxy_protocol: "v2", stickiness: "table", algorithm: "leastconn" },
    {
      port: 26,
      protocol: "tcp",
      proxy_protocol: "v1",
      check: "connection",
      check_interval: 2,
      check_timeout: 1,
    },
    { port: 53, protocol: "udp", algorithm: "ring_hash", stickiness: "source_ip", udp_check_port: 8053 },
    {
      port: 54,
      protocol: "udp",
      check: "connection",
      check_interval: 3600,
      check_timeout: 30,
      check_attempts: 30,
    },
  ];
  for (const body of accepted) {
    const c = await postConfig(sim, nbId, body);
    for (const [k, v] of Object.entries(body)) assert.equal(c[k], v, `${JSON.stringify(body)} keeps ${k}`);
  }
  const udp = await postConfig(sim, nbId, { port: 55, protocol: "udp" });
  assert.deepEqual(
    [
      udp.stickiness,
      udp.check_passive,
      udp.cipher_suite,
      udp.proxy_protocol,
      udp.udp_check_port,
      udp.udp_session_timeout,
    ],
    ["session", false, "none", "none", 80, 16],
  );
  const http = await postConfig(sim, nbId, { port: 8080 });
  assert.deepEqual(
    [
      http.protocol,
      http.stickiness,
      http.algorithm,
      http.check_passive,
      http.cipher_suite,
      http.ssl_cert,
      http.ssl_key,
    ],
    ["http", "none", "roundrobin", true, "recommended", null, null],
  );
  assert.equal((await withSim(sim, () => getNodeBalancerConfigs(nbId))).results, 8);
});

Deno.test("createNodeBalancerConfig() keeps ports unique among TCP-family configs and among UDP configs", async () => {
  await using sim = await startLinodeSim();
  const nbId = await nodeBalancer(sim, "premium");
  await postConfig(sim, nbId, { port: 443, protocol: "tcp" });
  const taken = await failure(postConfig(sim, nbId, { port: 443, protocol: "http" }));
  assert.deepEqual(taken.errors, [{ field: "port", reason: "Port 443 is already configured" }]);
  await postConfig(sim, nbId, { port: 443, protocol: "udp" });
  assert.equal(
    (await failure(postConfig(sim, nbId, { port: 443, protocol: "udp" }))).errors[0]?.field,
    "port",
  );
});

Deno.test("updateNodeBalancerConfig() merges over the stored config and checks the result", async () => {
  await using sim = await startLinodeSim();
  const nbId = await nodeBalancer(sim, "premium");
  const created = await postConfig(sim, nbId, {
    port: 8080,
    protocol: "http",
    check: "http",
    check_path: "/healthz",
    stickiness: "http_cookie",
  }) as { id: number };
  const updated = await withSim(
    sim,
    () => updateNodeBalancerConfig(nbId, created.id, { port: 8081, algorithm: "leastconn" }),
  );
  assert.deepEqual([updated.port, updated.algorithm, updated.check_path], [8081, "leastconn", "/healthz"]);
  const bad = await failure(
    withSim(sim, () => updateNodeBalancerConfig(nbId, created.id, { check_timeout: 40 })),
  );
  assert.equal(bad.errors[0]?.field, "check_timeout");
  const toTcp = await withSim(sim, () => updateNodeBalancerConfig(nbId, created.id, { protocol: "tcp" }));
  assert.equal(toTcp.stickiness, "none", "http_cookie does not carry over to tcp");
  const toUdp = await withSim(sim, () => updateNodeBalancerConfig(nbId, created.id, { protocol: "udp" }));
  assert.deepEqual([toUdp.stickiness, toUdp.check_passive, toUdp.cipher_suite], ["none", false, "none"]);
  const explicit = await failure(
    withSim(
      sim,
      () =>
        rawCall("PUT", `/nodebalancers/${nbId}/configs/${created.id}`, {
          protocol: "tcp",
          stickiness: "http_cookie",
        }),
    ),
  );
  assert.equal(explicit.errors[0]?.field, "stickiness", "values the body sends are still checked");
  await withSim(sim, () => deleteNodeBalancerConfig(nbId, created.id));
  assert.equal((await failure(withSim(sim, () => getNodeBalancerConfig(nbId, created.id)))).status, 404);
});
