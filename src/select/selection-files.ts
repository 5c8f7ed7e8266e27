import { join } from "node:path";
import { taskLabel } from "../../sharding/task-plan.ts";
import { readJsonLines } from "../io/json-file.ts";
import type { SelectionRule } from "./select-records.ts";

/**
 * Where selection keeps its files, under `<output>/select/` (only when `select` is on):
 *
 *   facts/task-NNNNN.jsonl       the facts of every record the task would write: {item, facts}
 *   facts/task-NNNNN.done.json   marker
 *   drops/task-NNNNN.jsonl       what selection drops of the task, by item: {item, id, domain, rule, reason}
 *   selection.done.json          marker: how many records, kept, dropped per rule, the caps
 *
 * Markers are written last, like curation's; a rerun redoes any unit without a current one.
 */
export const SELECT_DIR = "select";

export const selectionPaths = {
  facts: (out: string, task: number) => join(out, SELECT_DIR, "facts", `${taskLabel(task)}.jsonl`),
  factsDone: (out: string, task: number) => join(out, SELECT_DIR, "facts", `${taskLabel(task)}.done.json`),
  drops: (out: string, task: number) => join(out, SELECT_DIR, "drops", `${taskLabel(task)}.jsonl`),
  selectionDone: (out: string) => join(out, SELECT_DIR, "selection.done.json"),
};

/** One line of a task's drops file. */
export interface SelectionDropLine {
  /** 0-based position among the task's read items. */
  item: number;
  id: string;
  domain: string;
  rule: SelectionRule;
  reason: string;
}

/** Selection's drops of one task, by item. */
export async function readDrops(out: string, task: number): Promise<Map<number, SelectionDropLine>> {
  return new Map((await readJsonLines<SelectionDropLine>(selectionPaths.drops(out, task))).map((drop) => [drop.item, drop]));
}
