/**
 * The files a Config names (kubeconfig, token file, TLS certificate and key) must be readable under the
 * process's read permission. `deno task start` and the compiled binary grant only the `ccm` permission set of
 * deno.json; a file outside its folders would fail later with a bare "no permission" (or, for TLS files, only
 * once serving starts), so it is reported while validating the config, with how to allow it.
 */
import type { Config } from "./types.ts";

/** The settings that name files. */
export type FileSettings = Pick<Config, "kube" | "serve"> & { linode: Pick<Config["linode"], "token"> };

/** The `read` list of the `ccm` permission set in deno.json (`readable_test.ts` keeps them equal). */
export const CCM_READ_DIRS: readonly string[] = Object.freeze([
  // Files and folders of the CCM only: not the whole of /etc/kubernetes (its pki/ holds the cluster's CA and
  // apiserver keys, admin.conf the cluster-admin credentials), nor /home. Deno grants paths, not globs.
  "/etc/kubernetes/ccm.conf",
  "/etc/kubernetes/ccm",
  "/etc/linode",
  // The Go CCM's default token file, /var/run/secrets/linode/api-token (a mounted Secret holding the token only).
  "/var/run/secrets/linode",
  "/var/run/secrets/kubernetes.io/serviceaccount",
  "/run/secrets/kubernetes.io/serviceaccount",
  "/run/credentials/linode-ccm.service",
  "/var/lib/linode-ccm",
  "/root/.kube/config",
]);

/**
 * Whether a file can be read: yes; outside the process's read permission (`denied`); refused by the
 * operating system (`forbidden`: file mode or owner); absent; or not a file.
 */
export type ReadState = "ok" | "denied" | "forbidden" | "missing" | "not-a-file";

/** Says whether `path` can be read; `checkRead` asks Deno, tests pass a table. */
export type ReadCheck = (path: string) => ReadState;

/** Why a file outside the read permission cannot be used, and how to allow it (for one problem line). */
export function deniedReason(): string {
  return `this process may not read it (the ccm permission set of deno task start and the binary reads only ` +
    `${CCM_READ_DIRS.join(", ")}): move it there, or add it to ` +
    `permissions.ccm.read in deno.json (then run deno task compile again for the binary)`;
}

const REASONS: Record<Exclude<ReadState, "ok">, () => string> = {
  denied: deniedReason,
  forbidden: () => "no permission to read it (file mode or owner)",
  missing: () => "not found",
  "not-a-file": () => "not a file",
};

/** The files `config` names, each with the flag or variable that names it. */
function filesOf(config: FileSettings): { setting: string; path: string }[] {
  const files: { setting: string; path: string }[] = [];
  const k = config.kube;
  if (k.kind === "kubeconfig") {
    files.push({ setting: k.from === "flag" ? "--kubeconfig" : "KUBECONFIG", path: k.kubeconfig });
  }
  const t = config.linode.token;
  if (t.kind === "file") files.push({ setting: "LINODE_API_TOKEN_FILE", path: t.path });
  const s = config.serve;
  if (s.securePort !== null && s.tlsCertFile) files.push({ setting: "--tls-cert-file", path: s.tlsCertFile });
  if (s.securePort !== null && s.tlsPrivateKeyFile) {
    files.push({ setting: "--tls-private-key-file", path: s.tlsPrivateKeyFile });
  }
  for (
    const [setting, path] of [
      ["--authentication-kubeconfig", s.auth.authenticationKubeconfig],
      ["--authorization-kubeconfig", s.auth.authorizationKubeconfig],
    ] as const
  ) {
    if (s.securePort !== null && path) files.push({ setting, path });
  }
  return files;
}

/**
 * One problem line per file `config` names that cannot be read, naming the setting, the path and why.
 * `skip` lists settings checked elsewhere (the token file is read once while parsing).
 */
export function unreadableFiles(
  config: FileSettings,
  check: ReadCheck,
  skip: readonly string[] = [],
): string[] {
  const problems: string[] = [];
  for (const { setting, path } of filesOf(config)) {
    if (skip.includes(setting)) continue;
    const state = check(path);
    if (state !== "ok") problems.push(`${setting}: cannot read ${path}: ${REASONS[state]()}`);
  }
  return problems;
}

/** Asks Deno: the read permission first (a denied path is never touched), then the file itself. */
export function checkRead(path: string): ReadState {
  if (Deno.permissions.querySync({ name: "read", path }).state !== "granted") return "denied";
  try {
    if (!Deno.statSync(path).isFile) return "not-a-file";
    // Opening is what the OS may refuse (stat needs only the folder).
    Deno.openSync(path, { read: true }).close();
    return "ok";
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return "missing";
    if (e instanceof Deno.errors.NotCapable) return "denied";
    if (e instanceof Deno.errors.PermissionDenied) return "forbidden";
    // Anything else (an I/O error) is left to the reader, which reports it with its own cause.
    return "ok";
  }
}
