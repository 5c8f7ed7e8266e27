import { join } from "node:path";
import { taskLabel } from "../../sharding/task-plan.ts";
import { readJsonLines } from "../io/json-file.ts";

/**
 * Where scoring keeps its files, under `<output>/score/` (only with `scorers`):
 *
 *   <scorer>/task-NNNNN.jsonl   one line per scored record: {item, score, reason}
 *   task-NNNNN.done.json        marker: each scorer's counts (records, ok, malformed, failed, requests, tokens)
 */
export const SCORE_DIR = "score";

export const scorePaths = {
  scores: (out: string, scorer: string, task: number) => join(out, SCORE_DIR, scorer, `${taskLabel(task)}.jsonl`),
  done: (out: string, task: number) => join(out, SCORE_DIR, `${taskLabel(task)}.done.json`),
};

/** One line of a scorer's file. */
export interface ScoreLine {
  /** 0-based position among the task's read items. */
  item: number;
  score: number | null;
  reason: string;
}

/** A task's scores by item: each scorer's score (null: no usable score). */
export type TaskScores = ReadonlyMap<number, Readonly<Record<string, number | null>>>;

export async function readScores(out: string, task: number, scorers: readonly string[]): Promise<TaskScores> {
  const byItem = new Map<number, Record<string, number | null>>();
  for (const scorer of scorers) {
    for (const line of await readJsonLines<ScoreLine>(scorePaths.scores(out, scorer, task))) {
      const scores = byItem.get(line.item) ?? {};
      scores[scorer] = line.score;
      byItem.set(line.item, scores);
    }
  }
  return byItem;
}
