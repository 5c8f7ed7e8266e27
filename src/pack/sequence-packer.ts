import type { Sample } from "../write/sample.ts";
import { bestFitDecreasing, checkDocumentLength, checkSeqLen, inOrderFill } from "./bin-packing.ts";
import { type PackedRow, type PackingEfficiency, packingEfficiency, packRow } from "./packed-row.ts";

export type PackingStrategy = "best-fit" | "in-order";

export interface SequencePackerOptions {
  seqLen: number;
  strategy: PackingStrategy;
  /** best-fit: documents gathered before packing them together (bounds memory). in-order holds one row at most. */
  bufferDocuments: number;
}

/** Totals over the rows emitted so far (documents still buffered are not counted). */
export interface PackingStats extends PackingEfficiency {
  documents: number;
  rows: number;
  /** Real tokens in emitted rows. */
  tokens: number;
  /** rows × seqLen. */
  capacity: number;
}

/** A packer's state between two samples (a mid-segment checkpoint keeps it in the task's journal). */
export interface PackerSnapshot {
  pending: Sample[];
  pendingTokens: number;
  documents: number;
  rows: number;
  tokens: number;
}

/**
 * Streams samples into packed rows. best-fit buffers `bufferDocuments` samples, then packs
 * them all with best-fit decreasing and emits every bin, partly full ones included, so
 * nothing is carried over between buffers. in-order emits a row as soon as the next sample
 * does not fit (or the row is exactly full). Output depends only on the sequence of samples
 * added and where flush() is called.
 */
export class SequencePacker {
  readonly #seqLen: number;
  readonly #strategy: PackingStrategy;
  readonly #bufferDocuments: number;
  #pending: Sample[] = [];
  /** Tokens in #pending: for in-order, the open row's fill. */
  #pendingTokens = 0;
  #documents = 0;
  #rows = 0;
  #tokens = 0;

  constructor(options: SequencePackerOptions) {
    checkSeqLen(options.seqLen);
    if (options.strategy !== "best-fit" && options.strategy !== "in-order") throw new Error(`unknown packing strategy ${options.strategy}`);
    if (!Number.isInteger(options.bufferDocuments) || options.bufferDocuments <= 0) {
      throw new Error(`bufferDocuments must be a positive integer, got ${options.bufferDocuments}`);
    }
    this.#seqLen = options.seqLen;
    this.#strategy = options.strategy;
    this.#bufferDocuments = options.bufferDocuments;
  }

  /** Adds one sample; returns the rows that became final because of it. */
  add(sample: Sample): PackedRow[] {
    const length = sample.inputIds.length;
    checkDocumentLength(length, this.#seqLen, `sample ${sample.id}`);
    if (this.#strategy === "best-fit") {
      this.#hold(sample);
      return this.#pending.length >= this.#bufferDocuments ? this.flush() : [];
    }
    const rows = this.#pendingTokens + length > this.#seqLen ? this.flush() : [];
    this.#hold(sample);
    // A full row can take nothing more (samples have ≥ 1 token), so it need not wait for the next sample.
    if (this.#pendingTokens === this.#seqLen) rows.push(...this.flush());
    return rows;
  }

  /** Packs and emits everything buffered: at segment boundaries and at the end. */
  flush(): PackedRow[] {
    const docs = this.#pending;
    this.#pending = [];
    this.#pendingTokens = 0;
    if (docs.length === 0) return [];
    // For in-order the buffer is one row by construction, and inOrderFill keeps it that way.
    const pack = this.#strategy === "best-fit" ? bestFitDecreasing : inOrderFill;
    const bins = pack(
      docs.map((d) => d.inputIds.length),
      this.#seqLen,
    );
    return bins.map((bin) => this.#emit(bin.map((i) => docs[i] as Sample)));
  }

  get stats(): PackingStats {
    const capacity = this.#rows * this.#seqLen;
    return {
      documents: this.#documents,
      rows: this.#rows,
      tokens: this.#tokens,
      capacity,
      ...packingEfficiency(this.#tokens, this.#rows, this.#seqLen),
    };
  }

  snapshot(): PackerSnapshot {
    return {
      pending: this.#pending,
      pendingTokens: this.#pendingTokens,
      documents: this.#documents,
      rows: this.#rows,
      tokens: this.#tokens,
    };
  }

  /** Continues from a snapshot: the rows emitted next are those the snapshotted packer would have emitted. */
  restore(snapshot: PackerSnapshot): void {
    this.#pending = [...snapshot.pending];
    this.#pendingTokens = snapshot.pendingTokens;
    this.#documents = snapshot.documents;
    this.#rows = snapshot.rows;
    this.#tokens = snapshot.tokens;
  }

  /** Samples added but not yet in an emitted row. */
  get buffered(): number {
    return this.#pending.length;
  }

  #hold(sample: Sample): void {
    this.#pending.push(sample);
    this.#pendingTokens += sample.inputIds.length;
  }

  #emit(docs: Sample[]): PackedRow {
    const row = packRow(docs);
    this.#documents += docs.length;
    this.#rows += 1;
    this.#tokens += row.inputIds.length;
    return row;
  }
}
