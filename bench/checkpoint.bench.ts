/**
 * Checkpoints between segment cuts (output.checkpoint, src/write/segment-journal.ts), one run,
 * side by side on one single-task job (the case the journal exists for: a task whose shards never
 * fill, so its only cut is its end):
 *   - baseline: `output.checkpoint: { seconds: 0, records: 0 }` (no journal, checkpoints at cuts);
 *   - the default (journal on, a checkpoint every 30 s) and a checkpoint every 500 records:
 *     CPU-s and peak RSS against the baseline;
 *   - a stop half-way (SIGTERM at half a full run's wall time) and the rerun: the rerun's
 *     CPU-s against a full run's (what resuming saves), and the journal's size at the stop
 *     against the finished shards'.
 * Results: bench/results/checkpoint.json, a table on stdout and in docs/benchmarks.md.
 *
 *   node bench/checkpoint.bench.ts [--bytes 40MB] [--quick] [--repeat N]
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { replaceDocsSection, writeResultsJson } from "./bench-files.ts";
import { ROOT } from "./pipeline/runners.ts";
import { timed } from "./pipeline/timed.ts";
import { generateCorpus, parseBytes } from "./synthetic/generate.ts";

const { values } = parseArgs({
  options: {
    bytes: { type: "string", default: "40MB" },
    quick: { type: "boolean", default: false },
    repeat: { type: "string", default: "1" },
  },
});
// --quick (CI): small, but long enough that the half-way stop comes before the end.
const bytes = values.quick ? 6e6 : parseBytes(values.bytes);
const repeat = Number(values.repeat);
const NODE = join(ROOT, "node_modules/.bin/node");
const CLI = join(ROOT, "bin/lwm-data.js");
const scratch = mkdtempSync(join(tmpdir(), "lwm-bench-checkpoint-"));

function config(name: string, checkpoint: string): string {
  const path = join(scratch, `${name}.yaml`);
  const lines = [
    "inputs:",
    `  - path: ${scratch}/corpus/*.jsonl`,
    "    format: canonical-jsonl",
    "input:",
    `  task_bytes: ${bytes * 2}`,
    "output:",
    `  checkpoint: ${checkpoint}`,
  ];
  writeFileSync(path, `${lines.join("\n")}\n`);
  return path;
}

const run = (path: string, out: string) =>
  timed(NODE, [CLI, "run", path, "-o", out, "--workers", "1", "--progress", "none"], { cwd: ROOT });

const filesBytes = (dir: string) => (existsSync(dir) ? readdirSync(dir).reduce((sum, name) => sum + statSync(join(dir, name)).size, 0) : 0);

/** Runs the job and sends SIGTERM after `seconds` (half a full run's wall time); where the task stopped, and its journal's bytes then. */
async function stopHalfWay(path: string, out: string, seconds: number): Promise<{ items: number; journalBytes: number }> {
  const child = spawn(NODE, [CLI, "run", path, "-o", out, "--workers", "1", "--progress", "none"], { cwd: ROOT, stdio: "ignore" });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const timer = setTimeout(() => child.kill("SIGTERM"), seconds * 1000);
  const code = await exited;
  clearTimeout(timer);
  if (code !== 143) throw new Error(`the half-way run ended with ${code}, not 143 (stopped)`);
  const state = JSON.parse(readFileSync(join(out, "tasks/task-00000.checkpoint.json"), "utf8")) as { items: number };
  // The journal and the held file beside it.
  const tasks = join(out, "tasks");
  const journalBytes = readdirSync(tasks)
    .filter((name) => name.startsWith("task-00000.journal"))
    .reduce((sum, name) => sum + statSync(join(tasks, name)).size, 0);
  return { items: state.items, journalBytes };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const cpu = (t: { cpuS: number | undefined; wallS: number }) => t.cpuS ?? t.wallS;

const corpus = generateCorpus({ dir: join(scratch, "corpus"), bytes, seed: 1 });
const off = config("off", "{ seconds: 0, records: 0 }");
const byDefault = config("default", "{ seconds: 30, records: 0 }");
const every500 = config("every-500", "{ seconds: 0, records: 500 }");

interface Pass {
  baseline: { cpu_s: number; rss_mb: number | undefined };
  default: { cpu_s: number; rss_mb: number | undefined };
  every_500: { cpu_s: number; rss_mb: number | undefined };
  resume: { stopped_at: number; journal_bytes: number; shard_bytes: number; full_cpu_s: number; rerun_cpu_s: number };
}
const passes: Pass[] = [];
for (let pass = 0; pass < repeat; pass++) {
  const out = (name: string) => join(scratch, `out-${name}-${pass}`);
  const baseline = run(off, out("off"));
  const withDefault = run(byDefault, out("default"));
  const withEvery500 = run(every500, out("every-500"));
  // The stop checkpoints where it lands, whatever the interval: the default settings.
  const stopped = await stopHalfWay(byDefault, out("resumed"), withDefault.wallS / 2);
  const rerun = run(byDefault, out("resumed"));
  passes.push({
    baseline: { cpu_s: cpu(baseline), rss_mb: baseline.maxRssMb },
    default: { cpu_s: cpu(withDefault), rss_mb: withDefault.maxRssMb },
    every_500: { cpu_s: cpu(withEvery500), rss_mb: withEvery500.maxRssMb },
    resume: {
      stopped_at: stopped.items,
      journal_bytes: stopped.journalBytes,
      shard_bytes: filesBytes(join(out("default"), "data")),
      full_cpu_s: cpu(withDefault),
      rerun_cpu_s: cpu(rerun),
    },
  });
  for (const name of ["off", "default", "every-500", "resumed"]) rmSync(out(name), { recursive: true, force: true });
}

const ratio = (pick: (p: Pass) => number) => median(passes.map(pick));
const results = {
  corpus: { bytes: corpus.bytes, trajectories: corpus.trajectories, tasks: 1 },
  repeat,
  passes,
  medians: {
    default_cpu_vs_off: ratio((p) => p.default.cpu_s / p.baseline.cpu_s),
    every_500_cpu_vs_off: ratio((p) => p.every_500.cpu_s / p.baseline.cpu_s),
    rerun_cpu_vs_full: ratio((p) => p.resume.rerun_cpu_s / p.resume.full_cpu_s),
    left_after_stop: ratio((p) => 1 - p.resume.stopped_at / corpus.trajectories),
    journal_vs_shards: ratio((p) => p.resume.journal_bytes / p.resume.shard_bytes),
  },
};
const x = (v: number) => `${v.toFixed(2)}×`;
const table = [
  `One task of ${(corpus.bytes / 1e6).toFixed(1)} MB (${corpus.trajectories} trajectories), 1 worker, median of ${repeat} pass(es); ` +
    `the stop came after ${passes.map((p) => p.resume.stopped_at).join(", ")} trajectories:`,
  "",
  "| measure | ratio | baseline |",
  "|---|---|---|",
  `| CPU-s, journal on (default: a checkpoint every 30 s) | ${x(results.medians.default_cpu_vs_off)} | journal off |`,
  `| CPU-s, a checkpoint every 500 records | ${x(results.medians.every_500_cpu_vs_off)} | journal off |`,
  `| CPU-s of the rerun after the stop | ${x(results.medians.rerun_cpu_vs_full)} | a full run (the records left: ${x(results.medians.left_after_stop)}) |`,
  `| journal and held file, bytes at the stop | ${x(results.medians.journal_vs_shards)} | the finished shards' bytes |`,
];
console.log(table.join("\n"));
if (!values.quick) {
  writeResultsJson(join(ROOT, "bench/results/checkpoint.json"), results);
  replaceDocsSection(join(ROOT, "docs/benchmarks.md"), "checkpoint", "bench/checkpoint.bench.ts", table, "## Checkpoints between cuts");
}
rmSync(scratch, { recursive: true, force: true });
