import type { JobPlan } from "../pipeline/plan.ts";
import { fixedFactors, type ResolvedMixture, usesShares } from "./resolve-factors.ts";
import { readWeightsMarker } from "./weights-stage.ts";

/** The factors the records stage keeps sources with: the config's, or (share mode) the weights stage's. */
export async function mixtureFactors(plan: JobPlan): Promise<ResolvedMixture> {
  if (!usesShares(plan.config.mixture)) return fixedFactors(plan.config.mixture);
  const marker = await readWeightsMarker(plan);
  if (!marker) throw new Error("mixture: the target shares have no factors yet; the weights stage runs before the records stage");
  return marker.data.resolved;
}
