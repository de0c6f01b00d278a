/**
 * Watch events into client-node models. A watch delivers wire JSON (timestamps as strings); a list delivers
 * models (timestamps as Dates): an informer holds both, so it decodes watched objects into the same models.
 * client-node's public way, `loadYaml`, wants text: the informer used to turn each parsed event back into
 * JSON text and parse that as YAML, which cost 10 times the decoding itself (bench/informer_decode.ts). The
 * serializer `loadYaml` ends with is not exported from the package's index, so it is imported from its file;
 * decode_test.ts fails, naming this file, if an upgrade moves or changes it.
 */
import { ObjectSerializer } from "@kubernetes/client-node/dist/serializer.js";
import { getSerializationType } from "@kubernetes/client-node/dist/util.js";

/** The model of a parsed wire object of `apiVersion`/`kind`, as `loadYaml` would build it from its text. */
export function fromWire<T>(raw: unknown, apiVersion: string, kind: string): T {
  const obj = { ...(raw as object), apiVersion, kind };
  return ObjectSerializer.deserialize(obj, getSerializationType(apiVersion, kind)) as T;
}
