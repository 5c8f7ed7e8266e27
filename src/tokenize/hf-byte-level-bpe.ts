import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { UserError } from "../core/errors.ts";
import { tiktokenEncoder } from "./tiktoken-core.ts";
import type { Tokenizer } from "./tokenizer.ts";
import { defaultCacheDir, readVocabCache, writeVocabCache } from "./vocab-cache.ts";

/**
 * A Hugging Face byte-level BPE `tokenizer.json` (Qwen, Llama-3, GPT-2 style) run on tiktoken's
 * WASM core: ids are identical to `tokenizers` (proved by tests against both the Rust and the JS
 * reference) and it is several times faster than the JS port.
 */

interface HfTokenizerJson {
  normalizer: { type: string } | null;
  pre_tokenizer: HfPreTokenizer | null;
  model: { type: string; vocab: Record<string, number>; merges: unknown[]; byte_fallback?: boolean };
  added_tokens: { id: number; content: string; special: boolean }[];
}
interface HfPreTokenizer {
  type: string;
  pretokenizers?: HfPreTokenizer[];
  pattern?: { Regex?: string; String?: string };
  behavior?: string;
  invert?: boolean;
  use_regex?: boolean;
}

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

/** The split regex of a byte-level pipeline, or a clear error naming what is unsupported. */
function splitPattern(pre: HfPreTokenizer | null, path: string): string {
  const steps = pre?.type === "Sequence" ? (pre.pretokenizers ?? []) : pre ? [pre] : [];
  const split = steps.find((step) => step.type === "Split");
  const byteLevel = steps.find((step) => step.type === "ByteLevel");
  if (!byteLevel) throw new UserError(`${path}: pre_tokenizer has no ByteLevel step; only byte-level BPE tokenizers are supported`);
  if (split) {
    const regex = split.pattern?.Regex;
    if (!regex || split.behavior !== "Isolated" || split.invert)
      throw new UserError(`${path}: pre_tokenizer Split must be an isolated, non-inverted Regex split`);
    return regex;
  }
  if (byteLevel.use_regex === false) throw new UserError(`${path}: ByteLevel without a split regex is not supported`);
  // ByteLevel's built-in GPT-2 pattern.
  return "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
}

/** What the tiktoken core needs from a tokenizer.json: built once, then cached on disk. */
interface CompiledByteLevelBpe {
  pattern: string;
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
    typeof v.pattern === "string" &&
    typeof v.nfc === "boolean" &&
    typeof v.maxId === "number" &&
    Array.isArray(v.added) &&
    typeof v.ranks === "string" &&
    typeof v.lengths === "string"
  );
}

/** Checks a tokenizer.json and converts it; every unsupported feature is named in the error. */
function compileByteLevelBpe(raw: Buffer, tokenizerJsonPath: string): CompiledByteLevelBpe {
  const spec = JSON.parse(raw.toString("utf8")) as HfTokenizerJson;
  if (spec.model?.type !== "BPE") throw new UserError(`${tokenizerJsonPath}: model.type is ${spec.model?.type}, expected BPE`);
  if (spec.model.byte_fallback) throw new UserError(`${tokenizerJsonPath}: byte_fallback BPE (SentencePiece style) is not supported`);
  const normalizerType = spec.normalizer?.type;
  if (normalizerType !== undefined && normalizerType !== "NFC")
    throw new UserError(`${tokenizerJsonPath}: normalizer ${normalizerType} is not supported (only none or NFC)`);
  const pattern = splitPattern(spec.pre_tokenizer, tokenizerJsonPath);

  const vocab = spec.model.vocab;
  let maxId = 0;
  for (const id of Object.values(vocab)) if (id > maxId) maxId = id;
  for (const added of spec.added_tokens) if (added.id > maxId) maxId = added.id;
  const lengthTable = new Uint16Array(maxId + 1);
  const ranks = tiktokenRanks(vocab, lengthTable, tokenizerJsonPath);
  for (const added of spec.added_tokens) lengthTable[added.id] = Buffer.byteLength(added.content);
  return {
    pattern,
    nfc: normalizerType === "NFC",
    maxId,
    added: spec.added_tokens.map((added) => [added.content, added.id]),
    ranks,
    lengths: Buffer.from(lengthTable.buffer, lengthTable.byteOffset, lengthTable.byteLength).toString("base64"),
  };
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
  const { pattern, ranks, maxId } = compiled;
  const lengthBytes = Buffer.from(compiled.lengths, "base64");
  const lengthTable = new Uint16Array(lengthBytes.buffer.slice(lengthBytes.byteOffset, lengthBytes.byteOffset + lengthBytes.byteLength));
  const addedTokens = new Map(compiled.added);
  const addedById = new Map(compiled.added.map(([content, id]) => [id, content]));

  const { core, encodeOrdinary } = tiktokenEncoder(ranks, Object.fromEntries(addedTokens), pattern, { pieceCache });
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
function tiktokenRanks(vocab: Record<string, number>, lengthTable: Uint16Array, tokenizerJsonPath: string): string {
  const toByte = byteLevelDecoder();
  const scratch = Buffer.alloc(1024);
  const lines: string[] = [];
  for (const token in vocab) {
    const id = vocab[token] as number;
    if (token.length > scratch.length) throw new UserError(`${tokenizerJsonPath}: vocab token of ${token.length} characters is too long`);
    for (let i = 0; i < token.length; i++) {
      const code = token.charCodeAt(i);
      const byte = code < toByte.length ? (toByte[code] as number) : -1;
      if (byte < 0) throw new UserError(`${tokenizerJsonPath}: vocab token ${JSON.stringify(token)} is not byte-level`);
      scratch[i] = byte;
    }
    lines.push(`${scratch.toString("base64", 0, token.length)} ${id}`);
    lengthTable[id] = token.length;
  }
  return lines.join("\n");
}
