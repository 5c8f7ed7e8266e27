import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load-config.ts";
import { type AwbRow, exportAgentWorldBench } from "../src/export/awb-export.ts";
import { openShard, shardRow } from "../src/inspect/read-shard.ts";
import { planJob } from "../src/pipeline/plan.ts";
import { runJob } from "../src/pipeline/run-job.ts";
import { agentWorldBenchReader } from "../src/read/agentworldbench-jsonl.ts";
import { collect, DEMO_CONFIG, demoInputsYaml, ROOT, tempDir, writeConfig } from "./helpers.ts";
import { ensurePythonEnv } from "./support/python-env.ts";

const exec = promisify(execFile);

interface Conversation {
  id: string;
  domain: string;
  system: string;
  turns: { action: string; observation: string; loss: boolean }[];
}

async function conversations(out: string, split: string): Promise<Map<string, Conversation>> {
  const manifest = JSON.parse(readFileSync(join(out, "manifest.json"), "utf8")) as { shards: { path: string; split: string }[] };
  const found = new Map<string, Conversation>();
  for (const shard of manifest.shards.filter((s) => s.split === split)) {
    const file = await openShard(join(out, shard.path));
    for (let i = 0; i < file.numRows; i++) {
      const row = shardRow(file, i);
      const [system, ...rest] = row.messages ?? [];
      const turns = [];
      for (let t = 0; 2 * t + 1 < rest.length; t++)
        turns.push({
          action: rest[2 * t]?.content ?? "",
          observation: rest[2 * t + 1]?.content ?? "",
          loss: rest[2 * t + 1]?.loss ?? false,
        });
      found.set(row.id, { id: row.id, domain: row.domain, system: system?.content ?? "", turns });
    }
  }
  return found;
}

function readRows(path: string): AwbRow[] {
  return readFileSync(path, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as AwbRow);
}

describe("lwm-data export agentworldbench", () => {
  let out: string;
  beforeAll(async () => {
    // The demo with a validation split: held-out trajectories.
    const config = writeConfig(
      ["inputs:", ...demoInputsYaml(), "output:", "  include_messages: true", "  validation_fraction: 0.4", "  split_seed: 1"].join("\n"),
    );
    out = tempDir("lwm-awb-demo-");
    await runJob(await planJob(loadConfig(config, { output: out })), { workers: 1 });
  });

  it("writes one row per evaluated turn of the validation split, each with the whole history, as eval.py reads them", async () => {
    const dir = tempDir("lwm-awb-");
    const result = await exportAgentWorldBench(out, dir);
    const held = await conversations(out, "validation");
    expect(held.size).toBeGreaterThan(3);
    const totalTurns = [...held.values()].reduce((sum, c) => sum + c.turns.length, 0);
    expect(result.files.reduce((sum, f) => sum + f.rows, 0)).toBe(totalTurns);
    expect(result.refused).toBe(0);
    for (const file of result.files) {
      expect(file.path).toBe(join(dir, `${file.domain}_test.jsonl`));
      const rows = readRows(file.path);
      expect(new Set(rows.map((r) => r.id)).size).toBe(file.trajectories);
      for (const row of rows) {
        const conversation = held.get(row.id) as Conversation;
        expect(row.task).toBe(conversation.domain);
        expect(row.system_str).toBe(conversation.system);
        expect(row.total_turns).toBe(conversation.turns.length);
        const t = row.lwm_turn_index;
        expect(row.turn_idx).toBe(t + 1);
        expect(row.prompt).toEqual(conversation.turns.slice(0, t + 1).map((turn, j) => `### Turn ${j + 1}\n**Action:**\n${turn.action}`));
        expect(row.response).toEqual(conversation.turns.slice(0, t + 1).map((turn) => `**Environment Observation:**\n${turn.observation}`));
        expect(row.current_prompt).toBe(row.prompt[t]);
        expect(row.lwm_prompt_id).toBe(`${row.id}#${t}`);
      }
    }

    // Read back by the project's AgentWorldBench reader: the held-out trajectories themselves.
    for (const file of result.files) {
      const items = await collect(agentWorldBenchReader.read(file.path, { maxLineBytes: 1 << 26 }));
      expect(items.every((item) => item.kind === "trajectory")).toBe(true);
      for (const item of items) {
        if (item.kind !== "trajectory") continue;
        const conversation = held.get(item.trajectory.id) as Conversation;
        expect(item.trajectory.system).toBe(conversation.system);
        expect(item.trajectory.turns.map((turn) => [turn.action, turn.observation])).toEqual(
          conversation.turns.map((turn) => [turn.action, turn.observation]),
        );
      }
    }

    // eval.py's inference messages and judge ground truth, rebuilt in Python from every row.
    const python = ensurePythonEnv();
    const { stdout } = await exec(python, [join(ROOT, "test/python/check_awb_export.py"), dir, out]);
    expect(stdout).toMatch(/rows = the validation split's all turns/);
  });

  it("evaluates only trained turns when asked, refuses rows with special-token literals, and says when there is no held-out split", async () => {
    const dir = tempDir("lwm-awb-trained-");
    const result = await exportAgentWorldBench(out, dir, { turns: "trained" });
    const held = await conversations(out, "validation");
    const trained = [...held.values()].reduce((sum, c) => sum + c.turns.filter((t) => t.loss).length, 0);
    expect(result.files.reduce((sum, f) => sum + f.rows, 0)).toBe(trained);
    expect(trained).toBeLessThan([...held.values()].reduce((sum, c) => sum + c.turns.length, 0));

    const demo = tempDir("lwm-awb-train-only-");
    await runJob(await planJob(loadConfig(DEMO_CONFIG, { output: demo })), { workers: 1 });
    await expect(exportAgentWorldBench(demo, tempDir())).rejects.toThrow(
      /has no validation split \(it has train\): run the job with output\.validation_fraction > 0/,
    );

    const literals = tempDir("lwm-awb-literals-");
    await runJob(await planJob(loadConfig(join(ROOT, "test/fixtures/literals/job.yaml"), { output: literals })), { workers: 1 });
    const refused = await exportAgentWorldBench(literals, tempDir(), { split: "train" });
    expect(refused.refused).toBeGreaterThan(0);
    const escapedDir = tempDir("lwm-awb-escaped-");
    const escaped = await exportAgentWorldBench(literals, escapedDir, { split: "train", literals: "escape" });
    const rows = escaped.files.flatMap((f) => readRows(f.path));
    expect(rows.length).toBe(refused.files.reduce((sum, f) => sum + f.rows, 0) + refused.refused);
    // Neutralized: no row sends a control-token literal to the world model or the judge.
    for (const row of rows)
      for (const text of [row.system_str, ...row.prompt, ...row.response]) expect(text).not.toMatch(/<\|im_(?:start|end)\|>/);
  });
});
