import { Tiktoken } from "tiktoken/lite";
import { pieceBpe } from "./piece-bpe.ts";
import { type EncodeOrdinary, withPieceCache } from "./piece-cache.ts";

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
  options: { pieceCache: boolean },
): TiktokenEncoder {
  let built: Tiktoken | undefined;
  const core = () => {
    built ??= new Tiktoken(ranks, specialTokens, pattern);
    return built;
  };
  const bare = (text: string) => core().encode_ordinary(text);
  const encodeOrdinary = options.pieceCache ? withPieceCache(bare, pattern, { encodePiece: pieceBpe(ranks) }) : bare;
  return { core, encodeOrdinary };
}
