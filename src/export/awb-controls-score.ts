/**
 * `lwm-data score-controls` (issue 37 item 6, docs/exports.md "AgentWorldBench evaluation"): how often a
 * world model's predicted observations follow the controls of an `export agentworldbench --controls`
 * folder, per domain and expected kind, by the project's own detectors (`controlFollowed`).
 *
 * Predictions are JSON lines matched to rows by `lwm_prompt_id`, in either layout:
 * - lwm-data's: `{"lwm_prompt_id": "<id>#<turn>", "prediction": "<the observation>"}`;
 * - AgentWorldBench's `eval.py infer` output (predictions.jsonl, or judge's judged.jsonl): the row with
 *   `gen`, the model's raw answer; its `<think>` block is dropped and the `<predicted_observation>`
 *   tag's content taken when there is one, as eval.py's parse_model_output does.
 * A leading `**Environment Observation:**` marker is dropped in both. A row with no prediction counts
 * as not followed (`missing`).
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { UserError } from "../core/errors.ts";
import { parseJsonLines } from "../io/json-file.ts";
import { type AwbControlRow, controlFollowed } from "./awb-controls-export.ts";

/** One cell of the table: rows of a domain whose expected observation shows `expected` (kinds joined by `+`, or `normal`). */
export interface ControlScore {
  domain: string;
  expected: string;
  rows: number;
  followed: number;
  missing: number;
  /** followed / rows, rounded to 4 decimals. */
  rate: number;
}

export interface ControlScores {
  cells: ControlScore[];
  total: { rows: number; followed: number; missing: number; rate: number };
  /** Predictions whose lwm_prompt_id is in no row (another export's). */
  unmatched: number;
}

/** The observation in a prediction line (see the file comment), or undefined when it holds none. */
export function predictedObservation(line: Record<string, unknown>): string | undefined {
  let text: string | undefined;
  if (typeof line.prediction === "string") text = line.prediction;
  else if (typeof line.gen === "string") {
    const visible = line.gen.replace(/<think>[\s\S]*?<\/think>/gi, "");
    text = /<predicted_observation>([\s\S]*?)(?:<\/predicted_observation>|$)/.exec(visible)?.[1] ?? visible;
    text = text.replace(/^\s*\n/, "").replace(/\n\s*$/, "");
  }
  return text?.replace(/^\*\*Environment Observation:\*\*\n/, "");
}

/** The rows of an export folder (`<domain>_test.jsonl`), in file order. */
export async function readControlRows(dir: string): Promise<AwbControlRow[]> {
  const names = (await readdir(dir).catch(() => [] as string[])).filter((name) => name.endsWith("_test.jsonl")).sort();
  if (names.length === 0)
    throw new UserError(`${dir} holds no <domain>_test.jsonl: make it with lwm-data export agentworldbench <output> --controls`);
  const rows: AwbControlRow[] = [];
  for (const name of names) rows.push(...parseJsonLines<AwbControlRow>(await readFile(join(dir, name), "utf8")));
  const bare = rows.find((row) => row.lwm_control === undefined);
  if (bare)
    throw new UserError(`${dir}: row ${bare.lwm_prompt_id} has no lwm_control: score-controls reads an export made with --controls`);
  return rows;
}

/** Scores predictions (parsed JSON lines) against the rows: per domain and expected kind, and in total. */
export function scoreControls(rows: readonly AwbControlRow[], predictions: readonly Record<string, unknown>[]): ControlScores {
  const byId = new Map<string, string>();
  const known = new Set(rows.map((row) => row.lwm_prompt_id));
  let unmatched = 0;
  for (const line of predictions) {
    const id = line.lwm_prompt_id;
    const observation = predictedObservation(line);
    if (typeof id !== "string" || !known.has(id)) unmatched += 1;
    else if (observation !== undefined) byId.set(id, observation);
  }
  const cells = new Map<string, ControlScore>();
  const total = { rows: 0, followed: 0, missing: 0, rate: 0 };
  for (const row of rows) {
    const expected =
      row.lwm_control.expect === "normal" ? "normal" : [...new Set(row.lwm_control.labels.map((label) => label.label))].sort().join("+");
    const key = `${row.task}\u0000${expected}`;
    let cell = cells.get(key);
    if (!cell) {
      cell = { domain: row.task, expected, rows: 0, followed: 0, missing: 0, rate: 0 };
      cells.set(key, cell);
    }
    const predicted = byId.get(row.lwm_prompt_id);
    cell.rows += 1;
    total.rows += 1;
    if (predicted === undefined) {
      cell.missing += 1;
      total.missing += 1;
    } else if (controlFollowed(row, predicted).followed) {
      cell.followed += 1;
      total.followed += 1;
    }
  }
  const rate = (followed: number, n: number) => (n === 0 ? 0 : Math.round((followed / n) * 1e4) / 1e4);
  const sorted = [...cells.values()].sort((a, b) => a.domain.localeCompare(b.domain) || a.expected.localeCompare(b.expected));
  for (const cell of sorted) cell.rate = rate(cell.followed, cell.rows);
  total.rate = rate(total.followed, total.rows);
  return { cells: sorted, total, unmatched };
}

/** The table `score-controls` prints. */
export function scoreLines(scores: ControlScores): string[] {
  const header = ["domain", "expected", "rows", "followed", "missing", "rate"];
  const cells = [
    ...scores.cells.map((c) => [
      c.domain,
      c.expected,
      String(c.rows),
      String(c.followed),
      String(c.missing),
      `${(c.rate * 100).toFixed(1)}%`,
    ]),
    [
      "all",
      "",
      String(scores.total.rows),
      String(scores.total.followed),
      String(scores.total.missing),
      `${(scores.total.rate * 100).toFixed(1)}%`,
    ],
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] as string).length)));
  const line = (c: string[]) =>
    c
      .map((cell, i) => (i < 2 ? cell.padEnd(widths[i] as number) : cell.padStart(widths[i] as number)))
      .join("  ")
      .trimEnd();
  return [line(header), ...cells.map(line), ...(scores.unmatched > 0 ? [`${scores.unmatched} prediction(s) match no row`] : [])];
}
