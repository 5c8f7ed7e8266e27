import { messageText } from "../chat-turns.ts";
import { describeType, FieldError, isRecord } from "../record-helpers.ts";
import { aiSdkCalls, aiSdkResults, hasAiSdkCalls, hasAiSdkResults } from "./ai-sdk-parts.ts";
import { anthropicCalls, anthropicResults, skippedBlocks } from "./anthropic-blocks.ts";
import { shareGptCalls, structuredCalls, textCall } from "./calls.ts";
import { resultText } from "./content-parts.ts";
import { fencedCommand, shellCall } from "./fenced-commands.ts";
import { GeminiContent, geminiMessages } from "./gemini-contents.ts";
import { GlaiveMessage } from "./glaive-transcript.ts";
import { CALL_ROLES, type Message, ROLE_ALIASES, TOOL_ROLES } from "./message.ts";
import { reactStep } from "./react-steps.ts";
import { responsesItem } from "./responses-items.ts";
import { resultBlock, taggedSearchMessages } from "./tagged-search.ts";

/**
 * One element of a conversation as the reader's messages, whatever its dialect: OpenAI and
 * ShareGPT role messages, Hermes `<tool_call>` / `<tool_response>` blocks, and the hand-off to the
 * Anthropic, Responses API, ToolBench ReAct and Glaive modules where the element is theirs.
 */

const TOOL_CALL_BLOCK = /<tool_call>([\s\S]*?)(?:<\/tool_call>|$)/g;
const TOOL_RESPONSE_BLOCK = /<tool_response>([\s\S]*?)<\/tool_response>/g;

/**
 * How the row's messages are read: `react` when results come as tool messages (ToolBench), so a
 * ReAct `Action:` is a call; `fencedCommands` for a SWE-agent chat transcript (fenced-commands.ts),
 * where a reply's last code block is its command.
 */
export interface Dialect {
  react: boolean;
  fencedCommands?: boolean;
  /** A search agent's rollout with tagged calls and results in its text (tagged-search.ts). */
  taggedSearch?: boolean;
}

/** One element of a conversation as its message(s): an Anthropic user turn of tool results is one per result. */
export function normalizeMessage(raw: unknown, field: string, dialect: Dialect): Message[] {
  if (raw instanceof GlaiveMessage) return [raw.message];
  if (raw instanceof GeminiContent) return geminiMessages(raw.raw, field);
  if (!isRecord(raw)) throw new FieldError(field, `${field}: expected a message object, got ${describeType(raw)}`);
  const shareGpt = typeof raw.role !== "string" && typeof raw.from === "string";
  const roleValue = shareGpt ? raw.from : raw.role;
  // A Responses API item (`{type: "message", role, …}` has a role and is read as a message).
  if (typeof roleValue !== "string" && typeof raw.type === "string") return responsesItem(raw, raw.type, field);
  if (typeof roleValue !== "string") throw new FieldError(`${field}.role`, `${field}: expected a message with a string role (or from)`);
  // SWE-agent exports keep the text in `text` (and the system prompt in `system_prompt`).
  const contentKey = shareGpt
    ? "value"
    : raw.content === undefined && typeof raw.text === "string"
      ? "text"
      : raw.content === undefined && raw.text == null && typeof raw.system_prompt === "string"
        ? "system_prompt"
        : "content";
  const lower = roleValue.toLowerCase();
  // A missing content is an empty one (an assistant message with only tool calls).
  const content = raw[contentKey] === undefined ? null : raw[contentKey];
  // Anthropic Messages API: the user turn after tool_use blocks carries their tool_result blocks.
  if (Array.isArray(content) && content.some((b) => isRecord(b) && b.type === "tool_result")) {
    return anthropicResults(content, `${field}.${contentKey}`);
  }
  // Vercel AI SDK: a tool message's `tool-result` parts, one result each.
  if (hasAiSdkResults(content)) return aiSdkResults(content, `${field}.${contentKey}`);
  // Reasoning parts (the AI SDK's `{type: "reasoning", text}`) are the message's reasoning below, never its text.
  const visible = Array.isArray(content) ? content.filter((b) => !(isRecord(b) && b.type === "reasoning")) : content;
  const text = TOOL_ROLES.has(lower) ? resultText(visible) : messageText(visible);
  if (text === undefined) {
    throw new FieldError(
      `${field}.${contentKey}`,
      `${field}.${contentKey}: expected a string or text parts, got ${describeType(raw[contentKey])}`,
    );
  }
  // Anthropic thinking blocks (Kimi's `think` parts, the AI SDK's `reasoning` parts), else `reasoning_content` / `reasoning`.
  const thinking = Array.isArray(content)
    ? content
        .flatMap((b) =>
          isRecord(b) && b.type === "thinking" && typeof b.thinking === "string"
            ? [b.thinking.trim()]
            : isRecord(b) && b.type === "think" && typeof b.think === "string"
              ? [b.think.trim()]
              : // The AI SDK's reasoning part.
                isRecord(b) && b.type === "reasoning" && typeof b.text === "string"
                ? [b.text.trim()]
                : [],
        )
        .join("\n\n")
    : "";
  const reasoning = [raw.reasoning_content, raw.reasoning, thinking]
    .find((r): r is string => typeof r === "string" && r.trim() !== "")
    ?.trim();
  const base = { text, results: [] as string[], ...(reasoning ? { reasoning } : {}) };
  if (CALL_ROLES.has(lower)) return [{ ...base, role: "assistant", text: "", calls: shareGptCalls(text, `${field}.${contentKey}`) }];
  // A tagged-search rollout whose loop sent a result block as the next (user or tool) message.
  if (dialect.taggedSearch && (ROLE_ALIASES[lower] === "user" || TOOL_ROLES.has(lower))) {
    const block = resultBlock(text);
    if (block !== undefined) return [{ ...base, role: "tool", text: block, calls: [], results: [block] }];
  }
  // A user turn that only carries `<tool_response>` blocks (Hermes exports that answer as the user) is a tool message.
  const userResponses =
    ROLE_ALIASES[lower] === "user" && text.includes("<tool_response>") && text.replace(TOOL_RESPONSE_BLOCK, "").trim() === "";
  if (TOOL_ROLES.has(lower) || userResponses) {
    const blocks = [...text.matchAll(TOOL_RESPONSE_BLOCK)].map((m) => (m[1] as string).trim());
    const id = typeof raw.tool_call_id === "string" && raw.tool_call_id !== "" ? raw.tool_call_id : undefined;
    const name = id === undefined && typeof raw.name === "string" && raw.name !== "" ? raw.name : undefined;
    // A failed call: `is_error: true`, or an `error` beside the result (its message is the result when the content is empty).
    const error = raw.is_error === true ? "" : errorText(raw.error);
    const results = blocks.length > 0 ? blocks : [text.trim() === "" && error ? error : text];
    return [
      {
        ...base,
        role: "tool",
        calls: [],
        results,
        ...(id ? { toolCallId: id } : {}),
        ...(name ? { toolName: name } : {}),
        ...(error !== undefined ? { isError: true } : {}),
      },
    ];
  }
  const role = ROLE_ALIASES[lower] ?? lower;
  if (role !== "assistant") return [{ ...base, role, calls: [] }];
  const structured = structuredCalls(raw, field);
  if (structured.length > 0) return [{ ...base, role, calls: structured }];
  if (Array.isArray(content) && content.some((b) => isRecord(b) && b.type === "tool_use")) {
    return [{ ...base, role, ...anthropicCalls(content, `${field}.${contentKey}`) }];
  }
  if (hasAiSdkCalls(content)) return [{ ...base, role, calls: aiSdkCalls(content, `${field}.${contentKey}`) }];
  const skipped = Array.isArray(content) ? skippedBlocks(content) : [];
  const withSkipped = skipped.length > 0 ? { ...base, skipped } : base;
  // Search agents' tagged calls, answered in the same text (or by the next message's result block).
  const tagged = dialect.taggedSearch ? taggedSearchMessages(text, withSkipped) : undefined;
  if (tagged) return tagged;
  // Hermes / Qwen: calls written into the text.
  const blocks = [...text.matchAll(TOOL_CALL_BLOCK)];
  if (blocks.length > 0) {
    const rest = text.replace(TOOL_CALL_BLOCK, "").trim();
    return [{ ...withSkipped, role, text: rest, calls: blocks.map((m) => textCall(m[1] as string)) }];
  }
  // ToolBench: "Thought: … Action: NAME Action Input: {…}", answered by a role `function` message.
  const react = dialect.react ? reactStep(text) : undefined;
  if (react) return [{ ...withSkipped, role, text: react.text, calls: react.calls }];
  // SWE-agent: the reply's last code block is the command it ran.
  const fenced = dialect.fencedCommands ? fencedCommand(text) : undefined;
  if (fenced) return [{ ...withSkipped, role, text: fenced.thought, calls: [shellCall(fenced.command)] }];
  return [{ ...withSkipped, role, calls: [] }];
}

/** The text of a tool message's `error` (a string, or `{message}` as Inspect AI's ToolCallError writes it), undefined when there is none. */
function errorText(error: unknown): string | undefined {
  if (typeof error === "string" && error.trim() !== "") return error;
  if (isRecord(error)) return typeof error.message === "string" ? error.message : JSON.stringify(error);
  return undefined;
}
