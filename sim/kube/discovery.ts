/** Legacy (unaggregated) discovery documents and `/version`, which clients fall back to. */
import { apiVersionOf, type ResourceDef, RESOURCES } from "./resources.ts";

/** The Kubernetes version the emulator claims to be. */
const SIM_VERSION = { major: "1", minor: "32", gitVersion: "v1.32.0-sim" };

/** `GET /version`. */
export function versionInfo(): Record<string, unknown> {
  return {
    ...SIM_VERSION,
    gitCommit: "0000000000000000000000000000000000000000",
    gitTreeState: "clean",
    buildDate: "2026-01-01T00:00:00Z",
    goVersion: "go1.23.0",
    compiler: "gc",
    platform: "linux/amd64",
  };
}

/** `GET /api`. */
export function coreVersions(serverAddress: string): Record<string, unknown> {
  return {
    kind: "APIVersions",
    versions: ["v1"],
    serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress }],
  };
}

function groups(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const def of RESOURCES) {
    if (def.group === "") continue;
    const versions = out.get(def.group) ?? [];
    if (!versions.includes(def.version)) versions.push(def.version);
    out.set(def.group, versions);
  }
  return out;
}

/** `GET /apis`. */
export function groupList(): Record<string, unknown> {
  const list = [...groups()].map(([name, versions]) => {
    const vs = versions.map((version) => ({ groupVersion: `${name}/${version}`, version }));
    return { name, versions: vs, preferredVersion: vs[0] };
  });
  return { kind: "APIGroupList", apiVersion: "v1", groups: list };
}

/** `GET /apis/<group>`, or undefined for an unknown group. */
export function apiGroup(group: string): Record<string, unknown> | undefined {
  const versions = groups().get(group);
  if (!versions) return undefined;
  const vs = versions.map((version) => ({ groupVersion: `${group}/${version}`, version }));
  return { kind: "APIGroup", apiVersion: "v1", name: group, versions: vs, preferredVersion: vs[0] };
}

function resourceEntries(def: ResourceDef): Record<string, unknown>[] {
  const main: Record<string, unknown> = {
    name: def.plural,
    singularName: def.singular,
    namespaced: def.namespaced,
    kind: def.kind,
    verbs: [...def.verbs],
  };
  if (def.shortNames.length > 0) main.shortNames = [...def.shortNames];
  const entries = [main];
  if (def.status) {
    entries.push({
      name: `${def.plural}/status`,
      singularName: "",
      namespaced: def.namespaced,
      kind: def.kind,
      verbs: ["get", "patch", "update"],
    });
  }
  return entries;
}

/** `GET /api/v1` or `/apis/<group>/<version>`, or undefined for an unknown group version. */
export function resourceList(group: string, version: string): Record<string, unknown> | undefined {
  const defs = RESOURCES.filter((d) => d.group === group && d.version === version);
  if (defs.length === 0) return undefined;
  return {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion: apiVersionOf(defs[0]!),
    resources: defs.flatMap(resourceEntries),
  };
}
