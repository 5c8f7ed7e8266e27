import { describeType, FieldError, isRecord } from "../record-helpers.ts";
import { parseArguments } from "./calls.ts";
import { partsText } from "./content-parts.ts";
import { type Call, type Message, makeMessage } from "./message.ts";

/**
 * Anthropic Messages API content blocks: an assistant turn's `tool_use` blocks as its calls, a
 * user turn's `tool_result` blocks as one tool message each (its own text as the user's words),
 * and the blocks that are neither (server tools, redacted thinking), counted as skipped; and
 * `toolResultText`, a `tool_result` content as the agent-log readers (claude-code, cline) read it.
 */

/**
 * A `tool_result` block's content as the agent-log readers read it: absent or null is empty, a
 * string is itself, a list of blocks is their text (`text` blocks' text, any other typed block as
 * `[type]`) joined by newlines; with `bareStrings`, a string in the list is text too (Claude Code
 * writes some so). Undefined for anything else (the caller names the field).
 */
export function toolResultText(content: unknown, options: { bareStrings?: boolean } = {}): string | undefined {
  if (content === undefined || content === null) return "";
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return undefined;
  const parts: string[] = [];
  for (const block of content) {
    if (options.bareStrings === true && typeof block === "string") parts.push(block);
    else if (isRecord(block) && block.type === "text" && typeof block.text === "string") parts.push(block.text);
    else if (isRecord(block) && typeof block.type === "string") parts.push(`[${block.type}]`);
    else return undefined;
  }
  return parts.join("\n");
}

/** An Anthropic assistant turn's `tool_use` blocks as calls, its text blocks as its text. */
export function anthropicCalls(content: unknown[], field: string): Pick<Message, "calls" | "skipped"> {
  const calls: Call[] = [];
  for (const [i, block] of content.entries()) {
    if (!isRecord(block) || block.type !== "tool_use") continue;
    const at = `${field}.${i}`;
    if (typeof block.name !== "string" || block.name === "") {
      throw new FieldError(`${at}.name`, `${at}.name: expected a non-empty string, got ${describeType(block.name)}`);
    }
    calls.push({ name: block.name, ...(typeof block.id === "string" ? { id: block.id } : {}), args: parseArguments(block.input) });
  }
  const skipped = skippedBlocks(content);
  return { calls, ...(skipped.length > 0 ? { skipped } : {}) };
}

/** Blocks of an assistant turn that are neither text, thinking nor a client tool call (server tools, redacted thinking). */
export function skippedBlocks(content: unknown[]): string[] {
  return content.flatMap((block) =>
    isRecord(block) && typeof block.type === "string" && typeof block.text !== "string" && !["thinking", "tool_use"].includes(block.type)
      ? [`${block.type}_block`]
      : [],
  );
}

/** An Anthropic user turn with `tool_result` blocks: a tool message per result, then the user's own text, if any. */
export function anthropicResults(content: unknown[], field: string): Message[] {
  const messages: Message[] = [];
  const texts: string[] = [];
  for (const [i, block] of content.entries()) {
    const at = `${field}.${i}`;
    if (typeof block === "string") texts.push(block);
    else if (!isRecord(block)) throw new FieldError(at, `${at}: expected a content block, got ${describeType(block)}`);
    else if (block.type === "tool_result") {
      const text = partsText(block.content);
      if (text === undefined) {
        throw new FieldError(`${at}.content`, `${at}.content: expected a string or content blocks, got ${describeType(block.content)}`);
      }
      const id = typeof block.tool_use_id === "string" && block.tool_use_id !== "" ? block.tool_use_id : undefined;
      messages.push(
        makeMessage("tool", text, {
          results: [text],
          ...(id ? { toolCallId: id } : {}),
          ...(block.is_error === true ? { isError: true } : {}),
        }),
      );
    } else if (typeof block.text === "string") texts.push(block.text);
  }
  const text = texts.join("\n");
  if (text.trim() !== "") messages.push(makeMessage("user", text));
  return messages;
}
