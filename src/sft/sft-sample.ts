import { escapeMessages, escaperFor } from "../export/special-literals.ts";
import type { ChatMessage, ChatTemplateRenderer, Segment } from "../render/chat-template.ts";
import { encodeSegments } from "../tokenize/encode-segments.ts";
import type { Tokenizer } from "../tokenize/tokenizer.ts";
import { countLossTokens, type Sample } from "../write/sample.ts";
import type { SftPrompt } from "./prompts/sft-prompt.ts";

/**
 * The assistant answer an SFT sample trains on, in the one spelling chat templates render back
 * unchanged (Qwen3's splits on `</think>` and re-joins with exactly these newlines), so the text
 * in `messages` and the tokens agree with `apply_chat_template` in transformers.
 */
export function answerText(think: string, prediction: string): string {
  return `<think>\n${think}\n</think>\n\n<predicted_observation>\n${prediction}\n</predicted_observation>`;
}

/**
 * The answer as segments owned by its message: the tags are template text (so `<think>` is the
 * tokenizer's added token, as the reference tokenizes it), the reasoning and the prediction are
 * content (never scanned for special tokens). All of it carries the loss.
 */
function answerSegments(think: string, prediction: string, owner: number): Segment[] {
  return [
    { kind: "template", text: "<think>\n", owner },
    { kind: "content", text: think, messageIndex: owner },
    { kind: "template", text: "\n</think>\n\n<predicted_observation>\n", owner },
    { kind: "content", text: prediction, messageIndex: owner },
    { kind: "template", text: "\n</predicted_observation>", owner },
  ];
}

/**
 * One training row: the prompt rendered up to the template's opening of the assistant turn,
 * then the answer, then the template's end of turn. Loss is 1 exactly on the answer and its
 * end-of-turn token.
 */
export function sftSample(
  prompt: SftPrompt,
  think: string,
  prediction: string,
  renderer: ChatTemplateRenderer,
  tokenizer: Tokenizer,
): Sample {
  const promptMessages: ChatMessage[] = prompt.messages.map((message) => ({ ...message, loss: false }));
  const answer: ChatMessage = { role: "assistant", content: answerText(think, prediction), loss: true };
  const messages = [...promptMessages, answer];
  const owner = promptMessages.length;
  const segments = [
    ...renderer.renderSegments(promptMessages, { addGenerationPrompt: true }),
    ...answerSegments(think, prediction, owner),
    { kind: "template" as const, text: endOfTurn(renderer, messages) },
  ];
  const encoded = encodeSegments(segments, tokenizer);
  const lossMask = new Uint8Array(encoded.owner.length);
  for (let i = 0; i < lossMask.length; i++) lossMask[i] = encoded.owner[i] === owner ? 1 : 0;
  // The text form neutralizes special-token literals in contents (src/export/special-literals.ts);
  // the answer's tags are its structure (added-token ids in the shard) and stay as they are.
  const escaper = escaperFor(tokenizer, renderer.template);
  const text: ChatMessage[] = [
    ...escapeMessages(promptMessages, escaper),
    { ...answer, content: answerText(escaper.escape(think), escaper.escape(prediction)) },
  ];
  return {
    id: prompt.prompt_id,
    trajectoryId: prompt.trajectory_id,
    domain: prompt.domain,
    source: prompt.source,
    inputIds: encoded.inputIds,
    lossMask,
    numLossTokens: countLossTokens(lossMask),
    numTurns: prompt.turn_index + 1,
    messages: text,
  };
}

/** What the template writes after the last assistant message's content (`<|im_end|>\n` for ChatML). */
function endOfTurn(renderer: ChatTemplateRenderer, messages: ChatMessage[]): string {
  const segments = renderer.renderSegments(messages);
  const lastContent = segments.findLastIndex((segment) => segment.kind === "content");
  return segments
    .slice(lastContent + 1)
    .map((segment) => segment.text)
    .join("");
}
