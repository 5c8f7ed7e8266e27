import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import type * as Arrow from "apache-arrow";
import { arrow } from "../io/arrow.ts";
import { BufferedTableFile } from "../write/buffered-table-file.ts";

/** One row of `sft/candidates.parquet`: a teacher candidate with every score and reason. */
export interface CandidateRow {
  prompt_id: string;
  trajectory_id: string;
  domain: string;
  turn_index: number;
  /** The candidate's number among the prompt's candidates over all rounds; -1 for a prompt that got none (teacher failure): the row carries its reason. */
  candidate_index: number;
  /** The sampling round that produced it (0, then one per `sft sample --resample-rejected`); a failed prompt's row: its last round. */
  round: number;
  /**
   * kept: the selected answer; passed: passed but another was better; capped: passed, but its
   * thinking would overfill a near-duplicate cluster (`sft.diversity`); rejected; failed.
   */
  status: "kept" | "passed" | "capped" | "rejected" | "failed";
  format_score: number | null;
  fidelity_score: number | null;
  leakage_score: number | null;
  /** The judge's score per AgentWorldBench dimension and their mean, 0-100, when the judge ran on this candidate and its reply was read. */
  judge_format: number | null;
  judge_factuality: number | null;
  judge_consistency: number | null;
  judge_realism: number | null;
  judge_quality: number | null;
  judge_mean: number | null;
  /**
   * How the teacher returned the thinking: `content` (a `<think>` block in the content),
   * `reasoning_content`, `reasoning`, … (src/sft/teacher/teacher-answer.ts); null for a failed
   * prompt's row and for answers cached before the form was recorded.
   */
  teacher_form: string | null;
  /** Every rule's reason, `rule: reason` joined by newlines (the judge's too). */
  reasons: string;
}

const ROW_GROUP_ROWS = 16_384;
export const CANDIDATES_FILE = "sft/candidates.parquet";

function table(rows: readonly CandidateRow[]): Arrow.Table {
  const nullableFloat = (pick: (row: CandidateRow) => number | null) => arrow.vectorFromArray(rows.map(pick), new arrow.Float64());
  return new arrow.Table({
    prompt_id: arrow.vectorFromArray(
      rows.map((r) => r.prompt_id),
      new arrow.Utf8(),
    ),
    trajectory_id: arrow.vectorFromArray(
      rows.map((r) => r.trajectory_id),
      new arrow.Utf8(),
    ),
    domain: arrow.vectorFromArray(
      rows.map((r) => r.domain),
      new arrow.Utf8(),
    ),
    turn_index: arrow.vectorFromArray(Int32Array.from(rows, (r) => r.turn_index)),
    candidate_index: arrow.vectorFromArray(Int32Array.from(rows, (r) => r.candidate_index)),
    round: arrow.vectorFromArray(Int32Array.from(rows, (r) => r.round)),
    status: arrow.vectorFromArray(
      rows.map((r) => r.status),
      new arrow.Utf8(),
    ),
    format_score: nullableFloat((r) => r.format_score),
    fidelity_score: nullableFloat((r) => r.fidelity_score),
    leakage_score: nullableFloat((r) => r.leakage_score),
    judge_format: nullableFloat((r) => r.judge_format),
    judge_factuality: nullableFloat((r) => r.judge_factuality),
    judge_consistency: nullableFloat((r) => r.judge_consistency),
    judge_realism: nullableFloat((r) => r.judge_realism),
    judge_quality: nullableFloat((r) => r.judge_quality),
    judge_mean: nullableFloat((r) => r.judge_mean),
    teacher_form: arrow.vectorFromArray(
      rows.map((r) => r.teacher_form),
      new arrow.Utf8(),
    ),
    reasons: arrow.vectorFromArray(
      rows.map((r) => r.reasons),
      new arrow.Utf8(),
    ),
  });
}

/** The candidates table (zstd Parquet, temp + rename), written in row groups as rows arrive. */
export async function openCandidatesTable(outputDir: string): Promise<BufferedTableFile<CandidateRow>> {
  const file = new BufferedTableFile(join(outputDir, CANDIDATES_FILE), CANDIDATES_FILE, ROW_GROUP_ROWS, table);
  await mkdir(join(outputDir, "sft"), { recursive: true });
  await rm(file.tempPath, { force: true });
  return file;
}
