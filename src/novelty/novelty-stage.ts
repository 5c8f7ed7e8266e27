import { taskLabel } from "../../sharding/task-plan.ts";
import type { JobConfig } from "../config/schema.ts";
import { readMarker } from "../curate/curate-files.ts";
import { jobShas } from "../pipeline/plan.ts";
import { filesUnder, isMarker, type JobStage } from "../pipeline/stage-contract.ts";
import { noveltyPaths } from "./novelty-files.ts";

export const noveltyEnabled = (config: JobConfig): boolean => config.mask.corpus_novelty.enabled;

/** Corpus novelty, stage 1 (`mask.corpus_novelty`): per task, each canonical observation's count. */
export const noveltyStage: JobStage = {
  name: "novelty",
  summary: "per task (mask.corpus_novelty): how often each canonicalized observation occurs, by hash partition",
  enabled: noveltyEnabled,
  scope: "task",
  pooled: true,
  reads: [{ path: "novelty/tasks/", include: isMarker }],
  provides: [],
  unitFiles: (out, unit) => filesUnder(out, "novelty/tasks/", `${taskLabel(unit)}.`),
  isDone: async (plan, unit) => (await readMarker(noveltyPaths.taskDone(plan.config.output.dir, unit), jobShas(plan))) !== undefined,
  run: async ({ plan, task, stop, onProgress }) => (await import("./novelty-unit.ts")).runNoveltyTaskUnit(plan, task, stop, onProgress),
};
