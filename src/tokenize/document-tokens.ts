import { UserError } from "../core/errors.ts";
import type { Tokenizer } from "./tokenizer.ts";

/** The special tokens around a plain-text document (CPT text sources): no chat template. */
export interface DocumentTokens {
  /** Ids before the text: the BOS token where the tokenizer adds one (`add_bos_token`), else none. */
  prefix: number[];
  /** The end-of-document token, after the text: the separator the model family pre-trains with. */
  end: number;
  endText: string;
}

/**
 * Pre-training separators by family, tried in order: `<|endoftext|>` (Qwen, GPT-2 … o200k, GPT-OSS)
 * and `<|end_of_text|>` (Llama 3). A chat model's `eos_token` is often its end-of-turn marker
 * (`<|im_end|>`, `<|eot_id|>`), not the document separator, so it is only the last resort
 * (DeepSeek-V3's `<｜end▁of▁sentence｜>`, Mistral's `</s>`).
 */
const SEPARATORS = ["<|endoftext|>", "<|end_of_text|>"];

const cache = new WeakMap<Tokenizer, DocumentTokens>();

export function documentTokens(tokenizer: Tokenizer): DocumentTokens {
  const known = cache.get(tokenizer);
  if (known) return known;
  const eos = tokenizer.templateVariables?.eos_token;
  const candidates = [...SEPARATORS, ...(typeof eos === "string" ? [eos] : [])];
  const endText = candidates.find((text) => tokenizer.addedTokens.has(text));
  if (endText === undefined)
    throw new UserError(
      `tokenizer ${tokenizer.identity.name} has no end-of-document token (none of ${candidates.join(", ")} is among its special tokens): text sources need one`,
    );
  const bos = tokenizer.templateVariables?.bos_token;
  const bosId = tokenizer.addBosToken && typeof bos === "string" ? tokenizer.addedTokens.get(bos) : undefined;
  const tokens: DocumentTokens = { prefix: bosId !== undefined ? [bosId] : [], end: tokenizer.addedTokens.get(endText) as number, endText };
  cache.set(tokenizer, tokens);
  return tokens;
}
