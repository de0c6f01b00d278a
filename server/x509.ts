/**
 * The one door to `npm:@peculiar/x509`: loads it after the `Reflect` metadata shim it needs, and builds
 * the extensions every serving certificate carries. Used by `tls.ts` and the kube emulator's `sim/kube/tls.ts`.
 */
// A type-only import is erased: it does not evaluate the package before the shim is in place.
import type { Extension } from "@peculiar/x509";
import { isIpAddress } from "../common/net.ts";

/** The `@peculiar/x509` module, as `loadX509` hands it out. */
export type X509 = typeof import("@peculiar/x509");

type MetadataStore = WeakMap<object, Map<string, Map<unknown, unknown>>>;

/**
 * `@peculiar/x509` resolves its algorithms through tsyringe, which refuses to load without the
 * `Reflect` metadata API (deno.json does not pin `npm:reflect-metadata`). This installs the three
 * functions tsyringe calls, only where they are missing; a full polyfill loaded earlier takes precedence.
 * `Reflect.decorate` and `Reflect.metadata` stay absent on purpose: tslib's decorators then keep their
 * own code path.
 */
function installReflectMetadata(): void {
  const reflect = Reflect as unknown as Record<string, unknown>;
  if (typeof reflect.getMetadata === "function") return;
  const store: MetadataStore = new WeakMap();
  const table = (target: object, prop: unknown, create: boolean) => {
    let byProp = store.get(target);
    if (!byProp && create) store.set(target, byProp = new Map());
    const slot = String(prop ?? "");
    let entries = byProp?.get(slot);
    if (byProp && !entries && create) byProp.set(slot, entries = new Map());
    return entries;
  };
  const getOwn = (key: unknown, target: object, prop?: unknown) => table(target, prop, false)?.get(key);
  const get = (key: unknown, target: object, prop?: unknown): unknown => {
    for (let t: object | null = target; t; t = Object.getPrototypeOf(t)) {
      const entries = table(t, prop, false);
      if (entries?.has(key)) return entries.get(key);
    }
    return undefined;
  };
  const define = (key: unknown, value: unknown, target: object, prop?: unknown) => {
    table(target, prop, true)?.set(key, value);
  };
  Object.assign(reflect, { getMetadata: get, getOwnMetadata: getOwn, defineMetadata: define });
}

/**
 * Loads `@peculiar/x509` on first use only, so starts that never make a certificate never pay for it.
 * The import must stay dynamic: a static one would evaluate tsyringe before the shim is installed.
 */
export async function loadX509(): Promise<X509> {
  installReflectMetadata();
  return await import("@peculiar/x509");
}

/**
 * The extensions of a leaf serving certificate: critical CA:false, critical digitalSignature and
 * keyEncipherment, serverAuth, and a SAN of `hosts` in their order.
 */
export function servingExtensions(x509: X509, hosts: readonly string[]): Extension[] {
  return [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(
      x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
      true,
    ),
    new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
    new x509.SubjectAlternativeNameExtension(
      hosts.map((h) => ({ type: isIpAddress(h) ? "ip" as const : "dns" as const, value: h })),
    ),
  ];
}
