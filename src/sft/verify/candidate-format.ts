import type { VerifierResult } from "./result.ts";

/**
 * The shape of a teacher's answer: `<think>reasoning</think>` then
 * `<predicted_observation>prediction</predicted_observation>`, whitespace around the blocks and
 * nothing else. Anything more (a second block, a stray closing tag, a chat control string,
 * prose outside the tags) would be trained on verbatim, so it is a problem, not noise.
 *
 * The rule is about the answer's structure, not about what the blocks quote. Inside the two
 * blocks, a tag or control string (`<|im_end|>`, `</think>`, `<predicted_observation>`) is
 * content when the real observation or the prompt holds that same string: `cat` of a ChatML
 * file predicts `<|im_end|>` because the file has it. The sample tokenizes the blocks' texts as
 * content (never scanned for added tokens) and its text form neutralizes the literal
 * (src/export/special-literals.ts), so a quoted literal is trained on as the text it is. One the
 * observation and prompt do not hold is still a problem (a teacher writing chat structure).
 * Quoting needs the frame: the first `<think>` opens the thinking, the first `</think>` after it
 * that only whitespace separates from a `<predicted_observation>` ends it, and the last
 * `</predicted_observation>` ends the prediction; nothing outside the frame is ever quoted.
 */

export interface ParsedCandidate {
  /** The first `<think>` block's text, trimmed; absent when there is no closed one. */
  think?: string;
  /** The first closed `<predicted_observation>` block's text, less the newline that opens and the one that closes it. */
  prediction?: string;
  /** What is wrong with the shape, one entry per problem; empty when well-formed. */
  problems: string[];
}

/** Configurable length bounds, in UTF-16 code units (`String.length`, like `max_observation_chars`). */
export interface LengthBounds {
  thinkMinChars: number;
  thinkMaxChars: number;
  predictionMinChars: number;
  predictionMaxChars: number;
}

type TokenKind = "think-open" | "think-close" | "prediction-open" | "prediction-close" | "control" | "miscased";

interface Token {
  kind: TokenKind;
  text: string;
  index: number;
  end: number;
}

// Our four tags (any case: `<Think>` is a misspelling, not prose), and chat control strings:
// ChatML/Llama `<|im_end|>`, `<|eot_id|>`, and DeepSeek's full-width `<｜end▁of▁sentence｜>`.
const TOKEN = /<\/?(?:think|predicted_observation)>|<\|[^|<>\n]{0,64}\|>|<｜[^｜<>\n]{0,64}｜>/gi;
const EXACT: Record<string, TokenKind> = {
  "<think>": "think-open",
  "</think>": "think-close",
  "<predicted_observation>": "prediction-open",
  "</predicted_observation>": "prediction-close",
};
const EXPECTED_ORDER: TokenKind[] = ["think-open", "think-close", "prediction-open", "prediction-close"];

function tokenize(text: string): Token[] {
  return [...text.matchAll(TOKEN)].map((m) => {
    const kind = EXACT[m[0]] ?? (m[0].startsWith("<|") || m[0].startsWith("<｜") ? "control" : "miscased");
    return { kind, text: m[0], index: m.index, end: m.index + m[0].length };
  });
}

/**
 * The answer's frame when it has one: the first `<think>`, the first `</think>` after it that only
 * whitespace separates from a `<predicted_observation>`, and the last `</predicted_observation>`;
 * the positions (in `tokens`) of those four tags. Tokens outside the frame are never quoted.
 */
function frame(text: string, tokens: Token[]): [number, number, number, number] | undefined {
  const first = tokens.findIndex((token) => token.kind === "think-open");
  const last = tokens.findLastIndex((token) => token.kind === "prediction-close");
  if (first < 0) return undefined;
  for (let i = first + 1; i + 1 < last; i++) {
    const [close, open] = [tokens[i] as Token, tokens[i + 1] as Token];
    if (close.kind === "think-close" && open.kind === "prediction-open" && text.slice(close.end, open.index).trim() === "")
      return [first, i, i + 1, last];
  }
  return undefined;
}

/**
 * The tokens that make the answer's structure: all of them, less those inside the frame's
 * blocks whose text one of the `quotable` texts holds (quoted content, not structure).
 */
function structuralTokens(text: string, tokens: Token[], quotable: readonly string[]): Token[] {
  const found = quotable.length > 0 ? frame(text, tokens) : undefined;
  if (!found) return tokens;
  const [first, thinkClose, predictionOpen, last] = found;
  const held = new Map<string, boolean>();
  const quoted = (token: Token) => {
    let value = held.get(token.text);
    if (value === undefined) {
      value = quotable.some((source) => source.includes(token.text));
      held.set(token.text, value);
    }
    return value;
  };
  return tokens.filter((token, i) => {
    const inside = (i > first && i < thinkClose) || (i > predictionOpen && i < last);
    return !(inside && quoted(token));
  });
}

function excerpt(text: string, max = 40): string {
  const flat = text.trim().replace(/\s+/g, " ");
  return JSON.stringify(flat.length > max ? `${flat.slice(0, max)}…` : flat);
}

/** Text between the first `open` token and the first `close` token after it, if both exist. */
function block(text: string, tokens: Token[], open: TokenKind, close: TokenKind): string | undefined {
  const start = tokens.find((t) => t.kind === open);
  const end = start && tokens.find((t) => t.kind === close && t.index >= start.end);
  return start && end ? text.slice(start.end, end.index) : undefined;
}

function countProblems(tokens: Token[]): string[] {
  const problems: string[] = [];
  const n = (kind: TokenKind) => tokens.filter((t) => t.kind === kind).length;
  const expectPair = (open: TokenKind, close: TokenKind, tag: string) => {
    const [opens, closes] = [n(open), n(close)];
    if (opens === 0 && closes === 0) problems.push(`no <${tag}> block`);
    else if (opens === 0) problems.push(`</${tag}> without <${tag}>`);
    else if (closes === 0) problems.push(`<${tag}> is never closed`);
    if (opens > 1) problems.push(`${opens} <${tag}> tags (expected exactly one)`);
    if (closes > 1) problems.push(`${closes} </${tag}> tags (expected exactly one)`);
  };
  expectPair("think-open", "think-close", "think");
  expectPair("prediction-open", "prediction-close", "predicted_observation");
  for (const t of tokens) {
    if (t.kind === "control") problems.push(`control string ${t.text} at char ${t.index}`);
    if (t.kind === "miscased") problems.push(`unknown tag ${t.text} at char ${t.index}`);
  }
  return problems;
}

/** With exactly one of each tag: their order, and that only whitespace lies outside the blocks. */
function layoutProblems(text: string, tokens: Token[]): string[] {
  const tags = tokens.filter((t) => EXPECTED_ORDER.includes(t.kind));
  if (tags.some((t, i) => t.kind !== EXPECTED_ORDER[i])) {
    const seen = tags.map((t) => t.text).join(" … ");
    return [`tags out of order: ${seen} (expected <think>…</think> then <predicted_observation>…</predicted_observation>)`];
  }
  const [thinkOpen, thinkClose, predictionOpen, predictionClose] = tags as [Token, Token, Token, Token];
  const outside = [text.slice(0, thinkOpen.index), text.slice(thinkClose.end, predictionOpen.index), text.slice(predictionClose.end)]
    // Control strings and misspelt tags there are already reported as such.
    .map((s) => s.replace(TOKEN, ""))
    .filter((s) => s.trim() !== "");
  return outside.map((s) => `text outside the tags: ${excerpt(s)}`);
}

/**
 * Reads an answer. `quotable`: the texts whose tags and control strings the blocks may quote
 * (the real observation, the prompt's contents); without it, every tag and control string is
 * structure.
 */
export function parseCandidate(text: string, quotable: readonly string[] = []): ParsedCandidate {
  const tokens = structuralTokens(text, tokenize(text), quotable);
  const problems = countProblems(tokens);
  const oneOfEach = EXPECTED_ORDER.every((kind) => tokens.filter((t) => t.kind === kind).length === 1);
  if (oneOfEach) problems.push(...layoutProblems(text, tokens));
  const think = block(text, tokens, "think-open", "think-close")?.trim();
  if (think === "") problems.push("<think> is empty");
  // The newlines that lay the block out are not part of the observation.
  const prediction = block(text, tokens, "prediction-open", "prediction-close")
    ?.replace(/^\r?\n/, "")
    .replace(/\r?\n$/, "");
  return { ...(think !== undefined ? { think } : {}), ...(prediction !== undefined ? { prediction } : {}), problems };
}

function lengthProblem(what: string, length: number, min: number, max: number): string[] {
  if (length < min) return [`${what} is ${length} chars, under the ${min}-char minimum`];
  if (length > max) return [`${what} is ${length} chars, over the ${max}-char maximum`];
  return [];
}

/** The `format` rule: score 1 when well-formed and within the length bounds, else 0. */
export function formatRule(parsed: ParsedCandidate, bounds: LengthBounds, minScore = 1): VerifierResult {
  const { think, prediction } = parsed;
  const problems = [
    ...parsed.problems,
    // An empty think is already reported as such; its length would only repeat it.
    ...(think ? lengthProblem("<think>", think.length, bounds.thinkMinChars, bounds.thinkMaxChars) : []),
    ...(prediction !== undefined
      ? lengthProblem("<predicted_observation>", prediction.length, bounds.predictionMinChars, bounds.predictionMaxChars)
      : []),
  ];
  const score = problems.length === 0 ? 1 : 0;
  const reason =
    problems.length === 0
      ? `one <think> (${think?.length} chars) then one <predicted_observation> (${prediction?.length} chars)`
      : problems.join("; ");
  return { rule: "format", score, passed: score >= minScore, reason };
}
