/**
 * Child of `bench/import_floor.ts`: imports the client libraries named in its arguments (`kube`, `linode`),
 * exactly as the CCM's modules import them, says `ready` on stdout and idles until killed, so its resident
 * memory is what the runtime and those libraries hold before any CCM code runs.
 */
const wanted = new Set(Deno.args);
if (wanted.has("kube")) await import("@kubernetes/client-node");
if (wanted.has("linode")) await import("@linode/api-v4");
// Let start-up garbage go the way it goes in the CCM (no forced GC: the flags are the CCM's).
await new Promise((resolve) => setTimeout(resolve, 3_000));
console.log("ready");
setInterval(() => {}, 60_000);
