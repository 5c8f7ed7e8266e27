import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  FIXED_GROWTH_INPUT_BYTES,
  HEAP_GROWING_PERCENT,
  heapGrowthFlag,
  mallocEnv,
  relaunchFlags,
  SEMI_SPACE_MB,
  YOUNG_GENERATION_MB,
} from "../src/core/process-memory.ts";
import { DEMO_CONFIG, ROOT, tempDir, writeConfig } from "./helpers.ts";

// The launcher's process settings (src/core/process-memory.ts), seen from inside the processes
// and threads it ends up running: a preload reports each one.
const NODE = join(ROOT, "node_modules/.bin/node");
const CLI = join(ROOT, "bin/lwm-data.js");
const REPORTER = join(ROOT, "test/support/process-report.ts");

interface Report {
  pid: number;
  mainThread: boolean;
  execArgv: string[];
  mallocArenaMax: string | null;
  mallocMmapThreshold: string | null;
  compileCache: string | null;
  youngGenerationMb: number | null;
}

function reports(args: string[], env: NodeJS.ProcessEnv = {}, nodeFlags: string[] = []): { lines: Report[]; stdout: string } {
  const file = join(tempDir(), "report.jsonl");
  const base = { ...process.env };
  for (const key of ["MALLOC_ARENA_MAX", "MALLOC_MMAP_THRESHOLD_", "NODE_OPTIONS", "NODE_COMPILE_CACHE"]) delete base[key];
  const stdout = execFileSync(NODE, ["--import", REPORTER, ...nodeFlags, CLI, ...args], {
    env: { ...base, ...env, LWM_PROCESS_REPORT: file },
    encoding: "utf8",
  });
  const lines = readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Report);
  return { lines, stdout };
}

const semiSpace = `--max-semi-space-size=${SEMI_SPACE_MB}`;
const heapGrowing = `--heap-growing-percent=${HEAP_GROWING_PERCENT}`;
// Per core (this machine's): one malloc arena and one V8 platform thread each, at least 2 and 4.
const cores = availableParallelism();
const v8Pool = `--v8-pool-size=${Math.max(4, cores)}`;
const arenas = String(Math.max(2, cores));

describe("per-core settings", () => {
  it("scale with the cores, never below malloc's two arenas or Node's four V8 threads", () => {
    expect(mallocEnv(1).MALLOC_ARENA_MAX).toBe("2");
    expect(mallocEnv(16).MALLOC_ARENA_MAX).toBe("16");
    expect(relaunchFlags([], 2, "")).toContain("--v8-pool-size=4");
    expect(relaunchFlags([], 16, "")).toContain("--v8-pool-size=16");
    // The user's own pool size, on the command line or in NODE_OPTIONS, wins.
    expect(relaunchFlags(["--v8-pool-size=3"], 16, "").filter((f) => f.startsWith("--v8-pool-size"))).toEqual([]);
    expect(relaunchFlags([], 16, "--v8-pool-size=3").filter((f) => f.startsWith("--v8-pool-size"))).toEqual([]);
  });

  it("the fixed heap growth is for a large job only, and never over the user's own", () => {
    expect(relaunchFlags([], 2, "").filter((f) => f.startsWith("--heap-growing-percent"))).toEqual([]);
    expect(heapGrowthFlag(FIXED_GROWTH_INPUT_BYTES, [], "")).toBe(heapGrowing);
    expect(heapGrowthFlag(FIXED_GROWTH_INPUT_BYTES - 1, [], "")).toBeUndefined();
    expect(heapGrowthFlag(FIXED_GROWTH_INPUT_BYTES, ["--heap-growing-percent=50"], "")).toBeUndefined();
  });
});

describe("launcher process settings", () => {
  it("re-executes in place once, with the semi-space cap, the V8 pool and the malloc settings", () => {
    const { lines, stdout } = reports(["plan", DEMO_CONFIG]);
    expect(lines).toHaveLength(2);
    const [first, final] = lines as [Report, Report];
    expect(first.execArgv).not.toContain(semiSpace);
    // Same pid: replaced, not a child; the preload (--import) survives the re-exec.
    expect(final.pid).toBe(first.pid);
    expect(final.execArgv).toEqual(["--import", REPORTER, semiSpace, v8Pool]);
    expect(final).toMatchObject({ mallocArenaMax: arenas, mallocMmapThreshold: "131072" });
    // The command ran once.
    expect(stdout.match(/task\(s\) over/g)).toHaveLength(1);
  });

  it("leaves the user's own settings alone", () => {
    const own = reports(["plan", DEMO_CONFIG], { MALLOC_ARENA_MAX: "8" }).lines.at(-1);
    expect(own).toMatchObject({ mallocArenaMax: "8", mallocMmapThreshold: "131072" });
    // A semi-space size of their own: no re-exec at all.
    const flagged = reports(["plan", DEMO_CONFIG], { NODE_OPTIONS: "--max-semi-space-size=32" }).lines;
    expect(flagged).toHaveLength(1);
    expect(flagged[0]).toMatchObject({ mallocArenaMax: null });
    // A heap growth of their own: re-executed with theirs, not ours.
    const growing = reports(["plan", DEMO_CONFIG], {}, ["--heap-growing-percent=50"]).lines.at(-1);
    expect(growing?.execArgv).toEqual(["--import", REPORTER, "--heap-growing-percent=50", semiSpace, v8Pool]);
  });

  it("caps every pool thread's young generation the same way, and hands it the compile cache", () => {
    const dir = tempDir();
    const config = writeConfig(
      [
        "inputs:",
        `  - path: ${join(ROOT, "data/demo/search/agent-trace.jsonl")}`,
        `  - path: ${join(ROOT, "data/demo/mcp/everything-agentworldbench.jsonl")}`,
        "input:",
        "  task_bytes: 4096",
        "output:",
        `  dir: ${join(dir, "out")}`,
      ].join("\n"),
      dir,
    );
    const { lines } = reports(["run", config, "--workers", "2", "--progress", "none"]);
    const threads = lines.filter((line) => !line.mainThread);
    expect(threads.length).toBeGreaterThanOrEqual(1);
    for (const thread of threads) {
      expect(thread).toMatchObject({ youngGenerationMb: YOUNG_GENERATION_MB, mallocArenaMax: "2" });
      expect(thread.compileCache).toBeTruthy();
    }
  });
});
