import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Tiktoken } from "tiktoken/lite";
import { RecordError, UserError } from "../core/errors.ts";
import { chainEncoder } from "./hf-split-chain.ts";
import { jsSplitPattern } from "./js-split-pattern.ts";
import { pieceBpe } from "./piece-bpe.ts";
import type { EncodeOrdinary } from "./piece-cache.ts";
import { tiktokenEncoder } from "./tiktoken-core.ts";
import type { Tokenizer } from "./tokenizer.ts";
import { defaultCacheDir, readVocabCache, VOCAB_CACHE_FORMAT, writeVocabCache } from "./vocab-cache.ts";

/**
 * A Hugging Face byte-level BPE `tokenizer.json` (Qwen2.5/Qwen3, Llama 3.x, DeepSeek-V3, GPT-OSS,
 * GPT-2 style) run on tiktoken's rank table: ids are identical to `tokenizers` (proved by tests
 * against the Rust and the JS reference, per family) and it is several times faster than the JS
 * port. Anything else in a tokenizer.json is refused when it is loaded, naming the file and the
 * component, so `validate` says why before a job starts.
 *
 * Supported: model BPE (no byte fallback, dropout, subword prefix or suffix; merges in the order
 * of their results' ids, which is what lets ids serve as tiktoken ranks); normalizer none, NFC, or
 * a Sequence of those; pre-tokenizer ByteLevel (its GPT-2 regex), or Split steps (Isolated,
 * non-inverted) followed by ByteLevel, alone or in a Sequence. One split regex runs on the
 * tiktoken core with the piece cache; a chain of splits (DeepSeek-V3) runs in JS (hf-split-chain.ts).
 * The post-processor and decoder do not matter: chat-template text is encoded without added
 * special tokens, as `apply_chat_template` does.
 */

interface HfNormalizer {
  type: string;
  normalizers?: HfNormalizer[];
}
interface HfAddedToken {
  id: number;
  content: string;
  special: boolean;
  lstrip?: boolean;
  rstrip?: boolean;
  single_word?: boolean;
}
interface HfTokenizerJson {
  normalizer?: HfNormalizer | null;
  pre_tokenizer?: HfPreTokenizer | null;
  model?: {
    type?: string;
    vocab?: Record<string, number>;
    merges?: (string | [string, string])[];
    byte_fallback?: boolean;
    dropout?: number | null;
    continuing_subword_prefix?: string | null;
    end_of_word_suffix?: string | null;
  };
  added_tokens?: HfAddedToken[];
}
interface HfPreTokenizer {
  type: string;
  pretokenizers?: HfPreTokenizer[];
  pattern?: { Regex?: string; String?: string };
  behavior?: string;
  invert?: boolean;
  use_regex?: boolean;
  add_prefix_space?: boolean;
}

/** ByteLevel's built-in split (GPT-2), used when its `use_regex` is on. */
const GPT2_PATTERN = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

/**
 * GPT-2's printable stand-ins for the 256 byte values, as used in byte-level vocabularies:
 * indexed by the stand-in's UTF-16 code unit (all are below U+0144), -1 where none.
 */
function byteLevelDecoder(): Int16Array {
  const table = new Int16Array(0x144).fill(-1);
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    table[printable ? b : 256 + extra++] = b;
  }
  return table;
}

/** Whether the normalizer applies NFC; refuses any normalizer that does more than NFC. */
function normalizerIsNfc(normalizer: HfNormalizer | null | undefined, path: string): boolean {
  if (!normalizer) return false;
  if (normalizer.type === "NFC") return true;
  if (normalizer.type === "Sequence") {
    let nfc = false;
    for (const step of normalizer.normalizers ?? []) if (normalizerIsNfc(step, path)) nfc = true;
    return nfc;
  }
  throw new UserError(
    `${path}: normalizer ${normalizer.type} is not supported (supported: none, NFC, or a Sequence of those; lwm-data tokenizes byte-level BPE tokenizers only)`,
  );
}

/**
 * The split regexes of a byte-level pre-tokenizer, in the order they apply (empty: the whole
 * text is one piece), or a clear error naming what is unsupported.
 */
function splitPatterns(pre: HfPreTokenizer | null | undefined, path: string): string[] {
  const steps: HfPreTokenizer[] = [];
  const flatten = (step: HfPreTokenizer) => {
    if (step.type === "Sequence") for (const inner of step.pretokenizers ?? []) flatten(inner);
    else steps.push(step);
  };
  if (pre) flatten(pre);
  const byteLevel = steps.at(-1);
  if (byteLevel?.type !== "ByteLevel") {
    const found = steps.length === 0 ? "none" : steps.map((step) => step.type).join(" → ");
    throw new UserError(
      `${path}: pre_tokenizer (${found}) does not end with ByteLevel; only byte-level BPE tokenizers are supported (SentencePiece/Metaspace, WordPiece and Unigram tokenizers are not)`,
    );
  }
  if (byteLevel.add_prefix_space)
    throw new UserError(`${path}: pre_tokenizer ByteLevel with add_prefix_space is not supported (it puts a space before the text)`);
  const patterns: string[] = [];
  for (const step of steps.slice(0, -1)) {
    if (step.type !== "Split")
      throw new UserError(`${path}: pre_tokenizer ${step.type} is not supported (supported before ByteLevel: Split steps)`);
    const regex = step.pattern?.Regex ?? (step.pattern?.String !== undefined ? escapeRegex(step.pattern.String) : undefined);
    if (regex === undefined || step.behavior !== "Isolated" || step.invert)
      throw new UserError(
        `${path}: pre_tokenizer Split (behavior ${step.behavior}${step.invert ? ", inverted" : ""}) is not supported: only an Isolated, non-inverted Regex or String split`,
      );
    patterns.push(regex);
  }
  if (byteLevel.use_regex !== false) patterns.push(GPT2_PATTERN);
  // One regex runs on the tiktoken core (Rust's syntax); a chain runs in JS, so each must compile there.
  if (patterns.length > 1) {
    for (const regex of patterns) {
      try {
        new RegExp(jsSplitPattern(regex), "u");
      } catch (error) {
        throw new UserError(
          `${path}: pre_tokenizer Split regex ${JSON.stringify(regex)} is not supported in a chain of splits: ${(error as Error).message}`,
        );
      }
    }
  }
  return patterns;
}

function escapeRegex(literal: string): string {
  return literal.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** What the tiktoken core needs from a tokenizer.json: built once, then cached on disk. */
interface CompiledByteLevelBpe {
  /** The pre-tokenizer's split regexes, applied in turn (one: the tiktoken core's pattern). */
  patterns: string[];
  nfc: boolean;
  /** Highest id, vocabulary and added tokens together. */
  maxId: number;
  added: [content: string, id: number][];
  /** tiktoken's rank file, one `base64(bytes) id` line per vocabulary entry. */
  ranks: string;
  /** UTF-8 byte length per id (0 for a hole), base64 of a little-endian Uint16Array. */
  lengths: string;
}

function isCompiled(value: unknown): value is CompiledByteLevelBpe {
  const v = value as Partial<CompiledByteLevelBpe> | null;
  return (
    typeof v === "object" &&
    v !== null &&
    Array.isArray(v.patterns) &&
    typeof v.nfc === "boolean" &&
    typeof v.maxId === "number" &&
    Array.isArray(v.added) &&
    typeof v.ranks === "string" &&
    typeof v.lengths === "string"
  );
}

/** Checks a tokenizer.json and converts it; every unsupported feature is named in the error. */
function compileByteLevelBpe(raw: Buffer, tokenizerJsonPath: string): CompiledByteLevelBpe {
  const path = tokenizerJsonPath;
  let spec: HfTokenizerJson;
  try {
    spec = JSON.parse(raw.toString("utf8")) as HfTokenizerJson;
  } catch (error) {
    throw new UserError(`${path}: not a JSON tokenizer file (${(error as Error).message})`);
  }
  const model = spec?.model;
  if (typeof spec !== "object" || spec === null || typeof model !== "object" || model === null)
    throw new UserError(`${path}: no "model" object; expected a Hugging Face tokenizer.json`);
  if (model.type !== "BPE")
    throw new UserError(
      `${path}: model.type is ${model.type}; only byte-level BPE tokenizers are supported (not WordPiece, Unigram or WordLevel)`,
    );
  if (model.byte_fallback)
    throw new UserError(`${path}: model.byte_fallback BPE (SentencePiece style) is not supported; only byte-level BPE`);
  if (model.dropout) throw new UserError(`${path}: model.dropout ${model.dropout} is not supported (ids would be random)`);
  if (model.continuing_subword_prefix || model.end_of_word_suffix)
    throw new UserError(`${path}: model.continuing_subword_prefix / end_of_word_suffix are not supported`);
  if (typeof model.vocab !== "object" || model.vocab === null || !Array.isArray(model.merges))
    throw new UserError(`${path}: model.vocab or model.merges is missing`);
  const nfc = normalizerIsNfc(spec.normalizer, path);
  const patterns = splitPatterns(spec.pre_tokenizer, path);
  const addedTokens = spec.added_tokens ?? [];
  for (const added of addedTokens) {
    if (added.lstrip || added.rstrip || added.single_word)
      throw new UserError(
        `${path}: added token ${JSON.stringify(added.content)} has lstrip/rstrip/single_word, which changes how the text around it is tokenized; not supported`,
      );
  }

  const vocab = model.vocab;
  checkMergeOrder(vocab, model.merges, path);
  let maxId = 0;
  for (const id of Object.values(vocab)) if (id > maxId) maxId = id;
  for (const added of addedTokens) if (added.id > maxId) maxId = added.id;
  const lengthTable = new Uint16Array(maxId + 1);
  const addedIds = new Map(addedTokens.map((added) => [added.id, added.content]));
  const ranks = tiktokenRanks(vocab, addedIds, lengthTable, path);
  for (const added of addedTokens) lengthTable[added.id] = Buffer.byteLength(added.content);
  return {
    patterns,
    nfc,
    maxId,
    added: addedTokens.map((added) => [added.content, added.id]),
    ranks,
    lengths: Buffer.from(lengthTable.buffer, lengthTable.byteOffset, lengthTable.byteLength).toString("base64"),
  };
}

/**
 * tiktoken merges, at each step, the adjacent pair whose concatenation has the lowest rank;
 * `tokenizers` the pair that comes first in `merges`. With ids as ranks the two agree only if
 * the merges are listed in the order of their results' ids, as in every family above (trained
 * BPE lists them as they were learnt; tiktoken conversions sort them by rank). Refuse otherwise.
 */
function checkMergeOrder(vocab: Record<string, number>, merges: (string | [string, string])[], path: string): void {
  let highest = -1;
  for (const [index, merge] of merges.entries()) {
    const [left, right] = typeof merge === "string" ? splitMerge(merge) : merge;
    const id = vocab[`${left}${right}`];
    if (id === undefined)
      throw new UserError(`${path}: merges[${index}] ${JSON.stringify(merge)} makes a token that is not in model.vocab`);
    if (id < highest)
      throw new UserError(
        `${path}: merges[${index}] ${JSON.stringify(merge)} makes id ${id} after a merge that made id ${highest}; merges must be in the order of their results' ids for ids to match tokenizers`,
      );
    highest = id;
  }
}

function splitMerge(merge: string): [string, string] {
  const space = merge.indexOf(" ", 1);
  return space < 0 ? [merge, ""] : [merge.slice(0, space), merge.slice(space + 1)];
}

export interface LoadHfOptions {
  chatTemplate?: string | undefined;
  sourceLabel?: string;
  pieceCache?: boolean;
  /** Where the converted vocabulary is cached (vocab-cache.ts); `false` for no disk cache. */
  vocabCacheDir?: string | false;
}

export function loadHfByteLevelBpe(tokenizerJsonPath: string, name: string, options: LoadHfOptions = {}): Tokenizer {
  const { chatTemplate, sourceLabel = tokenizerJsonPath, pieceCache = true, vocabCacheDir = defaultCacheDir() } = options;
  const raw = readFileSync(tokenizerJsonPath);
  const sha256 = createHash("sha256").update(raw).digest("hex");
  let compiled = vocabCacheDir === false ? undefined : readVocabCache(vocabCacheDir, "byte-level-bpe", sha256, isCompiled);
  if (!compiled) {
    compiled = compileByteLevelBpe(raw, tokenizerJsonPath);
    if (vocabCacheDir !== false) writeVocabCache(vocabCacheDir, "byte-level-bpe", sha256, compiled);
  }
  const { patterns, ranks, maxId } = compiled;
  // The ranks are derived from the converted vocabulary: keyed by what keys it, the file and the conversion's format.
  const rankCache = vocabCacheDir === false ? undefined : { dir: vocabCacheDir, key: `${VOCAB_CACHE_FORMAT}-${sha256}` };
  const lengthBytes = Buffer.from(compiled.lengths, "base64");
  const lengthTable = new Uint16Array(lengthBytes.buffer.slice(lengthBytes.byteOffset, lengthBytes.byteOffset + lengthBytes.byteLength));
  const addedTokens = new Map(compiled.added);
  const addedById = new Map(compiled.added.map(([content, id]) => [id, content]));
  const specials = Object.fromEntries(addedTokens);

  let core: () => Tiktoken;
  let encodeOrdinary: EncodeOrdinary;
  const [single] = patterns;
  if (patterns.length === 1 && single !== undefined) {
    // `tokenizers` keeps text its split regex leaves unmatched as pieces, the tiktoken core drops
    // it: should the core's ids not cover the text, the JS split (which keeps it) encodes it.
    let keepsGaps: EncodeOrdinary | undefined;
    const checkCore = (text: string, ids: Uint32Array) => {
      let bytes = 0;
      for (const id of ids) bytes += lengthTable[id] as number;
      if (bytes === Buffer.byteLength(text)) return ids;
      try {
        keepsGaps ??= chainEncoder(patterns, pieceBpe(ranks, rankCache));
      } catch (error) {
        throw new RecordError(
          `${tokenizerJsonPath}: the pre-tokenizer regex leaves part of this text unmatched and does not compile in JS to keep it (${(error as Error).message})`,
        );
      }
      return keepsGaps(text);
    };
    ({ core, encodeOrdinary } = tiktokenEncoder(ranks, specials, single, { pieceCache, checkCore, rankCache }));
  } else {
    // A chain of splits has no single regex for the core: pieces come from the JS chain, and the
    // core (any pattern) only decodes.
    ({ core } = tiktokenEncoder(ranks, specials, "\\S+|\\s+", { pieceCache: false }));
    encodeOrdinary = chainEncoder(patterns, pieceBpe(ranks, rankCache));
  }
  const normalize = compiled.nfc ? (text: string) => text.normalize("NFC") : (text: string) => text;

  return {
    identity: { name, vocabSha256: sha256, vocabSize: maxId + 1, source: sourceLabel },
    addedTokens,
    ...(chatTemplate !== undefined ? { chatTemplate } : {}),
    normalize,
    encodeOrdinary,
    tokenByteLength(id) {
      const length = id >= 0 && id <= maxId ? (lengthTable[id] as number) : 0;
      if (length === 0) throw new Error(`token id ${id} is not in the vocabulary`);
      return length;
    },
    decodeBytes: (ids) => core().decode(Uint32Array.from(ids)),
    addedTokenContent: (id) => addedById.get(id),
  };
}

/** tiktoken's rank file, one `base64(bytes) id` line per entry; records each entry's byte length. */
function tiktokenRanks(
  vocab: Record<string, number>,
  addedIds: ReadonlyMap<number, string>,
  lengthTable: Uint16Array,
  tokenizerJsonPath: string,
): string {
  const toByte = byteLevelDecoder();
  const scratch = Buffer.alloc(1024);
  const lines: string[] = [];
  next: for (const token in vocab) {
    const id = vocab[token] as number;
    if (token.length > scratch.length) throw new UserError(`${tokenizerJsonPath}: vocab token of ${token.length} characters is too long`);
    for (let i = 0; i < token.length; i++) {
      const code = token.charCodeAt(i);
      const byte = code < toByte.length ? (toByte[code] as number) : -1;
      if (byte < 0) {
        // An added token listed in the vocabulary too (DeepSeek-V3's `<｜begin▁of▁sentence｜>`):
        // it enters by id, never from byte-pair merges.
        if (addedIds.get(id) === token) continue next;
        throw new UserError(`${tokenizerJsonPath}: vocab token ${JSON.stringify(token)} (id ${id}) is not byte-level`);
      }
      scratch[i] = byte;
    }
    lines.push(`${scratch.toString("base64", 0, token.length)} ${id}`);
    lengthTable[id] = token.length;
  }
  return lines.join("\n");
}
