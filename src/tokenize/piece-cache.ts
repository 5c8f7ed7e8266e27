/**
 * A token cache for repeated pre-tokenizer pieces. A byte-level BPE encodes every piece of the
 * split regex on its own, so the ids of a piece never depend on its neighbours: splitting in JS
 * (V8's compiled regex) and looking each piece up in a map gives the same ids as the WASM core,
 * which runs its own regex engine and BPE for every piece. Trajectory text repeats (shell
 * prompts, JSON keys, tree roles, code), so most pieces are hits; misses go to the core.
 *
 * Ids are unchanged by construction (a miss is the core's answer for that piece), and the
 * tokenizer parity tests compare them with Hugging Face `tokenizers` on the real fixtures.
 */

export interface PieceCacheOptions {
  /** Entries kept before the cache starts over (bounds memory whatever the input size). */
  maxEntries?: number;
  /** Longer pieces are encoded but not cached (long runs of symbols or spaces rarely repeat). */
  maxPieceLength?: number;
}

export type EncodeOrdinary = (text: string) => Uint32Array;

/**
 * Wraps `encode` with a piece cache, or returns it unchanged when `pattern` does not compile as
 * a JS regex (then there is nothing to split with; ids stay correct, only slower).
 */
export function withPieceCache(encode: EncodeOrdinary, pattern: string, options: PieceCacheOptions = {}): EncodeOrdinary {
  const { maxEntries = 200_000, maxPieceLength = 64 } = options;
  let split: RegExp;
  try {
    split = new RegExp(pattern, "gu");
  } catch {
    return encode;
  }
  const cache = new Map<string, Uint32Array>();
  let out = new Uint32Array(4096);

  return (text) => {
    let length = 0;
    let position = 0;
    split.lastIndex = 0;
    for (let match = split.exec(text); match !== null; match = split.exec(text)) {
      const piece = match[0];
      // The split must tile the text; if it ever skips a character (a pattern whose JS reading
      // differs from the core's), the core encodes the whole text instead.
      if (match.index !== position || piece.length === 0) return encode(text);
      position += piece.length;
      let ids = cache.get(piece);
      if (ids === undefined) {
        ids = encode(piece);
        if (piece.length <= maxPieceLength) {
          if (cache.size >= maxEntries) cache.clear();
          cache.set(piece, ids);
        }
      }
      if (length + ids.length > out.length) {
        const grown = new Uint32Array(Math.max(out.length * 2, length + ids.length));
        grown.set(out.subarray(0, length));
        out = grown;
      }
      out.set(ids, length);
      length += ids.length;
    }
    if (position !== text.length) return encode(text);
    return out.slice(0, length);
  };
}
