/**
 * Byte-pair encoding of one pre-tokenizer piece in O(n log n): what the piece cache
 * (piece-cache.ts) calls for every piece it has not seen. Two reasons over the WASM core:
 *  - its rank table builds in ~80 ms, the core's in ~160 ms, per thread; a run whose pieces
 *    all split in JS never builds the core at all;
 *  - tiktoken's core (like HF `tokenizers`) rescans every adjacent pair after each merge, which
 *    is quadratic in the piece's length: tool output makes long pieces (a 100k-character run
 *    of `=`, `#` or `]` is a single piece of the split regex) and one such observation took
 *    ~9 s of CPU in the core.
 *
 * Same answer as the core by construction: the core merges, at every step, the adjacent pair of
 * lowest rank, the leftmost one on ties. Here every adjacent pair waits in a min-heap keyed by
 * (rank, start offset); a popped pair whose parts have since changed is stale and skipped. The
 * property tests compare ids with the core on random, real and pathological text.
 */

import { heapPop, heapPush } from "../core/number-heap.ts";
import { forEachRankRange, type RankTable } from "./rank-table.ts";
import { cachedRankTable, type RankTableCache } from "./rank-table-cache.ts";

export type EncodePiece = (piece: string) => Uint32Array;

/** Writes each rank's byte length into `lengths[rank]` (from the base64 length, nothing decoded). */
export function fillRankByteLengths(ranksText: string, lengths: Int32Array): void {
  forEachRankRange(ranksText, (from, to, rank) => {
    if (rank < lengths.length) lengths[rank] = ((to - from) / 4) * 3 - base64Padding(ranksText, from, to);
  });
}

/** How many `=` (at most two) end the base64 in `text[from, to)`. */
function base64Padding(text: string, from: number, to: number): number {
  let padding = 0;
  while (padding < 2 && to - padding > from && text.charCodeAt(to - padding - 1) === 0x3d) padding++;
  return padding;
}

/** 2^32: a key is rank × OFFSETS + start offset, exact in a double for ranks below 2^20. */
const OFFSETS = 0x1_0000_0000;

/**
 * Builds the encoder lazily: the rank table (~150k–200k entries) is made on the first piece, or
 * read from `cache` (rank-table-cache.ts) when it was built before.
 */
export function pieceBpe(ranksText: string, cache?: RankTableCache): EncodePiece {
  let ranks: RankTable | undefined;
  return (piece) => {
    ranks ??= cachedRankTable(ranksText, cache);
    // The piece's UTF-8 bytes as a latin1 string (one char per byte), so parts are substrings:
    // cheaper to cut and look up than a Buffer decoded per pair.
    return encodeBytes(Buffer.from(piece, "utf8").toString("latin1"), ranks);
  };
}

/** A piece's parts as a linked list over byte offsets (see `encodeBytes`), and its waiting pairs. */
interface Parts {
  bytes: string;
  ranks: RankTable;
  /** A part starts at s and ends at end[s]; next[s] and prev[s] are its neighbours' starts (-1 at the ends). */
  end: Int32Array;
  next: Int32Array;
  prev: Int32Array;
  /** alive[s] = 1 while s starts a part. */
  alive: Uint8Array;
  /** Pairs by (rank, start offset): rank × OFFSETS + start. */
  heap: number[];
}

// Module-level, not a closure per piece: V8 keeps optimized code only for functions that stay
// alive, and a per-call closure was compiled again after every major GC.
function pushPair(parts: Parts, start: number): void {
  const right = parts.next[start] as number;
  if (right < 0) return;
  const rank = parts.ranks.get(parts.bytes, start, parts.end[right] as number);
  if (rank !== undefined) heapPush(parts.heap, rank * OFFSETS + start);
}

function encodeBytes(bytes: string, ranks: RankTable): Uint32Array {
  // A piece that is a vocabulary entry is that entry, as in the core (and in `tokenizers` with
  // `ignore_merges`): the merges need not reach every entry.
  const whole = ranks.get(bytes, 0, bytes.length);
  if (whole !== undefined) return Uint32Array.of(whole);
  const n = bytes.length;
  const parts: Parts = {
    bytes,
    ranks,
    end: new Int32Array(n),
    next: new Int32Array(n),
    prev: new Int32Array(n),
    alive: new Uint8Array(n).fill(1),
    heap: [],
  };
  const { end, next, prev, alive, heap } = parts;
  for (let i = 0; i < n; i++) {
    end[i] = i + 1;
    next[i] = i + 1 < n ? i + 1 : -1;
    prev[i] = i - 1;
  }
  for (let i = 0; i + 1 < n; i++) pushPair(parts, i);

  while (heap.length > 0) {
    const key = heapPop(heap);
    const start = key % OFFSETS;
    const rank = (key - start) / OFFSETS;
    const right = next[start] as number;
    // Stale: the left part was absorbed, or either part grew since the pair was pushed.
    if (alive[start] === 0 || right < 0) continue;
    if (ranks.get(bytes, start, end[right] as number) !== rank) continue;
    end[start] = end[right] as number;
    alive[right] = 0;
    const after = next[right] as number;
    next[start] = after;
    if (after >= 0) prev[after] = start;
    const before = prev[start] as number;
    if (before >= 0) pushPair(parts, before);
    pushPair(parts, start);
  }

  const ids: number[] = [];
  for (let s = 0; s >= 0 && s < n; s = next[s] as number) {
    const rank = ranks.get(bytes, s, end[s] as number);
    if (rank === undefined)
      throw new Error(`byte-level BPE: no rank for a ${(end[s] as number) - s}-byte part (vocabulary lacks single bytes?)`);
    ids.push(rank);
  }
  return Uint32Array.from(ids);
}
