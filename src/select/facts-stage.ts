import { taskLabel } from "../../sharding/task-plan.ts";
import { readMarker } from "../curate/curate-files.ts";
import type { RecordFacts } from "../filter/record-facts.ts";
import { jobShas } from "../pipeline/plan.ts";
import { filesUnder, isMarker, type JobStage } from "../pipeline/stage-contract.ts";
import { selectionActive } from "./selection-active.ts";
import { SELECT_DIR, selectionPaths } from "./selection-files.ts";

/** One line of a task's facts file: a record the records stage would write, and what selection judges it by. */
export interface FactsLine {
  /** 0-based position among the task's read items. */
  item: number;
  facts: RecordFacts;
}

/** Selection, stage 1 (docs/filters-selection-scoring.md "Filters and selection"): per task, the facts of every record that would be written. */
export const factsStage: JobStage = {
  name: "facts",
  summary: "per task (select): every record processed as the records stage would, and the facts selection judges it by",
  enabled: (config) => selectionActive(config.select),
  scope: "task",
  pooled: true,
  reads: [{ path: `${SELECT_DIR}/facts/`, include: isMarker }],
  provides: [],
  unitFiles: (out, unit) => filesUnder(out, `${SELECT_DIR}/facts/`, `${taskLabel(unit)}.`),
  isDone: async (plan, unit) => (await readMarker(selectionPaths.factsDone(plan.config.output.dir, unit), jobShas(plan))) !== undefined,
  run: async ({ plan, task, stop, onProgress }) => (await import("./facts-unit.ts")).runFactsUnit(plan, task, stop, onProgress),
};
