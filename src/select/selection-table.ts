import { createHash } from "node:crypto";
import type { RecordFacts } from "../filter/record-facts.ts";
import { keyFields, type SelectionSettings } from "./selection-schema.ts";

/** Where a record is: its task's index in the plan and its item number within the task. Unique per record. */
export interface RecordPosition {
  task: number;
  item: number;
}

/**
 * A uniform number in [0, 1) from sha256(tag, seed, id): the same for a record wherever it is
 * processed. Built like `drawUniform` (src/mixture/draw.ts), under its own tag so it never agrees
 * with the mixture's or the controls' draws for the same id.
 */
export function selectDraw(seed: number, id: string): number {
  const digest = createHash("sha256").update(`lwm-select\u0000${seed}\u0000${id}`).digest();
  // 52 bits: exact in a double.
  return (digest.readUInt32BE(0) * 2 ** 20 + (digest.readUInt32BE(4) >>> 12)) / 2 ** 52;
}

/** Interned strings: each distinct value stored once, rows hold its code. */
class Dictionary {
  readonly values: string[] = [];
  private readonly codes = new Map<string, number>();
  code(value: string): number {
    let code = this.codes.get(value);
    if (code === undefined) {
      code = this.values.length;
      this.values.push(value);
      this.codes.set(value, code);
    }
    return code;
  }
}

/** A growable typed column. */
class Column<T extends Float64Array | Int32Array | Uint32Array> {
  data: T;
  private readonly make: (size: number) => T;
  constructor(make: (size: number) => T) {
    this.make = make;
    this.data = make(1024);
  }
  set(index: number, value: number): void {
    if (index >= this.data.length) {
      const grown = this.make(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[index] = value;
  }
}

const NULL_CODE = -1;
/** Separates a compound key's parts in its interned form; facts are redacted text and never hold it. */
export const KEY_SEPARATOR = "\u0000";

function factValue(facts: RecordFacts, field: string): unknown {
  const dot = field.indexOf(".");
  if (dot < 0) return (facts as unknown as Record<string, unknown>)[field];
  const map = (facts as unknown as Record<string, Record<string, unknown> | undefined>)[field.slice(0, dot)];
  return map?.[field.slice(dot + 1)];
}

/** A key's value: its parts joined, or null when any part is null (the record does not say which group it is in). */
function keyValue(facts: RecordFacts, fields: readonly string[]): string | null {
  const parts: string[] = [];
  for (const field of fields) {
    const value = factValue(facts, field);
    if (value === null || value === undefined) return null;
    parts.push(String(value));
  }
  return parts.join(KEY_SEPARATOR);
}

/**
 * What the selection rules need of each record, in columns: a record costs 8 bytes of position,
 * 8 of draw (with keep_fraction < 1), 4 per key (max_per and each cap), 8 per cap weight and 8 per
 * order field; distinct key and text values are stored once. Nothing else of the record is kept,
 * so the select unit holds tens of millions of records per GB (docs/filters-selection-scoring.md "Filters and selection").
 */
export class SelectionTable {
  length = 0;
  readonly task = new Column((n) => new Uint32Array(n));
  readonly item = new Column((n) => new Uint32Array(n));
  readonly draw = new Column((n) => new Float64Array(n));
  /** max_per's key code per row (-1: null), then each cap's. */
  readonly keys: Column<Int32Array>[];
  readonly keyDictionaries: Dictionary[];
  readonly keyFieldLists: string[][];
  /** Each cap's weight per row: 1, tokens or loss tokens. */
  readonly weights: Column<Float64Array>[];
  /** Each order field's value per row: a number, a text's code, or NaN for null. */
  readonly order: Column<Float64Array>[];
  /** Text values of the order fields that hold text; their codes are ranked when selecting. */
  readonly orderTexts = new Dictionary();
  readonly orderIsText: boolean[] = [];

  readonly settings: SelectionSettings;

  constructor(settings: SelectionSettings) {
    this.settings = settings;
    const keyLists = [settings.max_per ? keyFields(settings.max_per.key) : [], ...settings.caps.map((cap) => keyFields(cap.key))];
    this.keyFieldLists = keyLists;
    this.keys = keyLists.map(() => new Column((n) => new Int32Array(n)));
    this.keyDictionaries = keyLists.map(() => new Dictionary());
    this.weights = settings.caps.map(() => new Column((n) => new Float64Array(n)));
    this.order = settings.order.map(() => new Column((n) => new Float64Array(n)));
    this.orderIsText = settings.order.map(() => false);
  }

  /** Adds one record that would be written. */
  add(facts: RecordFacts, position: RecordPosition): void {
    const { settings } = this;
    const row = this.length;
    for (const [name, value] of [
      ["task", position.task],
      ["item", position.item],
    ] as const) {
      if (!(Number.isInteger(value) && value >= 0 && value < 2 ** 32))
        throw new RangeError(`selection: record ${facts.id}: ${name} must be a non-negative integer, got ${value}`);
    }
    this.task.set(row, position.task);
    this.item.set(row, position.item);
    if (settings.keep_fraction < 1) this.draw.set(row, selectDraw(settings.seed, facts.id));
    this.keyFieldLists.forEach((fields, k) => {
      if (fields.length === 0) return;
      const value = keyValue(facts, fields);
      this.keys[k]?.set(row, value === null ? NULL_CODE : (this.keyDictionaries[k] as Dictionary).code(value));
    });
    settings.caps.forEach((cap, c) => {
      const weight = cap.of === "records" ? 1 : facts[cap.of];
      if (!(Number.isFinite(weight) && weight >= 0))
        throw new RangeError(`selection: record ${facts.id}: ${cap.of} must be a non-negative number, got ${weight}`);
      this.weights[c]?.set(row, weight);
    });
    settings.order.forEach((order, o) => {
      const value = factValue(facts, order.field);
      let stored = Number.NaN;
      if (typeof value === "number" && Number.isFinite(value)) stored = value;
      else if (typeof value === "string") {
        this.orderIsText[o] = true;
        stored = this.orderTexts.code(value);
      }
      this.order[o]?.set(row, stored);
    });
    this.length++;
  }

  /** Key `k`'s value with code `code` (index into `keys`), split into its parts; empty for null. */
  keyText(k: number, code: number): string[] {
    return code === NULL_CODE ? [] : (this.keyDictionaries[k]?.values[code] ?? "").split(KEY_SEPARATOR);
  }
}
