import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { parseSync } from "oxc-parser";
import { describe, expect, it } from "vitest";
import { JOB_STAGES } from "../src/pipeline/job-stages.ts";
import { ROOT } from "./helpers.ts";

/**
 * The layout's promises, checked on the static import graph of src/ (parsed with oxc, so comments
 * and strings never count): stage modules never import the runner or the
 * stage registry, only the CLI and the runner itself import the runner, the registry loads each
 * stage module on demand (a dynamic `import()` per stage, never a static one), and no module loads
 * itself back through others (a run-time import cycle makes module start-up order a hidden dependency).
 */
const SRC = join(ROOT, "src");
/** The executor: it decides where and when units run; stages never reach for it. */
const RUNNER = ["src/pipeline/run-job.ts", "src/pipeline/run-unit.ts", "src/pipeline/task-pool.ts", "src/pipeline/task-worker.ts"];
const REGISTRY = "src/pipeline/job-stages.ts";

type Graph = Map<string, string[]>;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts"))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)));
}

/**
 * Each file's relative imports: every one (`all`), and those that load a module at run time
 * (`runtime`: not type-only; erased `import type` edges cannot make start-up order matter).
 */
function importGraphs(files: readonly string[]): { all: Graph; runtime: Graph } {
  const all: Graph = new Map();
  const runtime: Graph = new Map();
  for (const file of files) {
    const { module } = parseSync(file, readFileSync(join(ROOT, file), "utf8"));
    const edges = [
      ...module.staticImports.map((entry) => ({
        to: entry.moduleRequest.value,
        runtime: entry.entries.length === 0 || entry.entries.some((e) => !e.isType),
      })),
      ...module.staticExports.flatMap((entry) =>
        entry.entries.flatMap((e) => (e.moduleRequest ? [{ to: e.moduleRequest.value, runtime: !e.isType }] : [])),
      ),
    ]
      .filter((edge) => edge.to.startsWith("."))
      .map((edge) => ({ ...edge, to: relative(ROOT, resolve(ROOT, dirname(file), edge.to)) }));
    all.set(file, [...new Set(edges.map((edge) => edge.to))]);
    runtime.set(file, [...new Set(edges.filter((edge) => edge.runtime).map((edge) => edge.to))]);
  }
  return { all, runtime };
}

/** A file's relative imports, static and dynamic (`import("…")` with a string), resolved against `file`'s folder. */
function relativeImports(file: string, source: string): { static: string[]; dynamic: string[] } {
  const { module } = parseSync(file, source);
  const resolveFrom = (specifier: string) => relative(ROOT, resolve(ROOT, dirname(file), specifier));
  const dynamic = module.dynamicImports
    .map((entry) => source.slice(entry.moduleRequest.start, entry.moduleRequest.end))
    .filter((literal) => /^["'][^"']*["']$/.test(literal))
    .map((literal) => literal.slice(1, -1));
  return {
    static: module.staticImports
      .map((entry) => entry.moduleRequest.value)
      .filter((to) => to.startsWith("."))
      .map(resolveFrom),
    dynamic: dynamic.filter((to) => to.startsWith(".")).map(resolveFrom),
  };
}

/** Stage modules (`export const xStage: JobStage`) a registry source loads statically, and those it loads on demand. */
function registryLoads(source: string, stageModules: readonly string[]): { statically: string[]; onDemand: string[] } {
  const imports = relativeImports(REGISTRY, source);
  return {
    statically: imports.static.filter((to) => stageModules.includes(to)),
    onDemand: [...new Set(imports.dynamic)].sort(),
  };
}

/** Strongly connected components of more than one file, or a file importing itself (Tarjan). */
function cycles(graph: Graph): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) as number, low.get(next) as number));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node) as number, index.get(next) as number));
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop() as string;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || (graph.get(node) ?? []).includes(node)) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

const files = [...sourceFiles(SRC), ...sourceFiles(join(ROOT, "sharding"))];
const { all: graph, runtime } = importGraphs(files);

describe("the layout keeps its promises", () => {
  it("only the CLI and the runner itself import the runner", () => {
    const offenders = [...graph].filter(
      ([file, targets]) => !file.startsWith("src/cli/") && !RUNNER.includes(file) && targets.some((target) => RUNNER.includes(target)),
    );
    expect(offenders.map(([file]) => file)).toEqual([]);
  });

  it("stage modules never import the stage registry (they register there; they do not look each other up)", () => {
    const stageModules = files.filter((file) => /export const \w+Stage: JobStage\b/.test(readFileSync(join(ROOT, file), "utf8")));
    // Every registered stage is found by that scan, so the check covers them all.
    expect(stageModules.length).toBe(JOB_STAGES.length);
    const offenders = stageModules.filter((file) => (graph.get(file) ?? []).includes(REGISTRY));
    expect(offenders).toEqual([]);
  });

  it("the registry loads every stage module on demand, and only stage modules (one dynamic import() each, no static import)", async () => {
    const stageModules = files.filter((file) => /export const \w+Stage: JobStage\b/.test(readFileSync(join(ROOT, file), "utf8")));
    const { statically, onDemand } = registryLoads(readFileSync(join(ROOT, REGISTRY), "utf8"), stageModules);
    expect(statically).toEqual([]);
    // A module that no longer exports `xStage: JobStage` (or a registry line naming another file) fails here.
    expect(onDemand).toEqual([...stageModules].sort());
    // Each entry loads a stage named as it is registered (loading checks it too).
    const loaded = await Promise.all(JOB_STAGES.map((entry) => entry.load()));
    expect(loaded.map((stage) => stage.name)).toEqual(JOB_STAGES.map((entry) => entry.name));
  });

  it("the registry check sees a static stage import and a module missing from the registry (negative control)", () => {
    const planted = [
      'import { signaturesStage } from "../curate/signatures-stage.ts";',
      'const clusters = () => import("../curate/clusters-stage.ts");',
    ].join("\n");
    const stageModules = ["src/curate/signatures-stage.ts", "src/curate/clusters-stage.ts", "src/curate/select-stage.ts"];
    const { statically, onDemand } = registryLoads(planted, stageModules);
    expect(statically).toEqual(["src/curate/signatures-stage.ts"]);
    expect(onDemand).not.toEqual([...stageModules].sort());
  });

  it("src/ has no import cycles at run time (the curate ↔ mixture ↔ runner circle, and any new one)", () => {
    expect(cycles(runtime)).toEqual([]);
  });

  it("apache-arrow's values come from src/io/arrow.ts alone (one copy of its classes; types may be imported anywhere)", () => {
    expect(arrowValueImports(files)).toEqual([]);
  });

  it("the apache-arrow check sees a value import, a dynamic import and a re-export (negative control)", () => {
    const planted = [
      'import { tableToIPC } from "apache-arrow";',
      'import type { Table } from "apache-arrow";\nconst a = await import("apache-arrow");',
      'export { tableFromIPC } from "apache-arrow";',
      'import { type Table, type Schema } from "apache-arrow";',
    ];
    expect(planted.map((source, i) => arrowValueImportsOf(`src/planted-${i}.ts`, source).length)).toEqual([1, 1, 1, 0]);
  });

  it("files of the package are found through core/package-files.ts, never import.meta.url (the bundle moves every module into dist/)", () => {
    const offenders = files
      .filter((file) => file !== "src/core/package-files.ts")
      .flatMap((file) => locationDependentCode(file, readFileSync(join(ROOT, file), "utf8")));
    expect(offenders).toEqual([]);
  });

  it("the location check sees a URL from import.meta, its dirname and a relative require (negative control)", () => {
    const planted = [
      'readFileSync(new URL("./x.wasm", import.meta.url));',
      "const dir = import.meta.dirname;",
      'const m = require("./national-id.ts");',
      'const m = createRequire(import.meta.url)("protobufjs");',
    ];
    expect(planted.map((source, i) => locationDependentCode(`src/planted-${i}.ts`, source).length)).toEqual([1, 1, 1, 0]);
  });

  it("the cycle finder finds a planted cycle and a self-import (negative control)", () => {
    const planted: Graph = new Map([
      ["a.ts", ["b.ts"]],
      ["b.ts", ["c.ts"]],
      ["c.ts", ["a.ts"]],
      ["d.ts", ["d.ts"]],
      ["e.ts", ["a.ts"]],
    ]);
    expect(cycles(planted)).toEqual([["a.ts", "b.ts", "c.ts"], ["d.ts"]]);
  });
});

/** The apache-arrow ESM build's modules (the package, not its `fb/` flatbuffers classes) a file loads at run time. */
function arrowValueImportsOf(file: string, source: string): string[] {
  const { module } = parseSync(file, source);
  const isArrow = (specifier: string) =>
    specifier === "apache-arrow" || (specifier.startsWith("apache-arrow/") && !specifier.startsWith("apache-arrow/fb/"));
  const found = [
    ...module.staticImports
      .filter((entry) => isArrow(entry.moduleRequest.value) && (entry.entries.length === 0 || entry.entries.some((e) => !e.isType)))
      .map((entry) => entry.moduleRequest.value),
    ...module.staticExports.flatMap((entry) =>
      entry.entries.flatMap((e) => (e.moduleRequest && isArrow(e.moduleRequest.value) && !e.isType ? [e.moduleRequest.value] : [])),
    ),
    ...module.dynamicImports
      .map((entry) => source.slice(entry.moduleRequest.start, entry.moduleRequest.end).replace(/^["']|["']$/g, ""))
      .filter(isArrow),
  ];
  return found.map((specifier) => `${file}: ${specifier}`);
}

function arrowValueImports(files: readonly string[]): string[] {
  return files
    .filter((file) => file !== "src/io/arrow.ts")
    .flatMap((file) => arrowValueImportsOf(file, readFileSync(join(ROOT, file), "utf8")));
}

/**
 * Code that finds a file from the module's own location: right in src/, wrong in the bundle (dist/).
 * `createRequire(import.meta.url)` of a package stays right: node_modules is above both.
 */
function locationDependentCode(file: string, source: string): string[] {
  const code = source.replaceAll("createRequire(import.meta.url)", "");
  const found = [...code.matchAll(/import\.meta\.(url|dirname|filename)|\brequire\(\s*["'`]\.\.?\//g)];
  return found.map((match) => `${file}:${code.slice(0, match.index).split("\n").length}: ${match[0]}`);
}
