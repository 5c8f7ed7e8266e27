/**
 * Planning benchmark (issue 38, item 9): how fast `plan` / `validate` / `run` sniff the formats of
 * many small files before any data is read.
 *   - The corpus: every file under data/demo/ and test/fixtures/handmade/ (mixed formats: JSONL,
 *     JSON arrays and documents, asciicast, logs, Markdown, XML, gzip, zstd, a few no reader
 *     knows), the two trees copied again and again into a temp folder until it holds --files
 *     files (5,600 by default), each copy under its own folder so trial folders stay whole.
 *   - `planJob` over one input (the folder, `format: auto`), in this process: wall time and
 *     files/s, --repeat times (the first pass pays the module loading and JIT warm-up; the
 *     median is reported). The tokenizer and template loading are in the time too; a plan of one
 *     file is timed the same way and reported as the fixed cost.
 *   - --baseline DIR: a second source tree (e.g. `git archive <rev> src sharding configs
 *     pipelines package.json | tar -x -C DIR` and a node_modules link) planned the same way, the
 *     two interleaved so a loaded machine weighs on both alike; the plans must be identical
 *     (files, readers, task cut, taskPlanSha256) or the bench fails.
 * No results file: it prints a table (and --json prints the numbers).
 *
 *   node bench/sniff.bench.ts [--files 5600] [--repeat 3] [--baseline DIR] [--keep] [--json]
 */
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const ROOT = new URL("..", import.meta.url).pathname;
const SOURCES = ["data/demo", "test/fixtures/handmade"];

/** Every file under `dir`, relative to it. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true }))
    if (entry.isFile()) out.push(relative(dir, join(entry.parentPath, entry.name)));
  return out.sort();
}

/** How many files one copy of the source trees holds. */
export function sniffSourceFileCount(): number {
  return SOURCES.reduce((sum, source) => sum + filesUnder(join(ROOT, source)).length, 0);
}

/** Copies the source trees into `dir` until it holds `count` files; returns how many it holds. */
export function buildSniffCorpus(dir: string, count: number): number {
  const trees = SOURCES.map((source) => ({ source, files: filesUnder(join(ROOT, source)) }));
  let written = 0;
  for (let copy = 0; written < count; copy++) {
    for (const { source, files } of trees) {
      for (const file of files) {
        if (written >= count) break;
        const target = join(dir, `copy-${String(copy).padStart(3, "0")}`, source.replaceAll("/", "-"), file);
        mkdirSync(join(target, ".."), { recursive: true });
        cpSync(join(ROOT, source, file), target);
        written++;
      }
    }
  }
  return written;
}

interface PlanModule {
  planJob: (loaded: unknown, options?: unknown) => Promise<PlanLike>;
}
interface ConfigModule {
  loadConfig: (path: string) => unknown;
}
interface PlanLike {
  files: { path: string; bytes: number; reader: { name: string }; splittable: boolean; layout?: string; unrecognized?: string }[];
  covered: unknown[];
  tasks: unknown[];
  taskPlanSha256: string;
}

async function loadTree(root: string): Promise<{ plan: PlanModule; config: ConfigModule }> {
  const plan = (await import(pathToFileURL(join(root, "src/pipeline/plan.ts")).href)) as PlanModule;
  const config = (await import(pathToFileURL(join(root, "src/config/load-config.ts")).href)) as ConfigModule;
  return { plan, config };
}

/** What must not change: every file's reader and layout, the covered files, the task cut and its hash. */
function planFingerprint(plan: PlanLike): string {
  return JSON.stringify({
    files: plan.files.map((f) => [f.path, f.bytes, f.reader.name, f.splittable, f.layout ?? null, f.unrecognized ?? null]),
    covered: plan.covered,
    tasks: plan.tasks,
    sha: plan.taskPlanSha256,
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      files: { type: "string", default: "5600" },
      repeat: { type: "string", default: "3" },
      baseline: { type: "string" },
      keep: { type: "boolean", default: false },
      json: { type: "boolean", default: false },
    },
  });
  const count = Number(values.files);
  const repeat = Number(values.repeat);
  const dir = mkdtempSync(join(tmpdir(), "lwm-sniff-"));
  try {
    const written = buildSniffCorpus(join(dir, "corpus"), count);
    mkdirSync(join(dir, "one"));
    cpSync(join(ROOT, "data/demo/swe", readdirSync(join(ROOT, "data/demo/swe"))[0] as string), join(dir, "one", "file"));
    const corpusConfig = join(dir, "corpus.yaml");
    const oneConfig = join(dir, "one.yaml");
    writeFileSync(corpusConfig, `inputs:\n  - path: ./corpus\noutput:\n  dir: ./out\n`);
    writeFileSync(oneConfig, `inputs:\n  - path: ./one\noutput:\n  dir: ./out\n`);
    const bytes = filesUnder(join(dir, "corpus")).reduce((sum, f) => sum + statSync(join(dir, "corpus", f)).size, 0);

    const trees: { name: string; root: string }[] = [{ name: "this tree", root: ROOT }];
    if (values.baseline) trees.unshift({ name: `baseline (${values.baseline})`, root: resolve(values.baseline) });
    const loadedTrees = await Promise.all(trees.map(async (tree) => ({ ...tree, ...(await loadTree(tree.root)) })));
    const times = new Map<string, { corpus: number[]; one: number[]; fingerprint?: string; files?: number }>();
    for (const tree of loadedTrees) times.set(tree.name, { corpus: [], one: [] });
    for (let pass = 0; pass < repeat; pass++) {
      // Interleaved: a background load weighs on every tree alike.
      for (const tree of loadedTrees) {
        const entry = times.get(tree.name) as { corpus: number[]; one: number[]; fingerprint?: string; files?: number };
        let started = performance.now();
        await tree.plan.planJob(tree.config.loadConfig(oneConfig));
        entry.one.push(performance.now() - started);
        started = performance.now();
        const plan = await tree.plan.planJob(tree.config.loadConfig(corpusConfig));
        entry.corpus.push(performance.now() - started);
        const fingerprint = planFingerprint(plan);
        if (entry.fingerprint !== undefined && entry.fingerprint !== fingerprint)
          throw new Error(`${tree.name}: two passes planned differently`);
        entry.fingerprint = fingerprint;
        entry.files = plan.files.length + plan.covered.length;
      }
    }
    const fingerprints = new Set([...times.values()].map((t) => t.fingerprint));
    const rows = [...times.entries()].map(([name, t]) => {
      const corpusMs = median(t.corpus);
      const oneMs = median(t.one);
      return {
        tree: name,
        plan_ms: Math.round(corpusMs),
        fixed_ms: Math.round(oneMs),
        files_per_s: Math.round(written / (corpusMs / 1000)),
        sniff_files_per_s: Math.round(written / (Math.max(corpusMs - oneMs, 1) / 1000)),
        passes_ms: t.corpus.map(Math.round),
      };
    });
    const machine = `${cpus().length} core(s), load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`;
    if (values.json) {
      console.log(JSON.stringify({ files: written, bytes, machine, identical: fingerprints.size === 1, rows }, null, 2));
    } else {
      console.log(`planning ${written} files (${(bytes / 1e6).toFixed(1)} MB), median of ${repeat} pass(es); ${machine}`);
      console.log("| tree | plan (ms) | fixed cost (ms) | files/s | files/s, sniffing alone | passes (ms) |");
      console.log("|---|---:|---:|---:|---:|---|");
      for (const r of rows)
        console.log(`| ${r.tree} | ${r.plan_ms} | ${r.fixed_ms} | ${r.files_per_s} | ${r.sniff_files_per_s} | ${r.passes_ms.join(", ")} |`);
      if (trees.length > 1) console.log(fingerprints.size === 1 ? "plans identical" : "PLANS DIFFER");
    }
    if (fingerprints.size !== 1) process.exitCode = 1;
  } finally {
    if (values.keep) console.log(`corpus kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
