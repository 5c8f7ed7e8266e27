import type { DataType, Field, Schema, Table } from "apache-arrow";
import { arrow } from "../io/arrow.ts";
import { isTextType, shownColumns, utf8Text } from "./arrow-values.ts";

/**
 * Decoded Parquet rows as plain JSON values (src/read/parquet-rows.ts says how each Arrow type
 * reads). A module of its own, imported when a Parquet file is read: apache-arrow is ~150 modules
 * that a process reading none never loads.
 */

export const tableFromIPC = arrow.tableFromIPC;
export { isTextType, shownColumns };

/** "a Parquet file of 30 rows in 3 row groups whose columns are a, b, c" (for refusals). */
export function describeParquet(schema: Schema, rows: number, groups: number): string {
  const names = schema.fields.map((field) => field.name);
  const columns = names.length === 0 ? "with no columns" : `whose columns are ${shownColumns(names)}`;
  return `a Parquet file of ${rows} row(s) in ${groups} row group(s) ${columns}`;
}

/** Row `i` of a decoded table as a plain JSON object (column name → value). */
export function rowObject(table: Table, i: number): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (const field of table.schema.fields) {
    const column = table.getChild(field.name);
    row[field.name] = column ? fieldValue(column.get(i), field) : null;
  }
  return row;
}

/** The extension name Arrow gives JSON text (`datasets`' `Json` feature, e.g. `load_dataset("json")` of mixed rows). */
const JSON_EXTENSION = "arrow.json";

/**
 * The value of a field as a plain JSON value: an `arrow.json` extension value is the JSON its text
 * holds (text that does not parse stays text); any other, by its type.
 */
function fieldValue(value: unknown, field: Field): unknown {
  if (typeof value === "string" && field.metadata.get("ARROW:extension:name") === JSON_EXTENSION) {
    try {
      return JSON.parse(value);
    } catch {
      return value;
    }
  }
  return plain(value, field.type);
}

/** An Arrow value of `type` as a plain JSON value. */
function plain(value: unknown, type: DataType): unknown {
  if (value === null || value === undefined) return null;
  if (arrow.DataType.isDictionary(type)) return plain(value, type.dictionary);
  if (arrow.DataType.isStruct(type)) {
    const raw = (value as { toJSON(): Record<string, unknown> }).toJSON();
    const out: Record<string, unknown> = {};
    // A null field of a struct is left out: Parquet cannot tell it from an absent key, and writers
    // give every struct the union of its rows' keys (tool schemas' `properties`, messages'
    // `tool_calls`), filled with null. Top-level columns keep their nulls (the row's own keys).
    for (const child of type.children as Field[]) {
      const element = fieldValue(raw[child.name], child);
      if (element !== null) out[child.name] = element;
    }
    return out;
  }
  if (arrow.DataType.isList(type) || arrow.DataType.isLargeList(type) || arrow.DataType.isFixedSizeList(type)) {
    const child = type.children[0] as Field;
    return Array.from(value as Iterable<unknown>, (element) => fieldValue(element, child));
  }
  if (arrow.DataType.isMap(type)) {
    const out: Record<string, unknown> = {};
    for (const [key, element] of value as Iterable<[unknown, unknown]>) {
      const name = plain(key, type.keyType);
      out[typeof name === "string" ? name : JSON.stringify(name)] = plain(element, type.valueType);
    }
    return out;
  }
  if (
    arrow.DataType.isBinary(type) ||
    arrow.DataType.isLargeBinary(type) ||
    arrow.DataType.isBinaryView(type) ||
    arrow.DataType.isFixedSizeBinary(type)
  ) {
    return binaryText(value as Uint8Array);
  }
  if (arrow.DataType.isTimestamp(type) || arrow.DataType.isDate(type)) {
    const ms = typeof value === "bigint" ? Number(value) : value instanceof Date ? value.getTime() : (value as number);
    if (!Number.isFinite(ms)) return null;
    if (arrow.DataType.isDate(type)) {
      const iso = new Date(ms).toISOString();
      return ms % 86_400_000 === 0 ? iso.slice(0, 10) : iso;
    }
    // Microsecond and nanosecond timestamps come as fractional milliseconds: their microseconds
    // are kept (written only when not zero); nanoseconds are past a double's precision.
    const total = Math.round(ms * 1000);
    const whole = Math.floor(total / 1000);
    const micros = total - whole * 1000;
    const iso = new Date(whole).toISOString();
    return micros === 0 ? iso : `${iso.slice(0, -1)}${String(micros).padStart(3, "0")}Z`;
  }
  if (arrow.DataType.isDecimal(type)) return decimalText(value as Uint32Array, type.scale);
  if (arrow.DataType.isTime(type)) return timeText(value as number | bigint, type.unit);
  return scalar(value);
}

/**
 * A decimal as its exact decimal text ("12.34", "-0.05"): Arrow hands it over as the unscaled
 * integer's little-endian 32-bit words, two's complement.
 */
function decimalText(words: Uint32Array, scale: number): string {
  let unscaled = 0n;
  for (let i = words.length - 1; i >= 0; i--) unscaled = (unscaled << 32n) | BigInt(words[i] as number);
  const bits = BigInt(words.length * 32);
  if (words.length > 0 && (words[words.length - 1] as number) >= 0x8000_0000) unscaled -= 1n << bits;
  const negative = unscaled < 0n;
  const digits = (negative ? -unscaled : unscaled).toString();
  if (scale <= 0) return `${negative ? "-" : ""}${digits}${"0".repeat(-scale)}`;
  const padded = digits.padStart(scale + 1, "0");
  return `${negative ? "-" : ""}${padded.slice(0, -scale)}.${padded.slice(-scale)}`;
}

/** Units per second of Arrow's TimeUnit values (SECOND, MILLISECOND, MICROSECOND, NANOSECOND). */
const TIME_UNITS = [1n, 1_000n, 1_000_000n, 1_000_000_000n];

/** A time of day as "HH:MM:SS", with the fraction its unit holds when it is not zero. */
function timeText(value: number | bigint, unit: number): string {
  const perSecond = TIME_UNITS[unit] ?? 1n;
  const raw = typeof value === "bigint" ? value : BigInt(Math.trunc(value));
  const seconds = raw / perSecond;
  const fraction = raw % perSecond;
  const two = (n: bigint) => String(n).padStart(2, "0");
  const clock = `${two(seconds / 3600n)}:${two((seconds / 60n) % 60n)}:${two(seconds % 60n)}`;
  if (fraction === 0n) return clock;
  return `${clock}.${String(fraction).padStart(String(perSecond).length - 1, "0")}`;
}

/** Bytes as UTF-8 text when they are valid UTF-8, else as base64. */
function binaryText(bytes: Uint8Array): string {
  return utf8Text(bytes) ?? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

/** A scalar (or a value of a type not handled above) as JSON: exact integers, finite numbers. */
function scalar(value: unknown): unknown {
  if (typeof value === "bigint")
    return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value.toString();
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value === "string" || typeof value === "boolean") return value;
  if (value instanceof Uint8Array) return binaryText(value);
  if (ArrayBuffer.isView(value)) return Array.from(value as unknown as ArrayLike<unknown>, scalar);
  if (Array.isArray(value)) return value.map(scalar);
  if (typeof value === "object" && value !== null) {
    const own = (value as { toJSON?: () => unknown }).toJSON;
    if (typeof own === "function") return scalar(own.call(value));
    if (Symbol.iterator in value) return Array.from(value as Iterable<unknown>, scalar);
    return Object.fromEntries(Object.entries(value).map(([key, element]) => [key, scalar(element)]));
  }
  return String(value);
}
