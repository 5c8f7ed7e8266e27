import { join } from "node:path";
import { taskLabel } from "../../sharding/task-plan.ts";
import type { ResolvedMixture, SourceCount } from "./resolve-factors.ts";

/**
 * Where the mixture's stages keep their markers, under `<output>/mixture/` (share mode only):
 *
 *   count/task-NNNNN.done.json   the task's records and tokens per source and domain, before weighting
 *   weights.done.json            the factors derived from all counts (and the counts summed)
 *
 * Written last, under a temporary name then renamed, like curation's markers: a marker means its
 * unit is complete; a rerun redoes any unit without a current one.
 */
export const MIXTURE_DIR = "mixture";

export const mixturePaths = {
  countDone: (out: string, task: number) => join(out, MIXTURE_DIR, "count", `${taskLabel(task)}.done.json`),
  weightsDone: (out: string) => join(out, MIXTURE_DIR, "weights.done.json"),
};

/** The weights marker: the factors, and the counts they were derived from. */
export interface WeightsMarkerData {
  resolved: ResolvedMixture;
  /** Per source, summed over domains and tasks. */
  counts: Record<string, SourceCount>;
}
