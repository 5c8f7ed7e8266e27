import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tableFromIPC } from "apache-arrow";
import * as parquet from "parquet-wasm";
import { beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import { lossMask } from "../src/mask/loss-mask.ts";
import type { WeightedMessage } from "../src/mask/loss-weights.ts";
import { type FitSettings, type FitTools, fitToLength } from "../src/pack/fit-to-length.ts";
import { dropUntrainedPieces, trainsAnyToken } from "../src/pack/untrained-pieces.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { runJob } from "../src/pipeline/run-job.ts";
import { encodeSegments } from "../src/tokenize/encode-segments.ts";
import { demoInputsYaml, tempDir, writeConfig } from "./helpers.ts";

/** Deterministic words, distinct per (seed, index): observations that are all new information. */
function words(seed: number, count: number): string {
  return Array.from({ length: count }, (_, i) => `w${((seed * 7919 + i * 104729) % 999983).toString(36)}`).join(" ");
}

describe("dropUntrainedPieces", () => {
  const piece = (mask: number[], weights?: number[]) => ({
    lossMask: Uint8Array.from(mask),
    ...(weights ? { lossWeight: Float32Array.from(weights) } : {}),
  });

  it("keeps the pieces that train a token and counts the rest", () => {
    const pieces = [piece([0, 1, 1]), piece([0, 0, 0]), piece([0, 0, 1]), piece([0, 0])];
    const { kept, dropped } = dropUntrainedPieces(pieces);
    expect(kept).toEqual([pieces[0], pieces[2]]);
    expect(dropped).toBe(2);
  });

  it("a record none of whose pieces trains keeps its first piece, so it is still written once", () => {
    const pieces = [piece([0, 0]), piece([0, 0, 0])];
    expect(dropUntrainedPieces(pieces)).toEqual({ kept: [pieces[0]], dropped: 1 });
    expect(dropUntrainedPieces([])).toEqual({ kept: [], dropped: 0 });
  });

  it("with weights, a token trains when its mask is 1 and its weight above 0", () => {
    expect(trainsAnyToken(piece([0, 1], [0, 0.5]))).toBe(true);
    expect(trainsAnyToken(piece([0, 0], [0, 0]))).toBe(false);
    // A weight of 0 under a mask bit of 1 would train nothing: not counted as training.
    expect(trainsAnyToken(piece([0, 1], [0, 0]))).toBe(false);
  });
});

describe("fitToLength: split pieces that train nothing", () => {
  let tools: FitTools;
  beforeAll(async () => {
    const plan = await planJob(loadConfig(writeConfig(`inputs:\n${demoInputsYaml()[0]}\n`)));
    tools = { renderer: plan.renderer, tokenizer: plan.tokenizer };
  });

  /** System + 6 turns of ~120-word observations; `trained(t)` says whether turn t's observation carries the loss. */
  function sample(trained: (turn: number) => boolean, weight?: number) {
    const messages: WeightedMessage[] = [{ role: "system", content: "You simulate a shell.", loss: false }];
    for (let t = 0; t < 6; t++) {
      messages.push({ role: "user", content: `cat part${t}.txt`, loss: false });
      messages.push({ role: "assistant", content: words(t + 1, 120), loss: trained(t), ...(weight && trained(t) ? { weight } : {}) });
    }
    const encoded = encodeSegments(tools.renderer.renderSegments(messages), tools.tokenizer);
    return { messages, encoded, lossMask: lossMask(encoded, messages) };
  }
  const settings: FitSettings = { seqLen: 1500, overlong: "split", contextTurns: 1 };

  it("leaves out the pieces whose turns are all masked; the split points are those of the fully trained record", () => {
    // Control: every turn trained. The split depends on token counts only, so it is the same
    // split; its later pieces hold turns 2..5, which the masked record does not train.
    const all = fitToLength(
      sample(() => true),
      settings,
      tools,
    );
    expect(all.length).toBeGreaterThanOrEqual(3);
    expect(all.every(trainsAnyToken)).toBe(true);
    const firstTurns = all[0]?.numTurns as number;
    expect(firstTurns).toBeGreaterThanOrEqual(2);

    const masked = fitToLength(
      sample((t) => t < firstTurns),
      settings,
      tools,
    );
    expect(masked).toHaveLength(1);
    expect(masked[0]?.untrainedPiecesDropped).toBe(all.length - 1);
    expect(Array.from(masked[0]?.inputIds ?? [])).toEqual(Array.from(all[0]?.inputIds ?? []));
    expect(Array.from(masked[0]?.lossMask ?? [])).toEqual(Array.from(all[0]?.lossMask ?? []));
  });

  it("a middle piece that trains nothing goes, the ones around it stay (and the record is written with them)", () => {
    const all = fitToLength(
      sample(() => true),
      settings,
      tools,
    );
    const first = all[0]?.numTurns as number;
    const second = all[1]?.numTurns as number;
    // Only the second piece's own turns untrained (its carried context is untrained anyway).
    const pieces = fitToLength(
      sample((t) => t < first || t >= first + second),
      settings,
      tools,
    );
    expect(pieces).toHaveLength(all.length - 1);
    expect(pieces.every(trainsAnyToken)).toBe(true);
    expect(pieces[0]?.untrainedPiecesDropped).toBe(1);
    expect(pieces.slice(1).every((p) => p.untrainedPiecesDropped === undefined)).toBe(true);
  });

  it("a record that trains nothing keeps its first piece; one that fits whole is never touched", () => {
    const all = fitToLength(
      sample(() => true),
      settings,
      tools,
    );
    const none = fitToLength(
      sample(() => false),
      settings,
      tools,
    );
    expect(none).toHaveLength(1);
    expect(none[0]?.untrainedPiecesDropped).toBe(all.length - 1);
    expect(trainsAnyToken(none[0] as { lossMask: Uint8Array })).toBe(false);
    const whole = fitToLength(
      sample(() => false),
      { ...settings, seqLen: 1 << 16 },
      tools,
    );
    expect(whole).toHaveLength(1);
    expect(whole[0]?.untrainedPiecesDropped).toBeUndefined();
  });

  it("with mask.weights the same pieces go, and every kept piece has a weight above 0", () => {
    const all = fitToLength(
      sample(() => true),
      settings,
      tools,
    );
    const firstTurns = all[0]?.numTurns as number;
    const weighted = fitToLength(
      sample((t) => t < firstTurns, 0.5),
      { ...settings, weights: true },
      tools,
    );
    expect(weighted).toHaveLength(1);
    expect(weighted[0]?.untrainedPiecesDropped).toBe(all.length - 1);
    expect(Math.max(...(weighted[0]?.lossWeight ?? []))).toBeCloseTo(0.5, 6);
  });
});

/** Every row of every shard in `data/` as plain JS. */
function readRows(out: string): Record<string, unknown>[] {
  const rows: Record<string, unknown>[] = [];
  for (const name of readdirSync(join(out, "data")).sort()) {
    const table = tableFromIPC(parquet.readParquet(new Uint8Array(readFileSync(join(out, "data", name)))).intoIPCStream());
    for (const row of table) rows.push(row?.toJSON() as Record<string, unknown>);
  }
  return rows;
}
const list = (value: unknown): number[] => Array.from((value as { toArray(): ArrayLike<number> }).toArray());
const strings = (value: unknown): string[] => Array.from((value as { toArray(): ArrayLike<string> }).toArray());

describe("a packed job with split pieces that train nothing", () => {
  /**
   * repeats: turn 0 is new, turns 1..7 repeat it word for word (Boilerplate, kept 0 here), so
   * only the first piece trains. silent: an os record, every class kept 0 for os: none of its
   * pieces trains. short-silent: an os record that fits whole. fresh: every turn new, trained.
   */
  function writeInput(dir: string): string {
    const turn = (action: string, observation: string) => ({ action, observation });
    const lines = [
      { id: "repeats", domain: "terminal", turns: Array.from({ length: 8 }, (_, t) => turn(`cat notes.txt # ${t}`, words(1, 150))) },
      { id: "silent", domain: "os", turns: Array.from({ length: 8 }, (_, t) => turn(`open window ${t}`, words(20 + t, 150))) },
      { id: "short-silent", domain: "os", turns: [turn("open window", words(40, 30))] },
      { id: "fresh", domain: "terminal", turns: Array.from({ length: 3 }, (_, t) => turn(`ls dir${t}`, words(60 + t, 40))) },
    ];
    const path = join(dir, "input.jsonl");
    writeFileSync(path, `${lines.map((line) => JSON.stringify(line)).join("\n")}\n`);
    return path;
  }

  async function run(extraMask = "", pack = "enabled: true") {
    const dir = tempDir("lwm-untrained-");
    const input = writeInput(dir);
    const zero = "{ Echo: 0, Boilerplate: 0, Retrieval: 0, Expansion: 0, Transform: 0, Action: 0, Other: 0 }";
    const config = writeConfig(
      `inputs:\n  - path: ${input}\n    format: canonical-jsonl\noutput:\n  num_buckets: 1\n` +
        `pack:\n  ${pack}\n  seq_len: 1024\n  overlong: split\n  context_turns: 1\n` +
        `mask:\n  policy: turn-stats\n  keep: { Boilerplate: 0 }\n  domain_keep: { os: ${zero} }\n${extraMask}`,
      dir,
    );
    const result = await runJob(await planJob(loadConfig(config, { output: join(dir, "out") })), { workers: 1 });
    if (!result.manifest) throw new Error("run did not finish");
    return { out: join(dir, "out"), manifest: result.manifest };
  }

  /** Per document: its record, part, and trained tokens (weighted ones with `weights`). */
  function documents(out: string) {
    const docs: { id: string; part: number; trained: number; weighted: number }[] = [];
    const rows = readRows(out);
    for (const row of rows) {
      const cu = list(row.cu_seqlens);
      const mask = list(row.loss_mask);
      const weight = row.loss_weight ? list(row.loss_weight) : undefined;
      strings(row.document_ids).forEach((id, d) => {
        const [start, end] = [cu[d] as number, cu[d + 1] as number];
        docs.push({
          id,
          part: list(row.document_parts)[d] as number,
          trained: mask.slice(start, end).reduce((a, b) => a + b, 0),
          weighted: weight ? weight.slice(start, end).filter((w) => w > 0).length : 0,
        });
      });
    }
    return { rows, docs };
  }

  it("leaves the untrained pieces out, counts them, and every row but an untrained record's trains a token", async () => {
    const { out, manifest } = await run();
    const { rows, docs } = documents(out);
    const fit = manifest.packing?.fit;
    const byId = Map.groupBy(docs, (d) => d.id);
    expect(byId.get("repeats")?.map((d) => d.part)).toEqual([0]);
    expect(byId.get("silent")?.map((d) => d.part)).toEqual([0]);
    expect(byId.get("short-silent")).toHaveLength(1);
    expect(byId.get("fresh")).toHaveLength(1);
    expect(byId.get("repeats")?.[0]?.trained).toBeGreaterThan(0);
    expect(fit?.untrained_pieces_dropped).toBeGreaterThanOrEqual(2);
    // Both long records were cut; each is counted as split with the one piece it kept.
    expect(fit?.split_records).toBe(2);
    expect(fit?.split_pieces).toBe(2);
    // The dataset card says what is not in the rows, with the manifest's numbers.
    const card = readFileSync(join(out, "README.md"), "utf8");
    expect(card).toContain(
      `To fit: 2 record(s) were split at turns (2 pieces written); ${fit?.untrained_pieces_dropped} split piece(s) that train no token were left out (\`manifest.json\` \`packing.fit\`).`,
    );
    // The two os records train nothing: counted, not dropped.
    expect(manifest.counts.samples_untrained).toBe(2);
    expect(
      docs
        .filter((d) => d.trained === 0)
        .map((d) => d.id)
        .sort(),
    ).toEqual(["short-silent", "silent"]);
    const { counts } = manifest;
    expect(counts.samples_out + counts.quarantined + counts.filtered).toBe(counts.records_in);
    expect(counts.documents).toBe(docs.length);
    for (const row of rows) {
      const ids = strings(row.document_ids);
      if (ids.every((id) => id.includes("silent"))) continue;
      expect(Number(row.num_loss_tokens), ids.join(",")).toBeGreaterThan(0);
    }

    // Control: unpacked, the same records are longer than seq_len, and "repeats" trains exactly
    // the tokens its first piece does: the rest of it, the pieces left out, would have trained
    // nothing (written, a row holding only one of them has labels all -100).
    const whole = new Map(readRows((await run("", "enabled: false")).out).map((row) => [String(row.id), row]));
    for (const id of ["repeats", "silent"]) expect(Number(whole.get(id)?.num_tokens)).toBeGreaterThan(1024);
    expect(Number(whole.get("repeats")?.num_loss_tokens)).toBe(byId.get("repeats")?.[0]?.trained);
    expect(Number(whole.get("silent")?.num_loss_tokens)).toBe(0);
  });

  it("with mask.weights the same pieces go and every written piece but the untrained records' has a weight above 0", async () => {
    const plain = await run();
    const weighted = await run("  weights: { enabled: true, by_domain: { terminal: 0.5 } }\n");
    expect(weighted.manifest.packing?.fit).toEqual(plain.manifest.packing?.fit);
    expect(weighted.manifest.packing?.fit.untrained_pieces_dropped).toBeGreaterThanOrEqual(2);
    expect(weighted.manifest.counts.samples_untrained).toBe(2);
    const { docs } = documents(weighted.out);
    expect(docs.map((d) => `${d.id}#${d.part}`).sort()).toEqual(
      documents(plain.out)
        .docs.map((d) => `${d.id}#${d.part}`)
        .sort(),
    );
    for (const doc of docs) expect(doc.weighted, doc.id).toBe(doc.trained);
  });
});
