import { join } from "node:path";
import { taskLabel } from "../../../sharding/task-plan.ts";
import { readJsonLines } from "../../io/json-file.ts";
import type { ControlLabelName } from "../control-label.ts";
import type { RejectReason } from "./synthesize.ts";
import { type TeacherAnswers, teacherKey } from "./teacher-source.ts";

/**
 * Where the stage `synthesis-teacher` keeps its files, under `<output>/synthesis/teacher/` (only
 * with controls.synthesis.teacher):
 *
 *   task-NNNNN.jsonl       one line per turn and kind asked: the answer's observation and the verifier's reasons
 *   task-NNNNN.done.json   marker: the task's counts (asked, verified, rejected by reason, not asked under the cap)
 */
export const TEACHER_DIR = "synthesis/teacher";

export const teacherPaths = {
  lines: (out: string, task: number) => join(out, TEACHER_DIR, `${taskLabel(task)}.jsonl`),
  done: (out: string, task: number) => join(out, TEACHER_DIR, `${taskLabel(task)}.done.json`),
};

/** One line of a task's file. */
export interface TeacherLine {
  /** 0-based position among the task's read items. */
  item: number;
  /** The normalized trajectory's id. */
  id: string;
  /** The turn (0-based) whose observation the teacher rewrote. */
  turn: number;
  kind: ControlLabelName;
  /** The observation from the answer; null when no answer came (or it was empty). */
  observation: string | null;
  /** Why the verifier rejects it (empty: verified). */
  reasons: RejectReason[];
  /** The checks' messages (at most 3), for reading. */
  problems?: string[];
}

/** A unit's counts (its marker): deterministic, so a rerun from the cache writes the same marker. */
export interface TeacherMarkerData {
  asked: number;
  verified: number;
  /** By the first reason of each rejected answer. */
  rejected: Record<string, number>;
  /** With `ask_margin` only: the requests (and trajectories) the cap left unasked. */
  not_asked?: { requests: number; trajectories: number };
}

/** A task's answers as the counting and records stages try them: every answer with an observation (they verify it again). */
export async function readTeacherAnswers(out: string, task: number): Promise<TeacherAnswers> {
  const answers = new Map<string, string>();
  for (const line of await readJsonLines<TeacherLine>(teacherPaths.lines(out, task)))
    if (line.observation !== null) answers.set(teacherKey(line.id, line.turn, line.kind), line.observation);
  return answers;
}
