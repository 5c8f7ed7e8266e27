import { type Task, taskLabel } from "../../sharding/task-plan.ts";
import { readMarker, writeMarker } from "../curate/curate-files.ts";
import { curationEnabled } from "../curate/curation-settings.ts";
import { readRemovals } from "../curate/select-stage.ts";
import { writeTextFile } from "../io/json-file.ts";
import { type JobPlan, jobShas } from "../pipeline/plan.ts";
import { filesUnder, isMarker, type JobStage } from "../pipeline/stage-contract.ts";
import type { StopSignal } from "../pipeline/stop-signal.ts";
import type { TaskProgress } from "../pipeline/task-items.ts";
import { taskTrajectories } from "../pipeline/task-trajectories.ts";
import type { TeacherClient } from "../sft/teacher/openai-client.ts";
import { SCORE_DIR, type ScoreLine, scorePaths } from "./score-files.ts";
import { createScorerClient, type ScoreInput, type ScoreSummary, scoreRecords } from "./score-records.ts";
import type { Scorer } from "./score-schema.ts";

/** A score unit's marker: each scorer's counts for the task. */
export interface ScoreMarkerData {
  scorers: Record<string, ScoreSummary>;
}

/** One client per scorer per thread: its rate limit and concurrency hold across the units it runs. */
const clients = new WeakMap<JobPlan, Map<string, TeacherClient>>();

function clientOf(plan: JobPlan, scorer: Scorer): TeacherClient {
  const byName = clients.get(plan) ?? new Map<string, TeacherClient>();
  clients.set(plan, byName);
  const client = byName.get(scorer.name) ?? createScorerClient(scorer);
  byName.set(scorer.name, client);
  return client;
}

/**
 * The trajectories of a task the records stage would process, normalized as it would (so the judge
 * reads what is trained on), keyed by their 0-based item: not removed by curation (selection runs
 * after scoring, so none of its drops). Text documents are not scored.
 */
async function* scorable(
  plan: JobPlan,
  task: Task,
  stop: StopSignal | undefined,
  onProgress?: (p: TaskProgress) => void,
): AsyncGenerator<ScoreInput> {
  const removals = curationEnabled(plan.config) ? await readRemovals(plan.config.output.dir, task.index) : new Map();
  for await (const { item, trajectory } of taskTrajectories(plan, task, { removals, drops: new Map() }, stop, onProgress))
    yield { key: item, trajectory };
}

/**
 * One task: each scorer asks its endpoint to score every scorable trajectory (bounded concurrency,
 * retries, the request cache shared with SFT: a rerun pays only for what failed), and its scores
 * are written as `score/<scorer>/task-NNNNN.jsonl`; the marker holds the counts. An endpoint no
 * request could reach stops the unit with no marker (a ScoringEndpointError), so a rerun retries it.
 */
export async function runScoreUnit(plan: JobPlan, task: Task, stop?: StopSignal, onProgress?: (p: TaskProgress) => void): Promise<void> {
  const out = plan.config.output.dir;
  const summaries: Record<string, ScoreSummary> = {};
  for (const scorer of plan.scorers) {
    const run = scoreRecords(scorable(plan, task, stop, onProgress), scorer, { client: clientOf(plan, scorer) });
    const lines: string[] = [];
    for await (const result of run.results) {
      const line: ScoreLine = { item: result.key, score: result.score, reason: result.reason };
      lines.push(`${JSON.stringify(line)}\n`);
    }
    await writeTextFile(scorePaths.scores(out, scorer.name, task.index), lines.join(""));
    summaries[scorer.name] = run.summary();
  }
  await writeMarker(scorePaths.done(out, task.index), jobShas(plan), "score", task.index, { scorers: summaries } satisfies ScoreMarkerData);
  onProgress?.({ task: task.index, records: 0, bytes: task.bytes });
}

export function readScoreMarker(plan: JobPlan, task: number) {
  return readMarker<ScoreMarkerData>(scorePaths.done(plan.config.output.dir, task), jobShas(plan));
}

/** Model scoring (docs/filters-selection-scoring.md "Model-scored trajectories"): per task, each scorer's score of every trajectory. */
export const scoreStage: JobStage = {
  name: "score",
  summary: "per task (scorers): each trajectory scored by each scorer's endpoint against its rubric (cached, retried, resumable)",
  enabled: (config) => config.scorers.length > 0,
  scope: "task",
  pooled: true,
  reads: [{ path: `${SCORE_DIR}/`, include: isMarker }],
  provides: [{ path: `${SCORE_DIR}/` }],
  unitFiles: async (out, unit) => {
    const scorers = (await filesUnder(out, `${SCORE_DIR}/`)).filter((path) => !path.endsWith(".json")).map((path) => `${path}/`);
    const scores = (await Promise.all(scorers.map((folder) => filesUnder(out, folder, `${taskLabel(unit)}.`)))).flat();
    return [...scores, ...(await filesUnder(out, `${SCORE_DIR}/`, `${taskLabel(unit)}.`))];
  },
  isDone: async (plan, unit) => (await readScoreMarker(plan, unit)) !== undefined,
  run: ({ plan, task, stop, onProgress }) => runScoreUnit(plan, task, stop, onProgress),
};
