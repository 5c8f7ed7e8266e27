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
    else if (block.type === "tool_result" && "run" in block) {
      const result = ampRunResult(block.run, `${at}.run`);
      const id = [block.toolUseID, block.tool_use_id, block.tool_useId].find(
        (value): value is string => typeof value === "string" && value !== "",
      );
      // A call Amp never ran (cancelled, rejected by the user, still running) has no result: its call is no turn.
      if ("notRun" in result) messages.push(makeMessage("tool", "", { notRun: result.notRun, ...(id ? { toolCallId: id } : {}) }));
      else
        messages.push(
          makeMessage("tool", result.text, {
            results: [result.text],
            ...(id ? { toolCallId: id } : {}),
            ...(result.isError ? { isError: true } : {}),
          }),
        );
    } else if (block.type === "tool_result") {
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

/**
 * An Amp thread's `tool_result` `run` (`{status, result | error, reason}`; Amp writes
 * `{toolUseID, run}` where the Messages API writes `{tool_use_id, content}`): `done` → its result
 * (a string as it is; a shell's `{output, exitCode}` as its output, `[exit code N, no output]` when
 * it printed nothing and failed; other objects as their JSON), `error` → its message, marked;
 * anything else (`cancelled`, `rejected-by-user`, in progress) ran nothing: `{notRun: status}`.
 */
export function ampRunResult(run: unknown, field: string): { text: string; isError: boolean } | { notRun: string } {
  if (!isRecord(run)) throw new FieldError(field, `${field}: expected a run object, got ${describeType(run)}`);
  if (run.status === "error") {
    const error = run.error;
    const message = typeof error === "string" ? error : isRecord(error) && typeof error.message === "string" ? error.message : undefined;
    return { text: message ?? jsonText(error ?? {}), isError: true };
  }
  if (run.status !== "done") return { notRun: typeof run.status === "string" && run.status !== "" ? run.status : "unknown_status" };
  const result = run.result;
  if (result === undefined || result === null) return { text: "", isError: false };
  if (typeof result === "string") return { text: result, isError: false };
  if (Array.isArray(result) && result.every((line) => typeof line === "string")) return { text: result.join("\n"), isError: false };
  if (isRecord(result) && typeof result.output === "string") {
    const code = typeof result.exitCode === "number" ? result.exitCode : undefined;
    return {
      text: result.output.trim() === "" && code !== undefined && code !== 0 ? `[exit code ${code}, no output]` : result.output,
      isError: false,
    };
  }
  const parts = isRecord(result) ? partsText(result.content) : undefined;
  return { text: parts !== undefined && parts !== "" ? parts : jsonText(result), isError: false };
}

function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? "";
  } catch {
    return "[result]";
  }
}
