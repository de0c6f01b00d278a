/**
 * Hostile input, drawn from a seeded generator: annotation values of every shape a user (or a broken tool)
 * can write, malformed TLS Secrets, odd providerIDs and label sets at the apiserver's limits.
 */
import { annotationKey, ANNOTATIONS } from "../../controllers/service/annotations/table.ts";

type Random = () => number;

function pick<T>(random: Random, items: readonly T[]): T {
  const item = items[Math.floor(random() * items.length)];
  if (item === undefined) throw new RangeError("pick() from an empty list");
  return item;
}

function randomText(random: Random, length: number, alphabet: string): string {
  let out = "";
  for (let i = 0; i < length; i++) out += alphabet[Math.floor(random() * alphabet.length)] ?? "";
  return out;
}

const PRINTABLE =
  "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -_.,:;/\\{}[]\"'=+*&^%$#@!~`|<>?";

/** Value generators; each yields something a parser must either accept or reject with a message. */
const SHAPES: readonly ((random: Random) => string)[] = [
  () => "",
  () => "   ",
  (r) => String(Math.floor(r() * 1e6) - 5e5),
  (r) => String(r() * 1e3),
  (r) => pick(r, ["NaN", "Infinity", "-0", "1e309", "0x1F", "007", "9".repeat(40)]),
  (r) => pick(r, ["true", "false", "TRUE", "yes", "no", "1", "0", "t", "F", "maybe"]),
  (r) =>
    pick(r, [
      "tcp",
      "udp",
      "http",
      "https",
      "TCP",
      "h2",
      "none",
      "v1",
      "v2",
      "v3",
      "roundrobin",
      "ring_hash",
    ]),
  (r) =>
    pick(r, [
      "10.0.0.0/8",
      "10.100.0.0/30",
      "300.1.1.1/24",
      "fd00::/64",
      "10.0.0.0/33",
      "::/0",
      "/",
      "1.2.3.4",
    ]),
  (r) => pick(r, ["{}", "[]", "null", "{", '{"protocol":', '{"protocol":"https","tls-secret-name":""}']),
  (r) =>
    JSON.stringify({
      protocol: pick(r, ["https", "tcp", "x"]),
      "tls-secret-name": randomText(r, 8, PRINTABLE),
    }),
  (r) => JSON.stringify({ ipv4: [randomText(r, 12, PRINTABLE)], ipv6: 5, allowList: null }),
  (r) => randomText(r, 1 + Math.floor(r() * 40), PRINTABLE),
  (r) => randomText(r, 10_000 + Math.floor(r() * 20_000), PRINTABLE),
  () => "\u0000\u0001\u0007\u001b[31m",
  () => "日本語,ünïcödé,😀,\u202e",
  (r) => Array.from({ length: 50 }, () => randomText(r, 3 + Math.floor(r() * 60), "abcxyz-_")).join(","),
];

/** One random value of a random shape. */
export function hostileValue(random: Random): string {
  return pick(random, SHAPES)(random);
}

/** The annotation names a Service may carry, with `port-<N>` made concrete for its port. */
function annotationNames(port: number): string[] {
  return ANNOTATIONS.map((a) => (a.name === "port-<N>" ? `port-${port}` : a.name))
    // A valid id that happens to name another Service's NodeBalancer would move the Service there, which is
    // the annotation's meaning, not a fault: the draws below keep ids far from the emulator's.
    .filter((name) => name !== "nodebalancer-id");
}

/** One to four Service annotations with hostile values (plus, sometimes, a far-away `nodebalancer-id`). */
export function hostileAnnotations(random: Random, port: number): Record<string, string> {
  const names = annotationNames(port);
  const out: Record<string, string> = {};
  const count = 1 + Math.floor(random() * 4);
  for (let i = 0; i < count; i++) out[annotationKey(pick(random, names))] = hostileValue(random);
  if (random() < 0.1) {
    out[annotationKey("nodebalancer-id")] = String(900_000_000 + Math.floor(random() * 1e6));
  }
  return out;
}

/** ProviderIDs kubelet may be given that name no Linode the CCM may touch. */
export const ODD_PROVIDER_IDS: readonly string[] = [
  "linode://",
  "linode://abc",
  "linode://-5",
  "linode://0",
  "linode://99999999999999999999",
  "linode:///123",
  "LINODE://123",
  " linode://123",
  "linode://123/extra",
  "linode://１２３",
  "aws:///us-east-1a/i-0abcdef",
  "gce://project/zone/instance",
  "kind://docker/kind/kind-control-plane",
];

/** Labels at the apiserver's limits: `count` keys with a 253-character prefix and 63-character names and values. */
export function hugeLabels(random: Random, count: number): Record<string, string> {
  const prefix = Array.from({ length: 4 }, () => randomText(random, 62, "abcdefghijklmnopqrstuvwxyz")).join(
    ".",
  )
    .slice(0, 253);
  const labels: Record<string, string> = {};
  for (let i = 0; i < count; i++) {
    const name = `n${i}${randomText(random, 60, "abcdefghijklmnopqrstuvwxyz0123456789")}`.slice(0, 63);
    labels[`${prefix}/${name}`] = `v${randomText(random, 62, "abcdefghijklmnopqrstuvwxyz0123456789")}`;
  }
  return labels;
}

/**
 * Broken TLS Secret data (base64, as stored), given a real certificate and key in PEM. Stored as `Opaque`
 * Secrets: the apiserver refuses a `kubernetes.io/tls` Secret without both keys (and any invalid base64).
 */
export function malformedTlsData(
  pem: { certPem: string; keyPem: string },
  other: { keyPem: string },
): { name: string; data: Record<string, string>; quietWhenServed?: boolean }[] {
  const b64 = (s: string) => btoa(s);
  return [
    { name: "no key", data: { "tls.crt": b64(pem.certPem) } },
    { name: "no certificate", data: { "tls.key": b64(pem.keyPem) } },
    { name: "not PEM", data: { "tls.crt": b64("hello"), "tls.key": b64("world") } },
    { name: "swapped", data: { "tls.crt": b64(pem.keyPem), "tls.key": b64(pem.certPem) } },
    // The certificate is the one the NodeBalancer serves (same fingerprint): nothing to send, nothing to say.
    {
      name: "mismatched key",
      data: { "tls.crt": b64(pem.certPem), "tls.key": b64(other.keyPem) },
      quietWhenServed: true,
    },
    { name: "truncated", data: { "tls.crt": b64(pem.certPem.slice(0, 80)), "tls.key": b64(pem.keyPem) } },
    { name: "huge", data: { "tls.crt": b64("A".repeat(600_000)), "tls.key": b64(pem.keyPem) } },
    { name: "empty", data: {} },
  ];
}
