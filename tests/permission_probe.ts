/**
 * Run by tests/deploy_permissions_test.ts under the `ccm` permission set (`-P=ccm --ignore-env`): tries what
 * the CCM must never do and prints one JSON object, operation → the error's name (or "allowed").
 */
async function outcome(op: () => unknown): Promise<string> {
  try {
    await op();
    return "allowed";
  } catch (e) {
    return e instanceof Error ? e.name : String(e);
  }
}

const timeout = () => AbortSignal.timeout(3_000);
const result = {
  "fetch Linode Metadata (IPv4)": await outcome(() =>
    fetch("http://169.254.169.254/v1/token", { signal: timeout() })
  ),
  "fetch Linode Metadata (IPv6)": await outcome(() =>
    fetch("http://[fd00:a9fe:a9fe::1]/v1/token", { signal: timeout() })
  ),
  "connect Linode Metadata (link-local)": await outcome(() =>
    Deno.connect({ hostname: "fe80::a9fe:a9fe", port: 80 })
  ),
  "read /etc/shadow": await outcome(() => Deno.readTextFile("/etc/shadow")),
  "read a missing credential": await outcome(() =>
    Deno.readTextFile("/run/credentials/linode-ccm.service/none")
  ),
  "write /tmp": await outcome(() => Deno.writeTextFile("/tmp/ccm-permission-probe", "x")),
  "run a process": await outcome(() => new Deno.Command("true").output()),
  "load a library": await outcome(() => Deno.dlopen("libc.so.6", {})),
  "read HOME": Deno.env.get("HOME") === undefined ? "undefined" : "defined",
  "read the hostname": await outcome(() => Deno.hostname()),
};
Deno.stdout.writeSync(new TextEncoder().encode(JSON.stringify(result) + "\n"));
