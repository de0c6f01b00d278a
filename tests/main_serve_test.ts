/** `/healthz`, `/readyz` and `/metrics` over HTTPS on a running CCM process's `--secure-port`. */
import assert from "node:assert/strict";
import { request } from "node:https";
import { join } from "node:path";
import { startDemoWorld } from "../sim/demo_world.ts";
import { generateSelfSignedCert } from "../server/tls.ts";
import { FAST_LEASE_FLAGS, freePort, spawnCcm, waitFor } from "./process.ts";

const TOKEN = "tok-e2e-serve-5c1e9a7f3b0d2846e1c9a5f7b3d0e284";

interface Answer {
  status: number;
  body: string;
  leader: string | null;
}

/** GET over HTTPS, trusting only `caPem`; a fresh client per request so no connection outlives the test. */
async function getTrusting(caPem: string, url: string, token?: string): Promise<Answer> {
  using client = Deno.createHttpClient({ caCerts: [caPem] });
  const headers = token ? { authorization: `Bearer ${token}` } : undefined;
  const res = await fetch(url, { client, headers, signal: AbortSignal.timeout(5_000) });
  return { status: res.status, body: await res.text(), leader: res.headers.get("x-ccm-leader") };
}

/** GET over HTTPS without verifying the certificate (the self-signed default; test-only). */
function getUnverified(port: number, path: string, token?: string): Promise<Answer> {
  const headers = token ? { authorization: `Bearer ${token}` } : undefined;
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, path, method: "GET", rejectUnauthorized: false, agent: false, headers },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => body += chunk);
        res.on("end", () => {
          const leader = res.headers["x-ccm-leader"];
          resolve({ status: res.statusCode ?? 0, body, leader: typeof leader === "string" ? leader : null });
        });
      },
    );
    req.on("error", reject);
    req.end();
  });
}

/** Polls `get` until it answers 200 (the informer has synced), returning that answer. */
async function until200(
  get: () => Promise<Answer>,
  what: string,
  ready: (body: string) => boolean = () => true,
): Promise<Answer> {
  let last: Answer | undefined;
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    last = await get().catch(() => undefined);
    if (last?.status === 200 && ready(last.body)) return last;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`Timed out waiting for ${what}: last answer ${JSON.stringify(last)}`);
}

function withoutServePort(flags: readonly string[]): string[] {
  return flags.filter((f) => !f.startsWith("--secure-port"));
}

Deno.test("main() serves /healthz, /readyz and /metrics over HTTPS on --secure-port", async () => {
  await using world = await startDemoWorld({ nodes: 2, services: 0, linodeToken: TOKEN });
  const dir = world.kubeconfigPath.replace(/\/[^/]+$/, "");
  const pem = await generateSelfSignedCert({ hosts: ["127.0.0.1"] });
  const certFile = join(dir, "tls.crt");
  const keyFile = join(dir, "tls.key");
  await Deno.writeTextFile(certFile, pem.certPem);
  await Deno.writeTextFile(keyFile, pem.keyPem, { mode: 0o600 });
  const env = { ...world.env, LINODE_INSTANCE_CACHE_TTL: "1" };
  const [leaderPort, standbyPort] = [freePort(), freePort()];
  await using leader = spawnCcm([
    ...withoutServePort(FAST_LEASE_FLAGS),
    "--bind-address=127.0.0.1",
    `--secure-port=${leaderPort}`,
    `--tls-cert-file=${certFile}`,
    `--tls-private-key-file=${keyFile}`,
  ], { env, readDirs: [dir], name: "leader" });
  await leader.waitForLog(/^became leader/);
  // The second process starts once the first leads, so it stays a standby; it serves its own certificate.
  await using standby = spawnCcm([
    ...withoutServePort(FAST_LEASE_FLAGS),
    "--bind-address=127.0.0.1",
    `--secure-port=${standbyPort}`,
  ], { env, readDirs: [dir], name: "standby" });
  await standby.waitForLog(/^serving \/healthz/);

  const base = `https://127.0.0.1:${leaderPort}`;
  const readyz = await until200(() => getTrusting(pem.certPem, `${base}/readyz`), "leader /readyz");
  assert.equal(readyz.body, "ok");
  assert.equal(readyz.leader, "true");
  const verbose = await getTrusting(pem.certPem, `${base}/readyz?verbose`);
  assert.match(verbose.body, /\[\+\]informer-sync ok/);
  assert.match(verbose.body, /\[\+\]leader-election ok: leading/);
  assert.deepEqual(await getTrusting(pem.certPem, `${base}/healthz`), {
    status: 200,
    body: "ok",
    leader: null,
  });
  const initialised = () =>
    world.kube.store.list("nodes").every((n) => (n.spec as { providerID?: string })?.providerID);
  await waitFor(initialised, { what: "Nodes initialised" });
  // /metrics and /plan need a token the apiserver's TokenReview accepts; health paths do not.
  assert.equal((await getTrusting(pem.certPem, `${base}/metrics`)).status, 401);
  assert.equal((await getTrusting(pem.certPem, `${base}/plan`, "tok-unknown")).status, 401);
  assert.equal((await getTrusting(pem.certPem, `${base}/livez`)).status, 200);
  // Counters move just after the writes a watcher sees: scrape until both initialisations are counted.
  const bothCounted = /^ccm_reconciles_total\{controller="cloud-node",result="success"\} [2-9]\d*$/m;
  const metrics = await until200(
    () => getTrusting(pem.certPem, `${base}/metrics`, world.kube.token),
    "metrics counting both initialisations",
    (body) => /^ccm_nodes_initialised_total 2$/m.test(body) && bothCounted.test(body),
  );
  assert.match(metrics.body, /^ccm_leader_is_leader\{lease="kube-system\/cloud-controller-manager"\} 1$/m);
  assert.match(
    metrics.body,
    /^ccm_linode_requests_total\{[^}]*route="\/linode\/instances",status="200"\} [1-9]\d*$/m,
  );
  assert.match(metrics.body, /^ccm_nodes_initialised_total 2$/m);
  assert.match(metrics.body, /^ccm_reconciles_total\{controller="cloud-node",result="success"\} [2-9]\d*$/m);
  assert.match(
    metrics.body,
    /^ccm_reconcile_duration_seconds_count\{controller="cloud-node-lifecycle"\} [1-9]\d*$/m,
  );
  assert.match(metrics.body, /^ccm_workqueue_depth\{name="cloud-node"\} \d+$/m);
  assert.ok(!metrics.body.includes(TOKEN), "the token is in /metrics");

  // The standby's self-signed certificate is not trusted by default, but it answers TLS and is ready.
  await assert.rejects(
    fetch(`https://127.0.0.1:${standbyPort}/healthz`, { signal: AbortSignal.timeout(5_000) }),
  );
  const standbyReady = await until200(() => getUnverified(standbyPort, "/readyz"), "standby /readyz");
  assert.equal(standbyReady.leader, "false");
  const standbyMetrics = await getUnverified(standbyPort, "/metrics", world.kube.token);
  assert.equal(standbyMetrics.status, 200);
  // A standby that never led has no series yet (not 0): never 1.
  assert.doesNotMatch(standbyMetrics.body, /^ccm_leader_is_leader\{[^}]*\} 1$/m);
  assert.match(
    standbyMetrics.body,
    /^ccm_kube_requests_total\{verb="get",resource="leases",code="200"\} \d+$/m,
  );

  for (const p of [leader, standby]) p.kill("SIGTERM");
  for (const p of [leader, standby]) assert.equal((await p.exited(5_000)).code, 0, p.output);
  for (const p of [leader, standby]) assert.ok(!p.output.includes(TOKEN), `${p.name} printed the token`);
});
