import type { Task } from "../../sharding/task-plan.ts";
import type { Counters } from "../normalize/normalizer.ts";
import type { DuplicateIds } from "../pipeline/duplicate-ids.ts";
import { type JobPlan, jobShas } from "../pipeline/plan.ts";
import { type RecordResult, type RecordResultsOptions, recordResults } from "../pipeline/record-results.ts";
import type { StageContext } from "../pipeline/stages.ts";
import { usesShares } from "./resolve-factors.ts";
import { openSpool, removeSpool, type Spool, spoolName } from "./spool.ts";

/** Where the records stage takes a task's results from, and what it hands `seal`. */
export interface TaskResults {
  results: AsyncIterable<{ result: RecordResult; item: number; bytes: number }>;
  /** The task's id hashes for finalize's cross-task check (none when duplicate ids are not checked). */
  duplicates(): Pick<DuplicateIds, "hashes"> | undefined;
  /** Whether the results come from the count unit's spool. */
  spooled: boolean;
}

/** Pulls the task's spool from the bucket when the staging folder lacks a current one (another machine counted it). */
async function currentSpool(plan: JobPlan, task: number): Promise<Spool | undefined> {
  const outputDir = plan.config.output.dir;
  const local = await openSpool(outputDir, task, jobShas(plan));
  if (local || !plan.remote) return local;
  if (!(await plan.remote.pull(spoolName(task)))) return undefined;
  return openSpool(outputDir, task, jobShas(plan));
}

/**
 * A task's record results for the records stage: in share mode, replayed from the count unit's
 * spool when a current one is there (the same results, counters and id hashes the records stage
 * would compute, without tokenizing the task a second time); otherwise the record pipeline's.
 * `counters` are the task output's: a spooled record's normalization counts are added to them.
 */
export async function taskResults(
  plan: JobPlan,
  task: Task,
  context: StageContext,
  options: RecordResultsOptions & { counters: Counters },
): Promise<TaskResults> {
  const spool = usesShares(plan.config.mixture) ? await currentSpool(plan, task.index) : undefined;
  if (!spool) {
    return { results: recordResults(plan, task, context, options), duplicates: () => options.duplicates, spooled: false };
  }
  const duplicateIds = options.duplicates !== undefined;
  return {
    results: replay(spool, plan, task.index, options.resumeAfter ?? 0, options.counters),
    duplicates: () => {
      const hashes = spool.idHashes();
      return duplicateIds && hashes ? { hashes: () => hashes } : undefined;
    },
    spooled: true,
  };
}

/** The spool's results; a spool that breaks mid-way is deleted, so the rerun processes the records itself. */
async function* replay(spool: Spool, plan: JobPlan, task: number, resumeAfter: number, counters: Counters) {
  try {
    yield* spool.results(resumeAfter, counters);
  } catch (err) {
    await dropSpool(plan, task);
    throw err;
  }
}

/** Deletes the task's spool, here and in the bucket: once the task's records are written it is spent. */
export async function dropSpool(plan: JobPlan, task: number): Promise<void> {
  if (!usesShares(plan.config.mixture)) return;
  await removeSpool(plan.config.output.dir, task);
  if (plan.remote) await plan.remote.remove([spoolName(task)]);
}
