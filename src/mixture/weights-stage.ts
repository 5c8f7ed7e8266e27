import { UserError } from "../core/errors.ts";
import { writeMarker } from "../curate/curate-files.ts";
import { type JobPlan, jobShas } from "../pipeline/plan.ts";
import type { JobStage } from "../pipeline/stage-contract.ts";
import { readCountMarker } from "./count-stage.ts";
import { derivedFactorLines } from "./describe-mixture.ts";
import { readWeightsMarker } from "./mixture-factors.ts";
import { mixturePaths, type WeightsMarkerData } from "./mixture-files.ts";
import { resolveShares, type SourceCount, usesShares } from "./resolve-factors.ts";

/**
 * One unit (share mode): sums every task's counts per source and derives the factors that meet
 * the target shares (resolve-factors.ts), or stops the job saying which target the data cannot
 * reach. The records stage reads the factors from its marker.
 */
export async function runWeightsUnit(plan: JobPlan): Promise<WeightsMarkerData> {
  const counts: Record<string, SourceCount> = {};
  for (const task of plan.tasks) {
    const marker = await readCountMarker(plan, task.index);
    if (!marker) throw new UserError(`mixture: task ${task.index} has not been counted; run the count stage first`);
    for (const [source, domains] of Object.entries(marker.data.sources)) {
      counts[source] ??= { records: 0, tokens: 0, loss_tokens: 0 };
      const into = counts[source] as SourceCount;
      for (const count of Object.values(domains)) {
        into.records += count.records;
        into.tokens += count.tokens;
        into.loss_tokens += count.loss_tokens;
      }
    }
  }
  const sorted = Object.fromEntries(Object.entries(counts).sort(([a], [b]) => (a < b ? -1 : 1)));
  const data: WeightsMarkerData = { resolved: resolveShares(plan.config.mixture, sorted), counts: sorted };
  await writeMarker(mixturePaths.weightsDone(plan.config.output.dir), jobShas(plan), "weights", 0, data);
  return data;
}

const WEIGHTS_MARKER = "mixture/weights.done.json";

/** Mixture shares, stage 2: the counts summed and the factors that meet the target shares derived (returned, so `run` prints them). */
export const weightsStage: JobStage = {
  name: "weights",
  summary: "one unit (target shares): the counts summed, and the factors that meet the shares derived",
  enabled: (config) => usesShares(config.mixture),
  scope: "one",
  pooled: false,
  // The count markers and its own; not mixture/spool/ (the records units pull their own spools).
  reads: [{ path: "mixture/count/" }, { path: WEIGHTS_MARKER }],
  provides: [{ path: WEIGHTS_MARKER }],
  unitFiles: async () => [WEIGHTS_MARKER],
  isDone: async (plan) => (await readWeightsMarker(plan)) !== undefined,
  run: ({ plan }) => runWeightsUnit(plan),
  report: (result) => {
    const { resolved, counts } = result as WeightsMarkerData;
    return derivedFactorLines(resolved, counts, "  ");
  },
};
