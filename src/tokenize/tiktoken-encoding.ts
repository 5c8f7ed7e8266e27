import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { UserError } from "../core/errors.ts";
import { packageFileLabel } from "./package-label.ts";
import { fillRankByteLengths } from "./piece-bpe.ts";
import { tiktokenEncoder } from "./tiktoken-core.ts";
import type { Tokenizer } from "./tokenizer.ts";

export const TIKTOKEN_ENCODINGS = ["o200k_base", "cl100k_base"] as const;
export type TiktokenEncodingName = (typeof TIKTOKEN_ENCODINGS)[number];

/**
 * Ids for the ChatML markers, which these encodings do not define. cl100k: the ids OpenAI's
 * tiktoken README gives for its `cl100k_im` extension. o200k_base: the first free ids after
 * the encoding's own specials. Override with `tokenizer.special_tokens`.
 */
export const DEFAULT_CHATML_IDS: Record<TiktokenEncodingName, Record<string, number>> = {
  cl100k_base: { "<|im_start|>": 100264, "<|im_end|>": 100265 },
  o200k_base: { "<|im_start|>": 200019, "<|im_end|>": 200020 },
};

interface EncoderFile {
  pat_str: string;
  special_tokens: Record<string, number>;
  bpe_ranks: string;
}

const require = createRequire(import.meta.url);

export function loadTiktokenEncoding(
  encoding: TiktokenEncodingName,
  extraSpecialTokens?: Record<string, number>,
  options: { pieceCache?: boolean } = {},
): Tokenizer {
  const path = require.resolve(`tiktoken/encoders/${encoding}.json`);
  const raw = readFileSync(path);
  const file = JSON.parse(raw.toString("utf8")) as EncoderFile;
  const specials = { ...file.special_tokens, ...DEFAULT_CHATML_IDS[encoding], ...extraSpecialTokens };
  const { core, encodeOrdinary } = tiktokenEncoder(file.bpe_ranks, specials, file.pat_str, { pieceCache: options.pieceCache !== false });
  const addedTokens = new Map(Object.entries(specials));
  const addedById = new Map([...addedTokens].map(([content, id]) => [id, content]));
  const maxId = Math.max(...addedTokens.values(), ...Object.values(file.special_tokens));
  // Byte lengths of every id, read off the rank text on first use (the core is not needed).
  let lengths: Int32Array | undefined;
  const lengthTable = () => {
    if (!lengths) {
      lengths = new Int32Array(maxId + 1).fill(-1);
      fillRankByteLengths(file.bpe_ranks, lengths);
      for (const [content, id] of addedTokens) lengths[id] = Buffer.byteLength(content);
    }
    return lengths;
  };

  const specialsJson = JSON.stringify(Object.entries(specials).sort(([, a], [, b]) => a - b));
  return {
    identity: {
      name: `tiktoken:${encoding}`,
      vocabSha256: createHash("sha256").update(raw).update(specialsJson).digest("hex"),
      vocabSize: maxId + 1,
      source: packageFileLabel(path),
    },
    addedTokens,
    normalize: (text) => text,
    encodeOrdinary,
    tokenByteLength(id) {
      if (id < 0 || id > maxId) throw new UserError(`token id ${id} is outside tiktoken:${encoding}`);
      const length = lengthTable()[id] as number;
      if (length < 0) throw new UserError(`token id ${id} is not in tiktoken:${encoding}`);
      return length;
    },
    decodeBytes: (ids) => core().decode(Uint32Array.from(ids)),
    addedTokenContent: (id) => addedById.get(id),
  };
}
