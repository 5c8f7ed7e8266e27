import { availableParallelism } from "node:os";
import { resolveRank } from "../../sharding/rank.ts";
import { loadConfig } from "../config/load-config.ts";
import { useHeapGrowthFor } from "../core/process-memory.ts";
import { planJob } from "../pipeline/plan.ts";
import { runJob } from "../pipeline/run-job.ts";
import type { TaskPool } from "../pipeline/task-pool.ts";
import { type InputOptions, inputOverrides } from "./input-overrides.ts";
import { positiveInt } from "./positive-int.ts";
import type { ProgressMode } from "./progress-display.ts";
import { shownPath } from "./shown-path.ts";
import { stopOnSignals } from "./stop-on-signals.ts";

interface RunOptions extends InputOptions {
  stage?: string;
  progress: ProgressMode;
  workers?: string;
  rank?: string;
  worldSize?: string;
  overwrite?: boolean;
}

/** `--stage signatures,clusters,select`: one stage, or several run in turn in this process. */
function stageNames(value: string): string[] {
  return value
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
}

/** `auto` (the default) leaves the pool at one thread per core. */
function parseWorkers(value: string | undefined): number | undefined {
  return value === undefined || value === "auto" ? undefined : positiveInt(value, '--workers (or "auto")');
}

export async function runCommand(configPath: string, options: RunOptions): Promise<void> {
  const rank = resolveRank({
    ...(options.rank !== undefined ? { rank: options.rank } : {}),
    ...(options.worldSize !== undefined ? { worldSize: options.worldSize } : {}),
  });
  const workers = parseWorkers(options.workers);
  const loaded = loadConfig(configPath, inputOverrides(options));
  const pool = await earlyPool(workers);
  try {
    await runPlanned(loaded, options, rank, workers, pool);
  } finally {
    await pool?.destroy();
  }
}

/**
 * On a machine with more than two cores, the pool threads start booting now, while this thread
 * plans the job (task-pool.ts says why). On two cores the one pool thread would gain little and
 * cost a boot in every small run, so the first pooled stage that needs it starts it (run-job.ts)
 * and the job's later stages reuse it.
 */
async function earlyPool(workers: number | undefined): Promise<TaskPool | undefined> {
  const threads = (workers ?? availableParallelism()) - 1;
  return threads >= 2 ? new (await import("../pipeline/task-pool.ts")).TaskPool(threads) : undefined;
}

async function runPlanned(
  loaded: ReturnType<typeof loadConfig>,
  options: RunOptions,
  rank: ReturnType<typeof resolveRank>,
  workers: number | undefined,
  pool: TaskPool | undefined,
): Promise<void> {
  // Progress bars (cli-progress) are loaded only when shown.
  const displays = options.progress === "none" ? undefined : await import("./progress-display.ts");
  // Format detection shows its own line (files sniffed of total) before the job's bar.
  const sniffing = displays?.sniffDisplay(options.progress);
  const plan = await planJob(loaded, sniffing ? { onSniff: sniffing.onSniff } : {}).finally(() => sniffing?.stop());
  useHeapGrowthFor(plan.files.reduce((sum, file) => sum + file.bytes, 0));
  const display = displays?.progressDisplay(options.progress);
  const started = Date.now();
  const stop = stopOnSignals("run", "stopping at the next record boundary", () => display?.stop());
  let result: Awaited<ReturnType<typeof runJob>>;
  try {
    result = await runJob(plan, {
      rank,
      stop: stop.signal,
      ...(options.stage ? { stages: stageNames(options.stage) } : {}),
      ...(workers !== undefined ? { workers } : {}),
      ...(pool ? { pool } : {}),
      ...(options.overwrite ? { overwrite: true } : {}),
      ...(display ? { onProgress: (p) => display.update(p) } : {}),
    });
  } finally {
    display?.stop();
    stop.dispose();
  }
  const where = shownPath;
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const rankNote = rank.worldSize > 1 ? ` (rank ${rank.rank} of ${rank.worldSize}, from ${rank.from})` : "";
  const ranHeader = `lwm-data run: ${plan.pipeline.name} pipeline, ${plan.files.length} input file(s), ${plan.tasks.length} task(s)${rankNote}; ran ${result.ran}, already done ${result.skipped}; ${seconds} s`;
  // What stages that ran here report (target shares: the factors the weights stage derived).
  const header = [ranHeader, ...result.notes].join("\n");
  const { manifest, manifestPath } = result;
  if (result.stopped) {
    const { checkpointsBetweenCuts } = await import("../records/task-output.ts");
    console.log(
      `${header}\n  stopped by ${stop.received()}: ${
        checkpointsBetweenCuts(plan)
          ? "finished tasks are kept and each unfinished one checkpointed at the record it stopped on"
          : "finished tasks and checkpoints are kept, unfinished segments were dropped (output.checkpoint is off, or the output is in a bucket)"
      }; rerun the same command to resume (the output will equal an uninterrupted run's)`,
    );
    process.exitCode = stop.received() === "SIGINT" ? 130 : 143;
    return;
  }
  if (result.waiting) {
    const { stage, before, missing } = result.waiting;
    console.log(
      `${header}\n  stage ${stage} waits for ${missing.length} unit(s) of stage ${before} that other ranks run; rerun when they are done (or run each stage as its own array: --stage)`,
    );
    return;
  }
  if (result.stageOnly) {
    const { stage, unfinished } = result.stageOnly;
    console.log(`${header}\n  stage ${stage}: ${unfinished === 0 ? "complete" : `${unfinished} unit(s) unfinished (other ranks)`}`);
    return;
  }
  if (!manifest || !manifestPath) {
    console.log(
      `${header}\n  ${result.unfinished} task(s) of the job are unfinished (other ranks); the manifest is written when all are done, or by \`lwm-data finalize ${where(result.outputDir)}\``,
    );
    return;
  }
  // Loaded only here: a process that runs one stage of a cluster's array never writes the manifest.
  const { reportFinishedRun } = await import("./run-report.ts");
  await reportFinishedRun(plan, { ...result, manifest, manifestPath }, header);
}
