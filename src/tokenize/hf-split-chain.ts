/**
 * A Hugging Face pre-tokenizer made of several `Split` steps (DeepSeek-V3: digits in groups of
 * three, then CJK runs, then a GPT-style pattern), run in JS the way `tokenizers` runs it: each
 * step splits every piece of the step before on its own, and with `behavior: Isolated` both the
 * matches and the text between them are pieces. A chain cannot be one regex for the tiktoken
 * core: a lookahead such as `\s+(?!\S)` stops at a piece's end, where the whole text goes on.
 *
 * Pieces are byte-pair encoded one by one (piece-bpe.ts, tiktoken's merge order) and repeated
 * ones come from a bounded cache, as for the single-regex tokenizers (piece-cache.ts).
 */

import { detachedString } from "../core/detached-string.ts";
import { jsSplitPattern } from "./js-split-pattern.ts";
import type { EncodeOrdinary } from "./piece-cache.ts";
import { TwoGenerationCache } from "./two-generation-cache.ts";

/** Splits `text` into pieces with each pattern in turn (`Isolated`: matches and gaps are pieces). */
export function splitChain(patterns: readonly string[]): (text: string) => string[] {
  const regexes = patterns.map((pattern) => new RegExp(jsSplitPattern(pattern), "gu"));
  return (text) => {
    let pieces = text.length === 0 ? [] : [text];
    for (const regex of regexes) {
      const next: string[] = [];
      for (const piece of pieces) isolatedSplit(piece, regex, next);
      pieces = next;
    }
    return pieces;
  };
}

function isolatedSplit(text: string, regex: RegExp, out: string[]): void {
  let last = 0;
  regex.lastIndex = 0;
  for (let match = regex.exec(text); match !== null; match = regex.exec(text)) {
    const start = match.index;
    const end = start + match[0].length;
    // An empty match splits nothing (tokenizers drops empty pieces); step past it.
    if (end === start) {
      regex.lastIndex = end + ((text.codePointAt(end) ?? 0) > 0xffff ? 2 : 1);
      continue;
    }
    if (start > last) out.push(text.slice(last, start));
    out.push(text.slice(start, end));
    last = end;
  }
  if (last < text.length) out.push(last === 0 ? text : text.slice(last));
}

/** The ordinary encoder of a split chain: pieces from `splitChain`, ids per piece, cached. */
export function chainEncoder(
  patterns: readonly string[],
  encodePiece: EncodeOrdinary,
  options: { maxEntries?: number; maxPieceLength?: number } = {},
): EncodeOrdinary {
  const { maxEntries = 65_536, maxPieceLength = 64 } = options;
  const split = splitChain(patterns);
  const cache = new TwoGenerationCache<Uint32Array>(maxEntries);
  return (text) => {
    const parts: Uint32Array[] = [];
    let length = 0;
    for (const piece of split(text)) {
      let ids = cache.get(piece);
      if (ids === undefined) {
        ids = encodePiece(piece);
        if (piece.length <= maxPieceLength) {
          cache.set(detachedString(piece), ids);
        }
      }
      parts.push(ids);
      length += ids.length;
    }
    const out = new Uint32Array(length);
    let at = 0;
    for (const ids of parts) {
      out.set(ids, at);
      at += ids.length;
    }
    return out;
  };
}
