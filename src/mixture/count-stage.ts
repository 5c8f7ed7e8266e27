import { taskLabel } from "../../sharding/task-plan.ts";
import { readMarker } from "../curate/curate-files.ts";
import { type JobPlan, jobShas } from "../pipeline/plan.ts";
import { filesUnder, type JobStage } from "../pipeline/stage-contract.ts";
import { mixturePaths } from "./mixture-files.ts";
import { type SourceCount, usesShares } from "./resolve-factors.ts";
import { SPOOL_FOLDER } from "./spool.ts";

/** A count unit's marker: per source, per domain, what one copy of every record would write. */
export interface CountMarkerData {
  sources: Record<string, Record<string, SourceCount>>;
}

/** The task's count marker, if current. */
export function readCountMarker(plan: JobPlan, task: number) {
  return readMarker<CountMarkerData>(mixturePaths.countDone(plan.config.output.dir, task), jobShas(plan));
}

/** Mixture shares, stage 1 (docs/mixtures.md "Mixtures"): per task, each source's tokens and trained tokens as the records stage would write them. */
export const countStage: JobStage = {
  name: "count",
  summary: "per task (target shares): every record processed as the records stage would, its tokens and trained tokens summed per source",
  enabled: (config) => usesShares(config.mixture),
  scope: "task",
  pooled: true,
  reads: [{ path: "mixture/count/" }],
  // The spool (mixture/spool/) is no later stage's mirrored input: the records unit of its task
  // pulls its own (records-source.ts), so no rank downloads every task's spool.
  provides: [],
  // Uploaded with the marker (the spool first), so a records unit on another machine finds it.
  unitFiles: async (out, unit) => [
    ...(await filesUnder(out, SPOOL_FOLDER, `${taskLabel(unit)}.`)),
    ...(await filesUnder(out, "mixture/count/", `${taskLabel(unit)}.`)),
  ],
  isDone: async (plan, unit) => (await readCountMarker(plan, unit)) !== undefined,
  run: async ({ plan, task, stop, onProgress }) => (await import("./count-unit.ts")).runCountUnit(plan, task, stop, onProgress),
};
