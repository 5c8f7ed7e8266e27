import type { SourceRef } from "../../core/trajectory.ts";
import { quarantine } from "../chat-rows/row-item.ts";
import { parseJsonLine, type ReadItem } from "../reader.ts";
import { describeType, FieldError, isRecord, MAX_JSON_DEPTH, nestsTooDeep } from "../record-helpers.ts";
import type { RecordLine } from "../record-line.ts";

/*
 * The record loop of the whole-file trace readers (src/read/otel-traces.ts,
 * src/read/langsmith-runs.ts, src/read/langfuse-traces.ts): each line, array element or document
 * parsed, checked (a JSON object or array, not nested too deep) and handed to the reader's record
 * parser, whose field errors quarantine the record naming its place (`line 3`, `element 2`) and
 * field. The reader keeps what the records hold and groups it by trace once the file is read.
 */

/** Where a record is in the file. */
export interface RecordWhere {
  line?: number;
  row?: number;
  offset: number;
}

/** A record being read: where it is, and how to quarantine it with a reason that names its place. */
export interface TraceRecord {
  source: SourceRef;
  text: string;
  where: RecordWhere;
  fail(field: string | undefined, reason: string): ReadItem;
}

type FieldErrorClass = abstract new (...args: never[]) => Error & { field: string | undefined };

export function describeRecord(value: unknown): string {
  if (!isRecord(value)) return describeType(value);
  return `an object with keys ${Object.keys(value).slice(0, 8).join(", ")}`;
}

export interface RecordParser<C> {
  /**
   * The error the parser throws for a field of the wrong type (`field` names it), when not a
   * `FieldError` (src/read/record-helpers.ts); only that class is caught then.
   */
  fieldError?: FieldErrorClass;
  /** Whether a quarantine reason names the field after the place (`line 3: inputs: expected …`). */
  namesField: boolean;
  /** What a record given by its row is called in quarantine reasons (default "element": a JSON array's). */
  rowName?: string;
  /** The values of a line that does not parse as one, when it is several JSON values one after another. */
  severalValues?: (text: string) => unknown[] | undefined;
  /** One value's contents (`earlier`: those of the values before it on its line), or the item it is read as instead. */
  read(value: Record<string, unknown> | unknown[], record: TraceRecord, earlier: readonly C[]): { contents: C } | { item: ReadItem };
  /** The contents of each value of a record whose values were all read. */
  keep(contents: C): void;
}

/** Reads `lines`, yielding the items that are not contents (quarantine entries, records read on their own); returns how many records there were and how many were read as contents. */
export async function* traceRecords<C>(
  lines: AsyncIterable<RecordLine>,
  parser: RecordParser<C>,
): AsyncGenerator<ReadItem, { records: number; fine: number }> {
  let records = 0;
  let fine = 0;
  for await (const line of lines) {
    records += 1;
    if (line.kind === "quarantine") {
      yield line;
      continue;
    }
    const { source, text } = line;
    const label =
      source.line !== undefined
        ? `line ${source.line}`
        : source.row !== undefined
          ? `${parser.rowName ?? "element"} ${source.row}`
          : "line 1";
    const parsed = parseJsonLine(text);
    const values = parsed.ok ? [parsed.value] : parser.severalValues?.(text);
    if (!parsed.ok && values === undefined) {
      yield quarantine(source, { reason: parsed.reason }, text);
      continue;
    }
    const where: RecordWhere = {
      ...(source.line !== undefined ? { line: source.line } : {}),
      ...(source.row !== undefined ? { row: source.row } : {}),
      offset: source.offset ?? 0,
    };
    const found: C[] = [];
    let failed: ReadItem | undefined;
    for (const [v, value] of (values ?? []).entries()) {
      const several = values && values.length > 1 ? `value ${v + 1}: ` : "";
      const fail = (field: string | undefined, reason: string): ReadItem =>
        quarantine(
          source,
          { ...(field ? { field } : {}), reason: `${label}: ${parser.namesField && field ? `${field}: ` : ""}${several}${reason}` },
          text,
        );
      if (!isRecord(value) && !Array.isArray(value)) {
        failed = quarantine(source, { reason: `expected a JSON object, got ${describeType(value)}` }, text);
        break;
      }
      if (nestsTooDeep(value)) {
        failed = fail(undefined, `the record nests deeper than ${MAX_JSON_DEPTH} levels`);
        break;
      }
      try {
        const read = parser.read(value, { source, text, where, fail }, found);
        if ("item" in read) {
          failed = read.item;
          break;
        }
        found.push(read.contents);
      } catch (err) {
        if (!(err instanceof (parser.fieldError ?? FieldError))) throw err;
        failed = fail(err.field, err.message);
        break;
      }
    }
    if (failed) {
      yield failed;
      continue;
    }
    fine += 1;
    for (const contents of found) parser.keep(contents);
  }
  return { records, fine };
}

/** The quarantine entry of a file whose records were all read but hold nothing to read, said once for the file. */
export function emptyFile(path: string, format: string, field: string, reason: string): ReadItem {
  return quarantine({ uri: path, line: 1, offset: 0, format }, { field, reason });
}
