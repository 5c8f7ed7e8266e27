import { heapPop, heapPush } from "../core/number-heap.ts";
/**
 * Assigning documents to rows of `seqLen` tokens (bin packing), knowing only their lengths.
 * Both strategies return bins as lists of document indices (positions in `lengths`); every
 * document is in exactly one bin and no bin holds more than `seqLen` tokens.
 */

/**
 * Best-fit decreasing: longest document first, each into the bin with the least room that
 * still fits it, else a new bin. Within a bin, documents are listed in arrival order; bins
 * are ordered by their first document, so the output does not depend on BFD's bin numbering.
 * O(n log n + seqLen) time.
 */
export function bestFitDecreasing(lengths: readonly number[], seqLen: number): number[][] {
  checkLengths(lengths, seqLen);
  const binOf = new Int32Array(lengths.length);
  const room: number[] = [];
  const open = new CapacityIndex(seqLen);
  for (const doc of longestFirst(lengths)) {
    const length = lengths[doc] as number;
    let bin = open.takeBestFit(length);
    if (bin === undefined) {
      bin = room.length;
      room.push(seqLen);
    }
    const left = (room[bin] as number) - length;
    room[bin] = left;
    binOf[doc] = bin;
    // A full bin can take nothing more (lengths are ≥ 1), so it leaves the index for good.
    if (left > 0) open.insert(bin, left);
  }
  return groupInArrivalOrder(binOf, room.length);
}

/** Next-fit in arrival order: a new bin starts when the next document does not fit the current one. */
export function inOrderFill(lengths: readonly number[], seqLen: number): number[][] {
  checkLengths(lengths, seqLen);
  const bins: number[][] = [];
  let current: number[] = [];
  let used = 0;
  lengths.forEach((length, doc) => {
    if (used + length > seqLen) {
      bins.push(current);
      current = [];
      used = 0;
    }
    current.push(doc);
    used += length;
  });
  if (current.length > 0) bins.push(current);
  return bins;
}

function checkLengths(lengths: readonly number[], seqLen: number): void {
  checkSeqLen(seqLen);
  lengths.forEach((length, doc) => {
    checkDocumentLength(length, seqLen, `document ${doc}`);
  });
}

export function checkSeqLen(seqLen: number): void {
  if (!Number.isInteger(seqLen) || seqLen <= 0) throw new Error(`seqLen must be a positive integer, got ${seqLen}`);
}

/** Packing assumes every document fits a row: overlong ones must be split or dropped before. */
export function checkDocumentLength(length: number, seqLen: number, what: string): void {
  if (!Number.isInteger(length) || length <= 0 || length > seqLen) {
    throw new Error(`${what} has ${length} tokens: a packed document must have 1..seqLen (${seqLen}) tokens`);
  }
}

/** Indices by length, longest first; equal lengths keep arrival order so the result is deterministic. */
function longestFirst(lengths: readonly number[]): Int32Array {
  const order = new Int32Array(lengths.length);
  for (let i = 0; i < order.length; i++) order[i] = i;
  return order.sort((a, b) => (lengths[b] as number) - (lengths[a] as number) || a - b);
}

/** Lists each bin's documents in arrival order, bins ordered by their earliest document. */
function groupInArrivalOrder(binOf: Int32Array, binCount: number): number[][] {
  const slot = new Int32Array(binCount).fill(-1);
  const bins: number[][] = [];
  binOf.forEach((bin, doc) => {
    if (slot[bin] === -1) {
      slot[bin] = bins.length;
      bins.push([]);
    }
    (bins[slot[bin] as number] as number[]).push(doc);
  });
  return bins;
}

/**
 * Open bins keyed by remaining room, to find the best fit in O(log seqLen) instead of scanning
 * every bin. A segment tree over room values 0..seqLen counts the bins with each room; the
 * bins sharing a room value sit in a min-heap so that ties go to the lowest bin index.
 */
class CapacityIndex {
  readonly #leaves: number;
  /** Heap-ordered tree: node i covers its children 2i and 2i+1; leaf `leaves + room` counts bins with that room. */
  readonly #counts: Int32Array;
  readonly #binsByRoom = new Map<number, number[]>();

  constructor(maxRoom: number) {
    let leaves = 1;
    while (leaves <= maxRoom) leaves *= 2;
    this.#leaves = leaves;
    this.#counts = new Int32Array(2 * leaves);
  }

  insert(bin: number, room: number): void {
    let heap = this.#binsByRoom.get(room);
    if (heap === undefined) {
      heap = [];
      this.#binsByRoom.set(room, heap);
    }
    heapPush(heap, bin);
    this.#count(room, 1);
  }

  /** Removes and returns the bin with the least room ≥ `length` (lowest index on ties), if any. */
  takeBestFit(length: number): number | undefined {
    const room = this.#firstNonEmptyFrom(length);
    if (room === undefined) return undefined;
    this.#count(room, -1);
    return heapPop(this.#binsByRoom.get(room) as number[]);
  }

  #count(room: number, delta: number): void {
    for (let node = this.#leaves + room; node >= 1; node >>= 1) this.#counts[node] = this.#at(node) + delta;
  }

  /** Smallest room value ≥ `from` that has a bin. */
  #firstNonEmptyFrom(from: number): number | undefined {
    let node = this.#leaves + from;
    if (this.#at(node) > 0) return from;
    // Climb until a right sibling holds a bin: its range starts just past everything seen so far.
    for (;;) {
      if (node === 1) return undefined;
      if ((node & 1) === 0 && this.#at(node + 1) > 0) break;
      node >>= 1;
    }
    node += 1;
    // Descend to that subtree's leftmost non-empty leaf.
    while (node < this.#leaves) node = this.#at(2 * node) > 0 ? 2 * node : 2 * node + 1;
    return node - this.#leaves;
  }

  #at(node: number): number {
    return this.#counts[node] as number;
  }
}
