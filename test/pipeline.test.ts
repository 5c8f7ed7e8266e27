import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import type { QuarantineEntry } from "../src/core/errors.ts";
import { openShard, shardRow } from "../src/inspect/read-shard.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { runJob } from "../src/pipeline/run-job.ts";
import { DEMO_CONFIG, ROOT, tempDir, writeConfig } from "./helpers.ts";

const run = promisify(execFile);
const CLI = join(ROOT, "bin/lwm-data.js");
const MIXED = join(ROOT, "test/fixtures/records/mixed-bad.jsonl");

/** Runs a config to completion (one process, all tasks) and returns its manifest. */
async function runConfig(path: string, output: string) {
  const result = await runJob(await planJob(loadConfig(path, { output })), { workers: 1 });
  const { manifest } = result;
  if (!manifest) throw new Error(`run left ${result.unfinished} task(s) unfinished`);
  return { ...result, manifest };
}

describe("a pipeline run", () => {
  it("accounts for every record: records in = samples out + quarantined (+ filtered), with reasons on disk", async () => {
    const out = tempDir();
    const result = await runConfig(writeConfig(`inputs:\n  - path: ${MIXED}\nnormalize:\n  invalid_utf8: quarantine\n`), out);
    const { counts } = result.manifest;
    expect(counts).toEqual({
      records_in: 7,
      samples_out: 2,
      // good-1's one turn echoes its action ("echo hi" → "hi"): the mask trains none of it, and the manifest says so.
      samples_untrained: 1,
      documents: 2,
      quarantined: 5,
      quarantined_by_stage: { read: 4, normalize: 1 },
      // Curation is off: nothing filtered, and the identity records in = out + quarantined + filtered holds.
      filtered: 0,
      filtered_by_stage: {},
      // No mixture: every record is kept once.
      dropped_by_mixture: 0,
    });
    const lines = readFileSync(join(out, "quarantine/task-00000.jsonl"), "utf8").trim().split("\n");
    const entries = lines.map((line) => JSON.parse(line) as QuarantineEntry);
    expect(entries).toHaveLength(5);
    for (const entry of entries) {
      expect(entry.source.uri).toBe(MIXED);
      expect(entry.source.line).toBeGreaterThan(0);
      expect(entry.reason.length).toBeGreaterThan(5);
    }
    expect(entries.find((e) => e.id === "lone-surrogate")).toMatchObject({ stage: "normalize", field: "turns.0.observation" });
    const rows = result.manifest.shards.reduce((sum, shard) => sum + shard.rows, 0);
    expect(rows).toBe(2);
  });

  it("repairs invalid Unicode by default and counts it", async () => {
    const result = await runConfig(writeConfig(`inputs:\n  - path: ${MIXED}\n`), tempDir());
    expect(result.manifest.counts).toMatchObject({ records_in: 7, samples_out: 3, quarantined: 4 });
    expect(result.manifest.normalize["utf8.repaired"]).toBe(1);
  });

  it("a truncated compressed file keeps what was read and quarantines the break", async () => {
    const { gzipSync } = await import("node:zlib");
    const { writeFileSync } = await import("node:fs");
    const dir = tempDir();
    const lines = Array.from({ length: 200 }, (_, i) =>
      JSON.stringify({ id: `r${i}`, domain: "terminal", turns: [{ action: `echo ${i}`, observation: `${i}\n`.repeat(20) }] }),
    );
    const whole = gzipSync(lines.join("\n"));
    writeFileSync(join(dir, "cut.jsonl.gz"), whole.subarray(0, Math.floor(whole.length * 0.6)));
    const result = await runConfig(writeConfig(`inputs:\n  - path: cut.jsonl.gz\n`, dir), join(dir, "out"));
    const { counts } = result.manifest;
    expect(counts.samples_out).toBeGreaterThan(0);
    expect(counts.samples_out).toBeLessThan(200);
    expect(counts.quarantined).toBe(1);
    expect(counts.records_in).toBe(counts.samples_out + 1);
    const entry = JSON.parse(readFileSync(join(dir, "out/quarantine/task-00000.jsonl"), "utf8")) as QuarantineEntry;
    expect(entry.reason).toMatch(/file unreadable after line \d+: unexpected end of file/);
  });

  it("is deterministic: two runs give byte-identical shards and manifests", async () => {
    const [a, b] = [tempDir(), tempDir()];
    const first = await runConfig(DEMO_CONFIG, a);
    const second = await runConfig(DEMO_CONFIG, b);
    expect(first.manifest).toEqual(second.manifest);
    const files = readdirSync(join(a, "data")).sort();
    expect(files.length).toBeGreaterThan(0);
    expect(readdirSync(join(b, "data")).sort()).toEqual(files);
    for (const file of files) expect(readFileSync(join(a, "data", file)).equals(readFileSync(join(b, "data", file)))).toBe(true);
    expect(readFileSync(join(a, "manifest.json"), "utf8")).toBe(readFileSync(join(b, "manifest.json"), "utf8"));
  });

  it("routes each sample by its id, cuts segments at the size limit, and keeps no temp files", async () => {
    const out = tempDir();
    const config = writeConfig(
      `inputs:\n  - path: ${join(ROOT, "data/demo/mcp/everything.jsonl.gz")}\n  - path: ${join(ROOT, "data/demo/swe/swe.jsonl.zst")}\noutput:\n  num_buckets: 3\n  max_shard_bytes: 4000\n  row_group_rows: 1\n`,
    );
    const result = await runConfig(config, out);
    const names = readdirSync(join(out, "data"));
    expect(names.every((n) => /^train-0000[0-2]-00000-\d{4}\.parquet$/.test(n))).toBe(true);
    expect(names.some((n) => n.endsWith("-0001.parquet"))).toBe(true);
    expect(result.manifest.shards.map((s) => s.path.replace("data/", "")).sort()).toEqual(names.sort());
    let rows = 0;
    for (const shard of result.manifest.shards) {
      const file = await openShard(join(out, shard.path));
      expect(file.numRows).toBe(shard.rows);
      for (let i = 0; i < file.numRows; i++) {
        const row = shardRow(file, i);
        expect(row.inputIds.length).toBe(row.lossMask.length);
        expect(row.numTokens).toBe(row.inputIds.length);
        rows += 1;
      }
    }
    expect(rows).toBe(result.manifest.counts.samples_out);
  });
});

describe("the CLI", () => {
  it("--help on every command", async () => {
    const commands = ["run", "validate", "inspect", "stats", "plan", "finalize", "launch", "launch slurm", "launch k8s"];
    for (const args of [["--help"], ...commands.map((c) => [...c.split(" "), "--help"])]) {
      const { stdout } = await run(process.execPath, [CLI, ...args]);
      expect(stdout).toMatch(/Usage: lwm-data/);
    }
  });

  it("validate prints the plan with detected formats", async () => {
    const { stdout } = await run(process.execPath, [CLI, "validate", DEMO_CONFIG]);
    expect(stdout).toMatch(/is valid/);
    expect(stdout).toMatch(/everything-agentworldbench\.jsonl .*format=agentworldbench-jsonl \(detected\)/);
    expect(stdout).toMatch(/tokenizer +qwen3 +vocab=151669/);
    expect(stdout).toMatch(/template +qwen3 tokenizer_config\.json/);
  });

  it("a bad config exits 1 with the key path", async () => {
    const config = writeConfig("inputs:\n  - path: x.jsonl\noutput:\n  row_group_rows: -1\n");
    const failure = await run(process.execPath, [CLI, "validate", config]).catch((err: { code: number; stderr: string }) => err);
    expect(failure).toMatchObject({ code: 1 });
    expect((failure as { stderr: string }).stderr).toMatch(/output\.row_group_rows: .*>0/);
  });

  it("run --input/--output, then inspect shows the mask", async () => {
    const out = tempDir();
    const { stdout } = await run(process.execPath, [
      CLI,
      "run",
      DEMO_CONFIG,
      "--input",
      join(ROOT, "data/demo/swe/swe.jsonl.zst"),
      "--output",
      out,
    ]);
    expect(stdout).toMatch(/records in +2\n +samples out +2\n +quarantined +0/);
    const manifest = JSON.parse(readFileSync(join(out, "manifest.json"), "utf8")) as { shards: { path: string }[] };
    const shard = join(out, manifest.shards[0]?.path as string);
    const inspected = await run(process.execPath, [CLI, "inspect", shard, "--row", "0", "--color", "never"]);
    // The recorded unittest run is the first observation: trained, so shown inside ⟦…⟧.
    expect(inspected.stdout).toMatch(/⟦[^⟧]*(FAILED|OK)\b/);
    expect(inspected.stdout).toMatch(/<\|im_start\|>user\n/);
    const coloured = await run(process.execPath, [CLI, "inspect", shard, "--color", "always", "--tokens"]);
    expect(coloured.stdout).toContain("\x1b[");
    expect(coloured.stdout).toMatch(/ +pos +id +loss +text/);
  });
});

describe("the runtime", () => {
  it("tests run on the Node LTS the project ships (node_modules/.bin/node), not the machine's Node 20", () => {
    expect(Number(process.versions.node.split(".")[0])).toBeGreaterThanOrEqual(24);
  });
});

describe("turn-level masking in a run", () => {
  it("writes one stats row per turn, agreeing with the shards' loss flags and the manifest summary", async () => {
    const out = tempDir();
    const result = await runConfig(DEMO_CONFIG, out);
    const stats = result.manifest.masking.stats_files;
    expect(stats).toHaveLength(1);
    const { tableFromIPC } = await import("apache-arrow");
    const parquet = await import("parquet-wasm");
    const table = tableFromIPC(parquet.readParquet(readFileSync(join(out, stats[0]?.path as string))).intoIPCStream());
    const kept = new Map<string, boolean>();
    for (const row of table) kept.set(`${row.id}#${row.turn_index}`, row.kept as boolean);
    let turns = 0;
    for (const shard of result.manifest.shards) {
      const file = await openShard(join(out, shard.path));
      for (let i = 0; i < file.numRows; i++) {
        const row = shardRow(file, i);
        const observations = (row.messages ?? []).filter((m) => m.role === "assistant");
        observations.forEach((m, t) => {
          expect(kept.get(`${row.id}#${t}`)).toBe(m.loss);
          turns += 1;
        });
      }
    }
    expect(table.numRows).toBe(turns);
    const summary = Object.values(result.manifest.masking.by_domain_class).flatMap((byClass) => Object.values(byClass));
    expect(summary.reduce((n, t) => n + t.turns, 0)).toBe(turns);
    expect(summary.reduce((n, t) => n + t.kept, 0)).toBe([...kept.values()].filter(Boolean).length);
    // Some turns are masked on the demo (echoes, boilerplate), most are kept.
    expect([...kept.values()].filter((k) => !k).length).toBeGreaterThan(0);
    const { stdout } = await run(process.execPath, [CLI, "stats", out]);
    expect(stdout).toMatch(/domain +class +turns +kept/);
    expect(stdout).toMatch(/Boilerplate/);
  });
});
