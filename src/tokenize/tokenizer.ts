/**
 * What the pipeline needs from a tokenizer. Text is only ever encoded as plain text;
 * special tokens enter a sequence by id, where the chat template puts them, so tool output
 * that contains `<|im_start|>` can never become a control token.
 */
export interface TokenizerIdentity {
  /** e.g. `qwen3`, `tiktoken:o200k_base`, or the tokenizer.json path. */
  name: string;
  /** sha256 of the vocabulary and added tokens: two runs agree on ids iff this agrees. */
  vocabSha256: string;
  /** Highest token id + 1. */
  vocabSize: number;
  /** Where the vocabulary was loaded from. */
  source: string;
}

export interface Tokenizer {
  identity: TokenizerIdentity;
  /** Added/special tokens recognised in template text, by their literal content. */
  addedTokens: ReadonlyMap<string, number>;
  /** Chat template text shipped with the tokenizer (tokenizer_config.json or chat_template.jinja), if any. */
  chatTemplate?: string;
  /** The file the chat template was read from. */
  chatTemplateSource?: string;
  /**
   * The special tokens a chat template sees (`bos_token`, `eos_token`, …), from
   * tokenizer_config.json, as `transformers`' `apply_chat_template` passes them.
   */
  templateVariables?: Readonly<Record<string, string | readonly string[]>>;
  /** tokenizer_config.json's `add_bos_token`: encoded texts start with `bos_token` (DeepSeek-V3, Mistral). */
  addBosToken?: boolean;
  /** Applies the tokenizer's normalizer (e.g. NFC for Qwen) to plain text. */
  normalize(text: string): string;
  /** Encodes already-normalized plain text; added-token strings inside it stay plain text. */
  encodeOrdinary(text: string): Uint32Array;
  /** UTF-8 length in bytes of a token's text, used to map tokens back onto text spans. */
  tokenByteLength(id: number): number;
  decodeBytes(ids: ArrayLike<number>): Uint8Array;
  /** The token's literal text when it is an added/special token. */
  addedTokenContent(id: number): string | undefined;
}

const utf8 = new TextDecoder("utf-8", { fatal: false });

export function decodeText(tokenizer: Tokenizer, ids: ArrayLike<number>): string {
  return utf8.decode(tokenizer.decodeBytes(ids));
}
