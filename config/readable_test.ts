import assert from "node:assert/strict";
import { join } from "node:path";
import { type Config, parseConfig } from "./config.ts";
import { CCM_READ_DIRS, checkRead, type ReadState, unreadableFiles } from "./readable.ts";

const ENV = { LINODE_API_TOKEN: "t", LINODE_REGION: "us-east", KUBECONFIG: "/etc/kubernetes/ccm.conf" };

function configOf(args: string[], env: Record<string, string> = ENV): Config {
  const parsed = parseConfig(args, env);
  if (parsed.kind !== "run") throw new TypeError(parsed.kind);
  return parsed.config;
}

/** A check that answers from a table (paths not listed are readable). */
const table = (states: Record<string, ReadState>) => (path: string): ReadState => states[path] ?? "ok";

Deno.test("CCM_READ_DIRS is the read list of the ccm permission set in deno.json", async () => {
  const denoJson = JSON.parse(await Deno.readTextFile(new URL("../deno.json", import.meta.url)));
  assert.deepEqual(CCM_READ_DIRS, denoJson.permissions.ccm.read);
});

const CASES: {
  name: string;
  args: string[];
  env?: Record<string, string>;
  states: Record<string, ReadState>;
  want: RegExp[];
}[] = [
  {
    name: "names --kubeconfig, the path and the readable folders",
    args: ["--kubeconfig=/opt/kc"],
    states: { "/opt/kc": "denied" },
    want: [
      /^--kubeconfig: cannot read \/opt\/kc: this process may not read it .*\/etc\/kubernetes\/ccm.conf, .*\/root\/\.kube\/config\).*deno\.json/,
    ],
  },
  {
    name: "names KUBECONFIG when the variable chose the file",
    args: [],
    states: { "/etc/kubernetes/ccm.conf": "missing" },
    want: [/^KUBECONFIG: cannot read \/etc\/kubernetes\/ccm.conf: not found$/],
  },
  {
    name: "reports both TLS files, each with its own reason",
    args: ["--tls-cert-file=/srv/tls.crt", "--tls-private-key-file=/etc/linode/tls.key"],
    states: { "/srv/tls.crt": "denied", "/etc/linode/tls.key": "forbidden" },
    want: [
      /^--tls-cert-file: cannot read \/srv\/tls.crt: this process may not read it/,
      /^--tls-private-key-file: cannot read \/etc\/linode\/tls.key: no permission to read it \(file mode or owner\)$/,
    ],
  },
  {
    name: "reports the review kubeconfigs of the secure port",
    args: ["--authentication-kubeconfig=/etc/kubernetes/admin.conf", "--authorization-kubeconfig=/opt/authz"],
    states: { "/etc/kubernetes/admin.conf": "denied", "/opt/authz": "missing" },
    want: [
      /^--authentication-kubeconfig: cannot read \/etc\/kubernetes\/admin.conf: this process may not read it/,
      /^--authorization-kubeconfig: cannot read \/opt\/authz: not found$/,
    ],
  },
  {
    name: "ignores TLS files when serving is off",
    args: ["--secure-port=0", "--tls-cert-file=/srv/tls.crt", "--tls-private-key-file=/srv/tls.key"],
    states: { "/srv/tls.crt": "denied", "/srv/tls.key": "denied" },
    want: [],
  },
  {
    name: "reports the token file unless checked elsewhere",
    args: [],
    env: {
      LINODE_REGION: "us-east",
      KUBECONFIG: "/etc/kubernetes/ccm.conf",
      LINODE_API_TOKEN_FILE: "/srv/token",
    },
    states: { "/srv/token": "not-a-file" },
    want: [/^LINODE_API_TOKEN_FILE: cannot read \/srv\/token: not a file$/],
  },
  {
    name: "says nothing when every file is readable",
    args: [
      "--kubeconfig=/etc/kubernetes/a",
      "--tls-cert-file=/etc/linode/c",
      "--tls-private-key-file=/etc/linode/k",
    ],
    states: {},
    want: [],
  },
];

for (const c of CASES) {
  Deno.test(`unreadableFiles() ${c.name}`, () => {
    const problems = unreadableFiles(configOf(c.args, c.env), table(c.states));
    assert.equal(problems.length, c.want.length, problems.join("\n"));
    c.want.forEach((re, i) => assert.match(problems[i] ?? "", re));
  });
}

Deno.test("unreadableFiles() skips the settings it is told to", () => {
  const env = { ...ENV, LINODE_API_TOKEN: "", LINODE_API_TOKEN_FILE: "/srv/token" };
  assert.deepEqual(
    unreadableFiles(configOf([], env), () => "denied", ["LINODE_API_TOKEN_FILE", "KUBECONFIG"]),
    [],
  );
});

Deno.test("checkRead() tells a readable file from a missing one and a folder", async () => {
  const dir = await Deno.makeTempDir({ prefix: "readable_" });
  try {
    await Deno.writeTextFile(join(dir, "f"), "x");
    assert.equal(checkRead(join(dir, "f")), "ok");
    assert.equal(checkRead(join(dir, "absent")), "missing");
    assert.equal(checkRead(dir), "not-a-file");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
