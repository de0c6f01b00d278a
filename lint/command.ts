/**
 * `linode-cloud-controller-manager lint`: reads manifests (files, stdin) or lists the cluster's Services
 * (one read-only list; the clients refuse every write), checks them (`check.ts`) and prints the findings.
 * Exit 0 when every annotation is valid, 1 when one is not, 2 when nothing could be checked.
 */
import type { V1Service } from "@kubernetes/client-node";
import type { LintConfig } from "../config/config.ts";
import type { KubeSource } from "../config/env.ts";
import { CCM_READ_DIRS } from "../config/readable.ts";
import { makeKubeClients } from "../kube/clients.ts";
import { KubeConfigError, loadKubeConfig } from "../kube/config.ts";
import { checkNet, kubeConfigTarget, refusedServers } from "../config/net_allowed.ts";
import { LeaseLostError } from "../common/write_guard.ts";
import { Registry } from "../common/metrics.ts";
import { formatReport, lintServices } from "./check.ts";
import { type FoundService, readManifests } from "./manifests.ts";

/** What the command reads and writes; `denoLintIo` is the real one. */
export interface LintIo {
  /** A file's text; throws Deno's errors. */
  readText(path: string): Promise<string>;
  readStdin(): Promise<string>;
  /** Every Service of the cluster (or of one namespace), read-only. */
  listServices(kube: KubeSource, namespace: string | null): Promise<V1Service[]>;
  out(line: string): void;
  err(line: string): void;
}

/** Raised for what stops the lint before anything is checked (exit 2). */
class CannotLint extends Error {
  override name = "CannotLint";
}

function readFailure(path: string, e: unknown): CannotLint {
  if (e instanceof Deno.errors.NotFound) return new CannotLint(`${path}: not found`);
  if (e instanceof Deno.errors.NotCapable) {
    return new CannotLint(
      `${path}: this process may read files only under ${CCM_READ_DIRS.join(", ")}: pipe it in ` +
        `(lint -f - < ${path}) or run deno task lint-services ${path}`,
    );
  }
  if (e instanceof Deno.errors.PermissionDenied) return new CannotLint(`${path}: no permission to read it`);
  if (e instanceof Deno.errors.IsADirectory) return new CannotLint(`${path}: a folder, not a file`);
  return new CannotLint(`${path}: cannot read it`);
}

async function fromFiles(config: LintConfig, io: LintIo): Promise<FoundService[]> {
  const found: FoundService[] = [];
  let stdinRead = false;
  for (const path of config.files) {
    if (path === "-" && stdinRead) throw new CannotLint("-: stdin can be read only once");
    stdinRead ||= path === "-";
    const name = path === "-" ? "<stdin>" : path;
    const text = await (path === "-" ? io.readStdin() : io.readText(path)).catch((e: unknown) => {
      throw readFailure(name, e);
    });
    const result = readManifests(text, name);
    if (!result.ok) throw new CannotLint(result.problem);
    found.push(...result.services);
  }
  return found;
}

async function fromCluster(config: LintConfig, io: LintIo): Promise<FoundService[]> {
  if (!config.kube) throw new CannotLint("no manifest file and no cluster to read Services from");
  try {
    const services = await io.listServices(config.kube, config.namespace);
    return services.map((service) => ({ service, where: "cluster" }));
  } catch (e) {
    // KubeConfigError and KubeApiError carry no credentials in their messages.
    throw new CannotLint(`Cannot list Services: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** Runs the lint; returns the exit code. */
export async function runLint(config: LintConfig, io: LintIo): Promise<number> {
  let found: FoundService[];
  try {
    found = config.files.length > 0 ? await fromFiles(config, io) : await fromCluster(config, io);
  } catch (e) {
    if (!(e instanceof CannotLint)) throw e;
    io.err(e.message);
    return 2;
  }
  const report = lintServices(found, config.defaults, { fromGoCcm: config.fromGoCcm });
  for (const line of formatReport(report)) io.out(line);
  return report.invalid > 0 ? 1 : 0;
}

/** A fence that refuses every write: the lint only ever reads the cluster. */
const READ_ONLY = {
  leading: false,
  assertLeading(): void {
    throw new LeaseLostError("Refusing to write: lint is read-only");
  },
};

async function listServices(kube: KubeSource, namespace: string | null): Promise<V1Service[]> {
  const kc = loadKubeConfig(kube);
  // A server outside the --allow-net list would fail as a bare "Cannot reach": say which list to change.
  const refused = refusedServers(
    kubeConfigTarget("--kubeconfig", kc.getCurrentCluster()?.server ?? ""),
    checkNet,
  );
  if (refused.length) throw new KubeConfigError(refused.join("\n"));
  const { core } = makeKubeClients(kc, {
    metrics: new Registry(),
    fence: READ_ONLY,
    userAgent: "linode-ccm-lint",
  });
  const list = namespace === null
    ? await core.listServiceForAllNamespaces()
    : await core.listNamespacedService({ namespace });
  return list.items;
}

/** The real reads and writes: files, stdin, the cluster, stdout and stderr. */
export function denoLintIo(write: (stream: typeof Deno.stdout, text: string) => void): LintIo {
  return {
    readText: (path) => Deno.readTextFile(path),
    readStdin: () => new Response(Deno.stdin.readable).text(),
    listServices,
    out: (line) => write(Deno.stdout, `${line}\n`),
    err: (line) => write(Deno.stderr, `${line}\n`),
  };
}
