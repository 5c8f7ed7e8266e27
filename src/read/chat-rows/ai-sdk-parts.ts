import { describeType, FieldError, isRecord, jsonTextOr } from "../record-helpers.ts";
import { parseArguments } from "./calls.ts";
import { partsText } from "./content-parts.ts";
import { type Call, type Message, makeMessage } from "./message.ts";

/**
 * The Vercel AI SDK's messages (`ModelMessage`, ai-sdk.dev "Prompts" / "Foundations: Tools"), as
 * apps built on it store their conversations: an assistant's content parts `{type: "tool-call",
 * toolCallId, toolName, input}` (`args` before AI SDK 5) are its calls, `{type: "reasoning", text}`
 * its reasoning; a `tool` message's parts `{type: "tool-result", toolCallId, toolName, output}` are
 * one result each. `output` (AI SDK 5) is `{type: "text" | "error-text", value: string}`,
 * `{type: "json" | "error-json", value}` or `{type: "content", value: [text and media parts]}`;
 * before it, `result` (any value) and `isError`. The `error-*` kinds and `isError` are errors.
 */

/** Whether content parts hold an AI SDK tool call. */
export function hasAiSdkCalls(content: unknown): content is unknown[] {
  return Array.isArray(content) && content.some((part) => isRecord(part) && part.type === "tool-call");
}

/** Whether content parts hold an AI SDK tool result. */
export function hasAiSdkResults(content: unknown): content is unknown[] {
  return Array.isArray(content) && content.some((part) => isRecord(part) && part.type === "tool-result");
}

/** An assistant message's `tool-call` parts as calls. */
export function aiSdkCalls(content: unknown[], field: string): Call[] {
  const calls: Call[] = [];
  for (const [i, part] of content.entries()) {
    if (!isRecord(part) || part.type !== "tool-call") continue;
    const at = `${field}.${i}`;
    if (typeof part.toolName !== "string" || part.toolName === "")
      throw new FieldError(`${at}.toolName`, `${at}.toolName: expected a non-empty string, got ${describeType(part.toolName)}`);
    calls.push({
      name: part.toolName,
      ...(typeof part.toolCallId === "string" && part.toolCallId !== "" ? { id: part.toolCallId } : {}),
      args: parseArguments(part.input ?? part.args),
    });
  }
  return calls;
}

/** A tool message's `tool-result` parts as one tool message each. */
export function aiSdkResults(content: unknown[], field: string): Message[] {
  const messages: Message[] = [];
  for (const [i, part] of content.entries()) {
    if (!isRecord(part) || part.type !== "tool-result") continue;
    const at = `${field}.${i}`;
    const { text, isError } = resultOutput(part, at);
    const id = typeof part.toolCallId === "string" && part.toolCallId !== "" ? part.toolCallId : undefined;
    const name = id === undefined && typeof part.toolName === "string" && part.toolName !== "" ? part.toolName : undefined;
    messages.push(
      makeMessage("tool", text, {
        results: [text],
        ...(id ? { toolCallId: id } : {}),
        ...(name ? { toolName: name } : {}),
        ...(isError ? { isError: true } : {}),
      }),
    );
  }
  return messages;
}

/** A result part's text: AI SDK 5's typed `output`, or the older `result` value. */
function resultOutput(part: Record<string, unknown>, at: string): { text: string; isError: boolean } {
  const output = part.output;
  if (output === undefined) {
    const result = part.result;
    const text = typeof result === "string" ? result : result === undefined || result === null ? "" : jsonTextOr(result, "");
    return { text, isError: part.isError === true };
  }
  if (!isRecord(output) || typeof output.type !== "string")
    throw new FieldError(`${at}.output`, `${at}.output: expected {type, value}, got ${describeType(output)}`);
  const isError = output.type.startsWith("error-") || part.isError === true;
  switch (output.type) {
    case "text":
    case "error-text":
      if (typeof output.value !== "string")
        throw new FieldError(`${at}.output.value`, `${at}.output.value: expected a string, got ${describeType(output.value)}`);
      return { text: output.value, isError };
    case "content": {
      const text = partsText(output.value);
      if (text === undefined)
        throw new FieldError(`${at}.output.value`, `${at}.output.value: expected content parts, got ${describeType(output.value)}`);
      return { text, isError };
    }
    default:
      // json, error-json, and kinds added later: the value as JSON text.
      return { text: typeof output.value === "string" ? output.value : jsonTextOr(output.value ?? null, ""), isError };
  }
}
