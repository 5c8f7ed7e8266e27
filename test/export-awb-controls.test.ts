/**
 * Issue 37, item 6: `export agentworldbench --controls`: held-out controllable prompts in the
 * AgentWorldBench layout (the plain export's row, plus lwm_control), and the check that a model's
 * predicted observation follows its control, by the project's own detectors.
 */
import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { type AwbControlRow, controlFollowed } from "../src/export/awb-controls-export.ts";
import { ROOT, tempDir } from "./helpers.ts";
import { exportDemoControls } from "./support/controls-export.ts";

const exec = promisify(execFile);
const CLI = join(ROOT, "bin/lwm-data.js");
const AWB_KEYS = [
  "task",
  "id",
  "prompt",
  "response",
  "current_prompt",
  "system_str",
  "turn_idx",
  "total_turns",
  "lwm_prompt_id",
  "lwm_turn_index",
  "lwm_source",
];

let rows: AwbControlRow[] = [];
let validationIds = new Set<string>();
let out = "";

beforeAll(async () => {
  let dir: string;
  ({ out, dir } = await exportDemoControls());
  rows = readdirSync(dir)
    .filter((name) => name.endsWith("_test.jsonl"))
    .flatMap((name) =>
      readFileSync(join(dir, name), "utf8")
        .trim()
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as AwbControlRow),
    );
  const manifest = JSON.parse(readFileSync(join(out, "manifest.json"), "utf8"));
  if ((manifest.shards as { split?: string }[]).some((s) => s.split === "validation")) validationIds = new Set(rows.map((row) => row.id));
}, 600_000);

const groundTruth = (row: AwbControlRow) => (row.response.at(-1) ?? "").replace(/^\*\*Environment Observation:\*\*\n/, "");

describe("export agentworldbench --controls", () => {
  it("writes the plain export's fields plus lwm_control, edge-case and normal prompts alike", () => {
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      for (const key of AWB_KEYS) expect(row).toHaveProperty(key);
      expect(row.current_prompt).toBe(row.prompt.at(-1));
      expect(row.turn_idx).toBe(row.prompt.length);
      expect(row.system_str).toContain(row.lwm_control.instruction);
      expect(row.lwm_control.instruction.length).toBeGreaterThan(0);
    }
    const kinds = new Set(rows.map((row) => row.lwm_control.kind));
    expect(kinds.has("instructed")).toBe(true);
    expect(kinds.has("counterfactual")).toBe(true);
    expect(validationIds.size).toBeGreaterThan(0);
  });

  it("holds out: every row's trajectory is in the validation split and none in train", async () => {
    const manifest = JSON.parse(readFileSync(join(out, "manifest.json"), "utf8"));
    const trainShards = (manifest.shards as { path: string; split?: string }[]).filter((s) => (s.split ?? "train") === "train");
    expect(trainShards.length).toBeGreaterThan(0);
    // The export reads only validation shards: the rows' origins name none of the train shards.
    const plain = join(tempDir(), "awb");
    await exec(process.execPath, [CLI, "export", "agentworldbench", out, "--split", "train", "--out", plain], { cwd: ROOT });
    const trainIds = new Set(
      readdirSync(plain)
        .filter((name) => name.endsWith("_test.jsonl"))
        .flatMap((name) =>
          readFileSync(join(plain, name), "utf8")
            .trim()
            .split("\n")
            .filter(Boolean)
            .map((line) => JSON.parse(line).id as string),
        ),
    );
    expect(trainIds.size).toBeGreaterThan(0);
    for (const row of rows) expect(trainIds.has(row.id)).toBe(false);
  });

  it("the expected observation follows its control by the project's detectors (the ground truth scores 1)", () => {
    for (const row of rows)
      expect(controlFollowed(row, groundTruth(row)), `${row.lwm_prompt_id} ${row.lwm_control.kind}`).toMatchObject({ followed: true });
  });

  it("negative control: an observation without the edge case does not follow an edge-case control", () => {
    const edge = rows.filter((row) => row.lwm_control.expect === "edge_case");
    expect(edge.length).toBeGreaterThan(0);
    for (const row of edge) expect(controlFollowed(row, "ok").followed, row.lwm_prompt_id).toBe(false);
  });

  it("negative control: an edge-case observation does not follow a normal control", () => {
    const normal = rows.filter((row) => row.lwm_control.expect === "normal");
    const edgeOf = new Map(rows.filter((row) => row.lwm_control.expect === "edge_case").map((row) => [row.task, groundTruth(row)]));
    let checked = 0;
    for (const row of normal) {
      const observation = edgeOf.get(row.task);
      if (observation === undefined) continue;
      // Only where the detectors see the edge case in this history too (a screen diff needs its own page).
      const shown = controlFollowed({ ...row, lwm_control: { ...row.lwm_control, expect: "edge_case", labels: [] } }, observation).found;
      if (shown.length === 0) continue;
      expect(controlFollowed(row, observation).followed).toBe(false);
      checked += 1;
    }
    expect(checked).toBeGreaterThan(0);
  });
});
