/**
 * A token cache for repeated pre-tokenizer pieces. A byte-level BPE encodes every piece of the
 * split regex on its own, so the ids of a piece never depend on its neighbours: splitting in JS
 * (V8's compiled regex) and looking each piece up in a map gives the same ids as the WASM core,
 * which runs its own regex engine and BPE for every piece. Trajectory text repeats (shell
 * prompts, JSON keys, tree roles, code), so most pieces are hits; misses are byte-pair encoded
 * by `encodePiece` (piece-bpe.ts, the core's merge order), or by the core when none is given.
 *
 * Ids are unchanged by construction (a miss is the BPE of that piece), and the tokenizer parity
 * tests compare them with the bare core and with Hugging Face `tokenizers` on the real fixtures.
 */

import { detachedString } from "../core/detached-string.ts";
import { jsSplitPattern } from "./js-split-pattern.ts";
import { NEWER_THAN_UNICODE_14 } from "./newer-unicode.ts";
import { TwoGenerationCache } from "./two-generation-cache.ts";

export interface PieceCacheOptions {
  /** Entries per generation of the cache (two-generation-cache.ts): at most twice this many are held, whatever the input size. */
  maxEntries?: number;
  /** Longer pieces are encoded but not cached (long runs of symbols or spaces rarely repeat). */
  maxPieceLength?: number;
  /** Encodes one piece the cache has not seen (piece-bpe.ts; same ids as the core). Default: the core. */
  encodePiece?: EncodeOrdinary;
}

export type EncodeOrdinary = (text: string) => Uint32Array;

/**
 * Wraps `encode` (the core, for whole texts) with a piece cache, or returns it unchanged when
 * `pattern` does not compile as a JS regex (then there is nothing to split with; ids stay
 * correct, only slower). A text the split does not tile goes to `encode` whole.
 */
export function withPieceCache(encode: EncodeOrdinary, pattern: string, options: PieceCacheOptions = {}): EncodeOrdinary {
  const { maxEntries = 65_536, maxPieceLength = 64, encodePiece = encode } = options;
  let split: RegExp;
  try {
    split = new RegExp(jsSplitPattern(pattern), "uy");
  } catch {
    return encode;
  }
  // Most pieces are one token: those are stored as a number, longer ones as a plain array of small
  // integers (a typed array per entry costs ~200 bytes, about four times as much: with prose's
  // many rare words, which are the multi-token pieces, that was most of the cache's memory).
  const cache = new TwoGenerationCache<number | number[]>(maxEntries);
  let out: Uint32Array = new Uint32Array(4096);

  return (text) => {
    // V8 knows letters the core's Unicode tables do not: split there, pieces would differ.
    if (NEWER_THAN_UNICODE_14.test(text)) return encode(text);
    let length = 0;
    let position = 0;
    // Sticky: each piece must start where the last ended. `test` and `slice` instead of `exec`:
    // no match array per piece (that was most of the pipeline's allocation).
    split.lastIndex = 0;
    while (position < text.length) {
      // The split must tile the text; if it ever cannot match where the last piece ended (a
      // pattern whose JS reading differs from the core's), the core encodes the whole text.
      if (!split.test(text) || split.lastIndex === position) return encode(text);
      const piece = text.slice(position, split.lastIndex);
      position = split.lastIndex;
      let ids = cache.get(piece);
      if (ids === undefined) {
        const encoded = encodePiece(piece);
        ids = encoded.length === 1 ? (encoded[0] as number) : Array.from(encoded);
        if (piece.length <= maxPieceLength) {
          // Detached: a key cut from its text would keep the whole text alive with the cache.
          cache.set(detachedString(piece), ids);
        }
      }
      if (typeof ids === "number") {
        if (length === out.length) out = grow(out, length + 1);
        out[length++] = ids;
        continue;
      }
      if (length + ids.length > out.length) out = grow(out, length + ids.length);
      for (let i = 0; i < ids.length; i++) out[length++] = ids[i] as number;
    }
    return out.slice(0, length);
  };
}

function grow(array: Uint32Array, atLeast: number): Uint32Array {
  const grown = new Uint32Array(Math.max(array.length * 2, atLeast));
  grown.set(array);
  return grown;
}
