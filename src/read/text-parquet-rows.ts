import type { DataType, Table, Vector } from "apache-arrow";
import type { QuarantineEntry } from "../core/errors.ts";
import type { SourceRef } from "../core/trajectory.ts";
import { arrow } from "../io/arrow.ts";
import { isBinaryType, isTextType, shownColumns, utf8Text } from "./arrow-values.ts";
import { excerpt, type ReadItem } from "./reader.ts";
import { contentId } from "./record-helpers.ts";

/**
 * text-parquet's rows as documents (src/read/text-parquet.ts says what is read and quarantined).
 * A module of its own, imported when such a file is read: apache-arrow is ~150 modules that a
 * process reading none never loads.
 */

export const tableFromIPC = arrow.tableFromIPC;

export const TEXT_COLUMN = "text";
export const ID_COLUMN = "id";

export function quarantine(source: SourceRef, entry: Omit<QuarantineEntry, "source" | "stage">): Extract<ReadItem, { kind: "quarantine" }> {
  return { kind: "quarantine", entry: { source, stage: "read", ...entry } };
}

export function describeColumns(names: readonly string[]): string {
  return names.length === 0 ? "the file has no columns" : `the file has columns ${shownColumns(names)}`;
}

/** How a column's values read as text: strings as they are, binary as UTF-8, anything else not at all. */
type ValueKind = "string" | "binary" | "integer" | "float" | "other";

function valueKind(type: DataType): ValueKind {
  if (isTextType(type)) return "string";
  if (isBinaryType(type)) return "binary";
  const values = arrow.DataType.isDictionary(type) ? type.dictionary : type;
  if (arrow.DataType.isInt(values)) return "integer";
  if (arrow.DataType.isFloat(values)) return "float";
  return "other";
}

/** One item per row of a decoded row group (`rows` from the footer: rows it lacks are quarantined). */
export function* groupItems(table: Table, first: number, rows: number, at: (row: number) => SourceRef): Generator<ReadItem> {
  const text = table.getChild(TEXT_COLUMN) as Vector | null;
  const id = table.getChild(ID_COLUMN) as Vector | null;
  const textKind = text ? valueKind(text.type) : "other";
  const idKind = id ? valueKind(id.type) : undefined;
  const texts = text?.[Symbol.iterator]();
  const ids = id?.[Symbol.iterator]();
  for (let i = 0; i < rows; i++) {
    const source = at(first + i);
    if (i >= table.numRows) {
      yield quarantine(source, { reason: `the row group decoded to ${table.numRows} rows, but the file's footer says ${rows}` });
      continue;
    }
    const value: unknown = texts?.next().value;
    const own = idKind === undefined ? {} : rowId(ids?.next().value, idKind, id?.type);
    const named = "id" in own && own.id !== undefined ? { id: own.id } : {};
    let documentText: string;
    if (textKind !== "string" && textKind !== "binary") {
      yield quarantine(source, {
        ...named,
        field: TEXT_COLUMN,
        reason: `text column is ${text ? String(text.type) : "missing from the decoded row group"}, not a string`,
      });
      continue;
    }
    if (value === null || value === undefined) {
      yield quarantine(source, { ...named, field: TEXT_COLUMN, reason: "text is null" });
      continue;
    }
    if (textKind === "binary") {
      const decoded = utf8Text(value as Uint8Array);
      if (decoded === undefined) {
        yield quarantine(source, { ...named, field: TEXT_COLUMN, reason: "text is binary, not UTF-8 text" });
        continue;
      }
      documentText = decoded;
    } else documentText = value as string;
    if ("error" in own) {
      yield quarantine(source, { field: ID_COLUMN, reason: own.error, excerpt: excerpt(documentText) });
      continue;
    }
    yield { kind: "document", document: { id: own.id ?? contentId("text", documentText), text: documentText, source } };
  }
}

/** A row's own id (undefined when null or blank: the text's hash stands in), or why its value cannot be one. */
function rowId(value: unknown, kind: ValueKind, type: DataType | undefined): { id?: string } | { error: string } {
  if (kind === "other") return { error: `id column is ${String(type)}, not a string or an integer` };
  if (value === null || value === undefined) return {};
  if (kind === "string") return (value as string).trim() === "" ? {} : { id: value as string };
  if (kind === "binary") {
    const decoded = utf8Text(value as Uint8Array);
    if (decoded === undefined) return { error: "id is binary, not UTF-8 text" };
    return decoded.trim() === "" ? {} : { id: decoded };
  }
  // Integers: int64 comes as a bigint, exact. Floats: only finite ones name anything.
  if (typeof value === "number" && !Number.isFinite(value)) return { error: `id is ${value}, not a finite number` };
  return { id: String(value) };
}
