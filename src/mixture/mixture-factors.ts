import type { MixtureConfig } from "../config/schema.ts";
import { UserError } from "../core/errors.ts";
import { readMarker } from "../curate/curate-files.ts";
import type { JobShas } from "../output/task-state.ts";
import { type JobPlan, jobShas } from "../pipeline/plan.ts";
import { mixturePaths, type WeightsMarkerData } from "./mixture-files.ts";
import { fixedFactors, type ResolvedMixture, usesShares } from "./resolve-factors.ts";

/**
 * The factors a job keeps its sources with: the config's, or (share mode) those the weights stage
 * derived, from its marker. Read by the records stage and by finalize for the manifest.
 */
export async function resolvedMixture(outputDir: string, settings: MixtureConfig, job: JobShas): Promise<ResolvedMixture> {
  if (!usesShares(settings)) return fixedFactors(settings);
  const marker = await readMarker<WeightsMarkerData>(mixturePaths.weightsDone(outputDir), job);
  if (!marker)
    throw new UserError(
      `${mixturePaths.weightsDone(outputDir)} is missing or from another job: the weights stage derives the target shares' factors before the records stage; rerun the job (finished stages are skipped)`,
    );
  return marker.data.resolved;
}

/** The weights stage's marker, if current. */
export function readWeightsMarker(plan: JobPlan) {
  return readMarker<WeightsMarkerData>(mixturePaths.weightsDone(plan.config.output.dir), jobShas(plan));
}
