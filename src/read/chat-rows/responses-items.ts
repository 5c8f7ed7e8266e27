import { parseJsonLine } from "../reader.ts";
import { describeType, FieldError, isRecord } from "../record-helpers.ts";
import { parseArguments } from "./calls.ts";
import { partsText } from "./content-parts.ts";
import { type Message, makeMessage } from "./message.ts";

/**
 * OpenAI Responses API rows: which item types are known, a row's `input` / `output` item lists as
 * its conversation, and each item as messages — a call, its `*_output` matched by `call_id`, an
 * `mcp_call` holding its own output, a `reasoning` item for the next reply, hosted-tool items counted.
 */

/** Responses API items that are a tool call or its output (read as turns). */
export const RESPONSES_TOOL_ITEMS = new Set([
  "function_call",
  "function_call_output",
  "custom_tool_call",
  "custom_tool_call_output",
  "local_shell_call",
  "local_shell_call_output",
  "mcp_call",
]);
/** Every Responses API item type this reader knows: the others are counted in `meta.skipped`, not read. */
const RESPONSES_ITEMS = new Set([
  ...RESPONSES_TOOL_ITEMS,
  "message",
  "reasoning",
  "web_search_call",
  "file_search_call",
  "computer_call",
  "computer_call_output",
  "code_interpreter_call",
  "image_generation_call",
  "mcp_list_tools",
  "mcp_approval_request",
  "mcp_approval_response",
  "item_reference",
]);

/** A message (a string `role` or `from`) or an OpenAI Responses API item of a known type. */
export function isMessageOrItem(m: unknown): boolean {
  return (
    isRecord(m) && (typeof m.role === "string" || typeof m.from === "string" || (typeof m.type === "string" && RESPONSES_ITEMS.has(m.type)))
  );
}

/**
 * A Responses API item list: an array (or a JSON string of one) of messages and items, at least one
 * of them a known item type or a message (an item type added to the API since is counted, not refused).
 */
function itemList(value: unknown): unknown[] | undefined {
  let list = value;
  if (typeof list === "string" && list.trimStart().startsWith("[")) {
    const parsed = parseJsonLine(list);
    if (parsed.ok) list = parsed.value;
  }
  if (!Array.isArray(list) || list.length === 0) return undefined;
  const typed = (m: unknown) => isRecord(m) && (typeof m.role === "string" || typeof m.type === "string");
  return list.every(typed) && list.some(isMessageOrItem) ? list : undefined;
}

/**
 * An OpenAI Responses API row: `input` (a string, the user's request, or a list of items) then
 * `output` (a list of items), as a response object or a logged request/response pair holds them.
 */
export function responsesConversation(row: Record<string, unknown>): { key: string; value: unknown[]; fields: string[] } | undefined {
  const input = itemList(row.input);
  const output = itemList(row.output);
  if (!input && !output) return undefined;
  const value: unknown[] = [];
  const fields: string[] = [];
  if (input) {
    for (const [i, item] of input.entries()) {
      value.push(item);
      fields.push(`input.${i}`);
    }
  } else if (typeof row.input === "string" && row.input.trim() !== "") {
    value.push({ role: "user", content: row.input });
    fields.push("input");
  }
  for (const [i, item] of (output ?? []).entries()) {
    value.push(item);
    fields.push(`output.${i}`);
  }
  return { key: input ? "input" : "output", value, fields };
}

/** One OpenAI Responses API item (an element of `input` / `output` with no role). */
export function responsesItem(raw: Record<string, unknown>, type: string, field: string): Message[] {
  const callId = typeof raw.call_id === "string" && raw.call_id !== "" ? raw.call_id : typeof raw.id === "string" ? raw.id : undefined;
  const withId = callId !== undefined ? { id: callId } : {};
  const name = () => {
    if (typeof raw.name === "string" && raw.name !== "") return raw.name;
    throw new FieldError(`${field}.name`, `${field}.name: expected a non-empty string, got ${describeType(raw.name)}`);
  };
  const output = (value: unknown, key: string, isError = false) => {
    const text = isRecord(value) ? JSON.stringify(value) : partsText(value);
    if (text === undefined)
      throw new FieldError(`${field}.${key}`, `${field}.${key}: expected a string or content parts, got ${describeType(value)}`);
    return makeMessage("tool", text, {
      results: [text],
      ...(callId !== undefined ? { toolCallId: callId } : {}),
      ...(isError ? { isError } : {}),
    });
  };
  switch (type) {
    case "message":
      throw new FieldError(`${field}.role`, `${field}: a "message" item without a string role`);
    case "function_call":
      return [makeMessage("assistant", "", { calls: [{ name: name(), ...withId, args: parseArguments(raw.arguments) }] })];
    case "custom_tool_call":
      return [makeMessage("assistant", "", { calls: [{ name: name(), ...withId, args: raw.input ?? "" }] })];
    case "local_shell_call": {
      const action = isRecord(raw.action) ? raw.action : {};
      return [makeMessage("assistant", "", { calls: [{ name: "local_shell", ...withId, args: { command: action.command } }] })];
    }
    case "function_call_output":
    case "custom_tool_call_output":
    case "local_shell_call_output":
      return [output(raw.output, "output")];
    case "mcp_call": {
      // The call and its result in one item (the server ran it); `error` when it failed.
      const call = makeMessage("assistant", "", { calls: [{ name: name(), ...withId, args: parseArguments(raw.arguments) }] });
      if (raw.output !== undefined && raw.output !== null) return [call, output(raw.output, "output")];
      if (raw.error !== undefined && raw.error !== null) return [call, output(raw.error, "error", true)];
      return [call];
    }
    case "reasoning": {
      const parts = [...(Array.isArray(raw.summary) ? raw.summary : []), ...(Array.isArray(raw.content) ? raw.content : [])];
      const text = parts
        .flatMap((p) => (isRecord(p) && typeof p.text === "string" && p.text.trim() !== "" ? [p.text.trim()] : []))
        .join("\n\n");
      return text !== "" ? [makeMessage("reasoning", text)] : [makeMessage("other", "", { skipped: ["encrypted_reasoning_item"] })];
    }
    default:
      // Hosted tools whose results the item does not hold (web_search_call, file_search_call, …),
      // computer_call screenshots, item references: no turn, counted.
      return [makeMessage("other", "", { skipped: [`${type}_item`] })];
  }
}
