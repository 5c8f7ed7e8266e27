import type { DataType } from "apache-arrow";
import { arrow } from "../io/arrow.ts";

/*
 * What the Parquet readers' row modules (parquet-row-values.ts, text-parquet-rows.ts) share:
 * naming a file's columns, telling text columns from binary ones, and reading bytes as UTF-8.
 * Imported only by those modules, which are themselves imported when a Parquet file is read.
 */

/** Columns named in a description at most. */
const SHOWN_COLUMNS = 12;

/** "a, b, c", or the first twelve and "… (N in all)". */
export function shownColumns(names: readonly string[]): string {
  const shown = names.slice(0, SHOWN_COLUMNS).join(", ");
  return `${shown}${names.length > SHOWN_COLUMNS ? `, … (${names.length} in all)` : ""}`;
}

/** The values' type: a dictionary column's dictionary, else the type itself. */
function valuesType(type: DataType): DataType {
  return arrow.DataType.isDictionary(type) ? type.dictionary : type;
}

/** Strings, in any of Arrow's string layouts (dictionary-encoded or not). */
export function isTextType(type: DataType): boolean {
  const values = valuesType(type);
  return arrow.DataType.isUtf8(values) || arrow.DataType.isLargeUtf8(values) || arrow.DataType.isUtf8View(values);
}

/** Bytes, in any of Arrow's binary layouts (dictionary-encoded or not). */
export function isBinaryType(type: DataType): boolean {
  const values = valuesType(type);
  return (
    arrow.DataType.isBinary(values) ||
    arrow.DataType.isLargeBinary(values) ||
    arrow.DataType.isBinaryView(values) ||
    arrow.DataType.isFixedSizeBinary(values)
  );
}

const UTF8 = new TextDecoder("utf-8", { fatal: true });

/** The bytes as text, or undefined when they are not valid UTF-8. */
export function utf8Text(bytes: Uint8Array): string | undefined {
  try {
    return UTF8.decode(bytes);
  } catch {
    return undefined;
  }
}
