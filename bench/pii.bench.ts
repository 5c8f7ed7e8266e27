/**
 * PII benchmark (issue 27): what `normalize.pii` costs end to end, and what it finds in a corpus
 * written without personal data.
 *   - The synthetic corpus (bench/synthetic), with a contact line (an email, a phone number, a
 *     public IP, a card number, an IBAN, a national id, an address, a name) added to --rate of
 *     the observations, so the replacement path runs too.
 *   - `lwm-data run` end to end, 1 worker: PII off, on with the default kinds (names off), on with
 *     every kind, in turn, --repeat times over the same corpus; the cost is CPU(on) / CPU(off) − 1.
 *     Two processes' CPU times differ by ±10% run to run, and the placeholders tokenize differently
 *     from the values downstream, so the target (≤ 10%) is judged on the stage's own time instead:
 *     every record normalized as `run` does and its fields redacted in this process, first pass
 *     (loading and JIT warm-up included) over the off run's median CPU time.
 *   - The detectors in process over every text field: MB/s of each kind, to show where the time goes.
 *   - What they found beyond the planted values: false positives in generated data, with context.
 * Results: bench/results/pii.json, a markdown table on stdout and in docs/benchmarks.md.
 *
 *   node bench/pii.bench.ts [--bytes 50MB] [--quick] [--seed N] [--repeat N] [--rate 0.05] [--keep]
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { loadConfig } from "../src/config/load-config.ts";
import type { Trajectory } from "../src/core/trajectory.ts";
import { normalizeTrajectory } from "../src/normalize/normalize-trajectory.ts";
import { findPii, PII_KINDS, type PiiKind, PiiRedactor, type PiiSettings, resolvePii } from "../src/normalize/pii/pii.ts";
import { replaceDocsSection, writeResultsJson } from "./bench-files.ts";
import { ROOT, runFlags, runLwmData } from "./pipeline/runners.ts";
import { hasGnuTime } from "./pipeline/timed.ts";
import { generateCorpus, parseBytes } from "./synthetic/generate.ts";
import { Rng, seedOf } from "./synthetic/random.ts";

const { values } = parseArgs({
  options: {
    bytes: { type: "string", default: "50MB" },
    quick: { type: "boolean", default: false },
    seed: { type: "string", default: "1" },
    repeat: { type: "string", default: "1" },
    rate: { type: "string", default: "0.05" },
    keep: { type: "boolean", default: false },
    results: { type: "string" },
    docs: { type: "string" },
  },
});
const resultsPath = values.results ?? join(ROOT, values.quick ? "bench/results/pii-quick.json" : "bench/results/pii.json");
const docsPath = values.docs ?? (values.quick ? undefined : join(ROOT, "docs/benchmarks.md"));
const bytes = values.quick ? 3e6 : parseBytes(values.bytes);
const seed = Number(values.seed);
const repeat = Number(values.repeat);
const rate = Number(values.rate);
if (!Number.isInteger(repeat) || repeat < 1 || !(rate >= 0 && rate <= 1)) {
  console.error(`bench/pii.bench.ts: --repeat must be a positive integer and --rate in [0, 1] (got ${values.repeat}, ${values.rate})`);
  process.exit(2);
}
const TARGET_OVERHEAD = 0.1;
const log = (message: string) => console.error(`[bench] ${message}`);

/** Every kind on, ranges kept as by default: what a job that turns everything on pays. */
const ALL_ON: PiiSettings = {
  enabled: true,
  kinds: Object.fromEntries(PII_KINDS.map((k) => [k, true])) as Record<PiiKind, boolean>,
  phone_countries: ["US"],
  ip: { private: "keep", documentation: "keep" },
  domains: {},
};

/** Contact lines planted into observations; each value is valid for its detector. */
const PLANTED = [
  (n: number) => `Contact: jordan.reyes${n}@example.com`,
  (n: number) => `Phone: +1 312 555 ${String(100 + (n % 90)).padStart(4, "0")}`,
  (n: number) => `client ${81 + (n % 40)}.2.69.${1 + (n % 250)} connected`,
  () => "card: 4111 1111 1111 1111",
  () => "IBAN GB29 NWBK 6016 1331 9268 19",
  () => "DNI 47764484Q",
  (n: number) => `Ship to: ${100 + (n % 800)} Pennsylvania Ave NW, Washington, DC 20500`,
  () => "From: Dana Whitfield <dana.whitfield@example.com>",
];

/** A line PLANTED wrote. */
const PLANTED_LINE =
  /^(Contact: jordan\.reyes\d+@example\.com|Phone: \+1 312 555 \d{4}|client \d+\.2\.69\.\d+ connected|card: 4111|IBAN GB29|DNI 47764484Q|Ship to: \d+ Pennsylvania|From: Dana Whitfield)/;

/** Adds a planted line to `rate` of the observations of every corpus file (seeded). */
function plant(dir: string): number {
  let planted = 0;
  for (const name of readdirSync(dir)
    .filter((n) => n.endsWith(".jsonl"))
    .sort()) {
    const rng = new Rng(seedOf(seed, "pii", name));
    const path = join(dir, name);
    const lines = readFileSync(path, "utf8").trimEnd().split("\n");
    const out = lines.map((line) => {
      const record = JSON.parse(line) as { turns: { observation: string }[] };
      for (const turn of record.turns)
        if (rng.next() < rate) {
          const make = PLANTED[Math.floor(rng.next() * PLANTED.length)] as (n: number) => string;
          turn.observation = `${turn.observation}\n${make(planted++)}`;
        }
      return JSON.stringify(record);
    });
    writeFileSync(path, `${out.join("\n")}\n`);
  }
  return planted;
}

/** PII off; on with the default kinds (names off); on with every kind. */
type Mode = "off" | "defaults" | "all";

function writeConfig(path: string, corpus: string, out: string, mode: Mode): void {
  const lines = [
    "# Written by bench/pii.bench.ts",
    "inputs:",
    `  - path: ${corpus}/*.jsonl`,
    "    format: canonical-jsonl",
    "tokenizer: { name: qwen3 }",
    "mask: { policy: turn-stats }",
    `output: { dir: ${out} }`,
    ...(mode === "off" ? [] : ["normalize:", "  pii:", "    enabled: true"]),
    ...(mode === "all" ? [`    kinds: { ${PII_KINDS.map((k) => `${k}: true`).join(", ")} }`] : []),
  ];
  writeFileSync(path, `${lines.join("\n")}\n`);
}

/** Every text field of every record, as the detectors see them (before rendering). */
function* texts(dir: string): Generator<string> {
  for (const name of readdirSync(dir)
    .filter((n) => n.endsWith(".jsonl"))
    .sort())
    for (const line of readFileSync(join(dir, name), "utf8").trimEnd().split("\n")) {
      const r = JSON.parse(line) as { system?: string; task?: string; turns: { action: string; observation: string }[] };
      if (r.system) yield r.system;
      if (r.task) yield r.task;
      for (const t of r.turns) {
        yield t.action;
        yield t.observation;
      }
    }
}

/**
 * The stage's own work, in this process: every record normalized as `run` does with PII off
 * (Unicode, secrets, domain rules), then each text field redacted with one redactor per record,
 * as normalize does with PII on. Two passes: the first also loads the lazily loaded detectors
 * (stdnum, compromise) and warms the JIT; the second is the steady cost.
 */
async function stageSeconds(dir: string, configPath: string, pii: PiiSettings): Promise<{ first: number; steady: number }> {
  const normalize = { ...loadConfig(configPath).config.normalize, pii: undefined };
  const records: Trajectory[] = [];
  for (const name of readdirSync(dir)
    .filter((n) => n.endsWith(".jsonl"))
    .sort())
    for (const line of readFileSync(join(dir, name), "utf8").trimEnd().split("\n")) {
      const raw = JSON.parse(line) as Omit<Trajectory, "source">;
      records.push(await normalizeTrajectory({ ...raw, source: { uri: name, format: "canonical-jsonl" } }, normalize, new Map()));
    }
  const pass = () => {
    const started = performance.now();
    for (const t of records) {
      const resolved = resolvePii(pii, t.domain);
      if (!resolved) continue;
      const redactor = new PiiRedactor(resolved, new Map(), t.domain);
      redactor.redact(t.id);
      for (const field of [t.system, t.task, t.initialObservation]) if (field !== undefined) redactor.redact(field);
      for (const turn of t.turns) {
        if (turn.thinking !== undefined) redactor.redact(turn.thinking);
        redactor.redact(turn.action);
        redactor.redact(turn.observation);
      }
    }
    return (performance.now() - started) / 1000;
  };
  const first = pass();
  return { first, steady: pass() };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] as number;

const work = mkdtempSync(join(tmpdir(), "lwm-bench-pii-"));
try {
  const corpusDir = join(work, "corpus");
  log(`generating ${(bytes / 1e6).toFixed(0)} MB of synthetic trajectories (seed ${seed})`);
  const corpus = generateCorpus({ dir: corpusDir, bytes, seed });
  const planted = plant(corpusDir);
  log(`${corpus.trajectories} trajectories, ${planted} contact lines planted`);

  // End to end, alternating off and on so drift on a shared machine hits both alike.
  const flags = runFlags();
  const runs: Record<Mode, { cpu: number; wall: number }>[] = [];
  for (let r = 0; r < repeat; r++) {
    const one = (mode: Mode) => {
      const config = join(work, `job-${mode}.yaml`);
      const out = join(work, `out-${mode}`);
      rmSync(out, { recursive: true, force: true });
      writeConfig(config, corpusDir, out, mode);
      const run = runLwmData(config, out, 1, flags);
      return { cpu: run.cpuS ?? run.wallS, wall: run.wallS, out };
    };
    const off = one("off");
    const on = one("defaults");
    const all = one("all");
    const plus = (x: { cpu: number }) => `+${((x.cpu / off.cpu - 1) * 100).toFixed(1)}%`;
    log(
      `pass ${r + 1}: off ${off.cpu.toFixed(1)} CPU-s, defaults ${on.cpu.toFixed(1)} (${plus(on)}), every kind ${all.cpu.toFixed(1)} (${plus(all)})`,
    );
    runs.push({ off, defaults: on, all });
  }
  const overheads = runs.map((r) => r.defaults.cpu / r.off.cpu - 1);
  const overheadsAll = runs.map((r) => r.all.cpu / r.off.cpu - 1);
  const manifest = JSON.parse(readFileSync(join(work, "out-all", "manifest.json"), "utf8")) as {
    pii: { replaced: Record<string, Record<string, number>> };
  };

  // The stage's own work (less noisy than a difference of two processes' CPU time).
  const defaults = loadConfig(join(work, "job-defaults.yaml")).config.normalize.pii;
  const stage = await stageSeconds(corpusDir, join(work, "job-off.yaml"), defaults);
  const offCpu = median(runs.map((r) => r.off.cpu));
  const direct = stage.first / offCpu;

  // The detectors alone, one kind at a time, over the same text.
  const all = [...texts(corpusDir)];
  const textBytes = all.reduce((s, t) => s + Buffer.byteLength(t), 0);
  const perKind: Record<string, { mb_per_s: number; found: number }> = {};
  for (const kind of PII_KINDS) {
    const resolved = resolvePii({ ...ALL_ON, kinds: { ...ALL_ON.kinds, ...Object.fromEntries(PII_KINDS.map((k) => [k, k === kind])) } });
    if (!resolved) continue;
    // Warm-up (module load, a lexicon's build, JIT) on a slice, then the timed pass over everything.
    for (const t of all.slice(0, 200)) findPii(t, resolved);
    const started = performance.now();
    let found = 0;
    for (const t of all) found += findPii(t, resolved).length;
    perKind[kind] = { mb_per_s: textBytes / 1e6 / ((performance.now() - started) / 1000), found };
  }
  // Findings that are not planted lines: what the detectors take for personal data in generated text.
  const everything = resolvePii(ALL_ON);
  const unplanted: string[] = [];
  let unplantedCount = 0;
  for (const t of all)
    for (const span of everything ? findPii(t, everything) : []) {
      const lineStart = t.lastIndexOf("\n", span.start) + 1;
      const line = t.slice(lineStart, t.indexOf("\n", span.end) === -1 ? undefined : t.indexOf("\n", span.end));
      if (PLANTED_LINE.test(line)) continue;
      unplantedCount++;
      if (unplanted.length < 20)
        unplanted.push(
          `${span.kind}: …${t.slice(Math.max(0, span.start - 30), span.start)}[${t.slice(span.start, span.end)}]${t.slice(span.end, span.end + 30)}…`.replace(
            /\n/g,
            "⏎",
          ),
        );
    }

  const med = median(overheads);
  const results = {
    bench: "pii",
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, cpu_model: cpus()[0]?.model ?? "?", loadavg_start: loadavg() },
    corpus: {
      requested: values.quick ? "--quick" : `--bytes ${values.bytes}`,
      bytes: corpus.bytes,
      trajectories: corpus.trajectories,
      planted,
      rate,
    },
    end_to_end: {
      runs: runs.map((r) => ({
        off_cpu_s: r.off.cpu,
        defaults_cpu_s: r.defaults.cpu,
        all_cpu_s: r.all.cpu,
        off_wall_s: r.off.wall,
        defaults_wall_s: r.defaults.wall,
        all_wall_s: r.all.wall,
      })),
      overhead_all_kinds_median: median(overheadsAll),
      overhead_median: med,
      stage_first_pass_s: stage.first,
      stage_steady_s: stage.steady,
      direct_cost: direct,
      target: TARGET_OVERHEAD,
      met: direct <= TARGET_OVERHEAD,
      cpu_measured: hasGnuTime(),
    },
    replaced: manifest.pii.replaced,
    detectors: { text_mb: textBytes / 1e6, per_kind: perKind },
    unplanted_findings: { count: unplantedCount, examples: unplanted },
  };
  writeResultsJson(resultsPath, results);
  const table = [
    "| measure | value |",
    "| --- | --- |",
    `| corpus | ${(corpus.bytes / 1e6).toFixed(1)} MB, ${corpus.trajectories} trajectories, ${planted} planted contact lines (${(rate * 100).toFixed(0)}% of observations) |`,
    `| end to end, CPU-s off → default kinds → every kind (1 worker) | ${runs.map((r) => `${r.off.cpu.toFixed(1)} → ${r.defaults.cpu.toFixed(1)} → ${r.all.cpu.toFixed(1)}`).join("; ")} |`,
    `| PII stage, default kinds, in process: its time over the off run's CPU | ${(direct * 100).toFixed(1)}% (${stage.first.toFixed(2)} s of ${offCpu.toFixed(1)} CPU-s; steady ${((stage.steady / offCpu) * 100).toFixed(1)}%, the rest is loading stdnum and JIT warm-up) (target ≤ ${TARGET_OVERHEAD * 100}%) ${direct <= TARGET_OVERHEAD ? "✓" : "✗"} |`,
    `| PII cost, default kinds (names off), end to end, median of ${repeat} | ${(med * 100).toFixed(1)}% |`,
    `| PII cost, every kind (names on), median of ${repeat} | ${(median(overheadsAll) * 100).toFixed(1)}% |`,
    ...Object.entries(perKind).map(([kind, k]) => `| detector \`${kind}\` alone | ${k.mb_per_s.toFixed(1)} MB/s, ${k.found} found |`),
    `| findings outside the planted lines | ${unplantedCount} |`,
  ].join("\n");
  const notes = [
    ...(hasGnuTime() ? [] : ["GNU time is missing: wall time stands in for CPU time."]),
    ...unplanted.slice(0, 8).map((u) => `unplanted finding: \`${u.replace(/`/g, "'")}\``),
  ];
  if (docsPath)
    replaceDocsSection(
      docsPath,
      "pii-bench",
      "bench/pii.bench.ts",
      [
        `Last run: ${results.date.slice(0, 10)}, ${results.machine.cpus} × ${results.machine.cpu_model}, \`node bench/pii.bench.ts ${results.corpus.requested}${repeat > 1 ? ` --repeat ${repeat}` : ""}\`.`,
        "",
        table,
        "",
        ...notes.map((n) => `- ${n}`),
      ],
      "## Personal data (issue 27): `node bench/pii.bench.ts`",
    );
  console.log(table);
  for (const n of notes) console.log(`- ${n}`);
  log(`results: ${resultsPath}${docsPath ? `; table: ${docsPath}` : ""}`);
} finally {
  if (values.keep) log(`kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}
