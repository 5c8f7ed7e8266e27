import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { tableFromIPC } from "apache-arrow";
import * as parquet from "parquet-wasm";
import { describe, expect, it } from "vitest";
import { codePointSlice } from "../src/controls/control-instruction.ts";
import type { Manifest } from "../src/output/manifest.ts";
import { demoInputsYaml, ROOT, tempDir, writeConfig } from "./helpers.ts";
import { snapshot } from "./scale-helpers.ts";

const exec = promisify(execFile);
const CLI = join(ROOT, "bin/lwm-data.js");

interface Control {
  label: string;
  turn: number;
  start: number;
  end: number;
}

interface Row {
  id: string;
  domain: string;
  control_kind: string;
  control_instruction: string;
  controls: Control[];
  messages: { role: string; content: string }[];
  split: string;
}

async function cli(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return exec(process.execPath, [CLI, ...args], { cwd: ROOT, maxBuffer: 1 << 26 });
}

/** Every row of a Parquet file as plain values. */
function readRows(path: string): Record<string, unknown>[] {
  const table = tableFromIPC(parquet.readParquet(new Uint8Array(readFileSync(path))).intoIPCStream());
  return table.toArray().map((row) => JSON.parse(JSON.stringify(row.toJSON())) as Record<string, unknown>);
}

function shardRows(out: string): Row[] {
  return readdirSync(join(out, "data"))
    .sort()
    .flatMap((name) =>
      readRows(join(out, "data", name)).map((row) => ({ ...(row as unknown as Row), split: name.split("-")[0] as string })),
    );
}

/** The demo with controls on, into a fresh folder; `settings` are more config lines. */
async function runDemo(settings: string[] = []): Promise<string> {
  const dir = tempDir();
  const config = writeConfig(
    ["inputs:", ...demoInputsYaml(), "output: { dir: out, num_buckets: 2, include_messages: true }", ...settings, ""].join("\n"),
    dir,
  );
  await cli("run", config, "--progress", "none");
  return join(dir, "out");
}

describe("controls end to end (the demo data)", () => {
  it("labels edge cases with evidence in their observations, states them in the system message, and counts them", async () => {
    const out = await runDemo(["controls: { enabled: true, share: 1.0, counterfactual_share: 0.5 }"]);
    const rows = shardRows(out);
    const manifest = JSON.parse(readFileSync(join(out, "manifest.json"), "utf8")) as Manifest;
    const controls = manifest.controls;
    expect(controls).toBeDefined();
    expect(manifest.layout.controls).toBe(true);

    const labelled = rows.filter((row) => row.controls.length > 0);
    expect(labelled.length).toBe(controls?.labelled);
    expect(new Set(labelled.map((row) => row.domain)).size).toBeGreaterThanOrEqual(4);
    for (const row of labelled) {
      expect(row.control_kind).toBe("instructed");
      // The instruction is in the rendered system message, under its heading.
      expect(row.messages[0]?.content).toContain(`## Environment behaviour\n\n${row.control_instruction}`);
      for (const control of row.controls) {
        const observation = row.messages[2 + 2 * control.turn];
        expect(observation?.role).toBe("assistant");
        const evidence = codePointSlice(observation?.content ?? "", control.start, control.end);
        expect(evidence.trim().length, `${row.id} ${control.label}`).toBeGreaterThan(0);
        // Evidence, not the whole observation.
        expect(evidence.length).toBeLessThan(2000);
      }
    }
    // Rows without an edge case carry no instruction.
    for (const row of rows.filter((r) => r.control_kind === "none")) {
      expect(row.control_instruction).toBe("");
      expect(row.messages[0]?.content).not.toContain("## Environment behaviour");
    }
    // Counterfactuals: <id>#normal, no label, the normal instruction, in their record's split,
    // and only the turns before the record's first edge case.
    const counterfactuals = rows.filter((row) => row.control_kind === "counterfactual");
    expect(counterfactuals.length).toBe(controls?.counterfactual);
    expect(counterfactuals.length).toBeGreaterThan(0);
    const byId = new Map(rows.map((row) => [row.id, row]));
    for (const row of counterfactuals) {
      expect(row.id.endsWith("#normal")).toBe(true);
      expect(row.controls).toEqual([]);
      expect(row.control_instruction).toMatch(/^The environment behaves normally/);
      const record = byId.get(row.id.slice(0, -"#normal".length)) as Row;
      expect(record.split).toBe(row.split);
      const first = Math.min(...record.controls.map((control) => control.turn));
      expect((row.messages.length - 1) / 2).toBe(first);
      expect(row.messages.slice(1)).toEqual(record.messages.slice(1, row.messages.length));
    }
    // Labels per domain: the manifest's equal the shards'.
    const counted: Record<string, Record<string, number>> = {};
    for (const row of labelled)
      for (const control of row.controls) {
        counted[row.domain] ??= {};
        const domain = counted[row.domain] as Record<string, number>;
        domain[control.label] = (domain[control.label] ?? 0) + 1;
      }
    expect(controls?.labels).toEqual(counted);

    // The turn-stats table has the labels of each turn.
    const stats = readdirSync(join(out, "stats")).flatMap((name) => readRows(join(out, "stats", name)));
    const statLabels = stats.flatMap((turn) => (turn.labels as string[]).map((label) => `${turn.id}/${turn.turn_index}/${label}`)).sort();
    const shardLabels = labelled.flatMap((row) => row.controls.map((control) => `${row.id}/${control.turn}/${control.label}`)).sort();
    expect(statLabels).toEqual(shardLabels);

    // The card and `stats` show the label mix; verify checks the columns.
    expect(readFileSync(join(out, "README.md"), "utf8")).toMatch(/## Controls[\s\S]*`rpc_error`/);
    expect((await cli("stats", out)).stdout).toMatch(/controls: \d+ trajectories showed at least one edge case/);
    expect((await cli("verify", out)).stdout).toMatch(/OK/);
  });

  it("draws the share of instructed trajectories; controls off leave the output as it was", async () => {
    const none = await runDemo(["controls: { enabled: true, share: 0.0, counterfactual_share: 0.0 }"]);
    const rows = shardRows(none);
    expect(rows.some((row) => row.controls.length > 0)).toBe(true);
    for (const row of rows) {
      expect(["none", "uninstructed"]).toContain(row.control_kind);
      expect(row.control_instruction).toBe("");
    }

    // Off: the same shards, byte for byte, as a job that never heard of controls.
    const off = await runDemo(["controls: { enabled: false, share: 0.3 }"]);
    const plain = await runDemo();
    const data = (out: string) => new Map([...snapshot(out)].filter(([name]) => name.startsWith("data/")));
    expect(data(off)).toEqual(data(plain));
    expect(readRows(join(plain, "data", readdirSync(join(plain, "data"))[0] as string))[0]).not.toHaveProperty("control_kind");
  });

  it("refuses controls with packing, naming both settings", async () => {
    const config = writeConfig(
      ["inputs:", ...demoInputsYaml(), "controls: { enabled: true }", "pack: { enabled: true, seq_len: 4096 }", ""].join("\n"),
    );
    await expect(cli("validate", config)).rejects.toMatchObject({ stderr: expect.stringMatching(/controls\.enabled with pack\.enabled/) });
  });

  it("sft prompts select the labelled turns with select: labelled", async () => {
    const dir = tempDir();
    const config = writeConfig(["inputs:", ...demoInputsYaml(), "sft: { select: labelled }", ""].join("\n"), dir);
    const file = join(dir, "prompts.jsonl");
    const { stdout } = await cli("sft", "prompts", config, "--out", file);
    const prompts = readFileSync(file, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { prompt_id: string });
    const out = await runDemo(["controls: { enabled: true }"]);
    const expected = shardRows(out)
      .flatMap((row) => [...new Set(row.controls.map((control) => control.turn))].map((turn) => `${row.id}#${turn}`))
      .sort();
    // Every labelled turn is selected; those in conflict (identical prompts, different observations:
    // the SWE sessions in several layouts) are skipped and reported (docs/sft.md "SFT workflow").
    expect(stdout).toContain(`selected      ${expected.length} turn(s) → ${prompts.length} prompt(s); skipped 0 without context`);
    expect(prompts.length).toBeGreaterThan(expected.length / 2);
    expect(expected).toEqual(expect.arrayContaining(prompts.map((prompt) => prompt.prompt_id)));
  });
});
