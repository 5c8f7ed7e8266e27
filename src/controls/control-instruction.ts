import type { Domain, Trajectory } from "../core/trajectory.ts";
import type { ChatMessage } from "../sft/teacher/chat-types.ts";
import type { TeacherClient } from "../sft/teacher/openai-client.ts";
import { visibleAnswer } from "../sft/teacher/teacher-answer.ts";
import { CONTROL_LABELS, type ControlLabel, type ControlLabelName } from "./control-label.ts";
import { kindSentence, NORMAL_INSTRUCTION, SENTENCE_ORDER } from "./instruction-templates.ts";

export { NORMAL_INSTRUCTION };

/**
 * Hindsight control instructions (issue 24, parts 2 and 3): the condition a trajectory's
 * environment showed, stated in plain English from its labels, and the checks that keep such an
 * instruction faithful: every claim tied to an evidence span the detector still finds there, every
 * stated fact read from that evidence, and no observation text copied beyond the evidence needed.
 */

/** One thing an instruction states, tied to its evidence: `observation[start:end]` (code points) of `turn`. */
export interface ControlClaim {
  label: ControlLabelName;
  turn: number;
  start: number;
  end: number;
}

/** One sentence: the labels of one kind it states, and nothing else. */
export interface InstructionSentence {
  label: ControlLabelName;
  text: string;
  claims: ControlClaim[];
}

export interface ControlInstruction {
  /** "controls": states detected edge cases; "normal": the history shows none ("behave normally"). */
  kind: "controls" | "normal";
  /**
   * What goes into the world-model system prompt: the sentences joined by one space, or, when
   * `rephrased`, the teacher's wording of them (`rephraseInstruction`).
   */
  text: string;
  /** Set when `text` is a teacher's rephrasing of the template sentences, checked by `rephraseProblems`. */
  rephrased?: true;
  /** Every sentence's claims, in sentence order. */
  claims: ControlClaim[];
  sentences: InstructionSentence[];
}

/** The detectors, injected: a trajectory's labels with code-point spans (src/controls/detect-controls.ts). */
export type DetectControls = (trajectory: Trajectory) => readonly ControlLabel[];

export interface CheckOptions {
  /** An instruction may not share this many consecutive characters with an observation, evidence aside (default 24). */
  leakChars?: number;
  /** Of a claim's evidence, only the first and the last line, each up to this many code points, may be quoted (default 80). */
  quoteCap?: number;
}

export const DEFAULT_LEAK_CHARS = 24;
export const DEFAULT_QUOTE_CAP = 80;

// ---------------------------------------------------------------------------------------------
// Code points

const SURROGATE = /[\uD800-\uDFFF]/;

/** The UTF-16 index of code point `cp` in `text` (text.length when cp is past the end). */
function utf16Index(text: string, cp: number): number {
  if (!SURROGATE.test(text)) return Math.min(cp, text.length);
  let index = 0;
  for (let i = 0; i < cp && index < text.length; i++) {
    const code = text.charCodeAt(index);
    index += code >= 0xd800 && code <= 0xdbff && index + 1 < text.length ? 2 : 1;
  }
  return index;
}

/** The length of `text` in Unicode code points (as Python's len). */
export function codePointLength(text: string): number {
  if (!SURROGATE.test(text)) return text.length;
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** `text[start:end]` in code points, as Python slices a str. */
export function codePointSlice(text: string, start: number, end: number): string {
  return text.slice(utf16Index(text, start), utf16Index(text, end));
}

// ---------------------------------------------------------------------------------------------
// Building

const KNOWN_LABELS = new Set<string>(CONTROL_LABELS);

const claimKey = (c: ControlClaim): string => `${c.label}\u0000${c.turn}\u0000${c.start}\u0000${c.end}`;
const toClaim = (label: ControlLabel): ControlClaim => ({ label: label.label, turn: label.turn, start: label.start, end: label.end });
const byPosition = (a: ControlLabel, b: ControlLabel): number => a.turn - b.turn || a.start - b.start || a.end - b.end;

/** Why a claim's span is not a span of the trajectory, or undefined. */
function spanProblem(trajectory: Trajectory, claim: ControlClaim): string | undefined {
  if (!KNOWN_LABELS.has(claim.label)) return `unknown label ${JSON.stringify(claim.label)}`;
  if (!Number.isInteger(claim.turn) || claim.turn < 0 || claim.turn >= trajectory.turns.length) {
    return `turn ${claim.turn} is not a turn of the trajectory (${trajectory.turns.length} turns)`;
  }
  const length = codePointLength(observationOf(trajectory, claim.turn));
  if (!Number.isInteger(claim.start) || !Number.isInteger(claim.end) || claim.start < 0 || claim.end <= claim.start || claim.end > length) {
    return `span [${claim.start}, ${claim.end}) is not inside the observation (${length} code points)`;
  }
  return undefined;
}

/** Why a label cannot be stated, or undefined when its span holds exactly its evidence. */
function labelProblem(trajectory: Trajectory, label: ControlLabel): string | undefined {
  const problem = spanProblem(trajectory, label);
  if (problem !== undefined) return problem;
  if (codePointSlice(observationOf(trajectory, label.turn), label.start, label.end) !== label.evidence) {
    return "the observation's text in the span is not the label's evidence";
  }
  return undefined;
}

const observationOf = (trajectory: Trajectory, turn: number): string => (trajectory.turns[turn] as Trajectory["turns"][number]).observation;

/**
 * The hindsight instruction for a trajectory's labels: one sentence per label kind, in the fixed
 * order of `CONTROL_LABELS`, each claiming exactly the labels it states. Labels whose span does
 * not hold their evidence are never stated. Undefined when no label can be stated.
 */
export function buildInstruction(trajectory: Trajectory, labels: readonly ControlLabel[]): ControlInstruction | undefined {
  const seen = new Set<string>();
  const valid: ControlLabel[] = [];
  for (const label of labels) {
    const key = claimKey(label);
    if (seen.has(key) || labelProblem(trajectory, label) !== undefined) continue;
    seen.add(key);
    valid.push(label);
  }
  valid.sort(byPosition);
  const sentences: InstructionSentence[] = [];
  for (const kind of SENTENCE_ORDER) {
    const ofKind = valid.filter((label) => label.label === kind);
    const text = kindSentence(trajectory.domain, kind, ofKind);
    if (text !== undefined) sentences.push({ label: kind, text, claims: ofKind.map(toClaim) });
  }
  if (sentences.length === 0) return undefined;
  return assemble("controls", sentences);
}

/** "Behave normally", for a history in which the detectors find nothing. */
export function normalInstruction(domain: Domain): ControlInstruction {
  return { kind: "normal", text: NORMAL_INSTRUCTION[domain], claims: [], sentences: [] };
}

function assemble(kind: ControlInstruction["kind"], sentences: InstructionSentence[]): ControlInstruction {
  return { kind, text: sentences.map((s) => s.text).join(" "), claims: sentences.flatMap((s) => s.claims), sentences };
}

// ---------------------------------------------------------------------------------------------
// Checking

/**
 * The ways `instruction` is unfaithful to `trajectory` (empty: faithful):
 * - its text is its sentences, its claims are its sentences' claims;
 * - every claim's span lies inside its turn's observation, and `detect` still finds that label at
 *   that span (so an observation edited until the edge case is gone fails the check);
 * - every sentence says exactly what the template says for the re-detected labels it claims (so a
 *   fact that changed, e.g. another Retry-After value, fails the check);
 * - no verbatim leak: the text shares fewer than `leakChars` consecutive characters with any
 *   observation (the initial one included), except text of its own claims' evidence, and of that
 *   only the first and last lines up to `quoteCap` code points (a status line, the final line of a
 *   traceback) and the facts read from it;
 * - a "normal" instruction is the domain's `NORMAL_INSTRUCTION`, and `detect` finds nothing at all.
 */
export function checkInstruction(
  instruction: ControlInstruction,
  trajectory: Trajectory,
  detect: DetectControls,
  options: CheckOptions = {},
): string[] {
  const problems: string[] = [];
  const leakChars = options.leakChars ?? DEFAULT_LEAK_CHARS;
  const quoteCap = options.quoteCap ?? DEFAULT_QUOTE_CAP;
  const detected = detect(trajectory);

  if (instruction.kind === "normal") {
    if (instruction.text !== NORMAL_INSTRUCTION[trajectory.domain])
      problems.push(`a normal instruction must read ${JSON.stringify(NORMAL_INSTRUCTION[trajectory.domain])}`);
    if (instruction.claims.length > 0 || instruction.sentences.length > 0) problems.push("a normal instruction claims nothing");
    for (const label of [...detected].sort(byPosition))
      problems.push(`"behave normally", but the ${label.label} at turn ${label.turn} [${label.start}, ${label.end}) is not normal`);
    return problems;
  }

  const joined = instruction.sentences.map((s) => s.text).join(" ");
  if (instruction.rephrased === true) problems.push(...rephraseProblems(joined, instruction.text));
  else if (instruction.text !== joined) problems.push("the text is not its sentences joined");
  const sentenceClaims = instruction.sentences.flatMap((s) => s.claims).map(claimKey);
  if (sentenceClaims.length !== instruction.claims.length || instruction.claims.some((claim, i) => claimKey(claim) !== sentenceClaims[i])) {
    problems.push("the claims are not its sentences' claims");
  }
  if (instruction.sentences.length === 0) problems.push("an instruction with no sentence states nothing");

  const found = new Map<string, ControlLabel>();
  for (const label of detected) if (!found.has(claimKey(label))) found.set(claimKey(label), label);

  const evidence: ControlLabel[] = [];
  for (const sentence of instruction.sentences) {
    if (sentence.claims.length === 0) problems.push(`sentence ${JSON.stringify(sentence.text)} claims nothing`);
    const matched: ControlLabel[] = [];
    for (const claim of sentence.claims) {
      const where = `${claim.label} at turn ${claim.turn} [${claim.start}, ${claim.end})`;
      if (claim.label !== sentence.label) {
        problems.push(`${where}: claimed by the sentence about ${sentence.label}`);
        continue;
      }
      const outside = spanProblem(trajectory, claim);
      const redetected = found.get(claimKey(claim));
      if (outside !== undefined) problems.push(`${where}: ${outside}`);
      else if (redetected === undefined) problems.push(`${where}: the observation no longer shows it (not re-detected there)`);
      else {
        const evidenceProblem = labelProblem(trajectory, redetected);
        if (evidenceProblem !== undefined) problems.push(`${where}: ${evidenceProblem}`);
        else matched.push(redetected);
      }
    }
    evidence.push(...matched);
    if (matched.length === sentence.claims.length && matched.length > 0) {
      const expected = kindSentence(trajectory.domain, sentence.label, matched);
      if (expected !== sentence.text) {
        problems.push(
          `sentence ${JSON.stringify(sentence.text)} does not state what its evidence shows: ${JSON.stringify(expected ?? "")}`,
        );
      }
    }
  }

  problems.push(...verbatimLeaks(instruction.text, observationSources(trajectory), allowedQuotes(evidence, quoteCap), leakChars));
  return problems;
}

/**
 * Detects, builds and checks in one step: the instruction when it passes `checkInstruction`, else
 * undefined with the problems. Labels come from `detect` itself, so the instruction always states
 * what the current observations show.
 */
export function faithfulInstruction(
  trajectory: Trajectory,
  detect: DetectControls,
  options: CheckOptions = {},
): { instruction: ControlInstruction | undefined; labels: readonly ControlLabel[]; problems: string[] } {
  const labels = detect(trajectory);
  const instruction = buildInstruction(trajectory, labels);
  if (instruction === undefined) return { instruction, labels, problems: [] };
  const problems = checkInstruction(instruction, trajectory, () => labels, options);
  return { instruction: problems.length === 0 ? instruction : undefined, labels, problems };
}

// ---------------------------------------------------------------------------------------------
// Verbatim leaks

/** The observations an instruction must not copy, named for messages. */
function observationSources(trajectory: Trajectory): { name: string; text: string }[] {
  const sources = trajectory.turns.map((turn, i) => ({ name: `turn ${i}'s observation`, text: turn.observation }));
  if (trajectory.initialObservation !== undefined)
    sources.unshift({ name: "the initial observation", text: trajectory.initialObservation });
  return sources;
}

/** What of a claim's evidence may be quoted: the first and the last non-empty line, each capped, and its short string facts. */
export function allowedQuotes(labels: readonly ControlLabel[], quoteCap = DEFAULT_QUOTE_CAP): string[] {
  const quotes = new Set<string>();
  const capped = (line: string): string => codePointSlice(line, 0, quoteCap);
  for (const label of labels) {
    const lines = label.evidence.split("\n").map((line) => line.trim());
    const nonEmpty = lines.filter((line) => line.length > 0);
    if (nonEmpty.length > 0) {
      quotes.add(capped(nonEmpty[0] as string));
      quotes.add(capped(nonEmpty[nonEmpty.length - 1] as string));
    }
    for (const value of Object.values(label.facts ?? {})) {
      const text = String(value).trim();
      if (text.length > 0 && codePointLength(text) <= quoteCap && label.evidence.includes(text)) quotes.add(text);
    }
  }
  return [...quotes];
}

/**
 * A piece the instruction shares with an allowed quote covers it when it is the whole quote or at
 * least this long: long enough that words the quote happens to share with other text (" the ")
 * don't break a copied stretch into short, unflagged pieces.
 */
const MIN_COVER = 12;
/** Occurrences of one piece looked at per source: enough for real text, bounded for repetitive text. */
const MAX_OCCURRENCES = 256;

/**
 * Problems for every stretch of `text` of at least `minChars` characters (UTF-16 units) that also
 * occurs in a source, apart from what the allowed quotes cover. A common substring of length
 * >= minChars holds at least one whole aligned piece of length floor(minChars / 2), so each piece
 * is searched for natively and extended both ways: fast on long observations.
 */
export function verbatimLeaks(
  text: string,
  sources: readonly { name: string; text: string }[],
  quotes: readonly string[],
  minChars = DEFAULT_LEAK_CHARS,
): string[] {
  if (text.length < minChars) return [];
  const piece = Math.max(1, Math.floor(minChars / 2));
  const leaked = new Array<string | undefined>(text.length).fill(undefined);
  for (const source of sources) {
    if (source.text.length < minChars) continue;
    for (let a = 0; a + piece <= text.length; a += piece) {
      const chunk = text.slice(a, a + piece);
      let seen = 0;
      for (let p = source.text.indexOf(chunk); p >= 0 && seen < MAX_OCCURRENCES; p = source.text.indexOf(chunk, p + 1), seen++) {
        let left = 0;
        while (a - left > 0 && p - left > 0 && text[a - left - 1] === source.text[p - left - 1]) left++;
        let right = 0;
        while (
          a + piece + right < text.length &&
          p + piece + right < source.text.length &&
          text[a + piece + right] === source.text[p + piece + right]
        )
          right++;
        if (left + piece + right >= minChars) for (let i = a - left; i < a + piece + right; i++) leaked[i] ??= source.name;
      }
    }
  }
  if (!leaked.some((name) => name !== undefined)) return [];

  // Each quote covers at most its own length of the copied text, longest shared piece first: a
  // quote may be repeated once, not stretched over repetitive text ("yyyy…") it happens to match.
  const covered = new Array<boolean>(text.length).fill(false);
  for (const quote of quotes) {
    const minCover = Math.min(quote.length, MIN_COVER);
    if (minCover < 4) continue;
    for (let budget = quote.length; budget >= minCover; ) {
      const best = longestShared(text, quote, (i) => leaked[i] !== undefined && !covered[i]);
      if (best.length < minCover) break;
      const length = Math.min(best.length, budget);
      for (let k = best.start; k < best.start + length; k++) covered[k] = true;
      budget -= length;
    }
  }

  const problems: string[] = [];
  for (let i = 0; i < text.length; ) {
    if (leaked[i] === undefined || covered[i]) {
      i++;
      continue;
    }
    let j = i;
    while (j < text.length && leaked[j] !== undefined && !covered[j]) j++;
    if (j - i >= minChars) {
      const stretch = text.slice(i, j);
      problems.push(
        `the instruction repeats ${j - i} characters of ${leaked[i]} verbatim, beyond its evidence: ${JSON.stringify(stretch.length > 60 ? `${stretch.slice(0, 57)}...` : stretch)}`,
      );
    }
    i = j;
  }
  return problems;
}

/** The longest piece of `text` (at positions `usable` allows) that is also a piece of `quote`: where it starts in `text`, and its length. */
function longestShared(text: string, quote: string, usable: (i: number) => boolean): { start: number; length: number } {
  let best = { start: 0, length: 0 };
  let previous = new Uint16Array(quote.length + 1);
  let current = new Uint16Array(quote.length + 1);
  for (let i = 1; i <= text.length; i++) {
    const ok = usable(i - 1);
    for (let q = 1; q <= quote.length; q++) {
      const n = ok && text[i - 1] === quote[q - 1] ? (previous[q - 1] as number) + 1 : 0;
      current[q] = n;
      if (n > best.length) best = { start: i - n, length: n };
    }
    [previous, current] = [current, previous];
  }
  return best;
}

// ---------------------------------------------------------------------------------------------
// Optional: a teacher's rephrasing (issue 24: "optionally rephrased by the teacher endpoint the SFT
// stage already uses, cached and seeded"). Separate from the templates: the template instruction
// is always built and checked first, and stays the fallback whenever a rephrasing fails its check.

/** The numbers a text states, ordinals read as numbers ("3rd" → "3"), as a sorted list without repeats. */
function statedNumbers(text: string): string[] {
  return [...new Set(numberMentions(text))].sort();
}

/** Every mention of a number, ordinals read as numbers, in order. */
function numberMentions(text: string): string[] {
  return [...text.matchAll(/\d+(?:\.\d+)?/g)].map((m) => m[0]);
}

/**
 * Numbers a rewording mentions fewer times than the template: "the 2nd command … 2 failing tests"
 * reworded "the second command … 2 failing tests" still states 2, but no longer which command.
 */
function fewerMentions(original: string, rephrased: string): string[] {
  const count = (text: string) => {
    const counts = new Map<string, number>();
    for (const n of numberMentions(text)) counts.set(n, (counts.get(n) ?? 0) + 1);
    return counts;
  };
  const after = count(rephrased);
  return [...count(original)]
    .filter(([n, times]) => (after.get(n) ?? 0) > 0 && (after.get(n) ?? 0) < times)
    .map(([n]) => n)
    .sort();
}

/** The quoted values a text states ("…"): each must survive a rephrasing word for word. */
function quotedValues(text: string): string[] {
  return [...new Set([...text.matchAll(/"([^"\n]+)"/g)].map((m) => m[1] as string))];
}

/**
 * Why `rephrased` does not say what the template `original` says (empty: it keeps every fact):
 * the same numbers (turn ordinals, status codes, counts, Retry-After values), no number added, and
 * every quoted value. The leak check and the evidence checks run on top (`checkInstruction`).
 */
export function rephraseProblems(original: string, rephrased: string): string[] {
  const problems: string[] = [];
  if (rephrased.trim().length === 0) return ["the rephrasing is empty"];
  const before = statedNumbers(original);
  const after = statedNumbers(rephrased);
  const lost = before.filter((n) => !after.includes(n));
  const added = after.filter((n) => !before.includes(n));
  if (lost.length > 0) problems.push(`the rephrasing drops ${lost.join(", ")}`);
  if (added.length > 0) problems.push(`the rephrasing states ${added.join(", ")}, which the evidence does not`);
  const fewer = fewerMentions(original, rephrased);
  if (fewer.length > 0) problems.push(`the rephrasing drops a mention of ${fewer.join(", ")}`);
  for (const value of quotedValues(original))
    if (!rephrased.includes(value)) problems.push(`the rephrasing drops ${JSON.stringify(value)}`);
  if (rephrased.length > 2 * original.length + 80) problems.push("the rephrasing is much longer than the instruction");
  return problems;
}

/** The teacher prompt that rewords a template instruction without changing a fact. */
export function rephraseMessages(instruction: ControlInstruction): ChatMessage[] {
  return [
    {
      role: "system",
      content:
        "You reword instructions for a simulated environment. Keep every fact exactly: every number, " +
        "ordinal, status code, count and quoted value, and which calls, commands or screens each applies to. " +
        "Add nothing, drop nothing, and quote nothing new. Reply with the reworded instruction only.",
    },
    { role: "user", content: instruction.text },
  ];
}

/**
 * The instruction in the teacher's words when the rewording passes `checkInstruction` (same facts,
 * no leak, every claim still re-detected), else the template instruction with the reasons. Seeded
 * per trajectory so the teacher client's cache answers a rerun. Normal instructions are returned
 * as they are.
 */
export async function rephraseInstruction(
  client: TeacherClient,
  instruction: ControlInstruction,
  trajectory: Trajectory,
  detect: DetectControls,
  options: CheckOptions & { seed: number; temperature?: number; maxTokens?: number },
): Promise<{ instruction: ControlInstruction; problems: string[] }> {
  if (instruction.kind === "normal" || instruction.rephrased === true) return { instruction, problems: [] };
  const result = await client.complete({
    messages: rephraseMessages(instruction),
    n: 1,
    temperature: options.temperature ?? 0.7,
    seed: options.seed,
    ...(options.maxTokens === undefined ? {} : { max_tokens: options.maxTokens }),
  });
  if (!result.ok) return { instruction, problems: [`rephrase request failed: ${result.reason}`] };
  const text = visibleAnswer(result.texts[0] ?? "")
    .trim()
    .replace(/\s+/g, " ");
  const candidate: ControlInstruction = { ...instruction, text, rephrased: true };
  const problems = checkInstruction(candidate, trajectory, detect, options);
  return problems.length === 0 ? { instruction: candidate, problems } : { instruction, problems };
}
