import assert from "node:assert/strict";
import * as Sentry from "@sentry/deno";
import { generateSelfSignedCert } from "../server/tls.ts";
import { componentLogger, setupLogging } from "./log.ts";
import { scrub, startSentry } from "./sentry.ts";
import { startSentryStandIn } from "../tests/sentry_standin.ts";

const TOKEN = "tok-sentry-5b8e2d7c1f4a9e36d0b7";

Deno.test("startSentry() reports failed Service and Node syncs and errors, scrubbed, to the DSN's endpoint", async () => {
  await using standIn = startSentryStandIn();
  const reporter = startSentry({
    dsn: standIn.dsn,
    environment: "production",
    release: "v1.2.3",
    tags: { cluster_name: "prod-1" },
    secrets: () => [TOKEN],
  });
  const lines: string[] = [];
  await setupLogging({ format: "json", level: "info", write: (l) => lines.push(l), report: reporter.sink });
  try {
    const loop = componentLogger("service");
    const failure = "{queue} {key} failed (attempt {attempt}), retrying in {delayMs} ms: {error}";
    loop.warning(failure, {
      queue: "service",
      key: "shop/web",
      attempt: 1,
      delayMs: 1000,
      error: `LinodeApiError: Cannot create nodebalancer: HTTP 500 (sent with Bearer ${TOKEN})`,
      reportable: true,
    });
    loop.warning(failure, { queue: "cloud-node", key: "worker-1", error: "Error: boom", reportable: true });
    // Not reported: a route failure (the Go CCM reports none), a plain warning, an info line.
    loop.warning(failure, { queue: "route", key: "routes", error: "Error: x", reportable: true });
    loop.warning("retrying {method} {route}", { method: "GET", route: "/linode/instances" });
    loop.info("programmed {count} ip_ranges", { count: 2 });
    componentLogger("main").error("cannot run: {error}", { error: `token ${TOKEN} rejected` });
    assert.equal(await reporter.flush(5_000), true);
  } finally {
    await reporter.close(5_000);
    await setupLogging({ format: "json", level: "info", write: () => {} });
  }
  const events = standIn.events();
  assert.equal(events.length, 3, JSON.stringify(events));
  for (const e of events) {
    assert.equal(e.environment, "production");
    assert.equal(e.release, "v1.2.3");
    assert.equal((e.tags as Record<string, string>).cluster_name, "prod-1");
  }
  const [service, node, fatal] = events;
  const valueOf = (e: Record<string, unknown> | undefined) =>
    (e?.exception as { values: { type: string; value: string }[] }).values[0];
  assert.equal(valueOf(service)?.type, "LinodeApiError");
  assert.match(valueOf(service)?.value ?? "", /service shop\/web failed \(attempt 1\)/);
  assert.equal((service?.tags as Record<string, string>).service, "web");
  assert.equal((node?.tags as Record<string, string>).node_name, "worker-1");
  assert.match(valueOf(fatal)?.value ?? "", /cannot run: token \*\*\* rejected/);
  // The token left in no form: not in any envelope, not even as a bearer header value.
  for (const e of standIn.envelopes) assert.ok(!e.raw.includes(TOKEN), e.raw);
  assert.match(valueOf(service)?.value ?? "", /Bearer \*\*\*/);
});

Deno.test("scrub() removes the secrets and bearer tokens of unknown origin", () => {
  assert.equal(scrub(`a ${TOKEN} b`, [TOKEN]), "a *** b");
  assert.equal(scrub("Authorization: Bearer abcdefghijkl", []), "Authorization: Bearer ***");
});

Deno.test("a PEM private key logged through every path reaches no log line and no Sentry event", async () => {
  const { keyPem } = await generateSelfSignedCert({ hosts: ["localhost"], algorithm: "RSA-2048" });
  const rsa = keyPem.replaceAll("PRIVATE KEY", "RSA PRIVATE KEY");
  const cut = keyPem.slice(0, 200); // an error message that quotes the start of a file
  const body = keyPem.split("\n").slice(1, -2);
  await using standIn = startSentryStandIn();
  const reporter = startSentry({ dsn: standIn.dsn, environment: "e2e", release: "r", secrets: () => [] });
  const json: string[] = [];
  const text: string[] = [];
  const log = componentLogger("service");
  try {
    for (const [format, lines] of [["json", json], ["text", text]] as const) {
      await setupLogging({ format, level: "debug", write: (l) => lines.push(l), report: reporter.sink });
      log.info(`in the message: ${keyPem}`);
      log.warning("in a property: {key}", { key: rsa });
      log.error("in an error: {error}", { error: `TypeError: cannot use ${cut}` });
      log.warning("{queue} {key} failed: {error}", {
        queue: "service",
        key: "shop/web",
        error: `Error: bad Secret ${keyPem}`,
        reportable: true,
      });
    }
    // What the SDK itself may carry: messages, extra data, breadcrumbs, exception values.
    Sentry.addBreadcrumb({ message: keyPem, data: { key: rsa } });
    Sentry.captureMessage(`message ${keyPem}`, { extra: { key: keyPem, nested: { cut } } });
    Sentry.captureException(new Error(`exception ${rsa}`));
    assert.equal(await reporter.flush(5_000), true);
  } finally {
    await reporter.close(5_000);
    await setupLogging({ format: "json", level: "info", write: () => {} });
  }
  assert.equal(json.length, 4);
  assert.equal(text.length, 4);
  assert.ok(json.every((l) => JSON.parse(l)), "JSON lines stay JSON");
  assert.equal(standIn.events().length, 2 + 2 + 2, "each reported record and each SDK capture arrived");
  const everything = [...json, ...text, ...standIn.envelopes.map((e) => e.raw)].join("\n");
  assert.ok(!everything.includes("PRIVATE KEY-----"), "no BEGIN or END line");
  for (const line of body) {
    const where = [...json, ...text, ...standIn.envelopes.map((e) => e.raw)].find((o) => o.includes(line));
    assert.ok(!where, `a key line reached the output: ${where}`);
  }
  assert.match(json[0]!, /in the message: \[private key redacted\]/);
  assert.match(standIn.envelopes.map((e) => e.raw).join(""), /\[private key redacted\]/);
});
