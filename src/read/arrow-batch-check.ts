import type { Data, RecordBatch } from "apache-arrow";
import { arrow } from "../io/arrow.ts";

/*
 * A record batch's offsets held to its own buffers before its rows are read. apache-arrow reads
 * a list or string value as the slice its offsets name without checking them against the child or
 * the data buffer: in a damaged file (bytes shifted inside a body) one row's list can span 10^9
 * elements of whatever memory follows, and reading the row never ends (found by fuzzing a
 * `datasets` file). Checking every offset is one pass over the batch's offset buffers, small next
 * to reading its rows.
 */

/** Why the batch cannot be read as it states, or undefined: the first column and check that fails. */
export function batchProblem(batch: RecordBatch): string | undefined {
  for (const [index, field] of batch.schema.fields.entries()) {
    const data = batch.data.children[index];
    if (!data) return `column ${field.name} has no data`;
    const problem = dataProblem(data, batch.numRows);
    if (problem) return `column ${field.name}: ${problem}`;
  }
  return undefined;
}

/** Checks `data` holds `rows` values from its offset, and that every offset it has stays inside what it points into. */
function dataProblem(data: Data, rows: number): string | undefined {
  if (data.offset < 0 || data.length < 0) return `a negative offset or length (${data.offset}, ${data.length})`;
  if (data.offset + data.length < rows) return `${data.length} values for ${rows} rows`;
  const type = data.type;
  if (arrow.DataType.isList(type) || arrow.DataType.isLargeList(type) || arrow.DataType.isMap(type)) {
    const child = data.children[0];
    if (!child) return "a list without its values";
    const bound = offsetsProblem(data, child.offset + child.length);
    return bound ?? withinChildren(data, 0);
  }
  if (
    arrow.DataType.isUtf8(type) ||
    arrow.DataType.isLargeUtf8(type) ||
    arrow.DataType.isBinary(type) ||
    arrow.DataType.isLargeBinary(type)
  ) {
    return offsetsProblem(data, data.values?.length ?? 0);
  }
  if (arrow.DataType.isFixedSizeList(type)) {
    const child = data.children[0];
    if (!child) return "a list without its values";
    if ((data.offset + data.length) * type.listSize > child.offset + child.length) return "its values are fewer than its lists need";
    return dataProblem(child, 0);
  }
  if (arrow.DataType.isStruct(type)) {
    for (const child of data.children) {
      const problem = dataProblem(child, data.offset + data.length);
      if (problem) return problem;
    }
    return undefined;
  }
  if (arrow.DataType.isDictionary(type)) return data.dictionary ? dataProblem(data.dictionary.data[0] as Data, 0) : undefined;
  return undefined;
}

/** The offsets of `data`'s values (offset … offset + length) rise and stay within `limit`. */
function offsetsProblem(data: Data, limit: number): string | undefined {
  const offsets = data.valueOffsets as ArrayLike<number | bigint> | undefined;
  if (!offsets) return "no value offsets";
  const last = data.offset + data.length;
  if (offsets.length < last + 1) return `${offsets.length} value offsets for ${data.length} values`;
  let previous = Number(offsets[data.offset]);
  if (previous < 0) return `a value offset of ${previous}`;
  for (let i = data.offset + 1; i <= last; i++) {
    const next = Number(offsets[i]);
    if (next < previous) return `value offsets that fall (${previous} then ${next})`;
    previous = next;
  }
  if (previous > limit) return `a value offset of ${previous} past the ${limit} values it points into`;
  return undefined;
}

/** A list's values checked in turn (their own offsets, for lists of lists and of strings). */
function withinChildren(data: Data, rows: number): string | undefined {
  for (const child of data.children) {
    const problem = dataProblem(child, rows);
    if (problem) return problem;
  }
  return undefined;
}
