import type { DataType, RecordBatch, Vector } from "apache-arrow";
import { arrow } from "../io/arrow.ts";
import type { ParquetTable } from "../io/parquet-table.ts";
import { errorText, type VerifyCheck } from "./problems.ts";

/** Rows of a shard where one per-row invariant fails: how many, and the first, for the message. */
export interface RowMismatch {
  check: Extract<VerifyCheck, "tokens" | "loss_tokens">;
  what: string;
  count: number;
  first: { row: number; id: string; expected: number; actual: number };
}

/** What a shard holds, recomputed from its rows. */
export interface ShardContent {
  rows: number;
  /** sum(num_documents) of packed rows, else rows. */
  documents: number;
  /** sum(num_tokens), or sum(len(input_ids)) when the column is unusable. */
  tokens: number;
  /** sum(num_loss_tokens), or sum(loss_mask) when the column is unusable. */
  lossTokens: number;
  /** sum(len(input_ids)): the tokens actually there. */
  listTokens: number;
  mismatches: RowMismatch[];
  /** Row groups that could not be decoded, with the reason. */
  unreadable: { rowGroup: number; error: string }[];
}

type Invariant = { check: RowMismatch["check"]; what: string };
const NUM_TOKENS: Invariant = { check: "tokens", what: "num_tokens ≠ len(input_ids)" };
const MASK_LENGTH: Invariant = { check: "tokens", what: "len(loss_mask) ≠ len(input_ids)" };
const NUM_LOSS: Invariant = { check: "loss_tokens", what: "num_loss_tokens ≠ sum(loss_mask)" };
const MASK_BITS: Invariant = { check: "loss_tokens", what: "loss_mask entries other than 0 and 1" };
const WEIGHT_LENGTH: Invariant = { check: "tokens", what: "len(loss_weight) ≠ len(input_ids)" };
const WEIGHT_SUPPORT: Invariant = {
  check: "loss_tokens",
  what: "loss_weight entries that are not finite, negative, or not > 0 exactly where loss_mask is 1",
};

/** The columns the per-row checks read, when their types allow it; a wrong type is the schema check's to report. */
interface Columns {
  id?: Vector;
  inputIds?: Vector;
  lossMask?: Vector;
  /** mask.weights: list<float32>, > 0 exactly where loss_mask is 1. */
  lossWeight?: Vector;
  numTokens?: Vector;
  numLossTokens?: Vector;
  numDocuments?: Vector;
}

function column(batch: RecordBatch, name: string, usable: (type: DataType) => boolean): Vector | undefined {
  const vector = batch.getChild(name);
  return vector && usable(vector.type) ? vector : undefined;
}

const intList = (type: DataType) => arrow.DataType.isList(type) && arrow.DataType.isInt(type.children[0]?.type);
const floatList = (type: DataType) => arrow.DataType.isList(type) && arrow.DataType.isFloat(type.children[0]?.type);

/** Weights off their mask's support: a weight on an untrained token, a trained token weighing nothing, NaN, a negative. */
function weightsOffSupport(weights: ArrayLike<number>, mask: ArrayLike<number | bigint>): number {
  let off = 0;
  for (let i = 0; i < weights.length; i++) {
    const weight = weights[i] as number;
    const trained = Number(mask[i]) === 1;
    if (!Number.isFinite(weight) || weight < 0 || trained !== weight > 0) off += 1;
  }
  return off;
}

function columnsOf(batch: RecordBatch): Columns {
  return {
    id: column(batch, "id", arrow.DataType.isUtf8),
    inputIds: column(batch, "input_ids", intList),
    lossMask: column(batch, "loss_mask", intList),
    lossWeight: column(batch, "loss_weight", floatList),
    numTokens: column(batch, "num_tokens", arrow.DataType.isInt),
    numLossTokens: column(batch, "num_loss_tokens", arrow.DataType.isInt),
    numDocuments: column(batch, "num_documents", arrow.DataType.isInt),
  };
}

class ContentTally implements ShardContent {
  rows = 0;
  documents = 0;
  tokens = 0;
  lossTokens = 0;
  listTokens = 0;
  unreadable: ShardContent["unreadable"] = [];
  private byWhat = new Map<string, RowMismatch>();

  get mismatches(): RowMismatch[] {
    return [...this.byWhat.values()];
  }

  /** Records a row where `expected` (recomputed from the lists) differs from `actual` (stored). */
  check(invariant: Invariant, row: number, id: () => string, expected: number, actual: number): void {
    if (expected === actual) return;
    const seen = this.byWhat.get(invariant.what);
    if (seen) seen.count += 1;
    else this.byWhat.set(invariant.what, { ...invariant, count: 1, first: { row, id: id(), expected, actual } });
  }
}

function maskStats(mask: ArrayLike<number | bigint>): { ones: number; otherValues: number } {
  let ones = 0;
  let otherValues = 0;
  for (let i = 0; i < mask.length; i++) {
    const bit = Number(mask[i]);
    if (bit === 1) ones += 1;
    else if (bit !== 0) otherValues += 1;
  }
  return { ones, otherValues };
}

function tallyRow(tally: ContentTally, c: Columns, i: number, row: number): void {
  const id = () => String(c.id?.get(i) ?? "");
  const ids = c.inputIds?.get(i) as Vector | null | undefined;
  const mask = c.lossMask?.get(i) as Vector | null | undefined;
  const length = ids?.length ?? 0;
  const numTokens = c.numTokens ? Number(c.numTokens.get(i)) : length;
  tally.listTokens += length;
  tally.documents += c.numDocuments ? Number(c.numDocuments.get(i)) : 1;
  tally.tokens += numTokens;
  if (ids && c.numTokens) tally.check(NUM_TOKENS, row, id, length, numTokens);
  if (!mask) {
    tally.lossTokens += c.numLossTokens ? Number(c.numLossTokens.get(i)) : 0;
    return;
  }
  const { ones, otherValues } = maskStats(mask.toArray() as ArrayLike<number | bigint>);
  const numLoss = c.numLossTokens ? Number(c.numLossTokens.get(i)) : ones;
  tally.lossTokens += numLoss;
  if (ids) tally.check(MASK_LENGTH, row, id, length, mask.length);
  tally.check(NUM_LOSS, row, id, ones, numLoss);
  tally.check(MASK_BITS, row, id, 0, otherValues);
  const weights = c.lossWeight?.get(i) as Vector | null | undefined;
  if (weights) {
    tally.check(WEIGHT_LENGTH, row, id, length, weights.length);
    if (weights.length === mask.length)
      tally.check(
        WEIGHT_SUPPORT,
        row,
        id,
        0,
        weightsOffSupport(weights.toArray() as ArrayLike<number>, mask.toArray() as ArrayLike<number>),
      );
  }
}

/**
 * Reads a shard one row group at a time and recomputes its counts from the list columns:
 * len(input_ids) = num_tokens, len(loss_mask) = len(input_ids), sum(loss_mask) = num_loss_tokens;
 * with `loss_weight`, its length and that it is > 0 exactly where loss_mask is 1.
 * `onRowGroup` is told before each group is decoded. Returns plain data (it crosses threads).
 */
export async function scanShardContent(table: ParquetTable, onRowGroup?: (index: number) => void): Promise<ShardContent> {
  const tally = new ContentTally();
  let firstRow = 0;
  for (const [group, groupRows] of table.rowGroupRows.entries()) {
    const start = firstRow;
    firstRow += groupRows;
    let rows: Awaited<ReturnType<ParquetTable["readRowGroup"]>>;
    onRowGroup?.(group);
    try {
      rows = await table.readRowGroup(group);
    } catch (err) {
      tally.unreadable.push({ rowGroup: group, error: errorText(err) });
      continue;
    }
    let row = start;
    for (const batch of rows.batches) {
      const columns = columnsOf(batch);
      for (let i = 0; i < batch.numRows; i++) tallyRow(tally, columns, i, row + i);
      row += batch.numRows;
      tally.rows += batch.numRows;
    }
  }
  const { rows, documents, tokens, lossTokens, listTokens, mismatches, unreadable } = tally;
  return { rows, documents, tokens, lossTokens, listTokens, mismatches, unreadable };
}
