import type { Domain } from "../../core/trajectory.ts";
import type { TeacherStats } from "../teacher/openai-client.ts";
import { JUDGE_DIMENSIONS, type JudgeDimension } from "./dimensions.ts";
import { rubricFor } from "./rubrics.ts";

/** `sft.judge`'s endpoint keys; null = the teacher's. */
export interface JudgeEndpointConfig {
  base_url: string | null;
  model: string | null;
  api_key_env: string | null;
}

export interface JudgeEndpoint {
  baseUrl: string;
  model: string;
  apiKeyEnv: string;
  /** The judge is the teacher's model: it grades its own answers (a known self-preference bias). */
  selfJudging: boolean;
}

/** The judge's endpoint, model and key variable, each the teacher's where `sft.judge` leaves it unset. */
export function judgeEndpoint(
  judge: JudgeEndpointConfig,
  teacher: { base_url: string; model: string; api_key_env: string },
): JudgeEndpoint {
  const model = judge.model ?? teacher.model;
  return {
    baseUrl: judge.base_url ?? teacher.base_url,
    model,
    apiKeyEnv: judge.api_key_env ?? teacher.api_key_env,
    selfJudging: model === teacher.model,
  };
}

type JudgeColumnName = `judge_${JudgeDimension}` | "judge_mean";
/** A candidate's judge columns in the candidates table: each dimension and the mean, 0-100, null when not judged. */
export type JudgeColumns = Record<JudgeColumnName, number | null>;

export const JUDGE_COLUMNS: readonly JudgeColumnName[] = [...JUDGE_DIMENSIONS.map((d) => `judge_${d}` as const), "judge_mean"];

type JudgeVerdict = { ok: true; scores: Record<JudgeDimension, number>; mean: number } | { ok: false };

export function judgeColumns(judge: JudgeVerdict | undefined): JudgeColumns {
  const columns = Object.fromEntries(JUDGE_COLUMNS.map((column) => [column, null])) as JudgeColumns;
  if (!judge?.ok) return columns;
  for (const dimension of JUDGE_DIMENSIONS) columns[`judge_${dimension}`] = judge.scores[dimension];
  columns.judge_mean = judge.mean;
  return columns;
}

/** Per domain: candidates judged, judgements that failed (request or reply), mean score per dimension. */
export interface JudgeDomainCounts {
  judged: number;
  errors: number;
  /** Over the judged candidates whose reply was read; 0-100. */
  mean: Record<JudgeDimension | "mean", number | null>;
}

export interface JudgeSummary {
  base_url: string;
  model: string;
  /** True when the judge is the teacher's model grading its own candidates: a known bias (docs/sft.md "SFT workflow"). */
  self_judging: boolean;
  /** sha256 of each domain's rubric the judge was given. */
  rubrics: Partial<Record<Domain, string>>;
  /** Candidates sent to the judge (those that passed the rules), and judgements that failed. */
  judged: number;
  errors: number;
  by_domain: Record<string, JudgeDomainCounts>;
  stats: TeacherStats;
}

/** Adds up judged candidates as their rows are recorded (in input order, so the sums are reproducible). */
export class JudgeTally {
  private readonly byDomain = new Map<string, { judged: number; errors: number; read: number; sums: Record<string, number> }>();

  add(domain: string, judge: JudgeVerdict | undefined): void {
    if (!judge) return;
    let entry = this.byDomain.get(domain);
    if (!entry) {
      entry = { judged: 0, errors: 0, read: 0, sums: {} };
      this.byDomain.set(domain, entry);
    }
    entry.judged += 1;
    if (!judge.ok) {
      entry.errors += 1;
      return;
    }
    entry.read += 1;
    const columns = judgeColumns(judge);
    for (const dimension of [...JUDGE_DIMENSIONS, "mean"] as const)
      entry.sums[dimension] = (entry.sums[dimension] ?? 0) + (columns[`judge_${dimension}`] as number);
  }

  summary(endpoint: JudgeEndpoint, stats: TeacherStats): JudgeSummary {
    const domains = [...this.byDomain.keys()].sort();
    const byDomain: Record<string, JudgeDomainCounts> = {};
    for (const domain of domains) {
      const entry = this.byDomain.get(domain) as { judged: number; errors: number; read: number; sums: Record<string, number> };
      const mean = Object.fromEntries(
        [...JUDGE_DIMENSIONS, "mean"].map((d) => [d, entry.read > 0 ? round2((entry.sums[d] ?? 0) / entry.read) : null]),
      ) as JudgeDomainCounts["mean"];
      byDomain[domain] = { judged: entry.judged, errors: entry.errors, mean };
    }
    return {
      base_url: endpoint.baseUrl,
      model: endpoint.model,
      self_judging: endpoint.selfJudging,
      rubrics: Object.fromEntries(domains.map((domain) => [domain, rubricFor(domain as Domain).sha256])),
      judged: domains.reduce((sum, d) => sum + (byDomain[d]?.judged ?? 0), 0),
      errors: domains.reduce((sum, d) => sum + (byDomain[d]?.errors ?? 0), 0),
      by_domain: byDomain,
      stats,
    };
  }
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}
