import { curationEnabled } from "../curate/curation-settings.ts";
import { type Removal, readRemovals } from "../curate/select-stage.ts";
import { readScores, type TaskScores } from "../score/score-files.ts";
import { selectionActive } from "../select/selection-active.ts";
import { readDrops, type SelectionDropLine } from "../select/selection-files.ts";
import type { JobPlan } from "./plan.ts";

/**
 * What the corpus stages before the records stage decided for one task's items (by 0-based
 * position among its read items): curation's removals and masks, the model scores, selection's
 * drops. Read once per task by every stage that processes records after them.
 */
export interface TaskDecisions {
  removals: ReadonlyMap<number, Removal>;
  drops: ReadonlyMap<number, SelectionDropLine>;
  scores: TaskScores;
}

export const NO_DECISIONS: TaskDecisions = { removals: new Map(), drops: new Map(), scores: new Map() };

/** The decisions the job's enabled stages made for `task` (`selection: false`: before selection ran, as its facts pass reads them). */
export async function loadTaskDecisions(plan: JobPlan, task: number, { selection = true } = {}): Promise<TaskDecisions> {
  const { config } = plan;
  const out = config.output.dir;
  return {
    removals: curationEnabled(config) ? await readRemovals(out, task) : new Map(),
    drops: selection && selectionActive(config.select) ? await readDrops(out, task) : new Map(),
    scores:
      plan.scorers.length > 0
        ? await readScores(
            out,
            task,
            plan.scorers.map((scorer) => scorer.name),
          )
        : new Map(),
  };
}
