import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { parseSync } from "oxc-parser";
import { describe, expect, it } from "vitest";
import { JOB_STAGES } from "../src/pipeline/job-stages.ts";
import { ROOT } from "./helpers.ts";

/**
 * The layout's promises, checked on the static import graph of src/ (parsed with oxc, so comments
 * and strings never count): stage modules never import the runner or the
 * stage registry, only the CLI and the runner itself import the runner, and no module loads
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

  it("src/ has no import cycles at run time (the curate ↔ mixture ↔ runner circle, and any new one)", () => {
    expect(cycles(runtime)).toEqual([]);
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
