/**
 * No import circles in the repository, type-only imports included: a circle means two modules that cannot be
 * read, tested or moved apart. The graph is Deno's own (`deno info --json`), so it resolves every import the
 * way the runtime and the type checker do.
 */
import assert from "node:assert/strict";
import { relative } from "node:path";
import { fileURLToPath as fromFileUrl, pathToFileURL } from "node:url";

const ROOT = fromFileUrl(new URL("../", import.meta.url));
const SKIPPED = new Set(["node_modules", "dist", "coverage", ".git"]);

/** Every `.ts` file under `dir`, outside the folders that are not the project's sources. */
function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(dir)) {
    if (SKIPPED.has(e.name)) continue;
    const path = `${dir}/${e.name}`.replace("//", "/");
    if (e.isDirectory) out.push(...tsFiles(path));
    else if (e.isFile && e.name.endsWith(".ts")) out.push(path);
  }
  return out;
}

interface InfoDependency {
  code?: { specifier?: string };
  type?: { specifier?: string };
}

interface InfoModule {
  specifier: string;
  dependencies?: InfoDependency[];
}

/** The repository's module graph: file → the repository files it imports (code or type). */
async function moduleGraph(): Promise<Map<string, string[]>> {
  const rootUrl = pathToFileURL(ROOT).href;
  const entry = await Deno.makeTempFile({ suffix: ".ts" });
  try {
    // One entry importing every file: a single `deno info` walks the whole graph (well under a second).
    const lines = tsFiles(ROOT).map((f) => `import ${JSON.stringify(pathToFileURL(f).href)};`);
    await Deno.writeTextFile(entry, lines.join("\n") + "\n");
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", "--config", `${ROOT}deno.json`, entry],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    const info = JSON.parse(new TextDecoder().decode(out.stdout)) as { modules: InfoModule[] };
    const inRepo = (s: string | undefined): s is string => s !== undefined && s.startsWith(rootUrl);
    const graph = new Map<string, string[]>();
    for (const m of info.modules) {
      if (!inRepo(m.specifier)) continue;
      const deps = (m.dependencies ?? []).flatMap((d) => [d.code?.specifier, d.type?.specifier]);
      graph.set(m.specifier, [...new Set(deps.filter(inRepo))]);
    }
    return graph;
  } finally {
    await Deno.remove(entry);
  }
}

/** The strongly connected components with more than one module (or a module importing itself): Tarjan. */
function circles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v) ?? 0);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (let w = stack.pop(); w !== undefined; w = w === v ? undefined : stack.pop()) {
      onStack.delete(w);
      component.push(w);
    }
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

Deno.test("circles() finds a two-module circle and a self-import, and nothing in a tree", () => {
  const graph = new Map([["a", ["b"]], ["b", ["a", "c"]], ["c", []], ["d", ["d"]], ["e", ["c"]]]);
  assert.deepEqual(circles(graph), [["a", "b"], ["d"]]);
});

Deno.test("no module of the repository takes part in an import circle (type-only imports included)", async () => {
  const graph = await moduleGraph();
  assert.ok(graph.size > 100, `the graph holds every module (${graph.size})`);
  const named = circles(graph).map((c) => c.map((m) => relative(ROOT, fromFileUrl(m))).join(" <-> "));
  assert.deepEqual(named, [], "import circles");
});
