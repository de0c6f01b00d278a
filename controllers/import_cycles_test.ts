import assert from "node:assert/strict";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = dirname(fileURLToPath(import.meta.url));
/** Static imports and re-exports, type-only ones included (the house style counts those too). */
const SPECIFIER =
  /(?:^|\n)\s*(?:import|export)\s[^;]*?\sfrom\s*["'](\.{1,2}\/[^"']+)["']|(?:^|\n)\s*import\s*["'](\.{1,2}\/[^"']+)["']/g;

/** Relative imports of every .ts file under `dir`, keyed by path relative to `dir`. */
async function importGraph(dir: string): Promise<Map<string, string[]>> {
  const graph = new Map<string, string[]>();
  async function walk(at: string): Promise<void> {
    for await (const entry of Deno.readDir(at)) {
      const path = join(at, entry.name);
      if (entry.isDirectory) await walk(path);
      else if (entry.name.endsWith(".ts")) {
        const text = await Deno.readTextFile(path);
        const targets = [...text.matchAll(SPECIFIER)].map((m) =>
          normalize(join(dirname(path), m[1] ?? m[2] ?? ""))
        );
        graph.set(relative(dir, path), targets.map((t) => relative(dir, t)));
      }
    }
  }
  await walk(dir);
  return graph;
}

/** Every circle of imports (strongly connected set of more than one file, or a file importing itself). */
function findCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const set: string[] = [];
    for (let w = stack.pop(); w !== undefined; w = w === v ? undefined : stack.pop()) set.push(w);
    if (set.length > 1 || graph.get(v)?.includes(v)) cycles.push(set.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

Deno.test("findCycles() finds a circle, a self-import and none in a chain", () => {
  const graph = new Map([["a.ts", ["b.ts"]], ["b.ts", ["c.ts"]], ["c.ts", ["a.ts"]], ["d.ts", ["d.ts"]], [
    "e.ts",
    ["a.ts"],
  ]]);
  assert.deepEqual(findCycles(graph), [["a.ts", "b.ts", "c.ts"], ["d.ts"]]);
  assert.deepEqual(findCycles(new Map([["a.ts", ["b.ts"]], ["b.ts", []]])), []);
});

Deno.test("controllers/ has no import circle, type-only imports included", async () => {
  const graph = await importGraph(ROOT);
  assert.ok(graph.has("service/controller.ts") && graph.has("service/annotations/parse.ts"));
  assert.deepEqual(findCycles(graph), []);
});

Deno.test("controllers/service/ imports down the pipeline only: annotations ← firewall, tls ← ownership ← nodebalancer ← read ← decide ← apply ← cleanup ← controller", async () => {
  const graph = await importGraph(join(ROOT, "service"));
  const rooms: Record<string, string[]> = {
    annotations: ["annotations"],
    firewall: ["firewall", "annotations"],
    tls: ["tls", "annotations"],
    "ownership.ts": ["annotations"],
    nodebalancer: ["nodebalancer", "annotations", "firewall", "tls", "ownership.ts"],
  };
  // The stages, in pipeline order: each imports the rooms and the stages before it.
  const stages = ["read.ts", "decide.ts", "apply.ts", "cleanup.ts", "controller.ts"];
  const allowed: Record<string, string[]> = { ...rooms };
  stages.forEach((stage, i) => allowed[stage] = [...Object.keys(rooms), ...stages.slice(0, i)]);
  const wrong: string[] = [];
  const unplaced: string[] = [];
  for (const [file, targets] of graph) {
    const room = file.split("/")[0] ?? "";
    const ok = allowed[room];
    if (file.endsWith("_test.ts") || room === "testdata") continue;
    if (!ok) {
      unplaced.push(file);
      continue;
    }
    for (const target of targets) {
      if (target.startsWith("..")) continue;
      if (!ok.includes(target.split("/")[0] ?? "")) wrong.push(`${file} → ${target}`);
    }
  }
  assert.deepEqual(unplaced, [], "every product file has a place in the pipeline");
  assert.deepEqual(wrong, []);
});
