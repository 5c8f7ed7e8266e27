import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import * as parquet from "parquet-wasm";
import { beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import { exportMegatron, tokenDtype } from "../src/export/megatron-export.ts";
import { openShard, packedDocuments, shardRow } from "../src/inspect/read-shard.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { runJob } from "../src/pipeline/run-job.ts";
import { samplesToTable } from "../src/write/arrow-batch.ts";
import { OpenShard } from "../src/write/parquet-shard-writer.ts";
import { DEMO_CONFIG, ROOT, tempDir } from "./helpers.ts";
import { ensurePythonEnv } from "./support/python-env.ts";

const exec = promisify(execFile);

/** An indexed dataset read back from its documented layout (independently of the writer). */
function readIndexed(prefix: string): { code: number; documents: number[]; sequences: (Int32Array | Uint16Array | Uint8Array)[] } {
  const idx = readFileSync(`${prefix}.idx`);
  expect(idx.subarray(0, 9).toString("latin1")).toBe("MMIDIDX\x00\x00");
  expect(idx.readBigUInt64LE(9)).toBe(1n);
  const code = idx.readUInt8(17);
  const count = Number(idx.readBigUInt64LE(18));
  const documentCount = Number(idx.readBigUInt64LE(26));
  let at = 34;
  const lengths = Array.from({ length: count }, (_, i) => idx.readInt32LE(at + 4 * i));
  at += 4 * count;
  const pointers = Array.from({ length: count }, (_, i) => Number(idx.readBigInt64LE(at + 8 * i)));
  at += 8 * count;
  const documents = Array.from({ length: documentCount }, (_, i) => Number(idx.readBigInt64LE(at + 8 * i)));
  expect(at + 8 * documentCount).toBe(idx.length);
  const bin = readFileSync(`${prefix}.bin`);
  const size = { 1: 1, 4: 4, 8: 2 }[code] as number;
  const sequences = lengths.map((length, i) => {
    const bytes = bin.buffer.slice(bin.byteOffset + (pointers[i] as number), bin.byteOffset + (pointers[i] as number) + length * size);
    return size === 4 ? new Int32Array(bytes) : size === 2 ? new Uint16Array(bytes) : new Uint8Array(bytes);
  });
  expect(pointers.at(-1) ?? 0).toBe(lengths.slice(0, -1).reduce((sum, n) => sum + n * size, 0));
  expect(bin.length).toBe(lengths.reduce((sum, n) => sum + n * size, 0));
  return { code, documents, sequences };
}

describe("lwm-data export megatron", () => {
  let demo: string;
  beforeAll(async () => {
    demo = tempDir("lwm-megatron-demo-");
    await runJob(await planJob(loadConfig(DEMO_CONFIG, { output: demo })), { workers: 1 });
  });

  it("writes input_ids (int32 for Qwen's vocabulary) and the loss mask (uint8) as indexed datasets, one document per sample", async () => {
    const dir = tempDir("lwm-megatron-");
    const result = await exportMegatron(demo, dir);
    const manifest = JSON.parse(readFileSync(join(demo, "manifest.json"), "utf8"));
    const ids = readIndexed(join(dir, "train"));
    const masks = readIndexed(join(dir, "train_loss_mask"));
    expect([ids.code, masks.code]).toEqual([4, 1]);
    let d = 0;
    for (const shard of [...manifest.shards].sort((a, b) => a.path.localeCompare(b.path))) {
      const file = await openShard(join(demo, shard.path));
      for (let i = 0; i < file.numRows; i++, d++) {
        const row = shardRow(file, i);
        expect(Array.from(ids.sequences[d] as Int32Array)).toEqual(Array.from(row.inputIds));
        expect(Array.from(masks.sequences[d] as Uint8Array)).toEqual(Array.from(row.lossMask));
      }
    }
    expect(ids.sequences.length).toBe(d);
    expect(ids.documents).toEqual(Array.from({ length: d + 1 }, (_, k) => k));
    expect(masks.documents).toEqual(ids.documents);
    expect(result.splits).toMatchObject([
      { split: "train", dtype: "int32", documents: d, tokens: manifest.tokens.total, lossTokens: manifest.tokens.loss },
    ]);
    const meta = JSON.parse(readFileSync(result.metadataPath, "utf8"));
    expect(meta.splits.train.files.map((f: { path: string }) => f.path)).toEqual([
      "train.bin",
      "train.idx",
      "train_loss_mask.bin",
      "train_loss_mask.idx",
    ]);
  });

  it("cuts packed rows into their documents, and appends an end-of-document token when asked", async () => {
    const packed = tempDir("lwm-megatron-packed-");
    await runJob(await planJob(loadConfig(join(ROOT, "configs/demo-packed.yaml"), { output: packed })), { workers: 1 });
    const dir = tempDir("lwm-megatron-packed-out-");
    const result = await exportMegatron(packed, dir, { appendEod: 151643 });
    expect(result.splits.map((s) => s.split)).toEqual(["train", "validation"]);
    const manifest = JSON.parse(readFileSync(join(packed, "manifest.json"), "utf8"));
    for (const split of ["train", "validation"]) {
      const ids = readIndexed(join(dir, split));
      const masks = readIndexed(join(dir, `${split}_loss_mask`));
      let d = 0;
      for (const shard of manifest.shards
        .filter((s: { split: string }) => s.split === split)
        .sort((a: { path: string }, b: { path: string }) => a.path.localeCompare(b.path))) {
        const file = await openShard(join(packed, shard.path));
        for (let i = 0; i < file.numRows; i++)
          for (const doc of packedDocuments(file, i)) {
            expect(Array.from(ids.sequences[d] as Int32Array)).toEqual([...doc.inputIds, 151643]);
            expect(Array.from(masks.sequences[d] as Uint8Array)).toEqual([...doc.lossMask, 0]);
            d++;
          }
      }
      expect(ids.sequences.length).toBe(d);
      expect(
        manifest.shards
          .filter((s: { split: string }) => s.split === split)
          .reduce((n: number, s: { documents: number }) => n + s.documents, 0),
      ).toBe(d);
    }
  });

  it("uses uint16 below 65,500 vocabulary entries (Megatron's rule), refuses ids that do not fit, and Megatron's reader agrees", async () => {
    expect([tokenDtype(50_257), tokenDtype(65_499), tokenDtype(65_500), tokenDtype(151_669)]).toEqual([
      "uint16",
      "uint16",
      "int32",
      "int32",
    ]);
    // A small-vocabulary output: two samples with ids below 50,257.
    const out = tempDir("lwm-megatron-small-");
    await mkdir(join(out, "data"));
    const sample = (id: string, ids: number[], mask: number[]) => ({
      id,
      domain: "terminal",
      source: "x:1",
      inputIds: Int32Array.from(ids),
      lossMask: Uint8Array.from(mask),
      numLossTokens: mask.reduce((a, b) => a + b, 0),
      numTurns: 1,
    });
    const shard = new OpenShard(join(out, "data/train-00000-00000-0000.parquet"), "data/train-00000-00000-0000.parquet", () =>
      new parquet.WriterPropertiesBuilder().build(),
    );
    await shard.writeRowGroup(samplesToTable([sample("a", [1, 50_256, 3], [0, 1, 1]), sample("b", [7], [1])], { messages: false }));
    await shard.finish();
    const manifest = {
      tokenizer: { name: "gpt2", vocab_size: 50_257 },
      shards: [{ path: "data/train-00000-00000-0000.parquet", split: "train" }],
    };
    writeFileSync(join(out, "manifest.json"), JSON.stringify(manifest));
    const dir = tempDir("lwm-megatron-small-out-");
    await exportMegatron(out, dir);
    const ids = readIndexed(join(dir, "train"));
    expect(ids.code).toBe(8);
    expect(ids.sequences.map((s) => Array.from(s))).toEqual([[1, 50_256, 3], [7]]);
    // Megatron's own IndexedDataset and IndexedDatasetBuilder (test/python/check_megatron_export.py).
    const python = ensurePythonEnv();
    const { stdout } = await exec(python, [join(ROOT, "test/python/check_megatron_export.py"), dir, out]);
    expect(stdout).toMatch(/train 2 documents \/ 4 tokens \(uint16\): layout and Megatron's IndexedDataset agree/);

    // The demo's Qwen ids do not fit a 50,257-entry vocabulary's uint16: named, never wrapped.
    const wrong = tempDir("lwm-megatron-wrong-");
    const demoManifest = JSON.parse(readFileSync(join(demo, "manifest.json"), "utf8"));
    writeFileSync(
      join(wrong, "manifest.json"),
      JSON.stringify({ ...demoManifest, tokenizer: { ...demoManifest.tokenizer, vocab_size: 30_000 } }),
    );
    await mkdir(join(wrong, "data"));
    for (const s of demoManifest.shards) writeFileSync(join(wrong, s.path), readFileSync(join(demo, s.path)));
    await expect(exportMegatron(wrong, tempDir())).rejects.toThrow(/row 0: token id \d+ does not fit uint16/);
  });
});
