import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import { exportSwift, type SwiftMessage, swiftSplitTurn } from "../src/export/swift-export.ts";
import { openShard, shardRow } from "../src/inspect/read-shard.ts";
import { readSampleTurnStats } from "../src/inspect/read-turn-stats.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { runJob } from "../src/pipeline/run-job.ts";
import { DEMO_CONFIG, ROOT, tempDir } from "./helpers.ts";

const run = promisify(execFile);

describe("lwm-data export swift", () => {
  it("writes every sample's messages with the run's masking decisions as ms-swift loss flags", async () => {
    const out = tempDir("lwm-export-");
    const result = await runJob(await planJob(loadConfig(DEMO_CONFIG, { output: out })), { workers: 1 });
    const manifest = result.manifest;
    if (!manifest) throw new Error("run did not finish");
    const dir = tempDir("lwm-swift-");
    const { files } = await exportSwift(out, dir);
    // The demo's one refusal: a trained final observation that begins with whitespace (`wc -l`), which
    // ms-swift's ignore_empty_think splits off with Qwen3's empty thinking block (swiftSplitTurn).
    const refused = readFileSync(join(dir, "refused.jsonl"), "utf8")
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    expect(refused.map((r) => r.reason)).toEqual([
      expect.stringMatching(/^message \d+ \(assistant\) is trained and begins with whitespace: ms-swift/),
    ]);
    expect(files.map((f) => [f.split, f.rows, f.refused])).toEqual([["train", manifest.counts.samples_out - 1, 1]]);

    const lines = readFileSync(join(dir, "train.jsonl"), "utf8").trim().split("\n");
    const exported = lines.map((line) => JSON.parse(line) as { messages: SwiftMessage[] });
    let row = 0;
    let assistantTurns = 0;
    for (const shard of manifest.shards) {
      const file = await openShard(join(out, shard.path));
      const stats = new Map<string, boolean[]>();
      for (let i = 0; i < file.numRows; i++) {
        const sample = shardRow(file, i);
        const split = swiftSplitTurn(sample.messages ?? [], true);
        if (refused.some((r) => r.shard === shard.path && r.row === i)) {
          expect(split).toBeDefined();
          expect(sample.messages?.[split as number]?.content).toMatch(/^\s/);
          continue;
        }
        expect(split).toBeUndefined();
        const { messages } = exported[row] as { messages: SwiftMessage[] };
        // Same text, same roles; loss only on assistant turns, equal to the shard's flags.
        expect(messages.map((m) => [m.role, m.content])).toEqual(sample.messages?.map((m) => [m.role, m.content]));
        for (const [k, message] of messages.entries()) {
          if (message.role === "assistant") expect(message.loss).toBe(sample.messages?.[k]?.loss);
          else expect(message).not.toHaveProperty("loss");
        }
        // …and those flags are the stats table's keep/mask decisions, turn by turn.
        const turns = await readSampleTurnStats(join(out, shard.path), sample.id);
        const kept = turns?.rows.sort((a, b) => a.turnIndex - b.turnIndex).map((r) => r.kept) ?? [];
        stats.set(sample.id, kept);
        const losses = messages.filter((m) => m.role === "assistant").map((m) => m.loss);
        expect(losses).toEqual(kept);
        assistantTurns += losses.length;
        row++;
      }
    }
    expect(row).toBe(lines.length);
    expect(assistantTurns).toBeGreaterThan(20);
    // Some turns are masked in the demo, so the flags carry information.
    expect(exported.some((e) => e.messages.some((m) => m.loss === false))).toBe(true);

    const info = JSON.parse(readFileSync(join(dir, "dataset_info.json"), "utf8"));
    expect(info.lwm_train).toMatchObject({ file_name: "train.jsonl", formatting: "sharegpt", columns: { messages: "messages" } });

    // A damaged shard is named in the error, never skipped.
    const damaged = join(out, manifest.shards[0]?.path as string);
    writeFileSync(damaged, "not parquet");
    await expect(exportSwift(out, tempDir())).rejects.toThrow(`${damaged} is not a readable Parquet file`);
  });

  it("refuses a packed output with a message saying what to change", async () => {
    const out = tempDir("lwm-export-packed-");
    await run(join(ROOT, "node_modules/.bin/node"), [
      join(ROOT, "bin/lwm-data.js"),
      "run",
      join(ROOT, "configs/demo-packed.yaml"),
      "-o",
      out,
      "--progress",
      "none",
    ]);
    await expect(exportSwift(out, tempDir())).rejects.toThrow(
      /no messages column: packed rows carry no text form; run the job with pack\.enabled: false/,
    );
  });
});
