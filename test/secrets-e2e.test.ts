import { execFile } from "node:child_process";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { type Table, tableFromIPC } from "apache-arrow";
import * as parquet from "parquet-wasm";
import { beforeAll, describe, expect, it } from "vitest";
import { DOMAINS } from "../src/core/trajectory.ts";
import { loadTokenizer } from "../src/tokenize/load-tokenizer.ts";
import { decodeText, type Tokenizer } from "../src/tokenize/tokenizer.ts";
import { ROOT, tempDir } from "./helpers.ts";
import {
  type Leak,
  LeakScanner,
  leakReport,
  leakSummary,
  type PlantedCorpus,
  type PlantedSecret,
  writePlantedCorpus,
} from "./support/planted-secrets.ts";

/**
 * Part 4 of "Hardening": redaction runs before anything is written. A seeded corpus plants
 * hundreds of fake secrets of every type in all seven domains, in their real source formats
 * (test/support/planted-secrets.ts), and the real CLI runs over it end to end: `run` (plain, with
 * the text form, and packed with tree diffs), `validate`, `stats`, `verify`, `inspect`,
 * `dashboard`, `export swift`, `sft prompts` and `sft sample` (offline: candidates from a file, as
 * from any batch system, so no teacher server is needed). Then every byte they wrote or printed is
 * searched for every planted value — raw, JSON-unescaped, HTML-decoded, and as any 12-character
 * piece — with Parquet files also decoded (every string value of every column, and `input_ids`
 * detokenized with the job's tokenizer). A control run with `redact_secrets: false` proves the
 * search finds what was planted.
 *
 * Policy for ids: a record id (and an input file name, which becomes ids and `source`) is output
 * like any text, so a secret in it must not survive either. The one exception: the job's record of
 * its own inputs (`manifest.json`, `tasks/plan.json`, what `plan` and `validate` print) keeps input
 * paths as the operator wrote them, since a rerun must find the same files.
 */

const exec = promisify(execFile);
const CLI = join(ROOT, "bin/lwm-data.js");

interface CliRun {
  label: string;
  stdout: string;
  stderr: string;
}

let corpus: PlantedCorpus;
let dir: string;
let tokenizer: Tokenizer;
const logs: CliRun[] = [];
const controlLogs: CliRun[] = [];

async function cli(args: string[], into = logs): Promise<CliRun> {
  const label = `lwm-data ${args.map((a) => (a.startsWith(dir) ? relative(dir, a) || "." : a)).join(" ")}`;
  try {
    const { stdout, stderr } = await exec(process.execPath, [CLI, ...args], { cwd: dir, maxBuffer: 256 << 20 });
    const run = { label, stdout, stderr };
    into.push(run);
    return run;
  } catch (err) {
    const { stdout, stderr } = err as { stdout?: string; stderr?: string };
    throw new Error(`${label} failed:\n${stderr ?? ""}\n${stdout ?? ""}`);
  }
}

function config(extra: string): string {
  return [
    "inputs:",
    ...corpus.inputGlobs.map((glob) => `  - path: ${glob}`),
    "input:",
    `  max_line_bytes: ${corpus.maxLineBytes}`,
    extra,
  ].join("\n");
}

function filesUnder(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

function manifestOf(out: string) {
  return JSON.parse(readFileSync(join(dir, out, "manifest.json"), "utf8")) as {
    counts: { records_in: number; samples_out: number; quarantined: number; documents: number };
    normalize: Record<string, number>;
    quarantine: { path: string; entries: number }[];
  };
}

/** Every string inside an Arrow value (lists, structs, nested), numbers skipped. */
function stringsIn(value: unknown, out: string[]): void {
  if (typeof value === "string") out.push(value);
  else if (value === null || typeof value !== "object" || ArrayBuffer.isView(value)) return;
  else if (Array.isArray(value)) for (const item of value) stringsIn(item, out);
  else if (typeof (value as { toJSON?: unknown }).toJSON === "function") stringsIn((value as { toJSON(): unknown }).toJSON(), out);
  else if (Symbol.iterator in value) for (const item of value as Iterable<unknown>) stringsIn(item, out);
  else for (const item of Object.values(value)) stringsIn(item, out);
}

/** A Parquet file: its raw bytes, every string column value, its metadata, and its token ids detokenized. */
function scanParquet(scanner: LeakScanner, path: string, name: string): void {
  const bytes = readFileSync(path);
  scanner.scan(bytes.toString("latin1"), `${name} (raw bytes)`);
  const table: Table = tableFromIPC(parquet.readParquet(new Uint8Array(bytes)).intoIPCStream());
  scanner.scan(JSON.stringify([...table.schema.metadata]), `${name} (key-value metadata)`);
  for (const field of table.schema.fields) {
    const column = table.getChild(field.name);
    if (!column) continue;
    if (field.name === "input_ids") {
      for (let row = 0; row < table.numRows; row++) {
        const ids = (column.get(row) as { toArray(): ArrayLike<number> }).toArray();
        scanner.scan(decodeText(tokenizer, ids), `${name}#input_ids row ${row} (detokenized)`);
      }
      continue;
    }
    const strings: string[] = [];
    for (let row = 0; row < table.numRows; row++) stringsIn(column.get(row), strings);
    // One text per column: each value on its own line, so a match never spans two values.
    scanner.scan(strings.join("\n\u0000\n"), `${name}#${field.name}`);
  }
}

/** Every file under the given folders (Parquet decoded) and every captured log. */
function scanOutputs(secrets: readonly PlantedSecret[], folders: string[], runs: CliRun[]): Leak[] {
  const scanner = new LeakScanner(secrets);
  for (const folder of folders) {
    for (const path of filesUnder(join(dir, folder))) {
      const name = relative(dir, path);
      if (path.endsWith(".parquet")) scanParquet(scanner, path, name);
      else scanner.scan(readFileSync(path, "utf8"), name);
    }
  }
  for (const run of runs) {
    scanner.scan(run.stdout, `log: ${run.label} (stdout)`);
    scanner.scan(run.stderr, `log: ${run.label} (stderr)`);
  }
  return scanner.leaks;
}

/** A stand-in teacher: every prompt answered with its ground truth (a short reasoning first). */
function perfectCandidates(promptsFile: string, candidatesFile: string): number {
  const lines = readFileSync(promptsFile, "utf8").trim().split("\n").filter(Boolean);
  const out = lines.map((line) => {
    const prompt = JSON.parse(line) as { prompt_id: string; domain: string; ground_truth: string };
    const think = `The ${prompt.domain} environment answers the last action from the state so far.`;
    return JSON.stringify({
      prompt_id: prompt.prompt_id,
      candidates: [`<think>\n${think}\n</think>\n\n<predicted_observation>\n${prompt.ground_truth}\n</predicted_observation>`],
    });
  });
  writeFileSync(candidatesFile, `${out.join("\n")}\n`);
  return lines.length;
}

beforeAll(async () => {
  dir = tempDir("lwm-secrets-e2e-");
  corpus = writePlantedCorpus(dir);
  writeFileSync(
    join(dir, "job.yaml"),
    config("normalize:\n  redact_secrets: true\noutput:\n  dir: out\n  num_buckets: 2\n  include_messages: true\n"),
  );
  writeFileSync(
    join(dir, "packed.yaml"),
    config(
      "normalize:\n  redact_secrets: true\n  tree_target: diff\noutput:\n  dir: out-packed\n  num_buckets: 2\n  validation_fraction: 0.3\npack:\n  enabled: true\n  seq_len: 2048\n  overlong: split\n",
    ),
  );
  writeFileSync(
    join(dir, "control.yaml"),
    config("normalize:\n  redact_secrets: false\noutput:\n  dir: out-control\n  num_buckets: 2\n  include_messages: true\n"),
  );
  tokenizer = loadTokenizer({ name: "qwen3" });
  await Promise.all([
    cli(["run", join(dir, "job.yaml"), "--progress", "json", "--workers", "1"]),
    cli(["run", join(dir, "packed.yaml"), "--progress", "json", "--workers", "1"]),
    cli(["run", join(dir, "control.yaml"), "--progress", "json", "--workers", "1"], controlLogs),
  ]);
  const out = join(dir, "out");
  const shards = filesUnder(join(out, "data")).concat(filesUnder(join(dir, "out-packed", "data")));
  await Promise.all([
    cli(["validate", join(dir, "job.yaml")]),
    cli(["plan", join(dir, "job.yaml")]),
    cli(["stats", out]),
    cli(["verify", out]),
    cli(["dashboard", out, "--out", join(dir, "reports", "dashboard.html"), "--examples", "50"]),
    cli(["dashboard", join(dir, "out-packed"), "--compare", out, "--out", join(dir, "reports", "compare.html"), "--examples", "50"]),
    cli(["sft", "prompts", join(dir, "job.yaml"), "--out", join(dir, "reports", "sft-prompts.jsonl")]),
    cli(["sft", "prompts", join(dir, "job.yaml"), "--out", join(dir, "reports", "sft-batch.jsonl"), "--format", "openai-batch"]),
  ]);
  await Promise.all([
    ...shards.map((shard) => cli(["inspect", shard, "--row", "0", "--color", "never", "--tokens"])),
    cli(["export", "swift", out]),
    (async () => {
      perfectCandidates(join(dir, "reports", "sft-prompts.jsonl"), join(dir, "candidates.jsonl"));
      await cli([
        "sft",
        "sample",
        join(dir, "job.yaml"),
        "--candidates",
        join(dir, "candidates.jsonl"),
        "--output",
        join(dir, "out-sft"),
        "--progress",
        "json",
      ]);
    })(),
  ]);
});

describe("secrets: none reaches any output (50+ planted across seven domains)", () => {
  it("plants unique secrets of many types in every domain, in the formats detection picks", () => {
    const values = corpus.secrets.map((s) => s.value);
    expect(values.length).toBeGreaterThanOrEqual(50);
    expect(new Set(values).size).toBe(values.length);
    expect(new Set(corpus.secrets.map((s) => s.type)).size).toBeGreaterThanOrEqual(30);
    for (const domain of DOMAINS) expect(corpus.secrets.filter((s) => s.domain === domain && s.reach === "text").length).toBeGreaterThan(5);
    expect(new Set(corpus.files.map((f) => f.format)).size).toBeGreaterThanOrEqual(13);
    const validate = logs.find((run) => run.label.startsWith("lwm-data validate")) as CliRun;
    for (const file of corpus.files)
      expect(validate.stdout).toMatch(
        new RegExp(`${file.path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\s.*format=${file.format} \\(detected\\)`),
      );
  });

  it("accounts for every record (in = out + quarantined) and counts every planted type", () => {
    const recordsIn = corpus.files.reduce((sum, f) => sum + f.records, 0);
    const quarantined = corpus.files.reduce((sum, f) => sum + f.quarantined, 0);
    for (const out of ["out", "out-packed", "out-control"]) {
      const { counts, quarantine } = manifestOf(out);
      expect([out, counts.records_in, counts.quarantined]).toEqual([out, recordsIn, quarantined]);
      expect(counts.records_in).toBe(counts.samples_out + counts.quarantined);
      expect(quarantine.reduce((sum, q) => sum + q.entries, 0)).toBe(quarantined);
    }
    const { normalize } = manifestOf("out");
    const uncounted = corpus.catalogueTypes.filter((type) => !((normalize[`secrets.${type}`] ?? 0) > 0));
    expect(uncounted).toEqual([]);
    const redactions = Object.entries(normalize)
      .filter(([key]) => key.startsWith("secrets."))
      .reduce((sum, [, n]) => sum + n, 0);
    expect(redactions).toBeGreaterThanOrEqual(corpus.secrets.filter((s) => s.location.startsWith("catalogue")).length);
    expect(Object.keys(manifestOf("out-control").normalize).filter((key) => key.startsWith("secrets."))).toEqual([]);
  });

  it("control: with redact_secrets false the scanner finds every planted secret the pipeline writes", () => {
    const leaks = scanOutputs(corpus.secrets, ["out-control"], controlLogs);
    const found = new Set(leaks.map((leak) => leak.secret.n));
    const missed = corpus.secrets.filter((s) => s.visibleWithoutRedaction && !found.has(s.n));
    expect(missed.map((s) => `#${s.n} ${s.type} ${s.location}`)).toEqual([]);
    // And what no reader renders stays out even without redaction (the corpus labels are right).
    const unexpected = leaks.filter((leak) => leak.secret.reach === "dropped");
    expect(unexpected.map((l) => `#${l.secret.n} ${l.secret.location} → ${l.output}`)).toEqual([]);
  });

  it("no planted secret in any output byte: shards, stats, quarantine, manifest, card, logs, dashboard, SFT, export", () => {
    const all = scanOutputs(corpus.secrets, ["out", "out-packed", "out-sft", "reports"], logs);
    // The one exception (see the policy above): where the job records its own input paths.
    const jobRecord = (output: string) => /(^|\/)(manifest\.json|tasks\/plan\.json)$|^log: lwm-data (plan|validate) /.test(output);
    const leaks = all.filter((leak) => !(leak.secret.location.includes("input file NAME") && jobRecord(leak.output)));
    expect(all.length - leaks.length, "the file-name secret is recorded as an input path").toBeGreaterThan(0);
    const report = leakReport(leaks);
    if (leaks.length > 0) writeFileSync(join(dir, "leaks.txt"), report);
    const leaked = new Set(leaks.map((l) => l.secret.n)).size;
    expect(
      leaks.length,
      `${leaked} of ${corpus.secrets.length} planted secrets leaked (every occurrence: ${join(dir, "leaks.txt")}):\n${leakSummary(leaks)}`,
    ).toBe(0);
  });
});
