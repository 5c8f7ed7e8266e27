/**
 * `lwm-data score-controls` (issue 37 item 6): instruction following on the controls export, per
 * domain and expected kind. Predictions made from the expected observations follow every control
 * (100%); swapped ones (an edge case where none was asked for, a normal observation where one was)
 * follow almost none (negative control).
 */
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import type { AwbControlRow } from "../src/export/awb-controls-export.ts";
import { type ControlScores, predictedObservation, readControlRows } from "../src/export/awb-controls-score.ts";
import { ROOT, tempDir } from "./helpers.ts";
import { exportDemoControls } from "./support/controls-export.ts";

const exec = promisify(execFile);
const CLI = join(ROOT, "bin/lwm-data.js");

let dir = "";
let rows: AwbControlRow[] = [];

const groundTruth = (row: AwbControlRow): string => row.response[row.turn_idx - 1] ?? "";

async function score(predictions: object[], json = true): Promise<string> {
  const path = join(tempDir(), "predictions.jsonl");
  writeFileSync(path, predictions.map((p) => `${JSON.stringify(p)}\n`).join(""));
  const { stdout } = await exec(process.execPath, [CLI, "score-controls", dir, path, ...(json ? ["--json"] : [])], { cwd: ROOT });
  return stdout;
}

beforeAll(async () => {
  ({ dir } = await exportDemoControls());
  rows = await readControlRows(dir);
}, 600_000);

describe("score-controls", () => {
  it("the export holds both expectations (else the checks below would be vacuous)", () => {
    expect(rows.some((r) => r.lwm_control.expect === "edge_case")).toBe(true);
    expect(rows.some((r) => r.lwm_control.expect === "normal")).toBe(true);
  });

  it("predictions made from the expected observations follow every control, in both layouts", { timeout: 120_000 }, async () => {
    const simple = JSON.parse(
      await score(rows.map((r) => ({ lwm_prompt_id: r.lwm_prompt_id, prediction: groundTruth(r) }))),
    ) as ControlScores;
    expect(simple.total).toEqual({ rows: rows.length, followed: rows.length, missing: 0, rate: 1 });
    for (const cell of simple.cells) expect(cell.rate).toBe(1);
    // eval.py's layout: the row with `gen`, the observation in <predicted_observation> after a think block.
    const evalPy = rows.map((r) => ({
      ...r,
      gen: `<think>the action reads a file</think>\n<predicted_observation>\n${groundTruth(r)}\n</predicted_observation>`,
    }));
    const scored = JSON.parse(await score(evalPy)) as ControlScores;
    expect(scored.total.rate).toBe(1);
    const table = await score(evalPy, false);
    expect(table).toMatch(/^domain\s+expected\s+rows\s+followed\s+missing\s+rate/);
    expect(table).toMatch(/\nall\s+\d+\s+\d+\s+0\s+100\.0%/);
  });

  it("negative control: swapped observations follow almost none; a missing prediction counts as not followed", {
    timeout: 120_000,
  }, async () => {
    const edge = rows.filter((r) => r.lwm_control.expect === "edge_case");
    const normal = rows.filter((r) => r.lwm_control.expect === "normal");
    const other = (r: AwbControlRow, pool: AwbControlRow[]) => pool.find((p) => p.task === r.task) ?? (pool[0] as AwbControlRow);
    const swapped = rows.map((r) => ({
      lwm_prompt_id: r.lwm_prompt_id,
      prediction: groundTruth(other(r, r.lwm_control.expect === "normal" ? edge : normal)),
    }));
    const scores = JSON.parse(await score(swapped)) as ControlScores;
    expect(scores.total.rate).toBeLessThan(0.2);
    const partial = JSON.parse(
      await score([
        { lwm_prompt_id: rows[0]?.lwm_prompt_id, prediction: groundTruth(rows[0] as AwbControlRow) },
        { lwm_prompt_id: "elsewhere#1", prediction: "x" },
      ]),
    ) as ControlScores;
    expect(partial.total).toMatchObject({ followed: 1, missing: rows.length - 1 });
    expect(partial.unmatched).toBe(1);
  });

  it("reads a prediction's observation as eval.py does", () => {
    expect(predictedObservation({ gen: "<think>x</think><predicted_observation>\nok\n</predicted_observation>" })).toBe("ok");
    expect(predictedObservation({ prediction: "**Environment Observation:**\nok" })).toBe("ok");
    expect(predictedObservation({})).toBeUndefined();
  });
});
