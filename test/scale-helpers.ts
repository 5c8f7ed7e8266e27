import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { expect } from "vitest";
import { ROOT, tempDir, writeConfig } from "./helpers.ts";

/**
 * A deterministic canonical JSONL corpus: terminal-like trajectories of varied length, some echo
 * turns. A `cat` observation holds 2 to `maxFunctions` small functions.
 */
export function writeCorpus(path: string, count: number, seed = 1, maxFunctions = 31): string[] {
  let state = seed;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
  const ids: string[] = [];
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const id = `t${seed}-${i}`;
    ids.push(id);
    const turns = Array.from({ length: 1 + Math.floor(next() * 4) }, (_, t) => {
      const file = `src/module_${Math.floor(next() * 50)}.py`;
      const kind = next();
      if (kind < 0.2) return { action: `cd ${file.slice(0, 3)}`, observation: "" };
      if (kind < 0.35) return { action: `echo step ${t}`, observation: `step ${t}\n` };
      const body = Array.from(
        { length: 2 + Math.floor(next() * (maxFunctions - 1)) },
        (_, l) => `def f_${i}_${l}(x):\n    return x * ${Math.floor(next() * 1000)}`,
      );
      return { action: `cat ${file}`, observation: body.join("\n") };
    });
    lines.push(JSON.stringify({ id, domain: "terminal", task: `inspect module ${i}`, turns }));
  }
  writeFileSync(path, `${lines.join("\n")}\n`);
  return ids;
}

/** Every file under a folder (relative path → bytes), for byte-for-byte comparison of two outputs. */
export function snapshot(dir: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else files.set(relative(dir, path), readFileSync(path));
    }
  };
  walk(dir);
  return files;
}

/** The outputs a trainer or a person reads: shards, stats, quarantine, manifest (not task bookkeeping). */
export function products(dir: string): Map<string, Buffer> {
  return new Map([...snapshot(dir)].filter(([path]) => !path.startsWith("tasks/")));
}

export function expectSameBytes(actual: Map<string, Buffer>, expected: Map<string, Buffer>): void {
  expect([...actual.keys()].sort()).toEqual([...expected.keys()].sort());
  for (const [path, bytes] of expected) expect(actual.get(path)?.equals(bytes), path).toBe(true);
}

/** A job over the demo's terminal/MCP inputs plus a 240-trajectory JSONL: 9+ tasks, several segments each. */
export function scaleJob(): { config: string; dir: string } {
  const dir = tempDir("lwm-scale-");
  writeCorpus(join(dir, "corpus-a.jsonl"), 240, 1);
  writeCorpus(join(dir, "corpus-b.jsonl"), 60, 2);
  const config = writeConfig(
    [
      "inputs:",
      "  - path: corpus-*.jsonl",
      `  - path: ${join(ROOT, "data/demo/mcp/everything.jsonl.gz")}`,
      `  - path: ${join(ROOT, "data/demo/terminal")}/*.cast`,
      "input:",
      "  task_bytes: 40000",
      "output:",
      "  num_buckets: 3",
      "  max_shard_bytes: 8000",
      "  row_group_rows: 8",
      "",
    ].join("\n"),
    dir,
  );
  return { config, dir };
}
