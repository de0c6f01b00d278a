import assert from "node:assert/strict";
import { loadX509, servingExtensions } from "./x509.ts";

interface MetadataApi {
  defineMetadata(key: unknown, value: unknown, target: object, prop?: unknown): void;
  getMetadata(key: unknown, target: object, prop?: unknown): unknown;
  getOwnMetadata(key: unknown, target: object, prop?: unknown): unknown;
}

Deno.test("loadX509() installs Reflect metadata that inherits and keeps property keys apart", async () => {
  await loadX509();
  const reflect = Reflect as unknown as MetadataApi;
  class Base {}
  class Derived extends Base {}
  reflect.defineMetadata("k", "base", Base);
  reflect.defineMetadata("k", "method", Base, "m");
  assert.equal(reflect.getMetadata("k", Derived), "base");
  assert.equal(reflect.getOwnMetadata("k", Derived), undefined);
  assert.equal(reflect.getMetadata("k", Base, "m"), "method");
  assert.equal(reflect.getMetadata("other", Base), undefined);
});

Deno.test("loadX509() keeps a metadata API that was installed before it", async () => {
  await loadX509();
  const reflect = Reflect as unknown as MetadataApi;
  const ours = { ...reflect };
  // A full polyfill (reflect-metadata) loaded by someone else first.
  const theirs: MetadataApi = {
    defineMetadata: () => {},
    getMetadata: () => "theirs",
    getOwnMetadata: () => "theirs",
  };
  Object.assign(reflect, theirs);
  try {
    await loadX509();
    assert.equal(reflect.getMetadata, theirs.getMetadata);
    assert.equal(reflect.getOwnMetadata, theirs.getOwnMetadata);
  } finally {
    Object.assign(reflect, ours);
  }
});

Deno.test("servingExtensions() marks a leaf for serverAuth with IP and DNS names in order", async () => {
  const x509 = await loadX509();
  const [basic, usages, eku, san, ...rest] = servingExtensions(x509, ["127.0.0.1", "localhost", "::1"]);
  assert.ok(basic instanceof x509.BasicConstraintsExtension && !basic.ca && basic.critical);
  assert.ok(usages instanceof x509.KeyUsagesExtension && usages.critical);
  assert.equal(usages.usages, x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment);
  assert.ok(eku instanceof x509.ExtendedKeyUsageExtension);
  assert.deepEqual([...eku.usages], [x509.ExtendedKeyUsage.serverAuth]);
  assert.ok(san instanceof x509.SubjectAlternativeNameExtension);
  assert.deepEqual(san.names.toJSON(), [
    { type: "ip", value: "127.0.0.1" },
    { type: "dns", value: "localhost" },
    { type: "ip", value: "::1" },
  ]);
  assert.deepEqual(rest, []);
});
