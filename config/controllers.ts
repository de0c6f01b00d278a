/**
 * Which controllers run, decided as the Go CCM decides it. `--controllers` names upstream's four controllers
 * (k8s.io/cloud-provider `names`: the `-controller` names and their short aliases), checked and read as
 * upstream's `GenericControllerManagerConfigurationOptions` does: a name it does not know stops the start, and
 * for each controller the first entry naming it wins, else `*` enables it. The Go CCM starts the rest itself
 * in its cloud's `Initialize`, whatever `--controllers` says: node IPAM with `--allocate-node-cidrs`
 * (cloud/linode/nodeipamcontroller.go) and its node controller's metadata updates (host-uuid, private-ip,
 * public-ipv6; cloud/linode/node_controller.go), which `Config.nodes.metadataUpdates` says. The route controller
 * runs only when the Linode cloud offers routes (`--enable-route-controller`) and `--configure-cloud-routes`
 * (upstream's startRouteController).
 */
import type { Flags } from "./flags.ts";
import { splitClusterCidrs } from "./checks.ts";
import { CONTROLLER_NAMES, type ControllerName } from "./types.ts";

/** Upstream's canonical controller names (`names.*Controller`), with ours. */
const UPSTREAM_NAMES: Readonly<Record<string, ControllerName>> = {
  "cloud-node-controller": "cloud-node",
  "cloud-node-lifecycle-controller": "cloud-node-lifecycle",
  "node-route-controller": "route",
  "service-lb-controller": "service",
};

/** Upstream's aliases (`names.CCMControllerAliases`): the short names, which are ours too. */
const ALIASES: Readonly<Record<string, string>> = {
  "cloud-node": "cloud-node-controller",
  "cloud-node-lifecycle": "cloud-node-lifecycle-controller",
  route: "node-route-controller",
  service: "service-lb-controller",
};

/** Names of node IPAM that are not upstream's: a hint, since the Go CCM refuses them. */
const IPAM_NAMES = new Set(["nodeipam", "node-ipam", "node-ipam-controller"]);

/** An entry of `--controllers` as upstream keeps it: the canonical name, with its `-` if it has one. */
function canonical(entry: string): string {
  const bare = entry.replace(/^-/, "");
  const name = ALIASES[bare] ?? bare;
  return entry.startsWith("-") ? `-${name}` : name;
}

/** Upstream's `IsControllerEnabled` (controller-manager app/helper.go): the first entry naming it decides. */
function isEnabled(name: string, entries: readonly string[]): boolean {
  let star = false;
  for (const entry of entries) {
    if (entry === name) return true;
    if (entry === `-${name}`) return false;
    if (entry === "*") star = true;
  }
  return star; // no controller of the cloud-controller-manager is disabled by default
}

/** Upstream's `Validate`: each entry but `*`, without its `-`, must name a known controller. */
function unknownEntries(entries: readonly string[]): string[] {
  const problems: string[] = [];
  for (const entry of entries) {
    if (entry === "*" || UPSTREAM_NAMES[canonical(entry).replace(/^-/, "")]) continue;
    const hint = IPAM_NAMES.has(entry.replace(/^-/, ""))
      ? "; node IPAM runs with --allocate-node-cidrs, whatever --controllers says, as in the Go CCM"
      : "";
    problems.push(
      `--controllers: unknown controller "${entry}" (use *, ${
        CONTROLLER_NAMES.filter((n) => n !== "nodeipam").join(", ")
      } or their upstream -controller names; -name disables${hint})`,
    );
  }
  return problems;
}

/** Why the route controller does not run though `--controllers` enables it, if it does not. */
function routeBlocked(flags: Flags): string | undefined {
  if (!flags.get("enable-route-controller")) return "--enable-route-controller is false";
  if (!flags.get("configure-cloud-routes")) return "--configure-cloud-routes is false";
  return undefined;
}

/**
 * The controllers to run, in start order: upstream's as `--controllers` enables them (the route controller
 * only where routes are on), and `nodeipam` with `--allocate-node-cidrs`. Pushes unknown names to `problems`
 * and a requested route controller that cannot run to `warnings`.
 */
export function chooseControllers(
  flags: Flags,
  notes: { problems: string[]; warnings: string[] },
): Set<ControllerName> {
  const given = flags.get("controllers");
  notes.problems.push(...unknownEntries(given));
  const entries = given.map(canonical);
  const chosen = new Set<ControllerName>();
  for (const [name, ours] of Object.entries(UPSTREAM_NAMES)) if (isEnabled(name, entries)) chosen.add(ours);
  const blocked = routeBlocked(flags);
  if (chosen.has("route") && blocked) {
    chosen.delete("route");
    if (entries.includes("node-route-controller") || flags.get("enable-route-controller")) {
      notes.warnings.push(`route controller not started: ${blocked}`);
    }
  } else if (!chosen.has("route") && flags.get("enable-route-controller")) {
    notes.warnings.push("route controller not started: --controllers excludes it");
  }
  if (chosen.has("route") && splitClusterCidrs(flags.get("cluster-cidr")).length === 0) {
    notes.problems.push("--cluster-cidr: needed by the route controller (--enable-route-controller)");
  }
  if (flags.get("allocate-node-cidrs")) chosen.add("nodeipam");
  return new Set(CONTROLLER_NAMES.filter((n) => chosen.has(n)));
}
