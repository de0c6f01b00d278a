/**
 * `deno task manifest`: writes the in-cluster install, like the Go CCM's `deploy/generate-manifest.sh`: the
 * `ccm-linode` Secret (token and region) followed by deploy/ccm.yaml (ServiceAccount, RBAC, DaemonSet). The
 * token is read from a file, stdin (`--token-file=-`) or `LINODE_API_TOKEN`, never from the command line
 * (where `ps` and shell history would keep it), and the output file is created readable by its owner only.
 * It holds the token in clear (base64) and lands in the working directory by default: `ccm-linode.yaml` is in
 * the repository's `.gitignore` so a checkout never commits it; with `--out` elsewhere keep it out of version
 * control yourself, and delete it once applied.
 *
 *   deno task manifest --region=us-east --token-file=token.txt [--image=REF] [--out=ccm-linode.yaml]
 *   deno task manifest --rbac-only [--out=ccm-rbac.yaml]   (ServiceAccount and RBAC: for a CCM outside the cluster)
 *   deno task manifest --net-allow --kubeconfig=<file> ...   (the --allow-net list: deploy/net_allow.ts)
 */
import { netAllowMain } from "./net_allow.ts";

/** What goes into the manifest. */
export interface ManifestInput {
  readonly token: string;
  readonly region: string;
  /** Replaces the DaemonSet's image (default: the one in deploy/ccm.yaml). */
  readonly image?: string;
}

/** Parsed command line. */
export interface GenerateArgs {
  /** Only the ServiceAccount and its RBAC (no Secret, no DaemonSet): for the systemd install. */
  readonly rbacOnly: boolean;
  readonly region: string;
  readonly tokenFile?: string;
  readonly image?: string;
  readonly out: string;
}

/** A usage problem: exit 2 with this message (never containing the token). */
export class UsageError extends Error {
  override name = "UsageError";
}

const TEMPLATE = new URL("./ccm.yaml", import.meta.url);
/** Linode region ids: `us-east`, `nl-ams`, `us-sea`, `jp-osa`, ... (lower-case words joined by `-`). */
const REGION = /^[a-z]{2}(-[a-z0-9]+)+$/;
/** An image reference without spaces or quotes (registry/name:tag or @sha256:digest). */
const IMAGE = /^[a-z0-9][a-z0-9._\-/:]*(@sha256:[a-f0-9]{64})?$/;
/** Linode personal access tokens are 64 hex characters; other forms are accepted if they have no spaces. */
const TOKEN = /^[\x21-\x7e]+$/;

/** Where the install (with the token) goes without `--out`; listed in `.gitignore`. */
export const DEFAULT_OUT = "ccm-linode.yaml";

/** Usage text. */
export const USAGE = "deno task manifest --region=<linode region> [--token-file=<path>|-] [--image=<ref>] " +
  "[--out=ccm-linode.yaml]\n  The token comes from --token-file (- for stdin) or LINODE_API_TOKEN.\n" +
  "deno task manifest --rbac-only [--out=ccm-rbac.yaml]";

const RBAC_KINDS = new Set(["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"]);

/** The ServiceAccount and RBAC documents of the deploy/ccm.yaml text, comments kept. */
export function rbacOnly(template: string): string {
  const docs = template.split(/^---\n/m);
  const kept = docs.filter((d) => RBAC_KINDS.has(/^kind: (\S+)$/m.exec(d)?.[1] ?? ""));
  return kept.join("---\n");
}

function base64(text: string): string {
  return btoa(Array.from(new TextEncoder().encode(text), (b) => String.fromCharCode(b)).join(""));
}

/** The Secret the DaemonSet reads: `apiToken` (mounted as a file) and `region`, the Go CCM's keys. */
export function secretYaml(token: string, region: string): string {
  return [
    "apiVersion: v1",
    "kind: Secret",
    "metadata:",
    "  name: ccm-linode",
    "  namespace: kube-system",
    "type: Opaque",
    "data:",
    `  apiToken: ${base64(token)}`,
    `  region: ${base64(region)}`,
    "",
  ].join("\n");
}

/** The whole install for `input`, from the deploy/ccm.yaml text. Throws UsageError on bad input. */
export function renderManifest(input: ManifestInput, template: string): string {
  if (!TOKEN.test(input.token)) throw new UsageError("the token is empty or contains spaces");
  if (!REGION.test(input.region)) {
    // The value is not echoed: a token given in the wrong place would end up on the terminal.
    throw new UsageError("--region: not a Linode region id (lower-case, like us-east or nl-ams)");
  }
  let body = template;
  if (input.image !== undefined) {
    if (!IMAGE.test(input.image)) throw new UsageError(`--image: "${input.image}" is not an image reference`);
    const images = body.match(/^(\s*)image: .*$/gm) ?? [];
    if (images.length !== 1) throw new TypeError("deploy/ccm.yaml must have exactly one image: line");
    body = body.replace(/^(\s*)image: .*$/m, `$1image: ${input.image}`);
  }
  return `${secretYaml(input.token, input.region)}---\n${body}`;
}

/** Parses `--name=value` / `--name value` arguments. */
export function parseGenerateArgs(args: readonly string[]): GenerateArgs {
  const values = new Map<string, string>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? "";
    // Only flag names are echoed: a token pasted as an argument (the Go script's usage) stays off the screen.
    if (!arg.startsWith("--")) {
      throw new UsageError(
        `positional arguments are not accepted: the token never goes on the command line\n${USAGE}`,
      );
    }
    if (arg === "--rbac-only") {
      values.set("rbac-only", "true");
      continue;
    }
    const m = /^--(region|token-file|image|out)(?:=(.*))?$/.exec(arg);
    if (!m?.[1]) throw new UsageError(`unknown flag ${arg.split("=")[0]}\n${USAGE}`);
    const value = m[2] ?? args[++i];
    if (value === undefined) throw new UsageError(`--${m[1]} needs a value\n${USAGE}`);
    values.set(m[1], value);
  }
  const rbac = values.has("rbac-only");
  const region = values.get("region") ?? "";
  if (!region && !rbac) throw new UsageError(`--region is required\n${USAGE}`);
  return {
    rbacOnly: rbac,
    region,
    tokenFile: values.get("token-file"),
    image: values.get("image"),
    out: values.get("out") ?? (rbac ? "ccm-rbac.yaml" : DEFAULT_OUT),
  };
}

async function readToken(tokenFile: string | undefined): Promise<string> {
  if (tokenFile === "-") return (await new Response(Deno.stdin.readable).text()).trim();
  if (tokenFile !== undefined) {
    try {
      return (await Deno.readTextFile(tokenFile)).trim();
    } catch (e) {
      throw new UsageError(
        `--token-file: cannot read ${tokenFile}: ${e instanceof Error ? e.name : "error"}`,
      );
    }
  }
  const token = Deno.env.get("LINODE_API_TOKEN")?.trim();
  if (!token) throw new UsageError(`no token: give --token-file or set LINODE_API_TOKEN\n${USAGE}`);
  return token;
}

/** Writes `text` to `path`, readable and writable by its owner only, also when the file already exists. */
async function writePrivate(path: string, text: string): Promise<void> {
  await Deno.writeTextFile(path, "", { mode: 0o600 });
  await Deno.chmod(path, 0o600);
  await Deno.writeTextFile(path, text);
}

/** Runs the task; returns the exit code (0, or 2 for a usage problem). */
export async function main(args: readonly string[]): Promise<number> {
  if (args.includes("--net-allow")) {
    return await netAllowMain(args, { linodeUrl: Deno.env.get("LINODE_URL") });
  }
  const say = (stream: typeof Deno.stdout | typeof Deno.stderr, text: string) =>
    stream.writeSync(new TextEncoder().encode(text + "\n"));
  try {
    const parsed = parseGenerateArgs(args);
    if (parsed.rbacOnly) {
      await Deno.writeTextFile(parsed.out, rbacOnly(await Deno.readTextFile(TEMPLATE)));
      say(Deno.stdout, `wrote ${parsed.out}: the ServiceAccount ccm-linode and its RBAC`);
      return 0;
    }
    const token = await readToken(parsed.tokenFile);
    const text = renderManifest(
      { token, region: parsed.region, image: parsed.image },
      await Deno.readTextFile(TEMPLATE),
    );
    await writePrivate(parsed.out, text);
    say(
      Deno.stdout,
      `wrote ${parsed.out} (mode 0600: it holds the token; ${DEFAULT_OUT} is in .gitignore, never commit it); ` +
        `apply it with kubectl apply -f ${parsed.out}, then delete it`,
    );
    return 0;
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    say(Deno.stderr, e.message);
    return 2;
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
