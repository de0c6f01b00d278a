/** The `ccm` permission set (what `deno task start` and the compiled binary run with), tried for real. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ccmPermissions, REPO_DIR } from "../deploy/artifacts.ts";

Deno.test("the ccm permission set refuses the Linode Metadata service, writes, processes and FFI", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-P=ccm", "--ignore-env", "tests/permission_probe.ts"],
    cwd: REPO_DIR,
    env: { HOME: "/root", NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  assert.deepEqual(JSON.parse(new TextDecoder().decode(out.stdout)), {
    "fetch Linode Metadata (IPv4)": "NotCapable",
    "fetch Linode Metadata (IPv6)": "NotCapable",
    "connect Linode Metadata (link-local)": "NotCapable",
    "read /etc/shadow": "NotCapable",
    "read a missing credential": "NotFound",
    "write /tmp": "NotCapable",
    "run a process": "NotCapable",
    "load a library": "NotCapable",
    "read HOME": "undefined",
    "read the hostname": "allowed",
  });
});

Deno.test("docs/security.md's permission table lists the ccm set's read paths and refused hosts as deno.json has them", () => {
  const page = Deno.readTextFileSync(join(REPO_DIR, "docs/security.md"));
  const p = ccmPermissions();
  const row = (name: string) => page.split("\n").find((l) => l.startsWith(`| ${name} `)) ?? "";
  // The "granted" column only: the "why" column quotes other names.
  const listed = (line: string) => [...(line.split("|")[2] ?? "").matchAll(/`([^`]+)`/g)].map((m) => m[1]);
  assert.deepEqual(listed(row("read")), p.read, "docs/security.md's read row");
  assert.deepEqual(listed(row("net (refused)")), p.denyNet, "docs/security.md's refused hosts");
  assert.equal(p.net, true, "net stays open: the apiserver and LINODE_URL are known only at run time");
});
