import type { Trajectory, Turn } from "../core/trajectory.ts";
import type { ChatMessage } from "../sft/teacher/chat-types.ts";
import { jsonObjectSpans } from "../sft/teacher/judge.ts";
import { visibleAnswer } from "../sft/teacher/teacher-answer.ts";

/** Longest reason kept from an answer: it lands in a JSONL row per record, not a report. */
export const MAX_REASON_CHARS = 1000;

export interface ScaleRange {
  min: number;
  max: number;
}

/** Text cut to a budget: what is left, and how many characters went. */
export interface CutText {
  text: string;
  cut: number;
}

/** `index` moved off the low half of a surrogate pair (back, or forward for a tail), so a cut never splits a character. */
function safeIndex(text: string, index: number, forward = false): number {
  const code = text.charCodeAt(index);
  if (!(code >= 0xdc00 && code <= 0xdfff)) return index;
  return forward ? index + 1 : index - 1;
}

/**
 * `text` cut to at most `max` characters by dropping its middle, marked where it went. The
 * opening (task, first turns) and the end (the outcome) are what a rubric reads most;
 * `headShare` is the opening's part of what is kept.
 */
export function cutMiddle(text: string, max: number, headShare = 0.5): CutText {
  if (text.length <= max) return { text, cut: 0 };
  const marker = (n: number) => `\n[… ${n} characters cut …]\n`;
  const room = max - marker(text.length).length;
  if (room <= 0) {
    const end = safeIndex(text, max);
    return { text: text.slice(0, end), cut: text.length - end };
  }
  const headEnd = safeIndex(text, Math.floor(room * headShare));
  const tailStart = safeIndex(text, text.length - (room - headEnd), true);
  const cut = tailStart - headEnd;
  return { text: `${text.slice(0, headEnd)}${marker(cut)}${text.slice(tailStart)}`, cut };
}

/** One turn as plain text, numbered from 1 as a person counts. */
export function renderTurn(turn: Turn, index: number): string {
  const parts = [`### Turn ${index + 1}`];
  if (turn.thinking?.trim()) parts.push(`Thinking:\n${turn.thinking}`);
  parts.push(`Action:\n${turn.action}`, `Observation:\n${turn.observation}`);
  return parts.join("\n");
}

/** The trajectory's opening: domain, environment (system), task and initial observation, as present. */
function renderHead(trajectory: Trajectory): string {
  const parts = [`Domain: ${trajectory.domain}`];
  if (trajectory.system?.trim()) parts.push(`System:\n${trajectory.system}`);
  if (trajectory.task?.trim()) parts.push(`Task:\n${trajectory.task}`);
  if (trajectory.initialObservation?.trim()) parts.push(`Initial observation:\n${trajectory.initialObservation}`);
  return parts.join("\n\n");
}

/** The trajectory as plain text (opening, then turns 1..`turns`), uncut; what `max_chars` is measured on. */
export function renderTrajectory(trajectory: Trajectory, turns = trajectory.turns.length): string {
  const body = trajectory.turns.slice(0, turns).map(renderTurn);
  return [renderHead(trajectory), ...body].join("\n\n");
}

/** Indices of the turns a `turns` scorer scores: those with an observation to judge. */
export function observationTurns(trajectory: Trajectory): number[] {
  return trajectory.turns.flatMap((turn, index) => (turn.observation.trim() === "" ? [] : [index]));
}

function systemMessage(rubric: string, scale: ScaleRange, what: string): string {
  return [
    `You score ${what} against the rubric below, on the rubric's scale from ${scale.min} to ${scale.max}. Judge only what the text shows.`,
    `## Rubric\n${rubric}`,
    `Reply with only a JSON object, for example {"score": ${scale.max}, "reason": "one or two sentences"}, where score is a number from ${scale.min} to ${scale.max}.`,
  ].join("\n\n");
}

const cutNote = (cut: number, total: number) =>
  cut === 0 ? "" : `\n\n(The text was cut to fit: ${cut} of its ${total} characters were left out, where marked.)`;

/** The prompt that scores a whole trajectory, the text cut to `maxChars`. */
export function trajectoryMessages(trajectory: Trajectory, rubric: string, scale: ScaleRange, maxChars: number): ChatMessage[] {
  const full = renderTrajectory(trajectory);
  const { text, cut } = cutMiddle(full, maxChars);
  return [
    {
      role: "system",
      content: systemMessage(rubric, scale, "an AI agent's trajectory (its task, its actions and what the environment returned)"),
    },
    { role: "user", content: `## Trajectory\n${text}${cutNote(cut, full.length)}\n\nScore the trajectory. JSON only.` },
  ];
}

/**
 * The prompt that scores one turn (0-based `index`): the trajectory up to it as context, then
 * the turn. The turn keeps at least three quarters of `maxChars`; the context takes the rest,
 * cut towards its opening (the turns just before matter most).
 */
export function turnMessages(trajectory: Trajectory, index: number, rubric: string, scale: ScaleRange, maxChars: number): ChatMessage[] {
  const turn = trajectory.turns[index];
  if (!turn) throw new RangeError(`turn ${index} is not in trajectory ${trajectory.id}`);
  const context = renderTrajectory(trajectory, index);
  const focus = renderTurn(turn, index);
  const focusBudget = Math.min(focus.length, Math.max(maxChars - context.length, Math.floor(maxChars * 0.75)));
  const focusCut = cutMiddle(focus, focusBudget);
  const contextCut = cutMiddle(context, Math.max(0, maxChars - focusCut.text.length), 0.3);
  const cut = focusCut.cut + contextCut.cut;
  const user = [
    `## Trajectory before turn ${index + 1}\n${contextCut.text}`,
    `## Turn ${index + 1}, the one to score\n${focusCut.text}${cutNote(cut, context.length + focus.length)}`,
    `Score turn ${index + 1}'s observation. JSON only.`,
  ].join("\n\n");
  return [
    {
      role: "system",
      content: systemMessage(rubric, scale, "one turn of an AI agent's trajectory: what the environment returned to the agent's action"),
    },
    { role: "user", content: user },
  ];
}

export type ParsedScore = { ok: true; score: number; reason: string } | { ok: false; reason: string };

const NUMBER_TEXT = /^\s*-?\d+(?:\.\d+)?\s*$/;

/**
 * The score in a model's answer. Models fence the JSON, think first, or add a sentence, so the
 * thinking is dropped and the last JSON object holding `score` is taken. The score must be a
 * number (or a string holding one) inside the scale; anything else is a malformed answer.
 */
export function parseScoreReply(raw: string, scale: ScaleRange): ParsedScore {
  const visible = visibleAnswer(raw);
  let found: Record<string, unknown> | undefined;
  for (const span of jsonObjectSpans(visible)) {
    try {
      const value = JSON.parse(span) as unknown;
      if (value && typeof value === "object" && !Array.isArray(value) && "score" in value) found = value as Record<string, unknown>;
    } catch {
      // A brace in prose, or broken JSON: look further.
    }
  }
  if (!found) return { ok: false, reason: `no JSON object with a "score" in the answer: ${JSON.stringify(visible.trim().slice(0, 120))}` };
  const value = found.score;
  const score = typeof value === "number" ? value : typeof value === "string" && NUMBER_TEXT.test(value) ? Number(value) : Number.NaN;
  if (!Number.isFinite(score)) return { ok: false, reason: `score is not a number: ${JSON.stringify(value)}` };
  if (score < scale.min || score > scale.max)
    return { ok: false, reason: `score ${score} is outside the scale ${scale.min}..${scale.max}` };
  const reason = typeof found.reason === "string" ? found.reason.trim().slice(0, MAX_REASON_CHARS) : "";
  return { ok: true, score, reason };
}
