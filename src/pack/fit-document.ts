import { RecordError } from "../core/errors.ts";
import type { Tokenizer } from "../tokenize/tokenizer.ts";
import type { OverlongPolicy } from "./fit-to-length.ts";

/** A piece of a text document that fits the sequence length. */
export interface DocumentPiece {
  inputIds: Int32Array;
  /** Tokens cut off (overlong: truncate). */
  truncatedTokens: number;
}

/** Paragraph starts (after a blank line) first, then line starts: where a long document is cut. */
const PARAGRAPH_BREAK = /\n[ \t\r\f\v]*\n\s*/g;
const LINE_BREAK = /\n/g;

/** UTF-8 byte offsets of the ends of `pattern`'s matches in `text`, ascending. */
function breakBytes(text: string, pattern: RegExp): number[] {
  const offsets: number[] = [];
  let chars = 0;
  let bytes = 0;
  for (const match of text.matchAll(pattern)) {
    const end = match.index + match[0].length;
    bytes += Buffer.byteLength(text.slice(chars, end));
    chars = end;
    if (end < text.length) offsets.push(bytes);
  }
  return offsets;
}

/**
 * Token indices (into `ids`) where a break falls: the first token boundary at or after each break's
 * byte offset in the content, which starts after `prefix` tokens. Ascending, without repeats.
 */
function breakTokens(ids: Int32Array, prefix: number, tokenizer: Tokenizer, breaks: readonly number[]): Int32Array {
  const out: number[] = [];
  let at = 0;
  let bytes = 0;
  for (let token = prefix; token < ids.length && at < breaks.length; token++) {
    while (at < breaks.length && (breaks[at] as number) <= bytes) {
      if (out[out.length - 1] !== token) out.push(token);
      at++;
    }
    bytes += tokenizer.tokenByteLength(ids[token] as number);
  }
  return Int32Array.from(out);
}

/** The largest boundary in (start, limit], or -1. */
function lastWithin(boundaries: Int32Array, start: number, limit: number): number {
  let low = 0;
  let high = boundaries.length - 1;
  let found = -1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    const value = boundaries[mid] as number;
    if (value <= limit) {
      if (value > start) found = value;
      low = mid + 1;
    } else high = mid - 1;
  }
  return found;
}

/**
 * Cuts a tokenized document (`prefix` BOS tokens, the text's tokens, the end-of-document token)
 * into pieces of at most `seqLen` tokens (packing). Split cuts at the last paragraph start that
 * fits, else the last line start, else at `seqLen` tokens (one paragraph longer than a row); the
 * cuts are token boundaries of the whole document's encoding, so the pieces' ids are the
 * document's, in order, and decode back to its text. Truncate keeps the first `seqLen` tokens;
 * quarantine refuses the document.
 */
export function fitDocument(
  ids: Int32Array,
  text: string,
  prefix: number,
  tokenizer: Tokenizer,
  seqLen: number,
  overlong: OverlongPolicy,
): DocumentPiece[] {
  if (ids.length <= seqLen) return [{ inputIds: ids, truncatedTokens: 0 }];
  if (overlong === "quarantine")
    throw new RecordError(`document is ${ids.length} tokens, over pack.seq_len ${seqLen} (pack.overlong: quarantine)`, "text");
  if (overlong === "truncate") return [{ inputIds: ids.slice(0, seqLen), truncatedTokens: ids.length - seqLen }];
  const paragraphs = breakTokens(ids, prefix, tokenizer, breakBytes(text, PARAGRAPH_BREAK));
  let lines: Int32Array | undefined;
  const pieces: DocumentPiece[] = [];
  let start = 0;
  while (ids.length - start > seqLen) {
    const limit = start + seqLen;
    let cut = lastWithin(paragraphs, start, limit);
    if (cut === -1) {
      lines ??= breakTokens(ids, prefix, tokenizer, breakBytes(text, LINE_BREAK));
      cut = lastWithin(lines, start, limit);
    }
    if (cut === -1) cut = limit;
    pieces.push({ inputIds: ids.slice(start, cut), truncatedTokens: 0 });
    start = cut;
  }
  pieces.push({ inputIds: ids.slice(start), truncatedTokens: 0 });
  return pieces;
}
