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
  "fetch a host outside the list": await outcome(() => fetch("https://example.com/", { signal: timeout() })),
  "connect to the Linode API over plain HTTP": await outcome(() =>
    Deno.connect({ hostname: "api.linode.com", port: 80 })
  ),
  "connect to the apiserver on another port": await outcome(() =>
    Deno.connect({ hostname: "10.96.0.1", port: 6443 })
  ),
  "listen on another port": await outcome(() => Deno.listen({ hostname: "0.0.0.0", port: 10259 }).close()),
  "may connect to the Linode API":
    Deno.permissions.querySync({ name: "net", host: "api.linode.com:443" }).state,
  "may connect to the in-cluster apiserver (kubeadm)": Deno.permissions.querySync({
    name: "net",
    host: "10.96.0.1:443",
  }).state,
  "may listen on the secure port": Deno.permissions.querySync({ name: "net", host: "0.0.0.0:10258" }).state,
  "read /etc/shadow": await outcome(() => Deno.readTextFile("/etc/shadow")),
  "read the cluster admin kubeconfig": await outcome(() => Deno.readTextFile("/etc/kubernetes/admin.conf")),
  "read the cluster CA key": await outcome(() => Deno.readTextFile("/etc/kubernetes/pki/ca.key")),
  "read a home folder": await outcome(() => Deno.readTextFile("/home/user/.kube/config")),
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
