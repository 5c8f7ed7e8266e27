import { z } from "zod";

/**
 * A teacher's answer as one candidate text, whatever way the server returned the thinking.
 *
 * Reasoning models are served in several shapes, and the rules (candidate-format.ts) read one:
 * `<think>…</think>` then `<predicted_observation>…</predicted_observation>`. Each shape is folded
 * into that text, so a candidate is checked, selected and tokenized the same way whichever shape
 * its teacher used (the thinking block is trimmed when parsed, so the SFT sample's thinking tokens
 * are the same). The shape is recorded per candidate (`teacher_form` in sft/candidates.parquet).
 *
 * - `content`: the thinking is inside `content` as a `<think>` block (no reasoning parser).
 * - `content_open`: `content` holds the thinking and `</think>` but no `<think>`: the chat
 *   template opened the block in the prompt (DeepSeek-R1's and QwQ's generation prompts end with
 *   `<think>\n`).
 * - `reasoning_content`: vLLM and SGLang with a reasoning parser, DeepSeek's API, LiteLLM.
 * - `reasoning`: vLLM ≥ 0.10 (which renamed the field), OpenRouter, Ollama, Groq.
 * - `reasoning_details`: OpenRouter's structured form (`reasoning.text` / `reasoning.summary` parts).
 * - `thinking_blocks`: LiteLLM's Anthropic-style `[{type: "thinking", thinking}]`.
 * - `content_parts`: `content` as an array of parts, with `thinking` / `reasoning` parts beside
 *   the `text` parts (Anthropic-compatible gateways).
 * - `none`: no thinking anywhere; the format rule rejects the candidate ("no <think> block").
 */
export const TEACHER_ANSWER_FORMS = [
  "content",
  "content_open",
  "reasoning_content",
  "reasoning",
  "reasoning_details",
  "thinking_blocks",
  "content_parts",
  "none",
] as const;
export type TeacherAnswerForm = (typeof TEACHER_ANSWER_FORMS)[number];

export interface TeacherAnswer {
  text: string;
  form: TeacherAnswerForm;
}

const contentPart = z.looseObject({
  type: z.string().optional(),
  text: z.string().nullable().optional(),
  thinking: z.string().nullable().optional(),
  reasoning: z.string().nullable().optional(),
});

/** The parts of an assistant message the client reads; anything else the server adds is ignored. */
export const assistantMessage = z.looseObject({
  content: z
    .union([z.string(), z.array(contentPart)])
    .nullable()
    .optional(),
  reasoning_content: z.string().nullable().optional(),
  reasoning: z.string().nullable().optional(),
  reasoning_details: z
    .array(
      z.looseObject({ type: z.string().optional(), text: z.string().nullable().optional(), summary: z.string().nullable().optional() }),
    )
    .nullable()
    .optional(),
  thinking_blocks: z
    .array(z.looseObject({ type: z.string().optional(), thinking: z.string().nullable().optional() }))
    .nullable()
    .optional(),
});

export type AssistantMessage = z.infer<typeof assistantMessage>;

const THINK_OPEN = /<think>/i;
const THINK_CLOSE = /<\/think>/i;

function nonEmpty(text: string | null | undefined): text is string {
  return typeof text === "string" && text.trim() !== "";
}

/** The separate thinking a message carries, in the order of precedence above, with its form. */
function separateThinking(message: AssistantMessage): { thinking: string; form: TeacherAnswerForm } | undefined {
  if (nonEmpty(message.reasoning_content)) return { thinking: message.reasoning_content, form: "reasoning_content" };
  if (nonEmpty(message.reasoning)) return { thinking: message.reasoning, form: "reasoning" };
  const details = (message.reasoning_details ?? [])
    .map((part) => (part.type === "reasoning.summary" ? part.summary : part.type === "reasoning.encrypted" ? undefined : part.text))
    .filter(nonEmpty);
  if (details.length > 0) return { thinking: details.join("\n"), form: "reasoning_details" };
  const blocks = (message.thinking_blocks ?? []).map((block) => block.thinking).filter(nonEmpty);
  if (blocks.length > 0) return { thinking: blocks.join("\n"), form: "thinking_blocks" };
  if (Array.isArray(message.content)) {
    const parts = message.content
      .filter((part) => part.type === "thinking" || part.type === "reasoning")
      .map((part) => part.thinking ?? part.reasoning ?? part.text)
      .filter(nonEmpty);
    if (parts.length > 0) return { thinking: parts.join("\n"), form: "content_parts" };
  }
  return undefined;
}

/** `content` as text: a string, or the `text` parts of a part list joined; "" when null. */
function contentText(content: AssistantMessage["content"]): string {
  if (typeof content === "string") return content;
  if (!content) return "";
  return content
    .filter((part) => part.type === undefined || part.type === "text" || part.type === "output_text")
    .map((part) => part.text ?? "")
    .join("");
}

/**
 * One choice's message as a candidate text. Thinking inside `content` wins when both are present
 * (the text is then exactly what the model wrote); separate thinking is put in front of the answer
 * as `<think>\n…\n</think>\n\n`, the layout a `<think>`-in-content teacher writes.
 */
export function teacherAnswer(message: AssistantMessage): TeacherAnswer {
  const content = contentText(message.content);
  if (THINK_OPEN.test(content)) return { text: content, form: "content" };
  const separate = separateThinking(message);
  if (separate) return { text: `<think>\n${separate.thinking.trim()}\n</think>\n\n${content.trimStart()}`, form: separate.form };
  if (THINK_CLOSE.test(content)) return { text: `<think>\n${content.trimStart()}`, form: "content_open" };
  return { text: content, form: "none" };
}

/** Whether a message carries anything to read: a body with neither content nor thinking is malformed. */
export function hasAnswer(message: AssistantMessage): boolean {
  return message.content !== undefined || separateThinking(message) !== undefined;
}

/** An answer less its thinking blocks: what a judge or a rephrasing model said, not how it got there. */
export function visibleAnswer(text: string): string {
  return text.replace(/<think>[\s\S]*?<\/think>/gi, "");
}
