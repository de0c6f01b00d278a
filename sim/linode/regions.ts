/** The regions the emulated account can use, with what NodeBalancer addressing derives from them. */
import { fieldError } from "./http.ts";

/** One region: the city in legacy NodeBalancer hostnames and the IPv6 prefix of its frontends. */
export interface SimRegion {
  id: string;
  /** City in `nb-<ip>.<city>.nodebalancer.linode.com`; undefined for regions that name hosts by IP only. */
  legacyCity?: string;
  /** First two hextets of NodeBalancer IPv6 frontends here. */
  ipv6Prefix: string;
}

// The eleven original data centres give NodeBalancers `nb-<ip>.<city>.nodebalancer.linode.com`; regions opened
// later answer `<ip>.ip.linodeusercontent.com` (the 2024 reference's NodeBalancer.hostname, and what `linode-cli
// nodebalancers create --region in-maa` printed in linode/docs#6842). Which newer regions do which is not
// documented; the sim treats every newer region alike.
const LEGACY: readonly [string, string, string][] = [
  ["us-east", "newark", "2600:3c03"],
  ["us-central", "dallas", "2600:3c00"],
  ["us-west", "fremont", "2600:3c01"],
  ["us-southeast", "atlanta", "2600:3c02"],
  ["ca-central", "toronto", "2600:3c04"],
  ["eu-west", "london", "2a01:7e00"],
  ["eu-central", "frankfurt", "2a01:7e01"],
  ["ap-south", "singapore", "2400:8901"],
  ["ap-northeast", "tokyo", "2400:8902"],
  ["ap-west", "mumbai", "2400:8904"],
  ["ap-southeast", "sydney", "2400:8907"],
];

const NEWER: readonly string[] = [
  "us-iad",
  "us-ord",
  "us-sea",
  "us-mia",
  "us-lax",
  "fr-par",
  "nl-ams",
  "se-sto",
  "it-mil",
  "es-mad",
  "gb-lon",
  "de-fra-2",
  "in-maa",
  "in-bom-2",
  "jp-osa",
  "jp-tyo-3",
  "id-cgk",
  "br-gru",
  "au-mel",
  "sg-sin-2",
];

function build(): Map<string, SimRegion> {
  const out = new Map<string, SimRegion>();
  for (const [id, legacyCity, ipv6Prefix] of LEGACY) out.set(id, { id, legacyCity, ipv6Prefix });
  // Newer regions' real prefixes vary; a distinct made-up one per region keeps frontends unique.
  NEWER.forEach((id, i) => out.set(id, { id, ipv6Prefix: `2600:3c${(0x10 + i).toString(16)}` }));
  return out;
}

const REGIONS = build();

/** The region `id`, or undefined. */
export function findRegion(id: string): SimRegion | undefined {
  return REGIONS.get(id);
}

/** Every region id the sim knows. */
export function regionIds(): string[] {
  return [...REGIONS.keys()];
}

/** The region named by a body field, or the API's 400 (`"region is not valid"`, as recorded for reserved IPs). */
export function requireRegion(value: unknown, field = "region"): SimRegion {
  if (value === undefined || value === null) throw fieldError(field, `${field} is required`);
  const region = typeof value === "string" ? REGIONS.get(value) : undefined;
  if (!region) throw fieldError(field, `${field} is not valid`);
  return region;
}
