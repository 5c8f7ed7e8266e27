import type { JobConfig } from "../config/schema.ts";
import { rephraseStage } from "../controls/rephrase/rephrase-stage.ts";
import { synthesisCountStage } from "../controls/synthesis/synthesis-count-stage.ts";
import { synthesisPlanStage } from "../controls/synthesis/synthesis-plan-stage.ts";
import { synthesisTeacherStage } from "../controls/synthesis/teacher-stage.ts";
import { clustersStage } from "../curate/clusters-stage.ts";
import { selectStage } from "../curate/select-stage.ts";
import { signaturesStage } from "../curate/signatures-stage.ts";
import { countStage } from "../mixture/count-stage.ts";
import { weightsStage } from "../mixture/weights-stage.ts";
import { NOVELTY_STAGES } from "../novelty/novelty-counts-stage.ts";
import { recordsStage } from "../records/records-stage.ts";
import { scoreStage } from "../score/score-stage.ts";
import { factsStage } from "../select/facts-stage.ts";
import { selectionStage } from "../select/selection-stage.ts";
import { type JobStage, stageUnits } from "./stage-contract.ts";

/**
 * The registered corpus-level stages, in the order they run (docs/contributing.md "Job stages, and adding one"). A job runs those
 * its config enables; each stage's units are a plain array: a rank runs every `worldSize`-th unit,
 * each unit leaves a completion marker, and a stage starts only once the stage before it is
 * complete. Adding a stage is one module exporting a `JobStage` and one line here.
 *
 * - curation (`dedup`, `decontaminate`): signatures (per task) → clusters (per hash partition) → select (one);
 * - model scoring (`scorers`): score (per task);
 * - selection (`select`): facts (per task) → selection (one);
 * - mixture target shares (`mixture.sources.X.share`): count (per task) → weights (one);
 * - synthesis target shares (`controls.synthesis.target_shares`): synthesis-teacher (per task, with `controls.synthesis.teacher`)
 *   → synthesis-count (per task) → synthesis-plan (one);
 * - teacher rewording of control instructions (`controls.rephrase.share`): rephrase (per task);
 * - records (per task): the record pipeline, consulting what the stages before it wrote.
 */
export const JOB_STAGES: readonly JobStage[] = [
  signaturesStage,
  clustersStage,
  selectStage,
  scoreStage,
  factsStage,
  selectionStage,
  countStage,
  weightsStage,
  ...NOVELTY_STAGES,
  synthesisTeacherStage,
  synthesisCountStage,
  synthesisPlanStage,
  rephraseStage,
  recordsStage,
];

/** Every registered stage's name (`--stage` choices). */
export const JOB_STAGE_NAMES: readonly string[] = JOB_STAGES.map((stage) => stage.name);

export interface StagePlan {
  stage: JobStage;
  /** Units of work (array size on a cluster). */
  units: number;
}

/** The stages a job runs and their sizes. */
export function jobStages(config: JobConfig, tasks: number): StagePlan[] {
  return JOB_STAGES.filter((stage) => stage.enabled(config)).map((stage) => ({ stage, units: stageUnits(stage, config, tasks) }));
}

/** A registered stage by name. */
export function jobStage(name: string): JobStage {
  const stage = JOB_STAGES.find((s) => s.name === name);
  if (!stage) throw new Error(`no job stage named "${name}" (registered: ${JOB_STAGE_NAMES.join(", ")})`);
  return stage;
}
