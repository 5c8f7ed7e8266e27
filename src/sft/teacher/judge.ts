import type { Domain } from "../../core/trajectory.ts";
import { JUDGE_DIMENSIONS, type JudgeScores } from "../judge/dimensions.ts";
import { rubricFor } from "../judge/rubrics.ts";
import type { ChatMessage } from "./chat-types.ts";
import type { TeacherClient } from "./openai-client.ts";
import { visibleAnswer } from "./teacher-answer.ts";

export { JUDGE_DIMENSIONS, type JudgeDimension, type JudgeScores } from "../judge/dimensions.ts";

export interface JudgeInput {
  /** The environment's domain: picks the rubric (src/sft/judge/rubrics/<domain>.md). */
  domain: Domain;
  /** The prompt the candidate answered: system, history, and the action as the last user message. */
  prompt: ChatMessage[];
  candidate: string;
  /** The observation the environment really returned. */
  groundTruth: string;
}

export type JudgeResult = { ok: true; scores: JudgeScores; mean: number; raw: string } | { ok: false; reason: string; raw?: string };

const JUDGE_PREAMBLE = `You grade a world model: a model that predicts what an environment returns to an agent's action. Given the agent's conversation with the environment, the environment's real next observation, and a candidate answer (<think>reasoning</think> then <predicted_observation>prediction</predicted_observation>), score the candidate from 1 (worst) to 5 (best) on each of five dimensions: format, factuality, consistency, realism and quality. Judge the prediction against the real observation, not against what you would have predicted. The rubric for this environment follows.`;

const JUDGE_REPLY = `Reply with only a JSON object of integers 1-5, one per dimension, e.g. {"format": 4, "factuality": 3, "consistency": 5, "realism": 4, "quality": 3}.`;

/** The judge's system message for a domain: the common preamble, the domain's rubric, the reply format. */
export function judgeSystemMessage(domain: Domain): string {
  return `${JUDGE_PREAMBLE}\n\n${rubricFor(domain).text}\n\n${JUDGE_REPLY}`;
}

/** The judge's prompt: the domain's rubric as system message, the case as one user message. */
export function buildJudgeMessages(input: JudgeInput): ChatMessage[] {
  const conversation = input.prompt.map((m) => `[${m.role}]\n${m.content}`).join("\n\n");
  const user = `## Conversation\n${conversation}\n\n## Real observation\n${input.groundTruth}\n\n## Candidate answer\n${input.candidate}\n\nScore the candidate. JSON only.`;
  return [
    { role: "system", content: judgeSystemMessage(input.domain) },
    { role: "user", content: user },
  ];
}

/** Every balanced `{…}` span in `text` (strings respected), outermost only, in order. */
export function jsonObjectSpans(text: string): string[] {
  const spans: string[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === "\\") i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"' && depth > 0) {
      inString = true;
    } else if (ch === "{") {
      if (depth === 0) start = i;
      depth++;
    } else if (ch === "}" && depth > 0) {
      depth--;
      if (depth === 0) spans.push(text.slice(start, i + 1));
    }
  }
  return spans;
}

/**
 * Reads the scores from a judge reply. Judges wrap JSON in code fences, add a sentence, or think
 * first, so the last JSON object naming a dimension is taken; each score must be an integer 1–5.
 */
export function parseJudgeReply(raw: string): { ok: true; scores: JudgeScores; mean: number } | { ok: false; reason: string } {
  const visible = visibleAnswer(raw);
  let found: Record<string, unknown> | undefined;
  for (const span of jsonObjectSpans(visible)) {
    try {
      const value = JSON.parse(span) as unknown;
      if (value && typeof value === "object" && !Array.isArray(value) && JUDGE_DIMENSIONS.some((d) => d in value)) {
        found = value as Record<string, unknown>;
      }
    } catch {
      // Not JSON (e.g. a brace in prose): look further.
    }
  }
  if (!found) return { ok: false, reason: "judge reply holds no JSON object of scores" };
  const scores = {} as JudgeScores;
  for (const dimension of JUDGE_DIMENSIONS) {
    const value = found[dimension];
    if (value === undefined) return { ok: false, reason: `judge score missing: ${dimension}` };
    if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > 5) {
      return { ok: false, reason: `judge score out of range: ${dimension}=${JSON.stringify(value)} (expected an integer 1-5)` };
    }
    scores[dimension] = ((value - 1) / 4) * 100;
  }
  const mean = JUDGE_DIMENSIONS.reduce((sum, d) => sum + scores[d], 0) / JUDGE_DIMENSIONS.length;
  return { ok: true, scores, mean };
}

/**
 * Scores one candidate with an LLM judge through a client: the judge's own (`sft.judge.base_url`,
 * `model`), or the teacher's when none is set. Greedy (temperature 0) and n = 1, so a rerun is a
 * cache hit.
 */
export async function judgeCandidate(client: TeacherClient, input: JudgeInput, options: { maxTokens?: number } = {}): Promise<JudgeResult> {
  const result = await client.complete({
    messages: buildJudgeMessages(input),
    n: 1,
    temperature: 0,
    ...(options.maxTokens === undefined ? {} : { max_tokens: options.maxTokens }),
  });
  if (!result.ok) return { ok: false, reason: `judge request failed: ${result.reason}` };
  const raw = result.texts[0] ?? "";
  const parsed = parseJudgeReply(raw);
  return { ...parsed, raw };
}
