import type { JobConfig } from "../config/schema.ts";
import type { JobStage } from "./stage-contract.ts";
import { stageUnits } from "./stage-contract.ts";

/**
 * A registered stage: its name, and how to load its module. The module (and everything it
 * imports) is loaded only when a process needs that stage, so a process that runs one stage of a
 * cluster's array (`run --stage clusters`) never loads the code of the others.
 */
export interface RegisteredStage {
  name: string;
  /** The stage module's `JobStage`, loaded on first call (the same object on every later call). */
  load(): Promise<JobStage>;
}

/** A registry entry; loading checks the module's stage carries the name it is registered under. */
function registered(name: string, importStage: () => Promise<JobStage>): RegisteredStage {
  let loaded: Promise<JobStage> | undefined;
  const load = async () => {
    const stage = await importStage();
    if (stage.name !== name) throw new Error(`stage registry: the module registered as "${name}" exports a stage named "${stage.name}"`);
    return stage;
  };
  return { name, load: () => (loaded ??= load()) };
}

/**
 * The registered corpus-level stages, in the order they run (docs/contributing.md "Job stages, and adding one"). A job runs those
 * its config enables; each stage's units are a plain array: a rank runs every `worldSize`-th unit,
 * each unit leaves a completion marker, and a stage starts only once the stage before it is
 * complete. Adding a stage is one module exporting a `JobStage` and one line here (its name and
 * a dynamic `import()` of its module: never a static import, which would load every stage's code
 * into every process).
 *
 * - curation (`dedup`, `decontaminate`): signatures (per task) → clusters (per hash partition) → select (one);
 * - model scoring (`scorers`): score (per task);
 * - selection (`select`): facts (per task) → selection (one);
 * - mixture target shares (`mixture.sources.X.share`): count (per task) → weights (one);
 * - corpus novelty (`mask.corpus_novelty`): novelty (per task) → novelty-counts (per partition);
 * - synthesis target shares (`controls.synthesis.target_shares`): synthesis-teacher (per task, with `controls.synthesis.teacher`)
 *   → synthesis-count (per task) → synthesis-plan (one);
 * - teacher rewording of control instructions (`controls.rephrase.share`): rephrase (per task);
 * - records (per task): the record pipeline, consulting what the stages before it wrote. It is
 *   always last and always on (a one-stage process relies on that: see `stageInJob`).
 */
export const JOB_STAGES: readonly RegisteredStage[] = [
  registered("signatures", async () => (await import("../curate/signatures-stage.ts")).signaturesStage),
  registered("clusters", async () => (await import("../curate/clusters-stage.ts")).clustersStage),
  registered("select", async () => (await import("../curate/select-stage.ts")).selectStage),
  registered("score", async () => (await import("../score/score-stage.ts")).scoreStage),
  registered("facts", async () => (await import("../select/facts-stage.ts")).factsStage),
  registered("selection", async () => (await import("../select/selection-stage.ts")).selectionStage),
  registered("count", async () => (await import("../mixture/count-stage.ts")).countStage),
  registered("weights", async () => (await import("../mixture/weights-stage.ts")).weightsStage),
  registered("novelty", async () => (await import("../novelty/novelty-stage.ts")).noveltyStage),
  registered("novelty-counts", async () => (await import("../novelty/novelty-counts-stage.ts")).noveltyCountsStage),
  registered("synthesis-teacher", async () => (await import("../controls/synthesis/teacher-stage.ts")).synthesisTeacherStage),
  registered("synthesis-count", async () => (await import("../controls/synthesis/synthesis-count-stage.ts")).synthesisCountStage),
  registered("synthesis-plan", async () => (await import("../controls/synthesis/synthesis-plan-stage.ts")).synthesisPlanStage),
  registered("rephrase", async () => (await import("../controls/rephrase/rephrase-stage.ts")).rephraseStage),
  registered("records", async () => (await import("../records/records-stage.ts")).recordsStage),
];

/** Every registered stage's name (`--stage` choices). */
export const JOB_STAGE_NAMES: readonly string[] = JOB_STAGES.map((stage) => stage.name);

export interface StagePlan {
  stage: JobStage;
  /** Units of work (array size on a cluster). */
  units: number;
}

function planned(stage: JobStage, config: JobConfig, tasks: number): StagePlan {
  return { stage, units: stageUnits(stage, config, tasks) };
}

/** Every registered stage's module, in order (loads them all). */
export async function loadJobStages(): Promise<JobStage[]> {
  return Promise.all(JOB_STAGES.map((entry) => entry.load()));
}

/** The stages a job runs and their sizes (loads every stage's module: to know which are on). */
export async function jobStages(config: JobConfig, tasks: number): Promise<StagePlan[]> {
  const stages = await loadJobStages();
  return stages.filter((stage) => stage.enabled(config)).map((stage) => planned(stage, config, tasks));
}

function registeredStage(name: string): RegisteredStage {
  const entry = JOB_STAGES.find((s) => s.name === name);
  if (!entry) throw new Error(`no job stage named "${name}" (registered: ${JOB_STAGE_NAMES.join(", ")})`);
  return entry;
}

/** A registered stage by name, its module loaded. */
export async function jobStage(name: string): Promise<JobStage> {
  return registeredStage(name).load();
}

/** One stage of a job, as a process that runs only it sees the job (`stageInJob`). */
export interface StageInJob {
  current: StagePlan;
  /** The enabled stage before it: it must be complete first. */
  before?: StagePlan;
  /** Whether it is the job's last stage (records), after which the manifest is written. */
  last: boolean;
}

/**
 * `name`'s stage in this job, loading only its module and those of the stages before it up to the
 * first one the job runs (whose completion it waits for); undefined when the job does not run it.
 * Whether it is the last stage needs no loading: records is last and always on.
 */
export async function stageInJob(config: JobConfig, tasks: number, name: string): Promise<StageInJob | undefined> {
  const stage = await jobStage(name);
  if (!stage.enabled(config)) return undefined;
  const at = JOB_STAGE_NAMES.indexOf(name);
  for (let earlier = at - 1; earlier >= 0; earlier--) {
    const candidate = await (JOB_STAGES[earlier] as RegisteredStage).load();
    if (candidate.enabled(config))
      return { current: planned(stage, config, tasks), before: planned(candidate, config, tasks), last: at === JOB_STAGES.length - 1 };
  }
  return { current: planned(stage, config, tasks), last: at === JOB_STAGES.length - 1 };
}
