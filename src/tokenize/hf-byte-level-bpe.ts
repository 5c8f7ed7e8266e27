import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { Tiktoken } from "tiktoken/lite";
import { UserError } from "../core/errors.ts";
import type { Tokenizer } from "./tokenizer.ts";

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

/** GPT-2's printable stand-ins for the 256 byte values, as used in byte-level vocabularies. */
function byteLevelDecoder(): Map<string, number> {
  const bytes: number[] = [];
  const add = (from: number, to: number) => {
    for (let b = from; b <= to; b++) bytes.push(b);
  };
  add(0x21, 0x7e);
  add(0xa1, 0xac);
  add(0xae, 0xff);
  const chars = bytes.map((b) => b);
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    if (!bytes.includes(b)) {
      bytes.push(b);
      chars.push(256 + extra);
      extra += 1;
    }
  }
  return new Map(chars.map((codePoint, i) => [String.fromCodePoint(codePoint), bytes[i] as number]));
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

export function loadHfByteLevelBpe(
  tokenizerJsonPath: string,
  name: string,
  options: { chatTemplate?: string | undefined; sourceLabel?: string } = {},
): Tokenizer {
  const { chatTemplate, sourceLabel = tokenizerJsonPath } = options;
  const raw = readFileSync(tokenizerJsonPath);
  const spec = JSON.parse(raw.toString("utf8")) as HfTokenizerJson;
  if (spec.model?.type !== "BPE") throw new UserError(`${tokenizerJsonPath}: model.type is ${spec.model?.type}, expected BPE`);
  if (spec.model.byte_fallback) throw new UserError(`${tokenizerJsonPath}: byte_fallback BPE (SentencePiece style) is not supported`);
  const normalizerType = spec.normalizer?.type;
  if (normalizerType !== undefined && normalizerType !== "NFC")
    throw new UserError(`${tokenizerJsonPath}: normalizer ${normalizerType} is not supported (only none or NFC)`);
  const pattern = splitPattern(spec.pre_tokenizer, tokenizerJsonPath);

  const toByte = byteLevelDecoder();
  const vocabEntries = Object.entries(spec.model.vocab);
  let maxId = 0;
  const lines: string[] = [];
  const byteLengths = new Map<number, number>();
  for (const [token, id] of vocabEntries) {
    const bytes = Uint8Array.from(
      Array.from(token, (ch) => {
        const b = toByte.get(ch);
        if (b === undefined) throw new UserError(`${tokenizerJsonPath}: vocab token ${JSON.stringify(token)} is not byte-level`);
        return b;
      }),
    );
    lines.push(`${Buffer.from(bytes).toString("base64")} ${id}`);
    byteLengths.set(id, bytes.length);
    if (id > maxId) maxId = id;
  }
  const addedTokens = new Map<string, number>();
  const addedById = new Map<number, string>();
  for (const added of spec.added_tokens) {
    addedTokens.set(added.content, added.id);
    addedById.set(added.id, added.content);
    byteLengths.set(added.id, Buffer.byteLength(added.content));
    if (added.id > maxId) maxId = added.id;
  }
  const lengthTable = new Int32Array(maxId + 1).fill(-1);
  for (const [id, length] of byteLengths) lengthTable[id] = length;

  const core = new Tiktoken(lines.join("\n"), Object.fromEntries(addedTokens), pattern);
  const normalize = normalizerType === "NFC" ? (text: string) => text.normalize("NFC") : (text: string) => text;

  return {
    identity: {
      name,
      vocabSha256: createHash("sha256").update(raw).digest("hex"),
      vocabSize: maxId + 1,
      source: sourceLabel,
    },
    addedTokens,
    ...(chatTemplate !== undefined ? { chatTemplate } : {}),
    normalize,
    encodeOrdinary: (text) => core.encode_ordinary(text),
    tokenByteLength(id) {
      const length = lengthTable[id];
      if (length === undefined || length < 0) throw new Error(`token id ${id} is not in the vocabulary`);
      return length;
    },
    decodeBytes: (ids) => core.decode(Uint32Array.from(ids)),
    addedTokenContent: (id) => addedById.get(id),
  };
}
