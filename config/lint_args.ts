/**
 * The command line of `linode-cloud-controller-manager lint`: which manifests to check (files, stdin, or the
 * live cluster, read-only) and the CCM flags that change what an annotation means (`--vpc-names`,
 * `--nodebalancer-tags`, …), parsed by the same flag table as a normal run so `lint` with the Deployment's
 * flags gives the controller's verdict. Pure: `config.ts` passes `Deno.args` and the environment in.
 */
import { FLAG_INDEX, parseArgs, readFlags } from "./flags.ts";
import { chooseKubeSource, type Env, type KubeSource, parseLinodeEnv } from "./env.ts";
import { parseFlagSections } from "./sections.ts";
import type { ServiceConfig, VpcConfig } from "./types.ts";
import { CCM_READ_DIRS } from "./readable.ts";

/** What the service controller's annotation parser takes from the CCM's configuration. */
export interface LintDefaults {
  readonly clusterName: string;
  readonly region: string;
  readonly hostnameOnlyIngress: boolean;
  readonly services: ServiceConfig;
  readonly vpc: VpcConfig;
}

/** What to check and how. */
export interface LintConfig {
  /** Manifest files in order; `-` is stdin. Empty: the live cluster. */
  readonly files: readonly string[];
  /** The cluster to list Services from when no file is given. */
  readonly kube: KubeSource | null;
  /** `-n`; null: every namespace. */
  readonly namespace: string | null;
  /** `--from-go-ccm`: also name every default this CCM applies differently from the Go CCM. */
  readonly fromGoCcm: boolean;
  readonly defaults: LintDefaults;
}

/** `lint --help`, or what to lint. */
export type LintParse = { readonly kind: "help"; readonly text: string } | {
  readonly kind: "lint";
  readonly config: LintConfig;
};

/** Usage of the subcommand. */
export const LINT_HELP = `Usage: linode-cloud-controller-manager lint [-f FILE]... [FILE]... [CCM flags]
       linode-cloud-controller-manager lint [--kubeconfig=PATH] [-n NAMESPACE] [CCM flags]

Checks the service.beta.kubernetes.io/linode-loadbalancer-* annotations of Service manifests with the
parser the service controller uses, and prints each invalid annotation with what it accepts.
Files are YAML or JSON, several documents per file, List objects included; "-" reads stdin. Without
files it lists the Services of the cluster (--kubeconfig, KUBECONFIG or in-cluster; read-only: one list
request, nothing is written).

  -f, --filename=FILE    a manifest file (repeatable; FILE arguments work too; - is stdin)
  -n, --namespace=NS     with the cluster: only this namespace (default every namespace)
  --from-go-ccm          also note each default this CCM applies differently from the Go CCM, and the
                         annotation that keeps the Go CCM's value
  CCM flags              e.g. --vpc-names, --nodebalancer-tags, --default-nodebalancer-type, as the
                         Deployment passes them (they change what some annotations resolve to)
  -h, --help             show this text

Exit status: 0 every annotation is valid, 1 at least one is not, 2 usage error or a manifest that cannot be
read or parsed (nothing was checked).

Permissions: the binary and "deno task start" may read files only under ${CCM_READ_DIRS.join(", ")}
and stdin. Pipe other files in ("lint -f - < svc.yaml", "kubectl get svc -A -o yaml | … lint -f -"),
or use "deno task lint-services FILE…", the same program allowed to read the files it is given (or the
kubeconfig, without files) and nothing else.`;

const OWN_VALUE_FLAGS: Readonly<Record<string, "filename" | "namespace">> = {
  f: "filename",
  filename: "filename",
  n: "namespace",
  namespace: "namespace",
};

interface Split {
  files: string[];
  namespace: string | null;
  fromGoCcm: boolean;
  help: boolean;
  ccmArgs: string[];
  problems: string[];
}

/** Takes lint's own flags and FILE arguments out of `args`; the rest are CCM flags. */
function split(args: readonly string[]): Split {
  const out: Split = { files: [], namespace: null, fromGoCcm: false, help: false, ccmArgs: [], problems: [] };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? "";
    if (arg === "-" || !arg.startsWith("-")) {
      out.files.push(arg);
      continue;
    }
    const body = arg.replace(/^--?/, "");
    const eq = body.indexOf("=");
    const name = eq < 0 ? body : body.slice(0, eq);
    const inline = eq < 0 ? undefined : body.slice(eq + 1);
    const own = OWN_VALUE_FLAGS[name];
    if (own) {
      const v = inline ?? args[++i];
      if (v === undefined || v === "") out.problems.push(`${arg}: needs a value`);
      else if (own === "filename") out.files.push(v);
      else out.namespace = v;
    } else if (name === "h" || name === "help") {
      out.help = true;
    } else if (name === "from-go-ccm" && inline === undefined) {
      out.fromGoCcm = true;
    } else {
      out.ccmArgs.push(arg);
      // A CCM flag written "--name value" takes the next argument with it.
      const spec = FLAG_INDEX.get(name.replaceAll("_", "-"));
      if (spec && spec.kind !== "bool" && inline === undefined && i + 1 < args.length) {
        out.ccmArgs.push(args[++i]!);
      }
    }
  }
  return out;
}

/** Parses `lint`'s arguments (after the word `lint`); throws `problems` as one array when unusable. */
export function parseLintArgs(
  args: readonly string[],
  env: Env,
): LintParse | { kind: "problems"; problems: string[] } {
  const s = split(args);
  if (s.help) return { kind: "help", text: LINT_HELP };
  const parsed = parseArgs(s.ccmArgs);
  const problems = [...s.problems, ...parsed.problems];
  const flags = readFlags(parsed.values);
  const sections = parseFlagSections(flags, { problems, warnings: [] });
  // Only the variables that change annotations matter here; a lint needs no token.
  const scratch: string[] = [];
  const linode = parseLinodeEnv(env, scratch);
  problems.push(...scratch.filter((p) => p.startsWith("LINODE_HOSTNAME_ONLY_INGRESS")));
  const explicitKube = flags.get("kubeconfig") !== "" || flags.get("master") !== "";
  let kube: KubeSource | null = null;
  if (s.files.length > 0) {
    if (explicitKube) problems.push("--kubeconfig, --master: give manifest files or a cluster, not both");
    if (s.namespace !== null) problems.push("-n: only with the cluster (without files)");
  } else {
    kube = chooseKubeSource(
      { kubeconfig: flags.get("kubeconfig"), master: flags.get("master") },
      env,
      problems,
    );
  }
  if (problems.length > 0) return { kind: "problems", problems };
  return {
    kind: "lint",
    config: {
      files: s.files,
      kube,
      namespace: s.namespace,
      fromGoCcm: s.fromGoCcm,
      defaults: {
        clusterName: sections.clusterName,
        region: linode.region,
        hostnameOnlyIngress: linode.hostnameOnlyIngress,
        services: sections.services,
        vpc: sections.vpc,
      },
    },
  };
}

/** Where the service account's token and CA are in a pod (client-node reads them for an in-cluster source). */
const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

/**
 * The files a lint of `config` reads: its manifest files (stdin needs nothing), or, without files, the
 * kubeconfig it lists Services with (the service account folder in a pod). `deno task lint-services` grants
 * read access to these and nothing else.
 */
export function lintReadPaths(config: LintConfig): string[] {
  if (config.files.length > 0) return config.files.filter((f) => f !== "-");
  if (config.kube?.kind === "kubeconfig") return [config.kube.kubeconfig];
  if (config.kube?.kind === "in-cluster") return [SERVICE_ACCOUNT_DIR];
  return [];
}
