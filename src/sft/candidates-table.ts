import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import * as arrow from "apache-arrow";
import * as parquet from "parquet-wasm";
import { OpenShard, type ShardInfo } from "../write/parquet-shard-writer.ts";

/** One row of `sft/candidates.parquet`: a teacher candidate with every score and reason. */
export interface CandidateRow {
  prompt_id: string;
  trajectory_id: string;
  domain: string;
  turn_index: number;
  /** -1 for a prompt that got no candidates (teacher failure): the row carries its reason. */
  candidate_index: number;
  /** kept: the selected answer; passed: passed but another was better; rejected; failed. */
  status: "kept" | "passed" | "rejected" | "failed";
  format_score: number | null;
  fidelity_score: number | null;
  leakage_score: number | null;
  /** AgentWorldBench judge mean 0-100, when the judge ran on this candidate. */
  judge_mean: number | null;
  /** Every rule's reason, `rule: reason` joined by newlines (the judge's too). */
  reasons: string;
}

const ROW_GROUP_ROWS = 16_384;
export const CANDIDATES_FILE = "sft/candidates.parquet";

function table(rows: readonly CandidateRow[]): arrow.Table {
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
    status: arrow.vectorFromArray(
      rows.map((r) => r.status),
      new arrow.Utf8(),
    ),
    format_score: nullableFloat((r) => r.format_score),
    fidelity_score: nullableFloat((r) => r.fidelity_score),
    leakage_score: nullableFloat((r) => r.leakage_score),
    judge_mean: nullableFloat((r) => r.judge_mean),
    reasons: arrow.vectorFromArray(
      rows.map((r) => r.reasons),
      new arrow.Utf8(),
    ),
  });
}

/** Writes the candidates table (zstd Parquet, temp + rename) in row groups as rows arrive. */
export class CandidatesTableWriter {
  private readonly outputDir: string;
  private buffer: CandidateRow[] = [];
  private file: OpenShard | undefined;

  constructor(outputDir: string) {
    this.outputDir = outputDir;
  }

  async open(): Promise<void> {
    await mkdir(join(this.outputDir, "sft"), { recursive: true });
    await rm(`${join(this.outputDir, CANDIDATES_FILE)}.tmp`, { force: true });
  }

  async add(rows: readonly CandidateRow[]): Promise<void> {
    this.buffer.push(...rows);
    if (this.buffer.length >= ROW_GROUP_ROWS) await this.flush();
  }

  private async flush(): Promise<void> {
    if (this.buffer.length === 0) return;
    if (!this.file) {
      const properties = () =>
        new parquet.WriterPropertiesBuilder()
          .setCompression(parquet.Compression.ZSTD)
          .setMaxRowGroupSize(ROW_GROUP_ROWS)
          .setCreatedBy("lwm-data")
          .build();
      this.file = new OpenShard(join(this.outputDir, CANDIDATES_FILE), CANDIDATES_FILE, properties);
    }
    const rows = this.buffer;
    this.buffer = [];
    this.file.rows += rows.length;
    await this.file.writeRowGroup(table(rows));
  }

  /** Finishes the file; undefined when there were no rows at all. */
  async finish(): Promise<ShardInfo | undefined> {
    await this.flush();
    return this.file ? await this.file.finish() : undefined;
  }

  async abort(): Promise<void> {
    await this.file?.abort();
  }
}
