import { relative } from "node:path";
import { loadConfig } from "../config/load-config.ts";
import { plannedMixLines } from "../mixture/describe-mixture.ts";
import { isCurrent, readTaskState } from "../output/task-state.ts";
import { jobStages } from "../pipeline/job-stages.ts";
import { jobShas, planJob } from "../pipeline/plan.ts";
import { estimateJobScoring, scoringEstimateLines } from "../score/score-estimate.ts";
import { selectionLines } from "../select/describe-selection.ts";
import { formatBytes } from "./format-bytes.ts";
import { type InputOptions, inputOverrides } from "./input-overrides.ts";
import { positiveInt } from "./positive-int.ts";
import { sniffDisplay } from "./progress-display.ts";

interface PlanOptions extends InputOptions {
  worldSize: string;
  json?: boolean;
}

/** `lwm-data plan`: the task cut, each task's inputs and rank, and which tasks are already done. */
export async function planCommand(configPath: string, options: PlanOptions): Promise<void> {
  const worldSize = positiveInt(options.worldSize, "--world-size");
  const loaded = loadConfig(configPath, inputOverrides(options));
  // On a terminal: files sniffed of total while the inputs' formats are told.
  const sniffing = sniffDisplay("auto");
  const plan = await planJob(loaded, sniffing ? { onSniff: sniffing.onSniff } : {}).finally(() => sniffing?.stop());
  const stages = await jobStages(plan.config, plan.tasks.length);
  const outputDir = plan.config.output.dir;
  const job = jobShas(plan);
  const rows = [];
  for (const task of plan.tasks) {
    const done = await readTaskState(outputDir, task.index, "done");
    const checkpoint = done ? undefined : await readTaskState(outputDir, task.index, "checkpoint");
    rows.push({
      task: task.index,
      rank: task.index % worldSize,
      bytes: task.bytes,
      status: isCurrent(done, job)
        ? "done"
        : checkpoint && isCurrent(checkpoint, job)
          ? `checkpoint (segment ${checkpoint.segment}, ${checkpoint.items} record(s) done${checkpoint.journal ? ", inside the segment" : ""})`
          : "pending",
      pieces: task.pieces.map((p) => ({
        path: (plan.files[p.file] as { displayPath: string }).displayPath,
        ...(p.start !== undefined ? { start: p.start, end: p.end } : {}),
      })),
    });
  }
  const scoring = plan.scorers.length > 0 ? await estimateJobScoring(plan) : undefined;
  if (options.json) {
    console.log(
      JSON.stringify(
        {
          config_sha256: plan.configSha256,
          plan_sha256: plan.taskPlanSha256,
          world_size: worldSize,
          stages: stages.map(({ stage, units }) => ({ stage: stage.name, units })),
          mixture: plan.config.mixture,
          ...(scoring
            ? {
                scoring: {
                  sampled: scoring.sampled,
                  records: scoring.records,
                  scorers: scoring.perScorer.map(({ scorer, estimate }) => ({ name: scorer.name, ...estimate })),
                },
              }
            : {}),
          tasks: rows,
        },
        null,
        2,
      ),
    );
    return;
  }
  const total = plan.tasks.reduce((sum, t) => sum + t.bytes, 0);
  console.log(
    `${plan.tasks.length} task(s) over ${plan.files.length} file(s), ${formatBytes(total)}; input.task_bytes = ${formatBytes(plan.config.input.task_bytes)}; ${worldSize} rank(s); output ${relative(process.cwd(), outputDir) || "."}`,
  );
  console.log(
    `stages: ${stages.map(({ stage, units }) => `${stage.name} × ${units}`).join(" → ")}${stages.length > 1 ? " (each stage's units are split over the ranks like tasks; the status below is the records stage's)" : ""}`,
  );
  for (const line of selectionLines(plan)) console.log(line);
  if (scoring) for (const line of ["scoring estimate:", ...scoringEstimateLines(scoring)]) console.log(line);
  for (const line of await plannedMixLines(plan)) console.log(line);
  for (const row of rows) {
    const pieces = row.pieces.map((p) => (p.start !== undefined ? `${p.path} [${p.start}, ${p.end})` : p.path));
    console.log(
      `task ${String(row.task).padStart(5)}  rank ${String(row.rank).padStart(4)}  ${formatBytes(row.bytes).padStart(10)}  ${row.status.padEnd(10)}  ${pieces.join(", ")}`,
    );
  }
}
