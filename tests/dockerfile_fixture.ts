/** A Dockerfile read the way the image test needs it: stages, their instructions, ARG defaults, .dockerignore. */

/** One instruction, continuation lines joined. */
export interface Instruction {
  readonly keyword: string;
  readonly args: string;
}

/** One `FROM` stage. */
export interface Stage {
  readonly from: string;
  readonly name: string | undefined;
  readonly instructions: readonly Instruction[];
  /** `ARG NAME=default` values declared in the stage. */
  readonly args: ReadonlyMap<string, string>;
}

/** Splits a Dockerfile into stages of instructions (comments dropped, `\` continuations joined). */
export function parseDockerfile(text: string): Stage[] {
  const logical: string[] = [];
  let current = "";
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (current === "" && (line === "" || line.startsWith("#"))) continue;
    if (line.startsWith("#")) continue;
    current += (current ? " " : "") + line.replace(/\\$/, "").trim();
    if (!line.endsWith("\\")) {
      logical.push(current);
      current = "";
    }
  }
  const stages: {
    from: string;
    name: string | undefined;
    instructions: Instruction[];
    args: Map<string, string>;
  }[] = [];
  for (const line of logical) {
    const [keyword = "", ...rest] = line.split(/\s+/);
    const args = rest.join(" ");
    if (keyword.toUpperCase() === "FROM") {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args);
      stages.push({ from: m?.[1] ?? args, name: m?.[2], instructions: [], args: new Map() });
      continue;
    }
    const stage = stages.at(-1);
    if (!stage) throw new TypeError(`"${keyword}" before the first FROM`);
    stage.instructions.push({ keyword: keyword.toUpperCase(), args });
    if (keyword.toUpperCase() === "ARG") {
      const m = /^(\w+)=(?:"([^"]*)"|(\S*))$/.exec(args);
      if (m?.[1]) stage.args.set(m[1], m[2] ?? m[3] ?? "");
    }
  }
  return stages;
}

/** A `COPY` instruction's `--from` stage, sources and destination. */
export function copyParts(args: string): { from: string | undefined; sources: string[]; dest: string } {
  const words = args.split(/\s+/);
  const from = words.find((w) => w.startsWith("--from="))?.slice("--from=".length);
  const paths = words.filter((w) => !w.startsWith("--"));
  return { from, sources: paths.slice(0, -1), dest: paths.at(-1) ?? "" };
}

/** Whether `.dockerignore` patterns (plain paths and `dir/...` prefixes, as used here) exclude `path`. */
export function isIgnored(patterns: readonly string[], path: string): boolean {
  const clean = path.replace(/^\.\//, "").replace(/\/$/, "");
  return patterns.some((p) => clean === p || clean.startsWith(`${p}/`));
}

/** The patterns of a `.dockerignore` file. */
export function dockerignore(text: string): string[] {
  return text.split("\n").map((l) => l.trim()).filter((l) => l !== "" && !l.startsWith("#"));
}

/** Basenames of the libraries `ldd` reports for a binary (with a path; the vDSO has none). */
export function linkedLibraries(lddOutput: string): string[] {
  const libs: string[] = [];
  for (const line of lddOutput.split("\n")) {
    const m = /=>\s+(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
    if (m?.[1]) libs.push(m[1].split("/").at(-1) ?? "");
  }
  return libs.sort();
}
