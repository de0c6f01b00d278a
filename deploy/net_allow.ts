/**
 * `deno task manifest --net-allow`: writes the `--allow-net` list of `deno task start` and `deno task compile`
 * (deploy/net-allow, read by both tasks; without it they use deploy/net-allow.default, the in-cluster default)
 * from a configuration: the Linode API host of `LINODE_URL`, the apiserver of a kubeconfig (or a URL), and the
 * secure port's listen address. The image takes the same list as its `CCM_ALLOW_NET` build argument.
 *
 *   deno task manifest --net-allow --kubeconfig=/etc/linode-ccm/kubeconfig [--linode-url=URL]
 *     [--listen=0.0.0.0:10258|none] [--out=deploy/net-allow]
 *   deno task manifest --net-allow --apiserver=https://apiserver.example:6443 ...
 */
import { load } from "js-yaml";
import { hostPort, urlHostPort } from "../config/net_allowed.ts";

/** What the list is made of. */
export interface NetAllowInput {
  readonly linodeUrl: string;
  /** Apiserver URLs (`https://host:port`). */
  readonly apiservers: readonly string[];
  /** `address:port` the secure port listens on, or null when serving is off (`--secure-port=0`). */
  readonly listen: string | null;
}

/** Where the list goes by default: read first by `deno task start` and `deno task compile`; in `.gitignore`. */
export const NET_ALLOW_FILE = "deploy/net-allow";

/** A bad argument or file: exit 2 with this message. */
export class NetAllowError extends Error {
  override name = "NetAllowError";
}

function hostOf(url: string, what: string): string {
  const host = urlHostPort(url);
  if (!host || !/^https?:$/.test(new URL(url).protocol)) {
    throw new NetAllowError(`${what}: "${url}" is not an http(s) URL`);
  }
  return host;
}

/** The `--allow-net` value for `input`: `host:port` entries, comma-separated, each once. */
export function netAllowList(input: NetAllowInput): string {
  const entries = [
    hostOf(input.linodeUrl, "--linode-url"),
    ...input.apiservers.map((u) => hostOf(u, "apiserver")),
  ];
  if (input.listen !== null) {
    const m = /^\[?([^\]]*?)\]?:(\d{1,5})$/.exec(input.listen);
    if (!m?.[1] || Number(m[2]) > 65535) {
      throw new NetAllowError(`--listen: "${input.listen}" is not address:port`);
    }
    entries.push(hostPort(m[1], m[2]!));
  }
  return [...new Set(entries)].join(",");
}

function record(v: unknown): Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? v as Record<string, unknown> : {};
}

function named(list: unknown, name: unknown): Record<string, unknown> {
  const entries = Array.isArray(list) ? list.map(record) : [];
  return record(entries.find((e) => e.name === name));
}

/** The server of a kubeconfig's current context. */
export function kubeconfigServer(text: string, path: string): string {
  let doc: Record<string, unknown>;
  try {
    doc = record(load(text));
  } catch {
    throw new NetAllowError(`--kubeconfig: ${path} is not valid YAML`);
  }
  const context = record(named(doc.contexts, doc["current-context"]).context);
  const server = record(named(doc.clusters, context.cluster).cluster).server;
  if (typeof server !== "string" || server === "") {
    throw new NetAllowError(`--kubeconfig: ${path} names no server for its current-context`);
  }
  return server;
}

/** Parsed `--net-allow` arguments. */
export interface NetAllowArgs {
  readonly kubeconfig?: string;
  readonly apiserver?: string;
  readonly linodeUrl?: string;
  readonly listen: string | null;
  readonly out: string;
}

/** Parses the arguments of `--net-allow` (the flag itself included). */
export function parseNetAllowArgs(args: readonly string[]): NetAllowArgs {
  const values = new Map<string, string>();
  for (const arg of args) {
    if (arg === "--net-allow") continue;
    const m = /^--(kubeconfig|apiserver|linode-url|listen|out)=(.+)$/.exec(arg);
    if (!m?.[1] || m[2] === undefined) {
      throw new NetAllowError(`--net-allow: unknown argument ${arg.split("=")[0]}`);
    }
    values.set(m[1], m[2]);
  }
  if (values.has("kubeconfig") === values.has("apiserver")) {
    throw new NetAllowError("--net-allow: give --kubeconfig=<file> or --apiserver=<url> (one of them)");
  }
  const listen = values.get("listen") ?? "0.0.0.0:10258";
  return {
    kubeconfig: values.get("kubeconfig"),
    apiserver: values.get("apiserver"),
    linodeUrl: values.get("linode-url"),
    listen: listen === "none" ? null : listen,
    out: values.get("out") ?? NET_ALLOW_FILE,
  };
}

/** Runs `--net-allow`: writes the list, prints where; returns the exit code (2 for a usage problem). */
export async function netAllowMain(args: readonly string[], env: { linodeUrl?: string }): Promise<number> {
  const say = (stream: typeof Deno.stdout, text: string) =>
    stream.writeSync(new TextEncoder().encode(`${text}\n`));
  try {
    const parsed = parseNetAllowArgs(args);
    const apiserver = parsed.apiserver ??
      kubeconfigServer(await Deno.readTextFile(parsed.kubeconfig ?? ""), parsed.kubeconfig ?? "");
    const list = netAllowList({
      linodeUrl: parsed.linodeUrl ?? env.linodeUrl ?? "https://api.linode.com/v4",
      apiservers: [apiserver],
      listen: parsed.listen,
    });
    await Deno.writeTextFile(parsed.out, `${list}\n`);
    say(
      Deno.stdout,
      `wrote ${parsed.out}: --allow-net=${list}` +
        (parsed.out === NET_ALLOW_FILE
          ? " (deno task start uses it; run deno task compile again for the binary)"
          : ` (deno task start and compile read ${NET_ALLOW_FILE} only)`),
    );
    return 0;
  } catch (e) {
    if (!(e instanceof NetAllowError) && !(e instanceof Deno.errors.NotFound)) throw e;
    say(Deno.stderr, e instanceof NetAllowError ? e.message : "--kubeconfig: file not found");
    return 2;
  }
}
