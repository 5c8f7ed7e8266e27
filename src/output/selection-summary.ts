import { createReadStream } from "node:fs";
import { taskLabel } from "../../sharding/task-plan.ts";
import { UserError } from "../core/errors.ts";
import { readMarker } from "../curate/curate-files.ts";
import { readLines } from "../io/read-lines.ts";
import { scorePaths } from "../score/score-files.ts";
import type { ScoreSummary } from "../score/score-records.ts";
import type { Scorer } from "../score/score-schema.ts";
import type { ScoreMarkerData } from "../score/score-stage.ts";
import type { CapSummary, SelectionRule } from "../select/select-records.ts";
import { selectionPaths } from "../select/selection-files.ts";
import type { SelectionMarkerData } from "../select/selection-stage.ts";
import type { JobShas } from "./task-state.ts";

/**
 * The manifest's `filters`: records the config's record filters dropped into filtered/ (stage
 * `filter`), in all and per filter name. With the plan's filter list every configured filter is
 * listed in config order, 0 included; without it, those that dropped something, by name.
 */
export interface FiltersSummary {
  filtered: number;
  by_rule: Record<string, number>;
}

/**
 * The manifest's `selection`, from the selection stage's marker: the records it decided over,
 * those kept, those dropped per rule (into filtered/, stage `selection`), and each cap.
 */
export interface SelectionSummary {
  records: number;
  kept: number;
  dropped: Record<SelectionRule, number>;
  caps: CapSummary[];
}

/** The scorer counts that are the same on any rerun: no cache hits, HTTP requests, retries or paid tokens. */
export const STABLE_SCORE_COUNTS = [
  "records",
  "ok",
  "malformed",
  "failed",
  "skipped",
  "requests",
  "prompt_tokens",
  "completion_tokens",
] as const satisfies readonly (keyof ScoreSummary)[];

export type StableScoreCounts = Pick<ScoreSummary, (typeof STABLE_SCORE_COUNTS)[number]>;

/** What decides a scorer's scores, as the plan records it (docs/filters-selection-scoring.md "Model-scored trajectories"). */
export interface ScorerIdentity {
  name: string;
  model: string;
  rubric_sha256: string;
  scope: Scorer["scope"];
  aggregate: Scorer["aggregate"];
}

/**
 * One scorer in the manifest's `scoring`: its identity and its counts summed over the tasks.
 * `requests` is the prompts asked for (one per record, or per observation turn): it follows from
 * the records, so it is kept; whether the cache or the endpoint answered is not (a rerun from the
 * cache makes the same output), so `cached`, `http_requests`, `retries` and `paid_*` are left to
 * the score markers and the run's report. Tokens are the endpoint's `usage`, cached with the answer.
 */
export type ScorerSummary = { name: string } & Partial<Omit<ScorerIdentity, "name">> & StableScoreCounts;

/** The manifest's `scoring`: per scorer name, in config order. */
export type ScoringSummary = Record<string, ScorerSummary>;

/**
 * What the plan (tasks/plan.json, field `filtering`) says about filters and scorers, so finalize
 * can list every filter and name each scorer's model and rubric from the output folder alone.
 * Absent when the job has no filters, selection or scorers (plans of other jobs are unchanged).
 */
export interface FilteringPlan {
  filters: string[];
  select: boolean;
  scorers: ScorerIdentity[];
}

/** The plan's `filtering` field for a job; undefined when it has no filters, selection or scorers. */
export function filteringPlanOf(job: {
  filters: readonly { name: string }[];
  scorers: readonly Scorer[];
  selectActive: boolean;
}): FilteringPlan | undefined {
  if (job.filters.length === 0 && job.scorers.length === 0 && !job.selectActive) return undefined;
  return {
    filters: job.filters.map((f) => f.name),
    select: job.selectActive,
    scorers: job.scorers.map((s) => ({
      name: s.name,
      model: s.model,
      rubric_sha256: s.rubric_sha256,
      scope: s.scope,
      aggregate: s.aggregate,
    })),
  };
}

/** Entries of the filtered files per stage and rule, for the stages whose entries name a rule (`filter`, `selection`). */
export type RuleCounts = Record<string, Record<string, number>>;

const RULE_STAGES = new Set(["filter", "selection"]);
/** As verify's limit: far above any real entry. */
const MAX_ENTRY_BYTES = 1 << 20;

/** Counts the `filter` and `selection` entries of filtered/ files by rule; streams, one line at a time. */
export async function countRules(paths: readonly string[]): Promise<RuleCounts> {
  const counts: RuleCounts = {};
  for (const path of paths)
    for await (const line of readLines(createReadStream(path), MAX_ENTRY_BYTES)) {
      if (line.text === "") continue;
      let entry: { stage?: unknown; rule?: unknown };
      try {
        entry = JSON.parse(line.text) as typeof entry;
      } catch {
        throw new UserError(`${path}:${line.lineNo}: not JSON; delete the task's done marker and rerun to redo it`);
      }
      if (typeof entry.stage !== "string" || !RULE_STAGES.has(entry.stage)) continue;
      const rule = typeof entry.rule === "string" ? entry.rule : "(none)";
      const ofStage = counts[entry.stage] ?? {};
      ofStage[rule] = (ofStage[rule] ?? 0) + 1;
      counts[entry.stage] = ofStage;
    }
  return counts;
}

const byName = (counts: Record<string, number>) =>
  Object.fromEntries(Object.entries(counts).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

/** The `filters` block: configured filters in config order (0 included), then any other rule found, by name. */
export function filtersSummary(rules: RuleCounts, configured: readonly string[] | undefined): FiltersSummary | undefined {
  const found = rules.filter ?? {};
  if (!configured && Object.keys(found).length === 0) return undefined;
  const by_rule: Record<string, number> = {};
  for (const name of configured ?? []) by_rule[name] = found[name] ?? 0;
  for (const [name, n] of Object.entries(byName(found))) if (!(name in by_rule)) by_rule[name] = n;
  return { filtered: Object.values(by_rule).reduce((sum, n) => sum + n, 0), by_rule };
}

/** The `selection` block from the selection marker; undefined when selection did not run. Throws when the plan says it ran and its marker is missing. */
export async function selectionSummary(outputDir: string, job: JobShas, expected: boolean): Promise<SelectionSummary | undefined> {
  const path = selectionPaths.selectionDone(outputDir);
  const marker = await readMarker<SelectionMarkerData>(path, job);
  if (!marker) {
    if (expected) throw new UserError(`${path} is missing or from another job: rerun the job (finished stages are skipped)`);
    return undefined;
  }
  const { records, kept, dropped, caps } = marker.data;
  return { records, kept, dropped, caps };
}

/**
 * The `scoring` block: each scorer's stable counts summed over every task's score marker, with
 * its identity from the plan. Undefined when no task was scored; throws when some tasks were
 * (or the plan names scorers) and a task's marker is missing.
 */
export async function scoringSummary(
  outputDir: string,
  job: JobShas,
  tasks: readonly number[],
  scorers: readonly ScorerIdentity[] | undefined,
): Promise<ScoringSummary | undefined> {
  const markers = await Promise.all(tasks.map((task) => readMarker<ScoreMarkerData>(scorePaths.done(outputDir, task), job)));
  const found = markers.filter((m) => m !== undefined);
  if (found.length === 0 && (scorers ?? []).length === 0) return undefined;
  const missing = tasks.filter((_, i) => markers[i] === undefined);
  if (missing.length > 0)
    throw new UserError(
      `${outputDir}: no current score marker for ${missing.slice(0, 5).map(taskLabel).join(", ")}${missing.length > 5 ? `, … (${missing.length} tasks)` : ""} (score/<task>.done.json): rerun the job (finished units are skipped)`,
    );
  const names = scorers ? scorers.map((s) => s.name) : [...new Set(found.flatMap((m) => Object.keys(m.data.scorers)))].sort();
  const summary: ScoringSummary = {};
  for (const name of names) {
    const identity = scorers?.find((s) => s.name === name);
    const entry: ScorerSummary = { ...(identity ?? { name }), ...zeroCounts() };
    for (const marker of found) {
      const counts = marker.data.scorers[name];
      if (!counts) continue;
      for (const key of STABLE_SCORE_COUNTS) entry[key] += counts[key] ?? 0;
    }
    summary[name] = entry;
  }
  return summary;
}

function zeroCounts(): StableScoreCounts {
  return Object.fromEntries(STABLE_SCORE_COUNTS.map((key) => [key, 0])) as unknown as StableScoreCounts;
}

/** `run`'s report lines for the scoring stage: per scorer, records by status, requests (how many the cache answered) and tokens. */
export function scoringReportLines(byScorer: Readonly<Record<string, ScoreSummary>>): string[] {
  return Object.entries(byScorer).map(([name, s]) => {
    const statuses = [`${s.ok} ok`, s.malformed > 0 ? `${s.malformed} malformed` : "", s.failed > 0 ? `${s.failed} failed` : ""]
      .concat(s.skipped > 0 ? [`${s.skipped} skipped`] : [])
      .filter(Boolean)
      .join(", ");
    return `  scoring ${name}: ${s.records} record(s) (${statuses}); ${s.requests} request(s), ${s.cached} from the cache, ${s.http_requests} HTTP (${s.retries} retries); tokens ${s.prompt_tokens} prompt + ${s.completion_tokens} completion (paid now: ${s.paid_prompt_tokens} + ${s.paid_completion_tokens})`;
  });
}

/** Adds one unit's scorer counts into a run's (for the run report). */
export function addScoreSummaries(into: Record<string, ScoreSummary>, from: Readonly<Record<string, ScoreSummary>>): void {
  for (const [name, counts] of Object.entries(from)) {
    const sum = into[name];
    if (!sum) into[name] = { ...counts };
    else for (const key of Object.keys(counts) as (keyof ScoreSummary)[]) sum[key] += counts[key];
  }
}
