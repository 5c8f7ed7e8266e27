/**
 * The text form's rule for special-token literals (`messages` column, `export swift`).
 *
 * The shards encode message contents as plain text: a `<|im_start|>` printed by a tool is the
 * bytes `<`, `|`, `im`, … never the control token. A trainer that renders and tokenizes the text
 * form again (ms-swift, LLaMA-Factory, `apply_chat_template` + the tokenizer) would split that
 * literal out as the control token (an injection), and Qwen3's template would cut an assistant
 * message at a literal `</think>`. No text can avoid both and still re-tokenize to the shards'
 * ids: byte-level BPE is lossless, so any text that tokenizes to those ids is byte for byte the
 * original, literal included. So the text form neutralizes each literal, reversibly:
 *
 *   rule `lwm-zwj/1`: in message contents, every occurrence of a literal L, written as its first
 *   character, k ≥ 0 ZERO WIDTH JOINERs (U+200D), then the rest of L, gets one more U+200D
 *   after its first character (`<|im_start|>` → `<\u200D|im_start|>`). Un-escaping removes one
 *   U+200D from every such occurrence with k ≥ 1, which gives back the text exactly. Text with
 *   no literal and no escaped literal is unchanged.
 *
 * The literals are the tokenizer's added tokens (every string its trainer-side tokenizer splits
 * out) and the tags its chat template tests contents for (`'</think>' in content`,
 * `.startswith('<tool_response>')`, …). The rule is sound when each literal is at least two
 * characters, holds no U+200D, and no literal's first character occurs inside a literal (then
 * occurrences never overlap, the escaped text holds no literal, and un-escaping finds exactly
 * the escaped occurrences); literals that break this (a one-character added token, a run of
 * spaces) are `unescapable`: text holding one cannot be neutralized, and the export refuses it.
 */
export const TEXT_RULE_ID = "lwm-zwj/1";
const ZWJ = "\u200D";

export interface SpecialLiterals {
  rule: typeof TEXT_RULE_ID;
  /** Neutralized by the rule, longest first. */
  escaped: string[];
  /** Literals the rule cannot neutralize: a content holding one is refused by the export. */
  unescapable: string[];
}

const firstCodePoint = (text: string): string => String.fromCodePoint(text.codePointAt(0) as number);
const regexEscape = (text: string): string => text.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&");

/**
 * Tag-like strings a chat template compares message contents against: string literals left of
 * ` in ` or passed to `startswith`/`endswith`/`split`/… (Qwen3: `</think>`, `<think>`,
 * `<tool_response>`, `</tool_response>`). Only tags (`<…>` without spaces) count: a template's
 * `'tool_calls' in message` tests a key, not the text.
 */
export function templateTestedTags(template: string): string[] {
  const literal = String.raw`(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")`;
  const patterns = [
    new RegExp(`${literal}\\s+(?:not\\s+)?in\\s`, "g"),
    new RegExp(`\\.(?:startswith|endswith|split|rsplit|replace|find|rfind|index|rindex|count|partition|rpartition)\\(\\s*${literal}`, "g"),
  ];
  const tags = new Set<string>();
  for (const pattern of patterns) {
    for (const match of template.matchAll(pattern)) {
      const value = (match[1] ?? match[2] ?? "").trim();
      if (/^<[^<>\s]+>$/.test(value)) tags.add(value);
    }
  }
  return [...tags].sort();
}

/** The literal set for a tokenizer's added tokens and a chat template, split into escaped / unescapable. */
export function specialLiterals(addedTokens: Iterable<string>, template = ""): SpecialLiterals {
  const candidates = [...new Set([...addedTokens, ...templateTestedTags(template)])].filter((literal) => literal !== "");
  const unescapable = new Set(candidates.filter((literal) => [...literal].length < 2 || literal.includes(ZWJ)));
  let escaped = candidates.filter((literal) => !unescapable.has(literal));
  // While some literal holds a literal's first character after its own first one, drop the one
  // that clashes with the most literals (a stray `ab<c>` among `<…>` tokens goes, not every `<…>`).
  for (;;) {
    const clashes = (literal: string) => {
      const inner = new Set([...literal].slice(1));
      return escaped.filter((other) => inner.has(firstCodePoint(other))).length;
    };
    const worst = escaped
      .map((literal) => ({ literal, clashes: clashes(literal) }))
      .filter((entry) => entry.clashes > 0)
      .sort((a, b) => b.clashes - a.clashes || b.literal.length - a.literal.length || (a.literal < b.literal ? -1 : 1))[0];
    if (!worst) break;
    unescapable.add(worst.literal);
    escaped = escaped.filter((literal) => literal !== worst.literal);
  }
  const order = (a: string, b: string) => b.length - a.length || (a < b ? -1 : a > b ? 1 : 0);
  return { rule: TEXT_RULE_ID, escaped: escaped.sort(order), unescapable: [...unescapable].sort(order) };
}

/** Applies and reverses the rule for one literal set. */
export class LiteralEscaper {
  readonly literals: SpecialLiterals;
  /** First character, any U+200D run, rest: a literal or an escaped one (k ≥ 0). */
  private readonly anyRun: RegExp | undefined;
  /** The same with at least one U+200D: an escaped literal (k ≥ 1). */
  private readonly escapedRun: RegExp | undefined;

  constructor(literals: SpecialLiterals) {
    if (literals.rule !== TEXT_RULE_ID) throw new Error(`unknown text rule ${literals.rule}; this lwm-data knows ${TEXT_RULE_ID}`);
    this.literals = literals;
    const alternatives = (run: string) =>
      literals.escaped.map((literal) => {
        const first = firstCodePoint(literal);
        return `${regexEscape(first)}${run}${regexEscape(literal.slice(first.length))}`;
      });
    if (literals.escaped.length > 0) {
      this.anyRun = new RegExp(alternatives(`${ZWJ}*`).join("|"), "gu");
      this.escapedRun = new RegExp(alternatives(`${ZWJ}+`).join("|"), "gu");
    }
  }

  /** The neutralized text: one more U+200D after the first character of every (escaped) literal. */
  escape(text: string): string {
    if (!this.anyRun) return text;
    return text.replace(this.anyRun, (match) => {
      const first = firstCodePoint(match);
      return `${first}${ZWJ}${match.slice(first.length)}`;
    });
  }

  /** The original text of an escaped one: one U+200D less in every escaped literal. */
  unescape(text: string): string {
    if (!this.escapedRun) return text;
    return text.replace(this.escapedRun, (match) => {
      const first = firstCodePoint(match);
      return `${first}${match.slice(first.length + ZWJ.length)}`;
    });
  }

  /** Whether the rule changed this (escaped) text, i.e. its original held a literal or an escaped-looking one. */
  hasEscapes(text: string): boolean {
    if (!this.escapedRun) return false;
    this.escapedRun.lastIndex = 0;
    return this.escapedRun.test(text);
  }

  /**
   * The literals an escaped text neutralized (occurrences with exactly one U+200D: the original
   * held the literal itself, not an escaped-looking string), distinct, in order of appearance.
   */
  neutralizedIn(text: string): string[] {
    if (!this.escapedRun) return [];
    const found = new Set<string>();
    for (const match of text.matchAll(this.escapedRun)) {
      const original = this.unescape(match[0]);
      if (!original.includes(ZWJ)) found.add(original);
    }
    return [...found];
  }

  /** The distinct literals (escaped set) in an original text, in order of first appearance. */
  literalsIn(text: string): string[] {
    if (!this.anyRun) return [];
    const found = new Set<string>();
    for (const match of text.matchAll(this.anyRun)) found.add(match[0].replaceAll(ZWJ, ""));
    return [...found];
  }

  /** The unescapable literals a text holds. */
  unescapableIn(text: string): string[] {
    return this.literals.unescapable.filter((literal) => text.includes(literal));
  }
}

const escapers = new WeakMap<object, Map<string, LiteralEscaper>>();

/**
 * The escaper for a tokenizer (its added tokens) and a chat template, built once per pair: the
 * pipeline asks for it on every record.
 */
export function escaperFor(tokenizer: { addedTokens: ReadonlyMap<string, number> }, template: string): LiteralEscaper {
  const byTemplate = escapers.get(tokenizer) ?? new Map<string, LiteralEscaper>();
  escapers.set(tokenizer, byTemplate);
  const escaper = byTemplate.get(template) ?? new LiteralEscaper(specialLiterals(tokenizer.addedTokens.keys(), template));
  byTemplate.set(template, escaper);
  return escaper;
}

const extended = new WeakMap<LiteralEscaper, Map<string, LiteralEscaper>>();

/**
 * The escaper with more literals: strings a trainer reads as structure although the tokenizer has
 * no token for them (OpenRLHF splits contents on `<image>`). Built once per escaper and set.
 */
export function withLiterals(escaper: LiteralEscaper, more: readonly string[]): LiteralEscaper {
  const key = more.join("\u0000");
  const bySet = extended.get(escaper) ?? new Map<string, LiteralEscaper>();
  extended.set(escaper, bySet);
  const { escaped, unescapable } = escaper.literals;
  const made = bySet.get(key) ?? new LiteralEscaper(specialLiterals([...escaped, ...unescapable, ...more]));
  bySet.set(key, made);
  return made;
}

/** The shard metadata entries that record the rule and its literals (`lwm_data.text_rule`, `.text_literals`). */
export function textRuleMetadata(escaper: LiteralEscaper): { text_rule: string; text_literals: string } {
  const { escaped, unescapable } = escaper.literals;
  return { text_rule: TEXT_RULE_ID, text_literals: JSON.stringify({ escaped, unescapable }) };
}

/** The escaper a shard's `lwm_data` metadata describes; undefined when the shard predates the rule. */
export function escaperFromMetadata(metadata: Record<string, unknown>, where: string): LiteralEscaper | undefined {
  if (metadata.text_rule === undefined) return undefined;
  if (metadata.text_rule !== TEXT_RULE_ID)
    throw new Error(`${where}: text rule ${String(metadata.text_rule)} is not one this lwm-data knows (${TEXT_RULE_ID})`);
  const parsed = JSON.parse(String(metadata.text_literals ?? "null")) as { escaped?: unknown; unescapable?: unknown } | null;
  const strings = (value: unknown) => Array.isArray(value) && value.every((item) => typeof item === "string");
  if (!parsed || !strings(parsed.escaped) || !strings(parsed.unescapable))
    throw new Error(`${where}: lwm_data.text_literals is not {"escaped": [...], "unescapable": [...]}`);
  return new LiteralEscaper({ rule: TEXT_RULE_ID, escaped: parsed.escaped as string[], unescapable: parsed.unescapable as string[] });
}

/** Messages with every content escaped (the `messages` column). */
export function escapeMessages<M extends { content: string }>(messages: readonly M[], escaper: LiteralEscaper): M[] {
  return messages.map((message) => {
    const content = escaper.escape(message.content);
    return content === message.content ? message : { ...message, content };
  });
}
