import { Tiktoken } from "tiktoken/lite";
import { pieceBpe } from "./piece-bpe.ts";
import { type EncodeOrdinary, withPieceCache } from "./piece-cache.ts";
import type { RankTableCache } from "./rank-table-cache.ts";

export interface TiktokenEncoder {
  /** The WASM core, built on first call (~160 ms and ~23 MB per thread). */
  core: () => Tiktoken;
  encodeOrdinary: EncodeOrdinary;
}

/**
 * A tiktoken rank table's ordinary encoder, for both tokenizer kinds (a converted HF
 * tokenizer.json and tiktoken's own encodings). With the piece cache, pieces are byte-pair
 * encoded in JS (piece-bpe.ts), so the core is built only if something needs it: a text the JS
 * split cannot tile, or decoding. A pool's main thread plans and never encodes at all.
 */
export function tiktokenEncoder(
  ranks: string,
  specialTokens: Record<string, number>,
  pattern: string,
  options: {
    pieceCache: boolean;
    /** Sees (and may replace) every result of the core: tiktoken drops text its regex leaves unmatched. */
    checkCore?: (text: string, ids: Uint32Array) => Uint32Array;
    /** Where the JS encoder's rank table is cached (rank-table-cache.ts); none: built every time. */
    rankCache?: RankTableCache | undefined;
  },
): TiktokenEncoder {
  let built: Tiktoken | undefined;
  const core = () => {
    built ??= new Tiktoken(ranks, specialTokens, pattern);
    return built;
  };
  const { checkCore } = options;
  const bare = checkCore ? (text: string) => checkCore(text, core().encode_ordinary(text)) : (text: string) => core().encode_ordinary(text);
  const encodeOrdinary = options.pieceCache ? withPieceCache(bare, pattern, { encodePiece: pieceBpe(ranks, options.rankCache) }) : bare;
  return { core, encodeOrdinary };
}
