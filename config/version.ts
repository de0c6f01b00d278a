/**
 * The program's version. It must equal `version` in deno.json (a test checks): the binary runs without
 * read permission on its own sources, so it cannot read deno.json at run time.
 */

/** This build's version, without a leading `v`. */
export const VERSION = "0.1.0";
