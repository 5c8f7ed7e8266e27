import type { Tokenizer } from "../tokenize/tokenizer.ts";
import type { TurnStatsRow } from "./read-turn-stats.ts";

/**
 * One line per turn: its class, the masking decision with the draw and keep ratio that made it,
 * and the statistics the class was decided from, so a surprising mask can be explained on the spot.
 */
export function turnNote(row: TurnStatsRow): string {
  const decision = row.kept
    ? `kept (draw ${row.draw.toFixed(3)} < keep ratio ${row.keepRatio})`
    : `masked (draw ${row.draw.toFixed(3)} ≥ keep ratio ${row.keepRatio})`;
  const stats = [
    `OL ${row.overlap.toFixed(2)}`,
    `Nov ${row.novelty.toFixed(2)}`,
    `Jac ${row.jaccard.toFixed(2)}`,
    `R ${row.lengthRatio.toFixed(2)}`,
    `HNov ${row.historyNovelty.toFixed(2)}`,
    `obs ${row.obsTokens} / act ${row.actTokens} tokens`,
  ].join("  ");
  return `▸ turn ${row.turnIndex}: ${row.turnClass}, ${decision} · ${stats}`;
}

/** Where a turn's messages lie in a sample's ids: action from `actionStart`, observation from `observationStart` to `end`. */
export interface TurnSpan {
  actionStart: number;
  observationStart: number;
  end: number;
}

/**
 * Each turn's token span, or undefined when that cannot be told from the ids alone. A sample is
 * system · (action · observation)*; a template that opens every message with one special token
 * (ChatML's `<|im_start|>`, the default) starts the sequence with it and repeats it once per
 * message, so turn k's action opens at occurrence 1 + 2k and its observation at 2 + 2k.
 */
export function turnSpans(tokenizer: Tokenizer, ids: ArrayLike<number>, turns: number): TurnSpan[] | undefined {
  const opener = ids[0];
  if (opener === undefined || tokenizer.addedTokenContent(opener) === undefined) return undefined;
  const opens: number[] = [];
  for (let i = 0; i < ids.length; i++) if (ids[i] === opener) opens.push(i);
  if (opens.length !== 1 + 2 * turns) return undefined;
  return Array.from({ length: turns }, (_, k) => ({
    actionStart: opens[1 + 2 * k] as number,
    observationStart: opens[2 + 2 * k] as number,
    end: opens[3 + 2 * k] ?? ids.length,
  }));
}

/** Token position where each turn's observation message opens (see turnSpans). */
export function observationStarts(tokenizer: Tokenizer, ids: Int32Array, turns: number): number[] | undefined {
  return turnSpans(tokenizer, ids, turns)?.map((span) => span.observationStart);
}

/** Notes keyed by the token position they go before; undefined when the turns cannot be placed. */
export function turnNotesByPosition(tokenizer: Tokenizer, ids: Int32Array, rows: readonly TurnStatsRow[]): Map<number, string> | undefined {
  const starts = observationStarts(tokenizer, ids, rows.length);
  if (!starts || rows.some((row, k) => row.turnIndex !== k)) return undefined;
  return new Map(rows.map((row, k) => [starts[k] as number, turnNote(row)]));
}
