import { createHash } from "node:crypto";
import { cpSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as arrow from "apache-arrow";
import * as parquet from "parquet-wasm";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { verifyCommand } from "../src/cli/verify-command.ts";
import { loadConfig } from "../src/config/load-config.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { runJob } from "../src/pipeline/run-job.ts";
import { readPrompts } from "../src/sft/prompts/read-prompts.ts";
import type { SftPrompt } from "../src/sft/prompts/sft-prompt.ts";
import { runSft } from "../src/sft/run-sft.ts";
import { answerText } from "../src/sft/sft-sample.ts";
import { type VerifyProblem, verifyOutput } from "../src/verify/verify-output.ts";
import { shardSchema } from "../src/write/arrow-batch.ts";
import { SHARD_METADATA_KEY } from "../src/write/parquet-shard-writer.ts";
import { demoInputsYaml, ROOT, tempDir, writeConfig } from "./helpers.ts";
import { makeCurated } from "./support/curated-output.ts";

type Json = Record<string, unknown>;
interface ListedEntry {
  path: string;
  rows: number;
  bytes: number;
  sha256: string;
}
interface ManifestJson extends Json {
  format: string;
  tokens: { total: number; loss: number };
  shards: ListedEntry[];
  quarantine: ListedEntry[];
  masking: { stats_files: ListedEntry[] };
  tokenizer: { vocab_sha256: string };
}

const MIXED = join(ROOT, "test/fixtures/records/mixed-bad.jsonl");
const demoInputs = demoInputsYaml();

/** The demo inputs plus records that quarantine, so the output has shards, stats and a quarantine file. */
function cptConfig(): string {
  return writeConfig(
    [
      "inputs:",
      ...demoInputs,
      `  - path: ${MIXED}`,
      "normalize:",
      "  invalid_utf8: quarantine",
      "output:",
      "  num_buckets: 2",
      "  row_group_rows: 4",
      "  include_messages: true",
    ].join("\n"),
  );
}

const readManifest = (dir: string) => JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as ManifestJson;
const writeManifest = (dir: string, manifest: Json) => writeFileSync(join(dir, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const summary = (problems: VerifyProblem[]) => problems.map((p) => `${p.path} ${p.check}`).sort();

function readTable(path: string): arrow.Table {
  return arrow.tableFromIPC(parquet.readParquet(readFileSync(path)).intoIPCStream());
}

/** Writes `table` over a shard with the shard's own `lwm_data` metadata and updates the manifest's size and checksum, so only content checks can tell. */
function rewriteShard(dir: string, shardPath: string, table: arrow.Table): void {
  const path = join(dir, shardPath);
  const metadata = readTable(path).schema.metadata.get(SHARD_METADATA_KEY) ?? "";
  const properties = new parquet.WriterPropertiesBuilder()
    .setCompression(parquet.Compression.ZSTD)
    .setMaxRowGroupSize(4)
    .setKeyValueMetadata(new Map([[SHARD_METADATA_KEY, metadata]]))
    .build();
  const bytes = parquet.writeParquet(parquet.Table.fromIPCStream(arrow.tableToIPC(table, "stream")), properties);
  writeFileSync(path, bytes);
  const manifest = readManifest(dir);
  const entry = manifest.shards.find((shard) => shard.path === shardPath) as ListedEntry;
  entry.bytes = bytes.length;
  entry.sha256 = sha256(bytes);
  writeManifest(dir, manifest);
}

/** The same table with one column replaced (same name, nullability kept), batch by batch. */
function replaceColumn(
  table: arrow.Table,
  name: string,
  replace: (data: arrow.Data, field: arrow.Field) => [arrow.Field, arrow.Data],
): arrow.Table {
  const index = table.schema.fields.findIndex((field) => field.name === name);
  const old = table.schema.fields[index] as arrow.Field;
  let schema = table.schema;
  const batches = table.batches.map((batch) => {
    const children = [...batch.data.children];
    const [field, data] = replace(children[index] as arrow.Data, old);
    children[index] = data;
    const fields = schema.fields.map((f, i) => (i === index ? field : f));
    schema = new arrow.Schema(fields, table.schema.metadata);
    return new arrow.RecordBatch(schema, arrow.makeData({ type: new arrow.Struct(fields), length: batch.numRows, nullCount: 0, children }));
  });
  return new arrow.Table(schema, batches);
}

describe("lwm-data verify on a CPT output", () => {
  let base: string;
  let dir: string;
  let manifest: ManifestJson;

  beforeAll(async () => {
    base = tempDir("lwm-verify-base-");
    const result = await runJob(await planJob(loadConfig(cptConfig(), { output: base })), { workers: 1 });
    if (!result.manifest) throw new Error("the run did not finish");
  });

  /** Each test damages its own copy. */
  const fresh = () => {
    dir = tempDir("lwm-verify-");
    cpSync(base, dir, { recursive: true });
    manifest = readManifest(dir);
    return dir;
  };
  const firstShard = () => manifest.shards[0] as ListedEntry;

  it("finds nothing wrong with an untouched output, and reads every listed file", async () => {
    fresh();
    const files: string[] = [];
    const report = await verifyOutput(dir, { onFile: (path) => files.push(path) });
    expect(report.problems).toEqual([]);
    expect(manifest.shards.length).toBeGreaterThan(1);
    expect(manifest.quarantine.length).toBe(1);
    const listed = [...manifest.shards, ...manifest.masking.stats_files, ...manifest.quarantine, "README.md"].map((file) =>
      typeof file === "string" ? file : file.path,
    );
    expect(files.sort()).toEqual(listed.sort());
    expect(report).toMatchObject({
      manifestFormat: "lwm-data/shards",
      filesChecked: listed.length,
      shardsChecked: manifest.shards.length,
      tokens: manifest.tokens.total,
    });
  });

  it("a flipped byte in the middle of a shard: its checksum differs, and only that shard is named", async () => {
    fresh();
    const path = join(dir, firstShard().path);
    const bytes = readFileSync(path);
    const middle = Math.floor(bytes.length / 2);
    bytes[middle] = (bytes[middle] as number) ^ 0xff;
    writeFileSync(path, bytes);
    const { problems } = await verifyOutput(dir);
    expect(problems).toContainEqual(expect.objectContaining({ path: firstShard().path, check: "sha256", expected: firstShard().sha256 }));
    expect(problems.every((problem) => problem.path === firstShard().path)).toBe(true);
    expect(problems.some((problem) => problem.check === "bytes")).toBe(false);
  });

  it("a deleted shard is missing", async () => {
    fresh();
    rmSync(join(dir, firstShard().path));
    const { problems } = await verifyOutput(dir);
    expect(summary(problems)).toEqual([`${firstShard().path} missing`]);
  });

  it("a shard's row count edited in the manifest: the shard disagrees and the totals no longer add up", async () => {
    fresh();
    firstShard().rows += 1;
    writeManifest(dir, manifest);
    const { problems } = await verifyOutput(dir);
    expect(problems).toContainEqual(
      expect.objectContaining({ path: firstShard().path, check: "rows", expected: firstShard().rows, actual: firstShard().rows - 1 }),
    );
    expect(problems).toContainEqual(
      expect.objectContaining({ path: "manifest.json", check: "totals", message: expect.stringMatching(/^counts\.documents/) }),
    );
    expect(new Set(problems.map((problem) => problem.check))).toEqual(new Set(["rows", "totals"]));
  });

  it("tokens.total edited in the manifest: totals", async () => {
    fresh();
    manifest.tokens.total += 5;
    writeManifest(dir, manifest);
    const { problems } = await verifyOutput(dir);
    expect(problems.length).toBeGreaterThan(0);
    for (const problem of problems)
      expect(problem).toMatchObject({
        path: "manifest.json",
        check: "totals",
        actual: manifest.tokens.total,
        expected: manifest.tokens.total - 5,
      });
  });

  it("a Parquet file in data/ that the manifest does not list is unlisted", async () => {
    fresh();
    cpSync(join(dir, firstShard().path), join(dir, "data/stray-00000.parquet"));
    writeFileSync(join(dir, "data/half-written.parquet.tmp"), "x");
    const { problems } = await verifyOutput(dir);
    expect(summary(problems)).toEqual(["data/half-written.parquet.tmp unlisted", "data/stray-00000.parquet unlisted"]);
  });

  it("a shard rewritten with another column type (checksum updated in the manifest) fails only the schema check", async () => {
    fresh();
    const table = readTable(join(dir, firstShard().path));
    const widened = replaceColumn(table, "num_turns", (data, field) => [
      new arrow.Field(field.name, new arrow.Int64(), false),
      arrow.makeData({
        type: new arrow.Int64(),
        length: data.length,
        nullCount: 0,
        data: BigInt64Array.from(data.values as Int32Array, BigInt),
      }),
    ]);
    rewriteShard(dir, firstShard().path, widened);
    const { problems } = await verifyOutput(dir);
    expect(problems).toEqual([
      {
        path: firstShard().path,
        check: "schema",
        expected: "num_turns: Int32 not null",
        actual: "num_turns: Int64 not null",
        message: "column num_turns has another type",
      },
    ]);
  });

  it("a dropped column is a schema problem too", async () => {
    fresh();
    const table = readTable(join(dir, firstShard().path));
    rewriteShard(dir, firstShard().path, table.select(table.schema.fields.map((f) => f.name).filter((name) => name !== "num_turns")));
    const { problems } = await verifyOutput(dir);
    expect(problems).toEqual([
      expect.objectContaining({ path: firstShard().path, check: "schema", message: "column num_turns is missing" }),
    ]);
  });

  it("a caller can require another schema", async () => {
    fresh();
    const { problems } = await verifyOutput(dir, { expectedSchema: () => shardSchema({ messages: false, provenance: true }) });
    expect(problems).toEqual(
      manifest.shards.map((shard) => expect.objectContaining({ path: shard.path, check: "schema", message: "unexpected column messages" })),
    );
  });

  it("num_loss_tokens that disagrees with the loss mask is found row by row, and in the shard's sum", async () => {
    fresh();
    const table = readTable(join(dir, firstShard().path));
    let first = true;
    const off = replaceColumn(table, "num_loss_tokens", (data, field) => {
      const values = Int32Array.from(data.values as Int32Array);
      if (first) values[0] = (values[0] as number) + 1;
      first = false;
      return [field, arrow.makeData({ type: new arrow.Int32(), length: data.length, nullCount: 0, data: values })];
    });
    rewriteShard(dir, firstShard().path, off);
    const { problems } = await verifyOutput(dir);
    expect(summary(problems)).toEqual([`${firstShard().path} loss_tokens`, `${firstShard().path} loss_tokens`]);
    expect(problems).toContainEqual(
      expect.objectContaining({ message: expect.stringMatching(/^1 row where num_loss_tokens ≠ sum\(loss_mask\); first: row 0 /) }),
    );
  });

  it("a shard whose metadata names another tokenizer vocabulary than the manifest", async () => {
    fresh();
    manifest.tokenizer.vocab_sha256 = "0".repeat(64);
    writeManifest(dir, manifest);
    const { problems } = await verifyOutput(dir);
    expect(summary(problems)).toEqual(manifest.shards.map((shard) => `${shard.path} metadata`).sort());
    expect(problems[0]).toMatchObject({
      expected: "0".repeat(64),
      message: `${SHARD_METADATA_KEY}.vocab_sha256 differs from the manifest`,
    });
  });

  it("a truncated quarantine file: size, checksum and entries", async () => {
    fresh();
    const file = manifest.quarantine[0] as ListedEntry;
    truncateSync(join(dir, file.path), file.bytes - 10);
    const { problems } = await verifyOutput(dir);
    expect(summary(problems)).toEqual([`${file.path} bytes`, `${file.path} rows`, `${file.path} sha256`]);
    expect(problems.find((problem) => problem.check === "rows")?.message).toMatch(/cut-off last line/);
  });

  it("a truncated stats table: size, checksum, and no longer readable as Parquet", async () => {
    fresh();
    const file = manifest.masking.stats_files[0] as ListedEntry;
    truncateSync(join(dir, file.path), Math.floor(file.bytes / 2));
    const { problems } = await verifyOutput(dir);
    expect(summary(problems)).toEqual([`${file.path} bytes`, `${file.path} schema`, `${file.path} sha256`]);
  });

  it("a missing or damaged manifest is a problem, not an exception", async () => {
    fresh();
    writeFileSync(join(dir, "manifest.json"), "{ not json");
    expect((await verifyOutput(dir)).problems).toEqual([expect.objectContaining({ path: "manifest.json", check: "manifest" })]);
    rmSync(join(dir, "manifest.json"));
    const report = await verifyOutput(dir);
    expect(report).toMatchObject({ manifestFormat: "", filesChecked: 0, problems: [{ path: "manifest.json", check: "manifest" }] });
    writeManifest(dir, { ...manifest, shards: [{ path: "../../etc/passwd", rows: 1 }] });
    expect((await verifyOutput(dir)).problems).toContainEqual(
      expect.objectContaining({ check: "manifest", message: expect.stringContaining("../../etc/passwd") }),
    );
  });

  describe("curation (filtered/ files and the manifest's curation block)", () => {
    type Curated = ManifestJson & {
      counts: Record<string, unknown> & { filtered: number; filtered_by_stage: Record<string, number>; records_in: number };
      curation: { files: ListedEntry[]; by_domain: Record<string, Record<string, number>>; clusters: { largest: number } };
    };
    const curated = async () => {
      fresh();
      await makeCurated(dir);
      manifest = readManifest(dir);
      return manifest as Curated;
    };
    /** Rewrites a filtered file and updates its size and checksum in the manifest, so only content checks can tell. */
    const rewriteFiltered = (m: Curated, file: ListedEntry, text: string) => {
      writeFileSync(join(dir, file.path), text);
      file.bytes = Buffer.byteLength(text);
      file.sha256 = sha256(Buffer.from(text));
      writeManifest(dir, m);
    };

    it("a curated output verifies, its filtered files read like quarantine files", async () => {
      const m = await curated();
      const files: string[] = [];
      const report = await verifyOutput(dir, { onFile: (path) => files.push(path) });
      expect(report.problems).toEqual([]);
      expect(m.curation.files.map((f) => f.path)).toEqual(["filtered/task-00000.jsonl", "filtered/task-00001.jsonl"]);
      for (const file of m.curation.files) expect(files).toContain(file.path);
      expect(m.counts.records_in).toBe((m.counts.samples_out as number) + (m.counts.quarantined as number) + m.counts.filtered);
    });

    it("a real curated run (the demo inputs hold the same trajectories in several formats) verifies", async () => {
      const out = tempDir("lwm-verify-curated-");
      const config = writeConfig(["inputs:", ...demoInputs, "dedup:", "  exact: true", "  near: true"].join("\n"));
      const result = await runJob(await planJob(loadConfig(config, { output: out })), { workers: 1 });
      const curation = result.manifest?.curation;
      if (!curation) throw new Error("the run has no curation block");
      expect(curation.filtered).toBeGreaterThan(0);
      expect(curation.files.length).toBeGreaterThan(0);
      const report = await verifyOutput(out);
      expect(report.problems).toEqual([]);
      expect(report.filesChecked).toBe(
        (result.manifest?.shards.length ?? 0) + (result.manifest?.masking.stats_files.length ?? 0) + curation.files.length + 1,
      );
    });

    it("a manifest from before curation (no counts.filtered) still verifies; one that claims filtered records without files does not", async () => {
      fresh();
      const counts = manifest.counts as Record<string, unknown>;
      delete counts.filtered;
      delete counts.filtered_by_stage;
      writeManifest(dir, manifest);
      expect((await verifyOutput(dir)).problems).toEqual([]);
      counts.filtered = 2;
      counts.filtered_by_stage = { exact: 2 };
      counts.records_in = (counts.records_in as number) + 2;
      writeManifest(dir, manifest);
      expect((await verifyOutput(dir)).problems).toEqual([
        expect.objectContaining({
          path: "manifest.json",
          check: "totals",
          message: "counts.filtered is 2, but the filtered files' entries sum to 0",
        }),
      ]);
    });

    it("an edited filtered file: its checksum differs, and the file is named", async () => {
      const m = await curated();
      const file = m.curation.files[0] as ListedEntry;
      const text = readFileSync(join(dir, file.path), "utf8");
      writeFileSync(join(dir, file.path), text.replace('"stage":"exact"', '"stage":"near!"'));
      const { problems } = await verifyOutput(dir);
      // Same length: only the checksum and the content can tell.
      expect(summary(problems)).toEqual([`${file.path} entries`, `${file.path} sha256`]);
      expect(problems.find((p) => p.check === "entries")?.message).toBe(
        '1 line where stage is not one of read, exact, near, decontaminate, filter, selection; first: line 1 (id "a-2")',
      );
    });

    it("entries without what they matched, or lines that are not JSON, are named with their first line", async () => {
      const m = await curated();
      const [first, second] = m.curation.files as [ListedEntry, ListedEntry];
      const lines = readFileSync(join(dir, first.path), "utf8").trimEnd().split("\n");
      const noTwin = lines.map((line) => {
        const entry = JSON.parse(line) as Json;
        delete entry.kept_id;
        return JSON.stringify(entry);
      });
      rewriteFiltered(m, first, `${noTwin.join("\n")}\n`);
      rewriteFiltered(m, second, "{not json\n{}\n");
      const { problems } = await verifyOutput(dir);
      expect(problems).toEqual([
        expect.objectContaining({
          path: first.path,
          check: "entries",
          message: '2 lines where kept_id is missing (stage exact: the duplicate that stayed); first: line 1 (id "a-2")',
        }),
        expect.objectContaining({
          path: first.path,
          check: "entries",
          message: '2 lines where kept_id is missing (stage near: the duplicate that stayed); first: line 3 (id "c-2")',
        }),
        expect.objectContaining({ path: second.path, check: "entries", message: "1 line where the line is not JSON; first: line 1" }),
        expect.objectContaining({
          path: second.path,
          check: "entries",
          message: "1 line where id is missing or not a string; first: line 2",
        }),
      ]);
    });

    it("entries whose stages disagree with the curation block: the per-stage and per-domain counts are named", async () => {
      const m = await curated();
      const file = m.curation.files[0] as ListedEntry;
      const text = readFileSync(join(dir, file.path), "utf8");
      // a-2 is an exact duplicate; the file now says near (size and checksum updated to match).
      rewriteFiltered(m, file, text.replace('"stage":"exact"', '"stage":"near"'));
      const { problems } = await verifyOutput(dir);
      const domain = (JSON.parse(text.split("\n")[0] as string) as { domain: string }).domain;
      expect(problems.map((p) => p.message).sort()).toEqual(
        [
          `curation.by_domain.${domain}.exact is ${m.curation.by_domain[domain]?.exact}, but the filtered files hold ${(m.curation.by_domain[domain]?.exact ?? 0) - 1} such entries`,
          `curation.by_domain.${domain}.near is ${m.curation.by_domain[domain]?.near ?? 0}, but the filtered files hold ${(m.curation.by_domain[domain]?.near ?? 0) + 1} such entries`,
          `curation.by_stage.exact is ${m.counts.filtered_by_stage.exact}, but the filtered files hold ${(m.counts.filtered_by_stage.exact ?? 0) - 1} such entries`,
          `curation.by_stage.near is ${m.counts.filtered_by_stage.near}, but the filtered files hold ${(m.counts.filtered_by_stage.near ?? 0) + 1} such entries`,
        ].sort(),
      );
      expect(problems.every((p) => p.path === "manifest.json" && p.check === "totals")).toBe(true);
    });

    it("a deleted entry line: the file's entries; a deleted filtered file: missing; a stray one: unlisted", async () => {
      const m = await curated();
      const [first, second] = m.curation.files as [ListedEntry, ListedEntry];
      const lines = readFileSync(join(dir, first.path), "utf8").split("\n");
      writeFileSync(join(dir, first.path), lines.slice(1).join("\n"));
      rmSync(join(dir, second.path));
      writeFileSync(join(dir, "filtered/task-00009.jsonl"), "");
      const { problems } = await verifyOutput(dir);
      expect(summary(problems)).toEqual([
        `${first.path} bytes`,
        `${first.path} rows`,
        `${first.path} sha256`,
        `${second.path} missing`,
        "filtered/task-00009.jsonl unlisted",
      ]);
      expect(problems.find((p) => p.check === "rows")?.message).toBe(
        `the manifest says ${first.rows ?? 4} entries, the file has 3 complete lines`,
      );
    });

    it("counts that do not add up: records_in, counts.filtered against its stages and files, the curation block, the clusters", async () => {
      const m = await curated();
      m.counts.filtered += 1;
      m.curation.clusters.largest = 7;
      writeManifest(dir, m);
      const { problems } = await verifyOutput(dir);
      expect(problems.every((p) => p.path === "manifest.json" && p.check === "totals")).toBe(true);
      expect(problems.map((p) => p.message).sort()).toEqual(
        [
          `counts.filtered is ${m.counts.filtered}, but counts.filtered_by_stage sum to ${m.counts.filtered - 1}`,
          `counts.filtered is ${m.counts.filtered}, but the filtered files' entries sum to ${m.counts.filtered - 1}`,
          `counts.records_in is ${m.counts.records_in}, but counts.samples_out + counts.quarantined + counts.filtered + counts.dropped_by_mixture sum to ${m.counts.records_in + 1}`,
          `curation.filtered is ${m.counts.filtered - 1}, but counts.filtered is ${m.counts.filtered}`,
          "curation.clusters.largest is 7, but the largest size in curation.clusters.sizes is 3",
        ].sort(),
      );
    });

    it("a curation block whose domains do not add up to its stages", async () => {
      const m = await curated();
      const [domain, stages] = Object.entries(m.curation.by_domain)[0] as [string, Record<string, number>];
      stages.exact = (stages.exact ?? 0) + 1;
      writeManifest(dir, m);
      const { problems } = await verifyOutput(dir);
      expect(problems).toContainEqual(
        expect.objectContaining({
          path: "manifest.json",
          check: "totals",
          message: `curation.by_stage.exact is ${m.counts.filtered_by_stage.exact}, but the domains' exact (curation.by_domain) sum to ${(m.counts.filtered_by_stage.exact ?? 0) + 1}`,
        }),
      );
      expect(problems).toContainEqual(
        expect.objectContaining({
          message: expect.stringMatching(new RegExp(`^curation\\.by_domain\\.${domain}\\.exact is \\d+, but the filtered files hold`)),
        }),
      );
    });
  });

  describe("the command", () => {
    afterEach(() => {
      process.exitCode = undefined;
      vi.restoreAllMocks();
    });

    const printed = () => {
      const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
      return () => log.mock.calls.map((call) => String(call[0]));
    };

    it("says OK and leaves the exit status alone on a clean output", async () => {
      fresh();
      const lines = printed();
      await verifyCommand(dir, {});
      expect(process.exitCode).toBeUndefined();
      expect(lines()).toEqual([
        `lwm-data verify: OK — ${manifest.shards.length + manifest.masking.stats_files.length + manifest.quarantine.length + 1} files, ${manifest.shards.length} shards, ${manifest.tokens.total} tokens match the manifest`,
      ]);
    });

    it("prints one line per problem and exits 1; --json prints the report", async () => {
      fresh();
      rmSync(join(dir, firstShard().path));
      const lines = printed();
      await verifyCommand(dir, {});
      expect(process.exitCode).toBe(1);
      expect(lines()[0]).toBe(`${firstShard().path}: missing: listed in the manifest (shard) but not in the output folder`);
      expect(lines()[1]).toMatch(/^lwm-data verify: 1 problem in /);
      process.exitCode = undefined;
      await verifyCommand(dir, { json: true });
      expect(process.exitCode).toBe(1);
      const report = JSON.parse(lines()[2] as string);
      expect(report.problems).toEqual([expect.objectContaining({ path: firstShard().path, check: "missing" })]);
    });
  });
});

describe("lwm-data verify on an SFT output (candidates from a file, no teacher)", () => {
  let out: string;

  beforeAll(async () => {
    const configPath = writeConfig(
      ["inputs:", ...demoInputs, "output:", "  num_buckets: 2", "  row_group_rows: 4", "sft:", "  select: all"].join("\n"),
    );
    const plan = await planJob(loadConfig(configPath));
    const prompts: SftPrompt[] = [];
    for await (const item of readPrompts(plan, new Map())) if (item.kind === "prompts") prompts.push(...item.prompts);
    // Every other prompt gets the real observation (kept), the rest only a malformed answer (rejected).
    const lines = prompts.map((prompt, i) =>
      JSON.stringify({
        prompt_id: prompt.prompt_id,
        candidates: [i % 2 === 0 ? answerText("The command lists the files.", prompt.ground_truth) : "<think>no</think>"],
      }),
    );
    const candidates = join(tempDir("lwm-verify-sft-"), "candidates.jsonl");
    writeFileSync(candidates, `${lines.join("\n")}\n`);
    out = tempDir("lwm-verify-sft-out-");
    await runSft(await planJob(loadConfig(configPath)), { outputDir: out, candidateFiles: [candidates] });
  });

  it("verifies clean, shards and the candidates table; a damaged candidates table is caught", async () => {
    const manifest = readManifest(out) as ManifestJson & { candidates_table: ListedEntry };
    const report = await verifyOutput(out);
    expect(report.problems).toEqual([]);
    expect(report).toMatchObject({
      manifestFormat: "lwm-data/sft",
      filesChecked: manifest.shards.length + 2, // + the candidates table and the dataset card
      tokens: manifest.tokens.total,
    });
    expect(manifest.shards.length).toBeGreaterThan(0);

    const path = join(out, manifest.candidates_table.path);
    truncateSync(path, statSync(path).size - 1);
    const { problems } = await verifyOutput(out);
    expect(summary(problems)).toEqual(["sft/candidates.parquet bytes", "sft/candidates.parquet schema", "sft/candidates.parquet sha256"]);
  });
});
