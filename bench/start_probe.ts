/**
 * Started as its own `deno run` by the capacity benchmark: starts one emulator (`linode`, `kube` or
 * `kube-tls`), writes one line once it listens (the parent times spawn → line), then stops it.
 */
import { startKubeSim, startLinodeSim } from "../sim/mod.ts";

const which = Deno.args[0];
const sim = which === "linode" ? await startLinodeSim() : await startKubeSim({ tls: which === "kube-tls" });
await Deno.stdout.write(new TextEncoder().encode(`listening ${which}\n`));
await sim.close();
