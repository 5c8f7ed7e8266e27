import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tableFromIPC } from "apache-arrow";
import * as parquet from "parquet-wasm";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { runJob } from "../src/pipeline/run-job.ts";
import { readPrompts } from "../src/sft/prompts/read-prompts.ts";
import type { SftPrompt } from "../src/sft/prompts/sft-prompt.ts";
import { runSft } from "../src/sft/run-sft.ts";
import { answerText } from "../src/sft/sft-sample.ts";
import { verifyOutput } from "../src/verify/verify-output.ts";
import { demoInputsYaml, tempDir, writeConfig } from "./helpers.ts";

const DEMO_INPUTS = demoInputsYaml().join("\n");

/** A demo job with extra YAML (pack, output settings), run in one process; returns the output folder and manifest. */
async function runDemo(extra: string, workers = 1) {
  const out = tempDir("lwm-pack-");
  const config = writeConfig(`inputs:\n${DEMO_INPUTS}\noutput:\n  num_buckets: 2\n  row_group_rows: 3\n${extra}`);
  const result = await runJob(await planJob(loadConfig(config, { output: out })), { workers });
  if (!result.manifest) throw new Error("run did not finish");
  return { out, manifest: result.manifest };
}

interface Document {
  id: string;
  part: number;
  domain: string;
  ids: number[];
  mask: number[];
}

/** Every row of every shard in `data/` as plain JS (packed or not). */
function readRows(out: string): Record<string, unknown>[] {
  const rows: Record<string, unknown>[] = [];
  for (const name of readdirSync(join(out, "data")).sort()) {
    const table = tableFromIPC(parquet.readParquet(new Uint8Array(readFileSync(join(out, "data", name)))).intoIPCStream());
    for (const row of table) rows.push({ ...(row?.toJSON() as Record<string, unknown>), file: name });
  }
  return rows;
}

const list = (value: unknown): number[] => Array.from((value as { toArray(): ArrayLike<number> }).toArray());
const strings = (value: unknown): string[] => Array.from((value as { toArray(): ArrayLike<string> }).toArray());

/** Unpacks packed rows into their documents, checking each row's own structure on the way. */
function documentsOfPackedRows(rows: Record<string, unknown>[], seqLen: number): Document[] {
  const documents: Document[] = [];
  for (const row of rows) {
    const ids = list(row.input_ids);
    const mask = list(row.loss_mask);
    const positions = list(row.position_ids);
    const cu = list(row.cu_seqlens);
    const docIds = strings(row.document_ids);
    expect(ids.length).toBeLessThanOrEqual(seqLen);
    expect(ids.length).toBe(row.num_tokens);
    expect(mask.length).toBe(ids.length);
    expect(cu[0]).toBe(0);
    expect(cu.at(-1)).toBe(ids.length);
    expect(docIds.length).toBe(cu.length - 1);
    expect(row.num_documents).toBe(docIds.length);
    expect(mask.reduce((a, b) => a + b, 0)).toBe(row.num_loss_tokens);
    docIds.forEach((id, d) => {
      const [start, end] = [cu[d] as number, cu[d + 1] as number];
      expect(end).toBeGreaterThan(start);
      // Positions restart at 0 at each document boundary and count up inside it.
      expect(positions.slice(start, end)).toEqual(Array.from({ length: end - start }, (_, p) => p));
      documents.push({
        id,
        part: list(row.document_parts)[d] as number,
        domain: strings(row.document_domains)[d] as string,
        ids: ids.slice(start, end),
        mask: mask.slice(start, end),
      });
    });
  }
  return documents;
}

/** (document, position, token, mask) tuples, sorted: a multiset to compare. */
function tuples(documents: Document[]): string[] {
  return documents.flatMap((d) => d.ids.map((token, p) => `${d.id}#${d.part}\t${p}\t${token}\t${d.mask[p]}`)).sort();
}

describe("sequence packing in a run", () => {
  it("loses and duplicates no token: (document, position, token, mask) multiset equals the unpacked run's", async () => {
    const plain = await runDemo("");
    const packed = await runDemo("pack:\n  enabled: true\n  seq_len: 32768\n  buffer_documents: 5\n");
    const unpacked: Document[] = readRows(plain.out).map((row) => ({
      id: String(row.id),
      part: 0,
      domain: String(row.domain),
      ids: list(row.input_ids),
      mask: list(row.loss_mask),
    }));
    const documents = documentsOfPackedRows(readRows(packed.out), 32768);
    expect(documents.length).toBe(unpacked.length);
    expect(tuples(documents)).toEqual(tuples(unpacked));
    // Best-fit made fewer rows than documents, and the manifest says how full they are.
    const packing = packed.manifest.packing;
    expect(packing?.documents).toBe(unpacked.length);
    expect(packing?.rows).toBe(readRows(packed.out).length);
    expect(packing?.rows).toBeLessThan(unpacked.length);
    expect(packing?.tokens).toBe(plain.manifest.tokens.total);
    expect(packing?.efficiency).toBeCloseTo(plain.manifest.tokens.total / ((packing?.rows ?? 0) * 32768), 5);
    expect(packed.manifest.counts.samples_out).toBe(plain.manifest.counts.samples_out);
  });

  it("splits long records at turn boundaries: every piece fits, trained tokens are neither lost nor repeated", async () => {
    const seqLen = 1024;
    const plain = await runDemo("");
    const packed = await runDemo(`pack:\n  enabled: true\n  seq_len: ${seqLen}\n  overlong: split\n  context_turns: 1\n`);
    const documents = documentsOfPackedRows(readRows(packed.out), seqLen);
    const fit = packed.manifest.packing?.fit;
    expect(fit?.split_records).toBeGreaterThan(0);
    expect(packed.manifest.counts.documents).toBe(documents.length);
    expect(packed.manifest.counts.samples_out + packed.manifest.counts.quarantined).toBe(packed.manifest.counts.records_in);

    const plainRows = new Map(readRows(plain.out).map((row) => [String(row.id), row]));
    const byRecord = Map.groupBy(documents, (d) => d.id);
    let checkedSplit = 0;
    for (const [id, pieces] of byRecord) {
      const whole = plainRows.get(id);
      expect(whole, id).toBeDefined();
      expect(pieces.map((p) => p.part).sort((a, b) => a - b)).toEqual(pieces.map((_, k) => k));
      if (pieces.length < 2) continue;
      // Each piece starts with the record's own system message, tokenized the same way.
      const wholeIds = list(whole?.input_ids);
      for (const piece of pieces) expect(piece.ids.slice(0, 16)).toEqual(wholeIds.slice(0, 16));
      const truncated = pieces.some((p) => p.ids.length === seqLen);
      if (truncated) continue;
      // Context turns are untrained, so the trained tokens of the pieces are exactly the record's.
      const trained = (ids: number[], mask: number[]) => ids.filter((_, i) => mask[i] === 1);
      // Best-fit packing may place a later piece in an earlier row: compare in the record's order.
      const inOrder = pieces.toSorted((a, b) => a.part - b.part);
      expect(inOrder.flatMap((p) => trained(p.ids, p.mask))).toEqual(trained(wholeIds, list(whole?.loss_mask)));
      checkedSplit += 1;
    }
    expect(checkedSplit).toBeGreaterThan(0);
  });

  it("overlong: quarantine sends long records to quarantine with the reason; truncate cuts them to seq_len", async () => {
    const quarantined = await runDemo("pack:\n  enabled: true\n  seq_len: 2048\n  overlong: quarantine\n");
    const longOnes = readRows((await runDemo("")).out).filter((row) => Number(row.num_tokens) > 2048).length;
    expect(longOnes).toBeGreaterThan(0);
    expect(quarantined.manifest.counts.quarantined_by_stage).toEqual({ pack: longOnes });
    const reasons = readFileSync(join(quarantined.out, "quarantine/task-00000.jsonl"), "utf8").trim().split("\n");
    for (const line of reasons) expect(JSON.parse(line).reason).toMatch(/tokens, longer than pack\.seq_len 2048/);

    const truncated = await runDemo("pack:\n  enabled: true\n  seq_len: 2048\n  overlong: truncate\n");
    expect(truncated.manifest.counts.quarantined).toBe(0);
    expect(truncated.manifest.packing?.fit.truncated_records).toBe(longOnes);
    for (const d of documentsOfPackedRows(readRows(truncated.out), 2048)) expect(d.part).toBe(0);
  });

  it("splits by trajectory id: same split for every piece, deterministic, and independent of workers", async () => {
    const extra = "  validation_fraction: 0.3\npack:\n  enabled: true\n  seq_len: 1024\n";
    const one = await runDemo(extra, 1);
    const two = await runDemo(extra, 2);
    const names = readdirSync(join(one.out, "data")).sort();
    expect(names.some((n) => n.startsWith("validation-"))).toBe(true);
    expect(names.some((n) => n.startsWith("train-"))).toBe(true);
    expect(readdirSync(join(two.out, "data")).sort()).toEqual(names);
    for (const name of names)
      expect(readFileSync(join(two.out, "data", name)).equals(readFileSync(join(one.out, "data", name)))).toBe(true);
    expect(readFileSync(join(two.out, "README.md"), "utf8")).toBe(readFileSync(join(one.out, "README.md"), "utf8"));

    const splitOf = new Map<string, string>();
    for (const row of readRows(one.out)) {
      const split = String(row.file).split("-")[0] as string;
      for (const id of strings(row.document_ids)) {
        expect(splitOf.get(id) ?? split, id).toBe(split);
        splitOf.set(id, split);
      }
    }
    const { splits } = one.manifest;
    expect(Object.keys(splits).sort()).toEqual(["train", "validation"]);
    expect((splits.train?.samples ?? 0) + (splits.validation?.samples ?? 0)).toBe(one.manifest.counts.samples_out);
    expect([...splitOf.values()].filter((s) => s === "validation").length).toBe(splits.validation?.samples);
  });

  it("writes a dataset card whose YAML names each split's files and the packed features", async () => {
    const { out } = await runDemo("  validation_fraction: 0.3\npack:\n  enabled: true\n  seq_len: 4096\n");
    const card = readFileSync(join(out, "README.md"), "utf8");
    expect(card).toMatch(/^---\n/);
    expect(card).toContain("path: data/train-*.parquet");
    expect(card).toContain("path: data/validation-*.parquet");
    expect(card).toContain("- name: cu_seqlens\n      list: int32");
    expect(card).toContain("config_name: turn_stats");
    expect(card).toMatch(/efficiency \d+\.\d%/);
    const plain = readFileSync(join((await runDemo("  include_messages: true\n")).out, "README.md"), "utf8");
    expect(plain).not.toContain("data/validation-");
    expect(plain).toContain("- name: messages");
  });

  it("packs SFT samples too: rows within seq_len, one document per kept prompt, split by trajectory, verify clean", async () => {
    const seqLen = 2048;
    const config = writeConfig(
      `inputs:\n${DEMO_INPUTS}\noutput:\n  num_buckets: 2\n  validation_fraction: 0.3\npack:\n  enabled: true\n  seq_len: ${seqLen}\nsft:\n  select: all\n`,
    );
    const plan = await planJob(loadConfig(config));
    const prompts: SftPrompt[] = [];
    for await (const item of readPrompts(plan, new Map())) if (item.kind === "prompts") prompts.push(...item.prompts);
    const candidates = join(tempDir("lwm-pack-sft-"), "candidates.jsonl");
    const answer = (p: SftPrompt) => ({
      prompt_id: p.prompt_id,
      candidates: [answerText("It returns the listed output.", p.ground_truth)],
    });
    writeFileSync(candidates, `${prompts.map((p) => JSON.stringify(answer(p))).join("\n")}\n`);
    const out = tempDir("lwm-pack-sft-out-");
    const { manifest } = await runSft(plan, { outputDir: out, candidateFiles: [candidates] });

    const documents = documentsOfPackedRows(readRows(out), seqLen);
    expect(documents.length).toBe(manifest.counts.kept);
    // Samples longer than a row are failed prompts with the reason, never cut.
    // (Of the selected turns, those without context or in conflict are skipped: docs/sft.md "SFT workflow".)
    expect(manifest.selection.turns).toBe(prompts.length);
    expect(manifest.counts.kept + manifest.counts.failed + manifest.counts.rejected).toBe(manifest.selection.prompts);
    expect(manifest.counts.failed).toBeGreaterThan(0);
    expect(manifest.packing?.documents).toBe(manifest.counts.kept);
    const trajectoryOf = new Map(prompts.map((p) => [p.prompt_id, p.trajectory_id]));
    const splitOfTrajectory = new Map<string, string>();
    for (const row of readRows(out)) {
      for (const id of strings(row.document_ids)) {
        const trajectory = trajectoryOf.get(id) as string;
        const split = String(row.file).split("-")[0] as string;
        expect(splitOfTrajectory.get(trajectory) ?? split).toBe(split);
        splitOfTrajectory.set(trajectory, split);
      }
    }
    expect(new Set(splitOfTrajectory.values())).toEqual(new Set(["train", "validation"]));
    expect((await verifyOutput(out)).problems).toEqual([]);
    expect(readFileSync(join(out, "README.md"), "utf8")).toContain("## Packing");
  });
});
