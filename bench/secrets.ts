/**
 * Benchmark 7: Secrets the CCM reads. A cluster holds many Secrets unrelated to load balancers (Helm release
 * Secrets of 100 KiB by default) beside the TLS Secrets that HTTPS Services name. The CCM, as its own process,
 * serves every HTTPS Service; the table shows its resident memory and what it read of Secrets from the
 * apiserver (per-name `get`s only, never a list or watch), beside what listing every Secret would have read.
 */
import { annotationKey } from "../controllers/service/annotations/table.ts";
import { generateSelfSignedCert } from "../server/tls.ts";
import { startCcmProcess } from "./ccm_process.ts";
import { CcmWorld } from "./ccm_world.ts";
import type { Table } from "./table.ts";

/** Options of `benchSecrets`. */
export interface SecretsBenchOptions {
  /** Secrets no Service names (Helm release Secrets). */
  unrelated: number;
  /** Size of each unrelated Secret's data, KiB. */
  sizeKib: number;
  /** HTTPS Services, each naming its own TLS Secret. */
  tls: number;
}

const MIB = 1024 * 1024;
const SECRET_GET = "GET /api/v1/namespaces/{namespace}/secrets/{name}";

function secret(name: string, type: string, data: Record<string, string>) {
  return { apiVersion: "v1", kind: "Secret", metadata: { name, namespace: "default" }, type, data };
}

function httpsService(name: string, secretName: string) {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name,
      namespace: "default",
      annotations: {
        [annotationKey("port-443")]: JSON.stringify({ protocol: "https", "tls-secret-name": secretName }),
      },
    },
    spec: {
      type: "LoadBalancer",
      selector: { app: name },
      ports: [{ name: "https", port: 443, protocol: "TCP" }],
    },
  };
}

/** Bytes of the Secrets as the apiserver sends them (JSON). */
function jsonBytes(world: CcmWorld, names: Iterable<string>): number {
  let bytes = 0;
  for (const name of names) {
    bytes += JSON.stringify(world.world.kube.store.get("secrets", name, "default")).length;
  }
  return bytes;
}

async function seed(world: CcmWorld, o: SecretsBenchOptions): Promise<string[]> {
  const blob = btoa("x".repeat(o.sizeKib * 1024));
  for (let i = 0; i < o.unrelated; i++) {
    const name = `sh.helm.release.v1.app-${i}.v1`;
    world.world.kube.store.create("secrets", secret(name, "helm.sh/release.v1", { release: blob }));
  }
  const pem = await generateSelfSignedCert({ hosts: ["web.example.com"] });
  const tlsNames: string[] = [];
  for (let i = 0; i < o.tls; i++) {
    const name = `web-${i}-tls`;
    const data = { "tls.crt": btoa(pem.certPem), "tls.key": btoa(pem.keyPem) };
    world.world.kube.store.create("secrets", secret(name, "kubernetes.io/tls", data));
    world.world.kube.store.create("services", httpsService(`web-${i}`, name));
    tlsNames.push(name);
  }
  return tlsNames;
}

function served(world: CcmWorld, tls: number): boolean {
  for (let i = 0; i < tls; i++) {
    const svc = world.world.kube.store.get("services", `web-${i}`, "default") as
      | { status?: { loadBalancer?: { ingress?: unknown[] } } }
      | undefined;
    if (!svc?.status?.loadBalancer?.ingress?.length) return false;
  }
  return true;
}

/** Runs the CCM process against a cluster full of unrelated Secrets; one row of figures. */
export async function benchSecrets(o: SecretsBenchOptions): Promise<Table> {
  await using world = await CcmWorld.start(5, 0);
  const tlsNames = await seed(world, o);
  const allNames = (world.world.kube.store.list("secrets") as { metadata?: { name?: string } }[])
    .map((s) => s.metadata?.name ?? "");
  world.world.kube.calls.reset();
  await using ccm = await startCcmProcess(world, { name: "secrets" });
  await ccm.waitReady();
  const deadline = performance.now() + 300_000;
  while (!served(world, o.tls)) {
    if (performance.now() > deadline) {
      throw new Error("Timed out waiting for every HTTPS Service to be served");
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const rss = await ccm.rssBytes();
  const calls = world.world.kube.calls.log.filter((c) => c.key.includes("secrets"));
  const gets = calls.filter((c) => c.key === SECRET_GET);
  const readNames = gets.map((c) => c.path.split("/").at(-1) ?? "");
  const others = calls.length - gets.length;
  const listAll = jsonBytes(world, allNames);
  return {
    title: "Secrets: what the CCM reads and holds (the CCM as its own process)",
    columns: [
      "unrelated Secrets",
      "TLS Secrets in use",
      "Secret gets",
      "Secret lists/watches",
      "Secret bytes read (KiB)",
      "a list of every Secret (MiB)",
      "CCM RSS (MiB)",
    ],
    rows: [[
      `${o.unrelated} × ${o.sizeKib} KiB`,
      tlsNames.length,
      gets.length,
      others,
      Math.round(jsonBytes(world, readNames) / 1024),
      Math.round(listAll / MIB),
      Math.round(rss / MIB),
    ]],
    notes: [
      "the CCM reads only the Secrets Service annotations name, one get each (and again each minute while used)",
      "before (a Secret informer) the CCM listed and kept every Secret: the 'list of every Secret' column",
      "RSS is measured once every HTTPS Service has its NodeBalancer",
    ],
  };
}

function flag(args: readonly string[], name: string, fallback: number): number {
  const raw = args.find((a) => a.startsWith(`--${name}=`))?.split("=")[1];
  const n = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`--${name} must be a whole number`);
  return n;
}

if (import.meta.main) {
  const args = Deno.args;
  const table = await benchSecrets({
    unrelated: flag(args, "unrelated", 5000),
    sizeKib: flag(args, "size-kib", 100),
    tls: flag(args, "tls", 50),
  });
  const { renderTable } = await import("./table.ts");
  console.log(renderTable(table));
}
