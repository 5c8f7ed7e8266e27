import { keyName, type SelectionCap, type SelectionSettings } from "./selection-schema.ts";
import type { RecordPosition, SelectionTable } from "./selection-table.ts";

export type SelectionRule = "keep_fraction" | "max_per" | "cap";

/** A record selection drops: where it is, the rule, and one sentence saying why. */
export interface SelectionDrop extends RecordPosition {
  rule: SelectionRule;
  reason: string;
}

export interface CapSummary {
  key: string;
  max_share: number;
  of: SelectionCap["of"];
  /** The share could not be met with any keyed record kept, so the cap balanced the groups to the smallest instead. */
  balanced: boolean;
  dropped: number;
}

export interface SelectionResult {
  records: number;
  kept: number;
  dropped: Record<SelectionRule, number>;
  caps: CapSummary[];
  /** The dropped records in input order (task, then item), each with its reason; reasons are built as they are read. */
  drops(): Generator<SelectionDrop>;
}

const KEPT = 0;
const RULES: readonly SelectionRule[] = ["keep_fraction", "max_per", "cap"];
const RULE_CODE = { keep_fraction: 1, max_per: 2, cap: 3 } as const;
/** Relative slack on share comparisons: `0.57 * 100` is 56.99999999999999 in doubles, and 57 of 100 meets a 57% cap. */
const SHARE_SLACK = 1 + 1e-12;

/** Texts that are both whole or decimal numbers ("2", "10") compare as numbers, others by code units: attempt 10 comes after attempt 2. */
function compareText(a: string, b: string): number {
  const number = /^-?\d+(\.\d+)?$/;
  if (number.test(a) && number.test(b) && Number(a) !== Number(b)) return Number(a) - Number(b);
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A share as a percentage; `max` given, with as many decimals (up to 6) as it takes not to read as equal to it. */
function percent(share: number, max = share): string {
  let digits = 1;
  while (digits < 6 && share !== max && (share * 100).toFixed(digits) === (max * 100).toFixed(digits)) digits++;
  return `${Number((share * 100).toFixed(share === max ? 6 : digits))}%`;
}

function ordinal(n: number): string {
  const teen = n % 100 >= 11 && n % 100 <= 13;
  const suffix = teen ? "th" : (["th", "st", "nd", "rd"][n % 10] ?? "th");
  return `${n}${suffix}`;
}

const measure = { records: "records", tokens: "tokens", loss_tokens: "trained tokens" } as const;

/**
 * Decides which records are dropped (docs/filters-selection-scoring.md "Filters and selection"): keep_fraction, then max_per,
 * then caps. Pure and deterministic: every decision depends on the records' facts and positions,
 * never on the order they were added in, so workers and ranks do not change it.
 */
export function selectRecords(table: SelectionTable): SelectionResult {
  const { settings } = table;
  const n = table.length;
  const task = table.task.data;
  const item = table.item.data;

  // Input order: task, then item. Every tie below ends on this rank.
  const byPosition = new Uint32Array(n);
  for (let i = 0; i < n; i++) byPosition[i] = i;
  byPosition.sort((a, b) => (task[a] as number) - (task[b] as number) || (item[a] as number) - (item[b] as number));
  const positionRank = new Uint32Array(n);
  for (let r = 0; r < n; r++) {
    const row = byPosition[r] as number;
    positionRank[row] = r;
    const previous = r > 0 ? (byPosition[r - 1] as number) : -1;
    if (previous >= 0 && task[previous] === task[row] && item[previous] === item[row]) {
      throw new Error(`selection: two records at task ${task[row]}, item ${item[row]}: a position names one record`);
    }
  }

  const compare = preference(table, positionRank);
  const state = new Uint8Array(n);
  const dropped: Record<SelectionRule, number> = { keep_fraction: 0, max_per: 0, cap: 0 };

  if (settings.keep_fraction < 1) {
    const draw = table.draw.data;
    for (let row = 0; row < n; row++) {
      if ((draw[row] as number) >= settings.keep_fraction) {
        state[row] = RULE_CODE.keep_fraction;
        dropped.keep_fraction++;
      }
    }
  }

  const maxPerRank = new Uint32Array(settings.max_per ? n : 0);
  const maxPerSize = new Map<number, number>();
  if (settings.max_per) {
    const { keep } = settings.max_per;
    forEachGroup(groupedRows(table, 0, state, compare), table.keys[0]?.data as Int32Array, (code, rows) => {
      maxPerSize.set(code, rows.length);
      rows.forEach((row, rank) => {
        maxPerRank[row] = rank + 1;
        if (rank >= keep) {
          state[row] = RULE_CODE.max_per;
          dropped.max_per++;
        }
      });
    });
  }

  const capOf = new Uint16Array(settings.caps.length > 0 ? n : 0);
  const caps = applyCaps(table, state, capOf, compare);
  for (const cap of caps) dropped.cap += cap.summary.dropped;

  const kept = n - dropped.keep_fraction - dropped.max_per - dropped.cap;
  return {
    records: n,
    kept,
    dropped,
    caps: caps.map((cap) => cap.summary),
    *drops() {
      for (const row of byPosition) {
        const code = state[row] as number;
        if (code === KEPT) continue;
        const rule = RULES[code - 1] as SelectionRule;
        let reason: string;
        if (rule === "keep_fraction") reason = `keep_fraction ${settings.keep_fraction}: not drawn (seed ${settings.seed})`;
        else if (rule === "max_per") reason = maxPerReason(table, row, maxPerRank[row] as number, maxPerSize);
        else reason = (caps[capOf[row] as number] as CapState).reason(row);
        yield { task: task[row] as number, item: item[row] as number, rule, reason };
      }
    },
  };
}

/** Row comparison by the configured order (null last, whatever the direction), then input order. */
function preference(table: SelectionTable, positionRank: Uint32Array): (a: number, b: number) => number {
  const texts = table.orderTexts.values;
  const textRank = new Float64Array(texts.length);
  [...texts.keys()]
    .sort((a, b) => compareText(texts[a] as string, texts[b] as string))
    .forEach((code, rank) => {
      textRank[code] = rank;
    });
  const columns = table.settings.order.map((order, o) => ({
    values: (table.order[o] as { data: Float64Array }).data,
    text: table.orderIsText[o] === true,
    sign: order.direction === "asc" ? 1 : -1,
  }));
  return (a, b) => {
    for (const { values, text, sign } of columns) {
      let va = values[a] as number;
      let vb = values[b] as number;
      const nullA = Number.isNaN(va);
      const nullB = Number.isNaN(vb);
      if (nullA || nullB) {
        if (nullA && nullB) continue;
        return nullA ? 1 : -1;
      }
      if (text) {
        va = textRank[va] as number;
        vb = textRank[vb] as number;
      }
      if (va !== vb) return sign * (va - vb);
    }
    return (positionRank[a] as number) - (positionRank[b] as number);
  };
}

/** Rows still kept whose key `k` is not null, sorted by key then preference: each group is a run. */
function groupedRows(table: SelectionTable, k: number, state: Uint8Array, compare: (a: number, b: number) => number): Uint32Array {
  const codes = table.keys[k]?.data as Int32Array;
  let count = 0;
  for (let row = 0; row < table.length; row++) if (state[row] === KEPT && (codes[row] as number) >= 0) count++;
  const rows = new Uint32Array(count);
  let at = 0;
  for (let row = 0; row < table.length; row++) if (state[row] === KEPT && (codes[row] as number) >= 0) rows[at++] = row;
  // Codes depend on the order records were added in, but only as group labels: each group's run is sorted by values.
  return rows.sort((a, b) => (codes[a] as number) - (codes[b] as number) || compare(a, b));
}

function forEachGroup(rows: Uint32Array, codes: Int32Array, visit: (code: number, rows: Uint32Array) => void): void {
  let start = 0;
  for (let i = 1; i <= rows.length; i++) {
    if (i === rows.length || codes[rows[i] as number] !== codes[rows[start] as number]) {
      visit(codes[rows[start] as number] as number, rows.subarray(start, i));
      start = i;
    }
  }
}

/** A key's value as reasons show it: `"openhands"`, or `task_id "t1", model "m"` for a compound key. */
function shownKey(fields: readonly string[], parts: readonly string[]): string {
  return fields.length === 1 ? JSON.stringify(parts[0]) : fields.map((field, i) => `${field} ${JSON.stringify(parts[i])}`).join(", ");
}

function quoted(table: SelectionTable, k: number, fields: readonly string[], row: number): string {
  return shownKey(fields, table.keyText(k, table.keys[k]?.data[row] as number));
}

function orderText(settings: SelectionSettings): string {
  return settings.order.length === 0 ? "input order" : settings.order.map((o) => `${o.field} ${o.direction}`).join(", ");
}

function maxPerReason(table: SelectionTable, row: number, rank: number, sizes: Map<number, number>): string {
  const maxPer = table.settings.max_per as NonNullable<SelectionSettings["max_per"]>;
  const fields = table.keyFieldLists[0] as string[];
  const size = sizes.get(table.keys[0]?.data[row] as number) ?? 0;
  const group = fields.length === 1 ? `${fields[0]} ${quoted(table, 0, fields, row)}` : quoted(table, 0, fields, row);
  return `max_per ${keyName(maxPer.key)}: ${ordinal(rank)} of ${size} records with ${group} by ${orderText(table.settings)} (keeps ${maxPer.keep})`;
}

interface CapState {
  summary: CapSummary;
  reason(row: number): string;
}

/**
 * Caps, each the largest selection that meets it: a group keeps its best records while their
 * weight is at most max_share × the kept total, where the total shrinks as records are dropped.
 * For one cap that selection is unique (if two selections meet the cap, so does their union) and
 * found by a sweep over the keyed records' prefix weights (`solveCap`). Several caps are solved in
 * turn, again and again, until a whole round drops nothing: one cap's drops can push another group
 * of another cap above its share.
 */
function applyCaps(table: SelectionTable, state: Uint8Array, capOf: Uint16Array, compare: (a: number, b: number) => number): CapState[] {
  const { caps } = table.settings;
  const grouped = caps.map((_, c) => groupedRows(table, c + 1, state, compare));
  const budgets: (number | null)[] = caps.map(() => null);
  const smallest: (number | null)[] = caps.map(() => null);
  const drop = (rows: number[], c: number) => {
    for (const row of rows) {
      state[row] = RULE_CODE.cap;
      capOf[row] = c;
    }
  };
  for (let round = 0; ; round++) {
    let changed = false;
    caps.forEach((cap, c) => {
      const codes = table.keys[c + 1]?.data as Int32Array;
      const weights = table.weights[c]?.data as Float64Array;
      let budget = budgets[c];
      if (budget === null || budget === undefined) {
        const strict = solveCap(grouped[c] as Uint32Array, codes, weights, state, cap.max_share, table.length);
        const keyedBefore = countKept(grouped[c] as Uint32Array, state);
        if (round === 0 && keyedBefore > 0 && strict.length === keyedBefore) {
          // No selection with a keyed record meets the share (fewer groups than 1 / max_share and too
          // little else): balance the groups to the smallest instead; one group alone keeps all.
          const [code, weight] = smallestGroup(table, c, grouped[c] as Uint32Array, state, weights);
          budget = budgets[c] = weight;
          smallest[c] = code;
        } else {
          drop(strict, c);
          if (strict.length > 0) changed = true;
          return;
        }
      }
      const over = overBudget(grouped[c] as Uint32Array, codes, weights, state, budget);
      drop(over, c);
      if (over.length > 0) changed = true;
    });
    if (!changed) break;
  }
  return caps.map((cap, c) => capState(table, c, cap, grouped[c] as Uint32Array, state, capOf, budgets[c] ?? null, smallest[c] ?? null));
}

function countKept(rows: Uint32Array, state: Uint8Array): number {
  let count = 0;
  for (const row of rows) if (state[row] === KEPT) count++;
  return count;
}

/** The kept rows of each group past its longest prefix of weight ≤ budget. */
function overBudget(rows: Uint32Array, codes: Int32Array, weights: Float64Array, state: Uint8Array, budget: number): number[] {
  const over: number[] = [];
  forEachGroup(rows, codes, (_, group) => {
    let prefix = 0;
    for (const row of group) {
      if (state[row] !== KEPT) continue;
      prefix += weights[row] as number;
      if (prefix > budget) over.push(row);
    }
  });
  return over;
}

/**
 * The rows one cap drops from the current kept set. A row with prefix weight p (its group's kept
 * weight up to and including it) is kept iff p ≤ s·T*, where T* is the final kept total. With f(T)
 * the total kept when every group is cut at s·T, T* is the largest T with f(T) ≥ T; sweeping the
 * rows by p, largest first, f drops by each row's weight, and the first row that fits s·f ends it.
 * T* is at least the weight of the rows without a key (f never falls below it), so rows with
 * p ≤ s·that are kept for certain and left out of the sort.
 */
function solveCap(rows: Uint32Array, codes: Int32Array, weights: Float64Array, state: Uint8Array, share: number, n: number): number[] {
  let total = 0;
  for (let row = 0; row < n; row++) if (state[row] === KEPT) total += weights[row] as number;
  let unkeyed = total;
  for (const row of rows) if (state[row] === KEPT) unkeyed -= weights[row] as number;
  const candidates: number[] = [];
  const prefixes: number[] = [];
  forEachGroup(rows, codes, (_, group) => {
    let prefix = 0;
    for (const row of group) {
      if (state[row] !== KEPT) continue;
      prefix += weights[row] as number;
      if (prefix > share * unkeyed * SHARE_SLACK) {
        candidates.push(row);
        prefixes.push(prefix);
      }
    }
  });
  // Largest prefix first; ties are all dropped or all kept, so their order does not matter.
  const sweep = Uint32Array.from(candidates.keys()).sort((a, b) => (prefixes[b] as number) - (prefixes[a] as number));
  const dropped: number[] = [];
  for (const i of sweep) {
    if ((prefixes[i] as number) <= share * total * SHARE_SLACK) break;
    const row = candidates[i] as number;
    dropped.push(row);
    total -= weights[row] as number;
  }
  return dropped;
}

/** The group with the least kept weight (ties: the first value in code-unit order) and that weight. */
function smallestGroup(table: SelectionTable, c: number, rows: Uint32Array, state: Uint8Array, weights: Float64Array): [number, number] {
  const codes = table.keys[c + 1]?.data as Int32Array;
  const names = table.keyDictionaries[c + 1]?.values as string[];
  let best: [number, number] | null = null;
  forEachGroup(rows, codes, (code, group) => {
    let weight = 0;
    for (const row of group) if (state[row] === KEPT) weight += weights[row] as number;
    if (best === null || weight < best[1] || (weight === best[1] && (names[code] as string) < (names[best[0]] as string)))
      best = [code, weight];
  });
  return best ?? [-1, 0];
}

/** The cap's summary and reasons, from the final selection. */
function capState(
  table: SelectionTable,
  c: number,
  cap: SelectionCap,
  rows: Uint32Array,
  state: Uint8Array,
  capOf: Uint16Array,
  budget: number | null,
  smallest: number | null,
): CapState {
  const k = c + 1;
  const fields = table.keyFieldLists[k] as string[];
  const codes = table.keys[k]?.data as Int32Array;
  const weights = table.weights[c]?.data as Float64Array;
  const mine = (row: number) => state[row] === RULE_CODE.cap && capOf[row] === c;
  let total = 0;
  for (let row = 0; row < table.length; row++) if (state[row] === KEPT) total += weights[row] as number;

  // Per group: kept weight and records before and after; per dropped row: the group's share had it been kept too.
  const groups = new Map<number, { before: number; kept: number }>();
  const shareIfKept = new Map<number, number>();
  let dropped = 0;
  forEachGroup(rows, codes, (code, group) => {
    let keptWeight = 0;
    let keptCount = 0;
    for (const row of group) {
      if (state[row] === KEPT) {
        keptWeight += weights[row] as number;
        keptCount++;
      }
    }
    groups.set(code, { before: group.length, kept: keptCount });
    let extra = 0;
    for (const row of group) {
      if (!mine(row)) continue;
      dropped++;
      extra += weights[row] as number;
      shareIfKept.set(row, (keptWeight + extra) / (total + extra));
    }
  });

  const name = keyName(cap.key);
  const value = (row: number) => quoted(table, k, fields, row);
  return {
    summary: { key: name, max_share: cap.max_share, of: cap.of, balanced: budget !== null, dropped },
    reason(row) {
      const group = groups.get(codes[row] as number) ?? { before: 0, kept: 0 };
      if (budget === null) {
        const share = shareIfKept.get(row) ?? 0;
        return `cap ${name}: keeping it would make ${value(row)} ${percent(share, cap.max_share)} of kept ${measure[cap.of]} (max ${percent(cap.max_share)}); ${value(row)} keeps ${group.kept} of ${group.before} records by ${orderText(table.settings)}`;
      }
      const shownSmallest = shownKey(fields, smallest === null ? [] : table.keyText(k, smallest));
      return `cap ${name}: max ${percent(cap.max_share)} cannot be met while any ${name} is kept (${groups.size} values), so each keeps at most the smallest's ${budget} ${measure[cap.of]} (${shownSmallest}); ${value(row)} keeps ${group.kept} of ${group.before} records by ${orderText(table.settings)}`;
    },
  };
}
