import { z } from "zod";
import { assistantMessage, hasAnswer, type TeacherAnswerForm, teacherAnswer } from "./teacher-answer.ts";

/** One message of an OpenAI-format chat prompt. */
export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

/** What the teacher is asked: the prompt and the sampling settings (OpenAI names, as sent). */
export interface ChatRequest {
  messages: ChatMessage[];
  /** Candidates wanted; the server returns them as `n` choices of one response. */
  n: number;
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
  /** Fixes the server's sampling; part of the cache key, so vary it to get fresh samples. */
  seed?: number;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens?: number;
}

/**
 * The end of one request: the candidates, or why there are none. Never thrown: a failed prompt
 * is a result the caller records, so prompts in = results out.
 */
export type CompletionResult =
  | {
      ok: true;
      /** In choice order. May hold fewer than `n` texts when the server ignores `n`. */
      texts: string[];
      /** Per choice, e.g. "stop" or "length" (a truncated candidate); null when not reported. */
      finishReasons: (string | null)[];
      /** Per choice, how the server returned the thinking (teacher-answer.ts); null for answers cached before it was recorded. */
      forms: (TeacherAnswerForm | null)[];
      /** Served from the on-disk cache (or an identical request already in flight): no HTTP. */
      cached: boolean;
      /** HTTP attempts made for this result; 0 when cached. */
      attempts: number;
      usage?: Usage;
    }
  | { ok: false; reason: string; attempts: number; status?: number };

/** The part of an OpenAI chat-completion body the client relies on. */
export const chatCompletionBody = z.object({
  choices: z
    .array(
      z.object({
        index: z.number().int().nonnegative().optional(),
        message: assistantMessage.refine(hasAnswer, { message: "has neither content nor reasoning" }),
        finish_reason: z.string().nullable().optional(),
      }),
    )
    .min(1),
  usage: z.object({ prompt_tokens: z.number(), completion_tokens: z.number(), total_tokens: z.number().optional() }).nullable().optional(),
});

export type ChatCompletionBody = z.infer<typeof chatCompletionBody>;

/**
 * Choices in `index` order (servers may return them out of order), as candidate texts (the
 * thinking folded in wherever the server put it: teacher-answer.ts), finish reasons and forms.
 */
export function choicesInOrder(body: ChatCompletionBody): {
  texts: string[];
  finishReasons: (string | null)[];
  forms: TeacherAnswerForm[];
} {
  const choices = body.choices.map((choice, position) => ({ choice, order: choice.index ?? position }));
  choices.sort((a, b) => a.order - b.order);
  const answers = choices.map((c) => teacherAnswer(c.choice.message));
  return {
    texts: answers.map((answer) => answer.text),
    finishReasons: choices.map((c) => c.choice.finish_reason ?? null),
    forms: answers.map((answer) => answer.form),
  };
}

/**
 * The first zod issue as a short phrase with a JS-style path, e.g.
 * `choices[0].message.content missing`, for reasons a person reads.
 */
export function zodReason(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "invalid value";
  let path = "";
  for (const part of issue.path) path += typeof part === "number" ? `[${part}]` : path === "" ? String(part) : `.${String(part)}`;
  const where = path === "" ? "body" : path;
  if (issue.code === "invalid_type" && issue.message.endsWith("received undefined")) return `${where} missing`;
  return `${where}: ${issue.message.replace(/^Invalid input: /, "")}`;
}
