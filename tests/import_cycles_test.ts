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

/**
 * The folder of a module, as the architecture draws it: `controllers/<room>` for a controller's folder (and
 * `controllers` for the files beside them), else the top-level folder (`kube`, `cache`, …; `.` for the root).
 * Tests are left out: a test may reach across folders to drive the real code.
 */
function folderOf(path: string): string | undefined {
  if (path.endsWith("_test.ts") || path.includes("/testdata/")) return undefined;
  const parts = path.split("/");
  if (parts.length === 1) return ".";
  if (parts[0] === "controllers" && parts.length > 2) return `controllers/${parts[1]}`;
  return parts[0];
}

/** The folder graph of the product: folder → the folders its modules import. */
function folderGraph(modules: ReadonlyMap<string, readonly string[]>): Map<string, string[]> {
  const graph = new Map<string, Set<string>>();
  for (const [from, targets] of modules) {
    const a = folderOf(relative(ROOT, fromFileUrl(from)));
    if (a === undefined) continue;
    const out = graph.get(a) ?? new Set<string>();
    graph.set(a, out);
    for (const to of targets) {
      const b = folderOf(relative(ROOT, fromFileUrl(to)));
      if (b !== undefined && b !== a) out.add(b);
    }
  }
  return new Map([...graph].map(([k, v]) => [k, [...v]]));
}

Deno.test("folderOf() draws controllers' rooms apart and leaves tests out", () => {
  assert.equal(folderOf("controllers/route/plan.ts"), "controllers/route");
  assert.equal(folderOf("controllers/provider_id.ts"), "controllers");
  assert.equal(folderOf("kube/informer.ts"), "kube");
  assert.equal(folderOf("ccm.ts"), ".");
  assert.equal(folderOf("kube/informer_test.ts"), undefined);
  assert.equal(folderOf("kube/testdata/fixtures.ts"), undefined);
});

Deno.test("no folder of the product takes part in an import circle (type-only imports included)", async () => {
  const folders = folderGraph(await moduleGraph());
  assert.ok(folders.has("controllers/loop") && folders.has("common"), [...folders.keys()].join(", "));
  const named = circles(folders).map((c) => {
    const edges = c.flatMap((a) =>
      (folders.get(a) ?? []).filter((b) => c.includes(b)).map((b) => `${a} -> ${b}`)
    );
    return edges.join(", ");
  });
  assert.deepEqual(named, [], "folder circles");
});
