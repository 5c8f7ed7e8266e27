import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { tableFromIPC } from "apache-arrow";
import * as parquet from "parquet-wasm";
import { beforeAll, describe, expect, it } from "vitest";
import { openShard } from "../src/inspect/read-shard.ts";
import { DEMO_CONFIG, ROOT, tempDir, writeConfig } from "./helpers.ts";

const run = promisify(execFile);
const CLI = join(ROOT, "bin/lwm-data.js");

interface StatsRow {
  id: string;
  turn_index: number;
  class: string;
  kept: boolean;
  keep_ratio: number;
  draw: number;
}

/** Parquet files in a folder, found by listing: their names carry task and part numbers. */
function parquetFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith(".parquet"))
    .sort()
    .map((name) => join(dir, name));
}

/** The run's stats table, read independently of src/inspect, grouped by sample id in turn order. */
function statsById(out: string): Map<string, StatsRow[]> {
  const byId = new Map<string, StatsRow[]>();
  for (const path of parquetFiles(join(out, "stats"))) {
    for (const row of tableFromIPC(parquet.readParquet(readFileSync(path)).intoIPCStream())) {
      const r = row.toJSON() as unknown as StatsRow;
      byId.set(r.id, [...(byId.get(r.id) ?? []), r]);
    }
  }
  for (const rows of byId.values()) rows.sort((a, b) => a.turn_index - b.turn_index);
  return byId;
}

async function shardHolding(out: string, id: string): Promise<string> {
  for (const path of parquetFiles(join(out, "data"))) {
    const shard = await openShard(path);
    const ids = shard.table.getChild("id");
    for (let i = 0; i < shard.numRows; i++) if (ids?.get(i) === id) return path;
  }
  throw new Error(`no shard holds ${id}`);
}

const NOTE = /^▸ turn (\d+): (\w+), (kept|masked) \(draw (\d\.\d{3}) [<≥] keep ratio ([\d.]+)\)/;

describe("inspect shows each turn's class and masking decision", () => {
  let out: string;
  let stats: Map<string, StatsRow[]>;

  beforeAll(async () => {
    out = tempDir();
    await run(process.execPath, [CLI, "run", DEMO_CONFIG, "--output", out, "--progress", "none"]);
    stats = statsById(out);
  });

  it("next to each observation, as the stats table has it", async () => {
    const samples = [...stats.entries()];
    // The sample with the most masked turns, and the one with the most turns.
    const masked = (rows: StatsRow[]) => rows.filter((r) => !r.kept).length;
    const mostMasked = samples.reduce((a, b) => (masked(b[1]) > masked(a[1]) ? b : a));
    const longest = samples.reduce((a, b) => (b[1].length > a[1].length ? b : a));
    expect(masked(mostMasked[1])).toBeGreaterThan(0);

    for (const [id, rows] of new Map([mostMasked, longest])) {
      const { stdout } = await run(process.execPath, [CLI, "inspect", await shardHolding(out, id), "--id", id, "--color", "never"]);
      const kept = rows.filter((r) => r.kept).length;
      expect(stdout).toContain(`turns: ${rows.length}, ${kept} kept, ${rows.length - kept} masked`);

      const lines = stdout.split("\n");
      const noteAt = lines.flatMap((line, i) => (NOTE.test(line) ? [i] : []));
      expect(noteAt).toHaveLength(rows.length);
      rows.forEach((row, k) => {
        const at = noteAt[k] as number;
        const [, turn, turnClass, decision, draw, ratio] = NOTE.exec(lines[at] as string) ?? [];
        expect({ turn: Number(turn), turnClass, kept: decision === "kept", draw, ratio: Number(ratio) }).toEqual({
          turn: row.turn_index,
          turnClass: row.class,
          kept: row.kept,
          draw: row.draw.toFixed(3),
          ratio: row.keep_ratio,
        });
        // The note sits right before the observation it describes, whose text is trained (⟦…⟧)
        // exactly when the turn was kept; the next action that follows is never trained.
        expect(lines[at + 1]).toBe("<|im_start|>assistant");
        const turnText = lines.slice(at + 1, noteAt[k + 1] ?? lines.length).join("\n");
        expect(turnText.includes("⟦"), `${id} turn ${k}`).toBe(row.kept);
      });
    }
  });

  it("says in one line that there is no stats table when the run made no per-turn decisions", async () => {
    const dir = tempDir();
    const config = writeConfig(
      `inputs:\n  - path: ${join(ROOT, "data/demo/search/agent-trace.jsonl")}\nmask:\n  policy: all-observations\n`,
      dir,
    );
    await run(process.execPath, [CLI, "run", config, "--output", join(dir, "out"), "--progress", "none"]);
    const [shard] = parquetFiles(join(dir, "out/data"));
    const { stdout } = await run(process.execPath, [CLI, "inspect", shard as string, "--color", "never"]);
    // `--no-color`, the common spelling, is `--color never`.
    expect((await run(process.execPath, [CLI, "inspect", shard as string, "--no-color"])).stdout).toBe(stdout);
    expect(stdout).not.toContain("\x1b[");
    expect(stdout.match(/^turns: .*$/gm)).toEqual([expect.stringMatching(/^turns: no stats table .*all-observations/)]);
    expect(stdout).not.toMatch(/^▸ turn/m);
    expect(stdout).toContain("⟦"); // all-observations: the observation is still trained and shown
  });
});
