import { rm } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import type { RankSelection } from "../../sharding/rank.ts";
import type { Task } from "../../sharding/task-plan.ts";
import { UserError } from "../core/errors.ts";
import type { Manifest } from "../output/manifest.ts";
import { OUTPUT_PLAN_FILE, readOutputPlan, writeOutputPlan } from "../output/output-plan.ts";
import { mirrorFinalizeInputs, mirrorStageInputs, uploadUnit } from "../output/remote-stage-files.ts";
import { isCurrent } from "../output/task-state.ts";
import { shareDecisions } from "./input-decisions.ts";
import { JOB_STAGE_NAMES, jobStages, type StageInJob, type StagePlan, stageInJob } from "./job-stages.ts";
import { type JobPlan, jobShas } from "./plan.ts";
import { runPooledUnit } from "./run-unit.ts";
import type { JobStage } from "./stage-contract.ts";
import { createStopSignal, isTaskStopped, type StopSignal, stopRequested } from "./stop-signal.ts";
import type { TaskProgress } from "./task-items.ts";
import type { TaskPool } from "./task-pool.ts";
import { loggedStage, loggedTask } from "./timing-log.ts";

export interface JobProgress {
  /** The stage running (docs/contributing.md "Job stages, and adding one"; the last is always records). */
  stage: string;
  /** Tasks this process runs, and how many of them have finished (skipped ones included). */
  tasksTotal: number;
  tasksDone: number;
  records: number;
  /** Input bytes behind the records read, and the total for this process's tasks. */
  bytes: number;
  bytesTotal: number;
}

export interface RunOptions {
  /** Worker threads (default: the machine's cores, at most one per pending task). */
  workers?: number;
  rank?: RankSelection;
  /** Replace an output folder that holds a different job's output. */
  overwrite?: boolean;
  onProgress?: (progress: JobProgress) => void;
  /** Set (e.g. on SIGTERM) to stop: no new task starts, running ones stop at a record boundary. */
  stop?: StopSignal;
  /**
   * Run only these stages' units, in the job's order (a cluster runs each stage as its own array, or
   * several consecutive ones in one process); default: every stage in turn.
   */
  stages?: readonly string[];
  /**
   * Pool threads the caller started early (task-pool.ts); without it the first pooled stage that
   * needs threads starts them, and the job's later stages reuse them.
   */
  pool?: TaskPool;
}

export interface RunResult {
  outputDir: string;
  /** Tasks this process ran now, and those it found already finished. */
  ran: number;
  skipped: number;
  /** Set once every task of the job is done and the manifest is written. */
  manifest?: Manifest;
  manifestPath?: string;
  /** Tasks of the whole job still unfinished (other ranks' work). */
  unfinished: number;
  /** The run stopped on request before its tasks were done; rerunning resumes it. */
  stopped?: boolean;
  /** Units other ranks must finish before the next stage can start (and which stage waits). */
  waiting?: { stage: string; before: string; missing: number[] };
  /** With `stage` other than the job's last: that stage's units still unfinished (other ranks'), and no manifest. */
  stageOnly?: { stage: string; unfinished: number };
  /** What the stages that ran here report (e.g. the factors target shares derived), to print. */
  notes: string[];
}

/** The contents of an output folder lwm-data owns; nothing else in it is ever touched. */
const OWNED_PATHS = ["data", "stats", "quarantine", "filtered", "curate", "mixture", "novelty", "tasks", "manifest.json", "README.md"];

/**
 * Claims the output folder for this job. The same job (config and inputs) resumes; a different
 * one is refused unless `overwrite`. A single process may clear a folder with no plan (an older
 * or foreign run of ours); ranks never clear anything — another rank may already be writing.
 */
export async function prepareOutput(plan: JobPlan, options: Pick<RunOptions, "rank" | "overwrite">): Promise<void> {
  const outputDir = plan.config.output.dir;
  const { remote } = plan;
  if (remote) await remote.pull(OUTPUT_PLAN_FILE);
  const existing = await readOutputPlan(outputDir);
  const ranked = (options.rank?.worldSize ?? 1) > 1;
  const same = isCurrent(existing, jobShas(plan));
  if (existing && !same) {
    if (!options.overwrite || ranked) {
      throw new UserError(
        `${remote?.shown ?? outputDir} holds the output of a different job (config or input files differ: config ${existing.config_sha256.slice(0, 12)} vs ${plan.configSha256.slice(0, 12)}).\n` +
          `Choose another output.dir, or rerun${ranked ? " one process" : ""} with --overwrite to replace it.`,
      );
    }
  }
  if (!same && !ranked) {
    for (const owned of OWNED_PATHS) await rm(join(outputDir, owned), { recursive: true, force: true });
    await remote?.clear(OWNED_PATHS);
  }
  // Uploads a killed process left unfinished; only a lone process knows none is in flight.
  if (remote && !ranked) await remote.abortUnfinished();
  if (!same) {
    // Loaded only here: the job's later processes find the plan already written.
    const { outputPlanOf } = await import("./output-plan-of.ts");
    await writeOutputPlan(outputDir, outputPlanOf(plan));
    await remote?.push([OUTPUT_PLAN_FILE]);
  }
}

/**
 * Runs tasks on `workers` threads: this one plus `workers - 1` pool threads, all taking the next
 * task from one queue, largest first (the last wave is then the smallest tasks: a shorter tail).
 * The main thread works too because a worker thread costs ~1 s to boot (modules, the plan's
 * vocabulary) and the main thread would otherwise only wait; it starts at once while the pool
 * boots. Which thread runs a task, and in what order, never changes its output.
 */
async function runTasks(
  plan: JobPlan,
  stage: JobStage,
  tasks: Task[],
  workers: number,
  onTaskProgress: (p: TaskProgress) => void,
  onTaskDone: () => void,
  stop: StopSignal,
  pools: RunPools,
): Promise<"done" | "stopped"> {
  const queue = [...tasks].sort((a, b) => b.bytes - a.bytes || a.index - b.index);
  let failed = false;
  // After a failure or a stop request no thread takes a new task; the ones running finish (or
  // stop at a record boundary), then the error surfaces.
  const nextTask = () => (failed || stopRequested(stop) ? undefined : queue.shift());
  const drain = async (run: (task: Task) => Promise<unknown>) => {
    for (let task = nextTask(); task !== undefined; task = nextTask()) {
      try {
        await run(task);
      } catch (err) {
        failed = true;
        throw err;
      }
      onTaskDone();
    }
  };
  const inline = (task: Task) => loggedTask(stage.name, task.index, () => runPooledUnit(plan, stage, task, onTaskProgress, stop));
  // A stop shows as TaskStopped errors and tasks never started; any other error is a failure.
  const outcome = (results: PromiseSettledResult<void>[]): "done" | "stopped" => {
    const failure = results.find((result) => result.status === "rejected" && !isTaskStopped(result.reason));
    if (failure?.status === "rejected") throw failure.reason;
    return stopRequested(stop) ? "stopped" : "done";
  };
  if (workers === 1) return outcome(await Promise.allSettled([drain(inline)]));

  const pool = await pools.get(workers - 1);
  const inputDecisions = shareDecisions(plan.inputDecisions);
  const inPool = (task: Task) =>
    pool.run(
      {
        loaded: plan.loaded,
        taskPlanSha256: plan.taskPlanSha256,
        inputDecisions,
        stage: stage.name,
        task,
        stop,
      },
      onTaskProgress,
    );
  return outcome(await Promise.allSettled([drain(inline), ...Array.from({ length: workers - 1 }, () => drain(inPool))]));
}

/** Where a run's pooled stages get their threads; `close` ends the ones the run started itself. */
interface RunPools {
  get(threads: number): Promise<TaskPool>;
  close(): Promise<void>;
}

/**
 * The caller's pool (started before the plan, see task-pool.ts), or one the first pooled stage
 * that needs threads starts and the later stages of the job reuse: a thread costs ~1 s of CPU to
 * boot (modules, then the job's plan), which a curation or mixture job otherwise paid again for
 * every pooled stage. A stage that needs more threads than it holds gets a bigger one. Loaded only
 * when needed: a single-threaded run starts no pool (piscina and its modules).
 */
function runPools(shared: TaskPool | undefined): RunPools {
  let own: TaskPool | undefined;
  return {
    async get(threads) {
      if (shared) return shared;
      if (own && own.threads >= threads) return own;
      await own?.destroy();
      own = undefined;
      own = new (await import("./task-pool.ts")).TaskPool(threads);
      return own;
    },
    async close() {
      const pool = own;
      own = undefined;
      await pool?.destroy();
    },
  };
}

/** Units of `stage` without a current completion marker. */
async function unfinishedUnits(plan: JobPlan, { stage, units }: StagePlan): Promise<number[]> {
  const missing: number[] = [];
  for (let unit = 0; unit < units; unit++) if (!(await stage.isDone(plan, unit))) missing.push(unit);
  return missing;
}

function describeUnits(units: number[]): string {
  return `${units.slice(0, 10).join(", ")}${units.length > 10 ? `, … (${units.length})` : ""}`;
}

/**
 * Runs this process's share of the job: for each stage in turn (those named with `options.stages`),
 * the stage's units this rank owns that are not done yet; the manifest is written once every
 * record task of the job is done. A stage starts only when the stage before it is complete: with
 * ranks, a rank that finds other ranks' units unfinished stops and says so (on a cluster, each
 * stage is its own array, started after the previous one). Memory holds, per worker, one record
 * per stage and one row group per bucket, or one task's or one partition's signatures.
 */
export async function runJob(plan: JobPlan, options: RunOptions = {}): Promise<RunResult> {
  const outputDir = plan.config.output.dir;
  // What the user named: the staging folder of an `s3://` output is an implementation detail.
  const shownOutput = plan.remote?.shown ?? outputDir;
  await prepareOutput(plan, options);
  const rank = options.rank ?? { rank: 0, worldSize: 1, from: "single" };
  // Every stage the job runs (their modules loaded): a one-stage process needs them only for an
  // `s3://` output (what the stages before it provide) or to say which stages the job has.
  let every: StagePlan[] | undefined;
  const allStages = async () => (every ??= await jobStages(plan.config, plan.tasks.length));
  const schedule = await stagesToRun(plan, options.stages, allStages);
  // With --stage, the last stage named: what the run reports, and whether it finalizes.
  const only = options.stages === undefined ? undefined : (schedule.at(-1) as StageInJob);
  const stop = options.stop ?? createStopSignal();
  const notes: string[] = [];
  let ran = 0;
  let skipped = 0;
  const pools = runPools(options.pool);
  try {
    for (const current of schedule) {
      const { stage, units } = current.current;
      if (plan.remote) await mirrorStageInputs(plan.remote, await allStages(), await positionOf(stage, allStages));
      const { before } = current;
      if (before) {
        const missing = await unfinishedUnits(plan, before);
        if (missing.length > 0) {
          if (only !== undefined && !schedule.some((named) => named.current.stage === before.stage))
            throw new UserError(
              `stage ${stage.name} cannot start: stage ${before.stage.name} has ${missing.length} of ${before.units} unit(s) unfinished (${describeUnits(missing)}); run it first (lwm-data run … --stage ${before.stage.name})`,
            );
          return {
            outputDir: shownOutput,
            ran,
            skipped,
            unfinished: missing.length,
            waiting: { stage: stage.name, before: before.stage.name, missing },
            notes,
          };
        }
      }
      const mine = Array.from({ length: units }, (_, unit) => unit).filter((unit) => unit % rank.worldSize === rank.rank);
      const unfinished = new Set(await unfinishedUnits(plan, current.current));
      const pending = mine.filter((unit) => unfinished.has(unit));
      skipped += mine.length - pending.length;
      const outcome = await runStage(plan, stage, pending, mine.length, options, stop, notes, pools);
      if (outcome.stopped)
        return { outputDir: shownOutput, ran: ran + outcome.ran, skipped, unfinished: unfinished.size - outcome.ran, stopped: true, notes };
      ran += outcome.ran;
    }
  } finally {
    await pools.close();
  }
  if (only !== undefined && !only.last) {
    const { stage } = only.current;
    if (plan.remote) await mirrorStageInputs(plan.remote, await allStages(), await positionOf(stage, allStages));
    const unfinished = (await unfinishedUnits(plan, only.current)).length;
    return { outputDir: shownOutput, ran, skipped, unfinished, stageOnly: { stage: stage.name, unfinished }, notes };
  }
  // Loaded here: a process that runs one stage before the last never finalizes.
  const { finalizeOutput, finalizeRemoteOutput, taskCensus } = await import("../output/finalize.ts");
  // Other ranks' tasks may have finished meanwhile.
  if (plan.remote) await mirrorFinalizeInputs(plan.remote);
  const census = await taskCensus(outputDir);
  const result: RunResult = { outputDir: shownOutput, ran, skipped, unfinished: census.missing.length, notes };
  if (census.missing.length > 0) return result;
  const { manifest, path } = plan.remote ? await finalizeRemoteOutput(plan.remote) : await finalizeOutput(outputDir);
  return { ...result, manifest, manifestPath: path };
}

/**
 * The stages this process runs, each with the one before it: every stage of the job in turn, or
 * only those `names` (in the job's order, loading only their modules and their predecessors', see
 * `stageInJob`).
 */
async function stagesToRun(
  plan: JobPlan,
  names: readonly string[] | undefined,
  allStages: () => Promise<StagePlan[]>,
): Promise<StageInJob[]> {
  if (names === undefined) {
    const stages = await allStages();
    return stages.map((current, position) => {
      const before = stages[position - 1];
      return { current, ...(before ? { before } : {}), last: position === stages.length - 1 };
    });
  }
  const named = new Set(names);
  if (named.size === 0) throw new UserError("--stage: name at least one stage");
  const chosen: StageInJob[] = [];
  // JOB_STAGE_NAMES is the job's order, whatever order the names came in.
  for (const name of [...named].sort((a, b) => JOB_STAGE_NAMES.indexOf(a) - JOB_STAGE_NAMES.indexOf(b))) {
    const one = JOB_STAGE_NAMES.includes(name) ? await stageInJob(plan.config, plan.tasks.length, name) : undefined;
    if (!one)
      throw new UserError(
        `--stage ${name}: this job has no such stage (its stages: ${(await allStages()).map(({ stage }) => stage.name).join(", ")}; docs/contributing.md "Job stages, and adding one" says which setting turns each on)`,
      );
    chosen.push(one);
  }
  return chosen;
}

async function positionOf(stage: JobStage, allStages: () => Promise<StagePlan[]>): Promise<number> {
  return (await allStages()).findIndex((planned) => planned.stage === stage);
}

/** Units of a pooled stage as tasks: a task-scoped unit is its task; another names its unit in `index`. */
function unitTask(plan: JobPlan, stage: JobStage, unit: number): Task {
  return stage.scope === "task" ? (plan.tasks[unit] as Task) : { index: unit, pieces: [], bytes: 0 };
}

/** Runs one stage's pending units of this rank: pooled stages on the worker pool, others here. */
async function runStage(
  plan: JobPlan,
  stage: JobStage,
  pending: number[],
  mineTotal: number,
  options: RunOptions,
  stop: StopSignal,
  notes: string[],
  pools: RunPools,
): Promise<{ ran: number; stopped: boolean }> {
  const progress: JobProgress = {
    stage: stage.name,
    tasksTotal: mineTotal,
    tasksDone: mineTotal - pending.length,
    records: 0,
    bytes: 0,
    bytesTotal: 0,
  };
  const finishTask = () => {
    progress.tasksDone += 1;
    options.onProgress?.(progress);
  };
  if (!stage.pooled) {
    options.onProgress?.(progress);
    for (const unit of pending) {
      if (stopRequested(stop)) return { ran: progress.tasksDone - (mineTotal - pending.length), stopped: true };
      const result = await stage.run({ plan, task: unitTask(plan, stage, unit), stop, onProgress: () => {} });
      notes.push(...(stage.report?.(result) ?? []));
      if (plan.remote) await uploadUnit(plan.remote, stage, unit);
      finishTask();
    }
    return { ran: pending.length, stopped: false };
  }
  const tasks = pending.map((unit) => unitTask(plan, stage, unit));
  progress.bytesTotal = tasks.reduce((sum, t) => sum + t.bytes, 0);
  const perTask = new Map<number, TaskProgress>();
  // Records a resumed task took from its checkpoint are not counted as processed.
  const processed = (p: TaskProgress | undefined) => (p ? p.records - (p.resumed ?? 0) : 0);
  const onTaskProgress = (p: TaskProgress) => {
    const before = perTask.get(p.task);
    perTask.set(p.task, p);
    progress.records += processed(p) - processed(before);
    progress.bytes += p.bytes - (before?.bytes ?? 0);
    options.onProgress?.(progress);
  };
  options.onProgress?.(progress);
  const workers = Math.max(1, Math.min(options.workers ?? availableParallelism(), tasks.length));
  const outcome = await loggedStage(stage.name, workers, () =>
    runTasks(plan, stage, tasks, workers, onTaskProgress, finishTask, stop, pools),
  );
  const resumed = [...perTask.values()].filter((p) => (p.resumed ?? 0) > 0);
  if (resumed.length > 0) {
    const fromCheckpoints = resumed.reduce((sum, p) => sum + (p.resumed ?? 0), 0);
    notes.push(
      `  ${stage.name}: ${progress.records} record(s) processed in this run; ${fromCheckpoints} more were in the checkpoints of the ${resumed.length} task(s) it resumed`,
    );
  }
  const ran = progress.tasksDone - (mineTotal - pending.length);
  return { ran, stopped: outcome === "stopped" };
}
