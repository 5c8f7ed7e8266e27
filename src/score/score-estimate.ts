import { RecordError } from "../core/errors.ts";
import type { Trajectory } from "../core/trajectory.ts";
import type { JobPlan } from "../pipeline/plan.ts";
import { normalizedTrajectory, stageContext } from "../pipeline/stages.ts";
import { taskItems } from "../pipeline/task-items.ts";
import { estimateScoring, type ScoringEstimate, scoringSize } from "./score-records.ts";
import type { Scorer } from "./score-schema.ts";

export interface JobScoringEstimate {
  /** Trajectories read to measure (spread over the tasks), and the job's estimated total. */
  sampled: number;
  records: number;
  perScorer: { scorer: Scorer; estimate: ScoringEstimate }[];
}

/**
 * What scoring a job will ask for, before anything is asked: a sample of trajectories (the first
 * few of each task, at most `sample` in all) normalized as the score stage does, their size and
 * count per input byte extrapolated to the job's bytes. An estimate: curation, the readers'
 * filters and the cache (answers already paid for) are not counted.
 */
export async function estimateJobScoring(plan: JobPlan, sample = 200): Promise<JobScoringEstimate> {
  const context = stageContext(plan, new Map());
  const perTask = Math.max(1, Math.ceil(sample / Math.max(1, plan.tasks.length)));
  let sampled = 0;
  let chars = 0;
  let turns = 0;
  let bytesRead = 0;
  for (const task of plan.tasks) {
    if (sampled >= sample) break;
    let taken = 0;
    let lastBytes = 0;
    for await (const { item, bytes } of taskItems(plan, task)) {
      lastBytes = bytes;
      if (item.kind !== "trajectory") continue;
      let trajectory: Trajectory;
      try {
        trajectory = await normalizedTrajectory(item.trajectory, plan.pipeline.recordStages, context);
      } catch (err) {
        if (err instanceof RecordError) continue;
        throw err;
      }
      const size = scoringSize(trajectory);
      chars += size.chars;
      turns += size.turns;
      taken += 1;
      sampled += 1;
      if (taken >= perTask || sampled >= sample) break;
    }
    // A task read to its end measures its bytes whole; one cut short, up to where it stopped.
    bytesRead += taken >= perTask || sampled >= sample ? lastBytes : task.bytes;
  }
  const totalBytes = plan.tasks.reduce((sum, task) => sum + task.bytes, 0);
  const records = sampled === 0 || bytesRead === 0 ? 0 : Math.round((sampled / bytesRead) * totalBytes);
  const meanChars = sampled === 0 ? 0 : chars / sampled;
  const meanTurns = sampled === 0 ? 0 : turns / sampled;
  return {
    sampled,
    records,
    perScorer: plan.scorers.map((scorer) => ({ scorer, estimate: estimateScoring(scorer, { records, meanChars, meanTurns }) })),
  };
}

/** The estimate as `plan` and `validate` print it. */
export function scoringEstimateLines(estimate: JobScoringEstimate): string[] {
  return estimate.perScorer.map(
    ({ scorer, estimate: e }) =>
      `  ${scorer.name}: ${scorer.model} at ${scorer.base_url}, ${scorer.scope}: ~${e.requests} request(s), ~${e.prompt_tokens} prompt + ~${e.completion_tokens} completion tokens (from ${estimate.sampled} sampled trajectories, ~${estimate.records} in the job; cached answers are not paid again)`,
  );
}
