/**
 * docs/migration.md's parity table against the tables the program is built from, and the program against the
 * Go CCM's command: every flag of it (config/upstream_flags.ts, generated from the Go sources) is accepted as
 * pflag reads it, and the environment is read only through the variables the table lists. Every row of the
 * page's tables names what backs it: a test of this repository, or the Go source it was read from
 * (`tests/parity_refs.ts`), and those exist.
 */
import assert from "node:assert/strict";
import * as yaml from "js-yaml";
import { FLAG_INDEX, FLAGS, KIND_OF_UPSTREAM_TYPE, readValue } from "../config/flag_table.ts";
import { GO_CCM_ENV, UPSTREAM_FLAGS, type UpstreamFlag } from "../config/upstream_flags.ts";
import { ENV_VARS } from "../config/env.ts";
import { type Config, type Env, parseConfig, parseLintConfig } from "../config/config.ts";
import { annotationKey, ANNOTATIONS } from "../controllers/service/annotations/table.ts";
import { GO_CLIENT_METRIC } from "../linode/caller.ts";
import { declaredMetrics } from "./monitoring_fixture.ts";
import {
  citedGoSources,
  citedPathOf,
  citedRepoFiles,
  citedTests,
  haveMirror,
  readGoSource,
  tableRows,
} from "./parity_refs.ts";

const DOC = Deno.readTextFileSync(new URL("../docs/migration.md", import.meta.url));
const CONFIGURATION = Deno.readTextFileSync(new URL("../docs/configuration.md", import.meta.url));
const STATUSES = new Set(["same", "differs", "not implemented", "ours"]);

/** The rows of every table under `## Parity table`: names (the code spans of the first cell), status, note. */
function parityRows(): { names: string[]; status: string; note: string }[] {
  const start = DOC.indexOf("\n## Parity table\n");
  assert.ok(start >= 0, "docs/migration.md has a Parity table section");
  const end = DOC.indexOf("\n## ", start + 1);
  const section = DOC.slice(start, end < 0 ? undefined : end);
  return section.split("\n").filter((l) => l.startsWith("| `")).map((line) => {
    const [first = "", status = "", note = ""] = line.slice(1, -1).split(/(?<!\\)\|/).map((c) => c.trim());
    return { names: [...first.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? ""), status, note };
  });
}

const ROWS = parityRows();
const NAMES = new Set(ROWS.flatMap((r) => r.names));

function missing(names: readonly string[]): string[] {
  return names.filter((n) => !NAMES.has(n));
}

Deno.test("the parity table has a row for every flag of the flag table", () => {
  assert.deepEqual(missing(FLAGS.map((f) => `--${f.name}`)), []);
});

Deno.test("the parity table has a row for every flag of the Go CCM's command", () => {
  assert.deepEqual(missing(UPSTREAM_FLAGS.map((f) => `--${f.name}`)), []);
});

Deno.test("the parity table names no flag that neither this CCM nor the Go CCM has", () => {
  const known = new Set([...FLAGS, ...UPSTREAM_FLAGS].map((f) => `--${f.name}`));
  assert.deepEqual([...NAMES].filter((n) => /^--[a-z]/.test(n) && !known.has(n)), []);
});

Deno.test("the parity table has a row for every environment variable read", () => {
  assert.deepEqual(missing(ENV_VARS.map((v) => v.name)), []);
});

Deno.test("the parity table has a row for every environment variable the Go CCM reads", () => {
  assert.deepEqual(missing(GO_CCM_ENV.map((v) => v.name)), []);
});

Deno.test("the parity table has a row for every Service annotation of the annotation table", () => {
  assert.deepEqual(missing(ANNOTATIONS.map((a) => annotationKey(a.name))), []);
});

/** The product folders that record Events. */
const EVENT_SOURCES = ["controllers", "kube", "lease", "linode", "server", "wiring"];

/**
 * Every Event reason the program can record, read from its source: the `reason:` of an Event outcome, the
 * reason given to the service controller's `note(…)`, a `*_REASON` constant, and a local `key` or `reason`
 * constant passed on as one. A test file is not the program.
 */
async function emittedReasons(): Promise<string[]> {
  const found = new Set<string>();
  const pattern =
    /(?:\breason:\s*|\bnote\(\s*[\w.]+,\s*[\w.]+,\s*|_REASON\s*=\s*|\bconst (?:key|reason)\s*=\s*)"([A-Z]+[a-z]+(?:[A-Z]+[a-z]*)+)"/g;
  const walk = async (dir: URL): Promise<void> => {
    for await (const entry of Deno.readDir(dir)) {
      const url = new URL(entry.isDirectory ? `${entry.name}/` : entry.name, dir);
      if (entry.isDirectory && entry.name !== "testdata") await walk(url);
      else if (entry.name.endsWith(".ts") && !entry.name.endsWith("_test.ts")) {
        for (const m of (await Deno.readTextFile(url)).matchAll(pattern)) found.add(m[1] ?? "");
      }
    }
  };
  for (const folder of EVENT_SOURCES) await walk(new URL(`../${folder}/`, import.meta.url));
  return [...found].sort();
}

Deno.test("the parity table has a row for every Event reason the program records", async () => {
  const reasons = await emittedReasons();
  for (
    const expected of [
      "EnsuringLoadBalancer",
      "SyncLoadBalancerFailed",
      "FailedToCreateRoute",
      "DeletingNode",
      "CIDRAssignmentFailed",
    ]
  ) {
    assert.ok(reasons.includes(expected), `the source reader finds ${expected} (found ${reasons})`);
  }
  assert.deepEqual(missing(reasons), []);
});

Deno.test("the parity table names the Go CCM's metric and Event names operators alert on", () => {
  assert.deepEqual(missing([GO_CLIENT_METRIC, "NodeBalancerIPChangeIgnored", "SyncLoadBalancerFailed"]), []);
});

Deno.test("the parity table has a row for every metric the CCM declares, and for the monitoring files", async () => {
  assert.deepEqual(missing([...(await declaredMetrics()).keys()]), []);
  const files = [
    "deploy/monitoring-alerts.yaml",
    "deploy/monitoring-alerts.rules.yaml",
    "deploy/monitoring-dashboard.json",
  ];
  assert.deepEqual(missing(files), []);
  assert.equal(ROWS.find((r) => r.names.includes(files[0]!))?.status, "ours", "the Go CCM ships none");
});

Deno.test("every parity row has a known status, and every difference says how", () => {
  for (const row of ROWS) {
    assert.ok(STATUSES.has(row.status), `${row.names.join(", ")}: status "${row.status}"`);
    if (row.status !== "same") {
      assert.notEqual(row.note, "", `${row.names.join(", ")}: ${row.status} without a note`);
    }
  }
});

/** The permissions of the ClusterRoles and Roles in a manifest, as `resource[.group][/subresource]`. */
function permissionNames(url: URL): string[] {
  const docs = yaml.loadAll(Deno.readTextFileSync(url)) as { kind?: string; rules?: unknown }[];
  const rules = docs.filter((d) => d?.kind === "ClusterRole" || d?.kind === "Role")
    .flatMap((d) =>
      (Array.isArray(d.rules) ? d.rules : []) as { apiGroups?: string[]; resources?: string[] }[]
    );
  return [
    ...new Set(rules.flatMap((r) =>
      (r.apiGroups ?? []).flatMap((g) =>
        (r.resources ?? []).map((res) => {
          const [resource = "", sub] = res.split("/");
          const base = g ? `${resource}.${g}` : resource;
          return sub ? `${base}/${sub}` : base;
        })
      )
    )),
  ];
}

Deno.test("the parity table's RBAC rows cover the Go chart's ClusterRole and deploy/ccm.yaml, each backed by a file", () => {
  const chart = permissionNames(new URL("./testdata/go_ccm_chart_rbac.yaml", import.meta.url));
  const ours = permissionNames(new URL("../deploy/ccm.yaml", import.meta.url));
  assert.deepEqual(missing([...chart, ...ours]), []);
  const start = DOC.indexOf("\n### RBAC\n");
  const section = DOC.slice(start, DOC.indexOf("\n## ", start));
  const rows = section.split("\n").filter((l) => l.startsWith("| `"));
  assert.ok(rows.length >= chart.length);
  for (const row of rows) {
    assert.match(row, /`(tests|kube|controllers|lease|deploy|bench)\/[\w/.-]+\.(ts|yaml)`/);
  }
});

const MIRRORS = "/work/.mirror";
const haveMirrors = (() => {
  try {
    return Deno.statSync(`${MIRRORS}/kubernetes+cloud-provider/repo`).isDirectory;
  } catch {
    return false;
  }
})();

const TABLE_ROWS = tableRows(DOC);
const ROOT = new URL("../", import.meta.url);

function exists(path: string): boolean {
  try {
    return Deno.statSync(new URL(path, ROOT)).isFile;
  } catch {
    return false;
  }
}

function where(row: { heading: string; line: number; text: string }): string {
  return `docs/migration.md:${row.line} (${row.heading}): ${row.text.slice(0, 90)}`;
}

Deno.test("every row of docs/migration.md's tables names a test of this repo or the Go source it was read from", () => {
  assert.ok(TABLE_ROWS.length > 200, `the page's tables have their rows (${TABLE_ROWS.length})`);
  const unbacked = TABLE_ROWS.filter((r) => citedTests(r.text).length + citedGoSources(r.text).length === 0);
  assert.deepEqual(unbacked.map(where), []);
});

Deno.test("every test and file of this repo docs/migration.md's tables name exists", () => {
  const absent = TABLE_ROWS.flatMap((r) =>
    [...citedTests(r.text), ...citedRepoFiles(r.text)].filter((p) => !exists(p)).map((p) =>
      `${p} in ${where(r)}`
    )
  );
  assert.deepEqual(absent, []);
});

Deno.test("the rule the tables' backing is read by: tests and Go sources count, other spans do not", () => {
  const row = "| `x` | same | `config/flags.ts`, `docs/freshness.md`, `LINODE_URL` |";
  assert.deepEqual([citedTests(row), citedGoSources(row)], [[], []]);
  assert.deepEqual(citedTests("| `x` | ours | (`tests/route_test.ts`) |"), ["tests/route_test.ts"]);
  const go = citedGoSources(
    "(`cloud/linode/cloud.go` `Routes`, `newCloud`; `k8s.io/client-go/rest/config.go`)",
  );
  assert.deepEqual(go.map((g) => [g.source.mirror, g.source.path, g.names]), [
    ["linode+linode-cloud-controller-manager", "cloud/linode/cloud.go", ["Routes", "newCloud"]],
    ["kubernetes+client-go", "rest/config.go", []],
  ]);
});

Deno.test("each flag row of the Go CCM's command names the Go file that registers the flag", () => {
  const flagRows = TABLE_ROWS.filter((r) => r.heading === "Flags");
  const wrong = UPSTREAM_FLAGS.flatMap((f) => {
    const rows = flagRows.filter((r) => r.text.startsWith(`| \`--${f.name}\``));
    const cited = citedPathOf(f.from);
    return rows.length === 1 && rows[0]?.text.includes(`\`${cited}\``) ? [] : [`--${f.name}: ${cited}`];
  });
  assert.deepEqual(wrong, []);
});

Deno.test({
  name: "every Go file and function docs/migration.md's tables cite is in the Go CCM's or upstream's source",
  ignore: !haveMirrors,
  fn: async () => {
    const refs = TABLE_ROWS.flatMap((r) => citedGoSources(r.text).map((g) => ({ ...g, row: r })));
    const texts = new Map<string, Promise<string | undefined>>();
    const missingRefs: string[] = [];
    for (const ref of refs.filter((g) => haveMirror(MIRRORS, g.source))) {
      const key = `${ref.source.mirror}:${ref.source.path}`;
      if (!texts.has(key)) texts.set(key, readGoSource(MIRRORS, ref.source));
      const text = await texts.get(key);
      if (text === undefined) missingRefs.push(`${ref.cited} in ${where(ref.row)}`);
      for (const name of ref.names) {
        if (text !== undefined && !new RegExp(`\\b${name}\\b`).test(text)) {
          missingRefs.push(`${name} in ${ref.cited}, ${where(ref.row)}`);
        }
      }
    }
    assert.ok(texts.size > 30, `the Go files cited were read (${texts.size})`);
    assert.deepEqual(missingRefs, []);
  },
});

const ENV: Env = {
  LINODE_API_TOKEN: "tok",
  LINODE_REGION: "us-east",
  KUBECONFIG: "/etc/kubernetes/ccm.conf",
};

/** A value of each pflag type that pflag accepts, for the flags this CCM does not implement. */
const SAMPLE: Readonly<Record<UpstreamFlag["type"], string>> = {
  bool: "true",
  string: "x",
  moduleSpec: "gc*=3",
  int: "1",
  int32: "1",
  level: "2",
  float32: "1.5",
  duration: "1m30s",
  ip: "127.0.0.1",
  stringSlice: "a,b",
  intSlice: "1,2",
  namedCertKey: "a.crt,a.key:*.example.com",
  mapStringBool: "AllAlpha=false,AllBeta=true",
  quantity: "2Ki",
  version: "raw",
};

/**
 * Flags whose default is no sample the Go CCM would take (an empty value, or one it checks), or that need other
 * flags beside them.
 */
const SAMPLE_FOR: Readonly<Record<string, { value: string; with?: string[] }>> = {
  webhooks: { value: "*" },
  "tls-cipher-suites": { value: "TLS_AES_128_GCM_SHA256,TLS_AES_256_GCM_SHA384" },
  "tls-min-version": { value: "VersionTLS12" },
  "cloud-provider": { value: "linode" },
  master: { value: "https://127.0.0.1:6443" },
  "cluster-cidr": { value: "10.192.0.0/10" },
  "nodebalancer-backend-ipv4-subnet": { value: "10.100.0.0/24" },
  "tls-cert-file": { value: "/c.pem", with: ["--tls-private-key-file=/k.pem"] },
  "tls-private-key-file": { value: "/k.pem", with: ["--tls-cert-file=/c.pem"] },
  "vpc-ids": { value: "1", with: ["--subnet-ids=2"] },
  "subnet-ids": { value: "2", with: ["--vpc-ids=1"] },
  "enable-route-controller": { value: "true", with: ["--vpc-names=v", "--cluster-cidr=10.192.0.0/10"] },
  "allocate-node-cidrs": { value: "true", with: ["--cluster-cidr=10.192.0.0/10"] },
  controllers: { value: "cloud-node,-service" },
};

/** A value the Go CCM takes for `f`: its default when there is one, else a sample of its type. */
function sample(f: UpstreamFlag): { value: string; with: string[] } {
  const own = SAMPLE_FOR[f.name];
  if (own) return { value: own.value, with: own.with ?? [] };
  return { value: f.def !== "" ? f.def : SAMPLE[f.type], with: [] };
}

function parse(args: string[]): Config | { problems: string } {
  try {
    const r = parseConfig(args, ENV);
    return r.kind === "run" ? r.config : { problems: `kind ${r.kind}` };
  } catch (e) {
    return { problems: String(e) };
  }
}

/** The forms pflag takes a flag's value in: `--name=value`, and `--name value` or, for booleans, bare `--name`. */
function forms(f: UpstreamFlag): string[][] {
  const s = sample(f);
  const second = f.type === "bool" ? [`--${f.name}`] : [`--${f.name}`, s.value];
  return [[`--${f.name}=${s.value}`, ...s.with], [...second, ...s.with]];
}

for (const f of UPSTREAM_FLAGS.filter((u) => u.name !== "help" && u.name !== "version")) {
  Deno.test(`parseConfig() accepts the Go CCM's --${f.name} (${f.type}) in each of pflag's forms`, () => {
    for (const args of forms(f)) {
      const got = parse(args);
      assert.ok(!("problems" in got), `${args.join(" ")}: ${"problems" in got ? got.problems : ""}`);
      const ignored = FLAG_INDEX.get(f.name)?.group === "ignored" || f.name === "cloud-config";
      assert.equal(got.ignoredFlags.includes(`--${f.name}`), ignored, `${args.join(" ")}: warned at start`);
    }
  });
}

Deno.test("parseConfig() answers the Go CCM's --help and --version", () => {
  assert.equal(parseConfig(["--help"], ENV).kind, "help");
  assert.equal(parseConfig(["-h"], ENV).kind, "help");
  assert.equal(parseConfig([`--version=${SAMPLE.version}`], ENV).kind, "version");
  assert.equal(parseConfig(["--version"], ENV).kind, "version");
});

Deno.test("docs/configuration.md lists every flag of the Go CCM's command", () => {
  const absent = UPSTREAM_FLAGS.filter((f) => !["help", "version"].includes(f.name))
    .filter((f) => !CONFIGURATION.includes(`\`--${f.name}\``));
  assert.deepEqual(absent.map((f) => f.name), []);
});

Deno.test("each implemented flag the Go CCM has reads its value as pflag's type does", () => {
  const wrong = FLAGS.filter((f) => f.upstream && f.upstream.type !== "version")
    .filter((f) => f.kind !== KIND_OF_UPSTREAM_TYPE[f.upstream!.type as keyof typeof KIND_OF_UPSTREAM_TYPE]);
  assert.deepEqual(wrong.map((f) => `${f.name}: ${f.kind}, upstream ${f.upstream?.type}`), []);
});

/** Implemented flags whose default differs from the Go CCM's, and why (the parity table says so too). */
const OTHER_DEFAULTS: Readonly<Record<string, string>> = {
  "logging-format": "empty: --log-format decides, JSON lines by default (klog text in the Go CCM)",
};

Deno.test("each implemented flag the Go CCM has has its default, as the Go CCM sets it", () => {
  const differ = FLAGS.filter((f) => f.group !== "ignored" && f.upstream && !(f.name in OTHER_DEFAULTS))
    .filter((f) => {
      const u = f.upstream!;
      const text = u.goCcmSets ?? u.def;
      const want = text === "" && Array.isArray(f.def) ? [] : readValue(f.kind, text);
      return JSON.stringify(want) !== JSON.stringify(f.def);
    });
  assert.deepEqual(differ.map((f) => `${f.name}: ${JSON.stringify(f.def)}, Go ${f.upstream?.def}`), []);
});

/** An environment that records every variable read, through property reads or enumeration. */
function recordingEnv(values: Record<string, string>, reads: Set<string>): Env {
  return new Proxy(values, {
    get: (target, key) => {
      if (typeof key === "string") reads.add(key);
      return target[key as string];
    },
    ownKeys: (target) => {
      for (const k of Reflect.ownKeys(target)) if (typeof k === "string") reads.add(k);
      return Reflect.ownKeys(target);
    },
  });
}

Deno.test("parseConfig() reads no environment variable the parity table lacks", () => {
  const reads = new Set<string>();
  const every: Record<string, string> = {
    LINODE_API_TOKEN: "tok",
    LINODE_API_TOKEN_FILE: "/var/run/secrets/linode/api-token",
    LINODE_API_TOKEN_CACHE_TTL_SECONDS: "30",
    LINODE_REGION: "us-east",
    LINODE_URL: "https://api.linode.com/v4",
    LINODE_REQUEST_TIMEOUT_SECONDS: "60",
    LINODE_INSTANCE_CACHE_TTL: "20",
    LINODE_ROUTES_CACHE_TTL_SECONDS: "30",
    LINODE_EXTERNAL_SUBNET: "172.24.0.0/16",
    LINODE_HOSTNAME_ONLY_INGRESS: "true",
    SENTRY_DSN: "https://key@sentry.example/1",
    SENTRY_ENVIRONMENT: "prod",
    SENTRY_RELEASE: "r1",
    KUBERNETES_SERVICE_HOST: "10.96.0.1",
    KUBERNETES_SERVICE_PORT: "443",
  };
  parseConfig([], recordingEnv(every, reads), { checkTokenFile: () => "not found" });
  parseConfig(["--kubeconfig=/k"], recordingEnv({ ...every, KUBECONFIG: "/a:/b" }, reads));
  const dev = parseConfig(["--dev"], recordingEnv(every, reads));
  const emulators = {
    LINODE_URL: "http://127.0.0.1:1/v4",
    LINODE_API_TOKEN: "dev",
    LINODE_REGION: "us-east",
  };
  if (dev.kind === "dev") dev.resolve(recordingEnv({ ...emulators, KUBECONFIG: "/k" }, reads));
  parseLintConfig(["-f", "svc.yaml"], recordingEnv(every, reads));
  const listed = new Set(ENV_VARS.map((v) => v.name as string));
  assert.ok(reads.has("SENTRY_DSN") && reads.has("KUBERNETES_SERVICE_HOST"), "the recording sees reads");
  assert.deepEqual([...reads].filter((n) => !listed.has(n)), []);
  assert.deepEqual(missing([...reads]), []);
});

/** Program sources (not tests, benchmarks, the demo or tools) that mention the process environment. */
async function environmentReaders(): Promise<string[]> {
  const root = new URL("../", import.meta.url).pathname;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", "--config", `${root}deno.json`, `${root}main.ts`],
    stdout: "piped",
  }).output();
  const info = JSON.parse(new TextDecoder().decode(out.stdout)) as { modules: { specifier: string }[] };
  const files = info.modules.map((m) => m.specifier).filter((s) => s.startsWith(`file://${root}`));
  return files.filter((f) => /\bDeno\.env\b|\bprocess\.env\b/.test(Deno.readTextFileSync(new URL(f))))
    .map((f) => f.slice(`file://${root}`.length));
}

Deno.test("the program reads the environment in config/config.ts only, and there only the listed variables", async () => {
  assert.deepEqual(await environmentReaders(), ["config/config.ts"]);
  const source = Deno.readTextFileSync(new URL("../config/config.ts", import.meta.url));
  const gets = [...source.matchAll(/Deno\.env\.(\w+)\(([^)]*)\)/g)].map((m) => `${m[1]}(${m[2]})`);
  assert.deepEqual(gets, ["get(name)"], "one Deno.env call");
  assert.match(
    source,
    /for \(const \{ name \} of ENV_VARS\) \{\s*try \{\s*env\[name\] = Deno\.env\.get\(name\);/,
  );
  for (const file of ["config.ts", "env.ts", "sections.ts", "lint_args.ts", "controllers.ts"]) {
    const text = Deno.readTextFileSync(new URL(`../config/${file}`, import.meta.url));
    const indexing = [...text.matchAll(/\benv\[([^\]]+)\]/g)].map((m) => m[1]);
    const allowed = file === "env.ts" || file === "config.ts" ? ["name"] : [];
    assert.deepEqual(
      indexing.filter((i) => !allowed.includes(i ?? "")),
      [],
      `${file} reads variables by name`,
    );
  }
});

Deno.test({
  name: "config/upstream_flags.ts is what tests/upstream_flags_gen.ts writes from the Go sources",
  ignore: !haveMirrors,
  fn: async () => {
    const { upstreamFlagsModule } = await import("./upstream_flags_gen.ts");
    const fresh = await upstreamFlagsModule();
    const committed = Deno.readTextFileSync(new URL("../config/upstream_flags.ts", import.meta.url));
    const norm = (t: string) => t.replace(/\s+/g, "").replace(/,([\]}])/g, "$1");
    assert.equal(norm(committed), norm(fresh), "run: deno run -P=dev tests/upstream_flags_gen.ts");
  },
});
