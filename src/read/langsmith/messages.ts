import { resultText } from "../chat-rows/content-parts.ts";
import { type ChatCall, type ChatMessage, maybeJson } from "../otel/messages.ts";
import { isRecord, jsonTextOr } from "../record-helpers.ts";
import { pythonLiteral } from "./python-literal.ts";

/*
 * The messages a traced model call sent and received, whatever form the tracer wrote them in, as
 * OpenAI-style chat messages (what chat-rows reads):
 *
 * - LangChain's serialization (`dumpd`, what LangChain's LangSmith tracer writes into
 *   `inputs.messages`, a list of lists: one per prompt of the batch):
 *   `{"lc": 1, "type": "constructor", "id": [..., "AIMessage"], "kwargs": {content, tool_calls,
 *   additional_kwargs, tool_call_id, status}}`; a message's `model_dump()` (`{type: "human" | "ai" |
 *   "system" | "tool", content, …}`, LangGraph state and Langfuse's serializer); `messages_to_dict`'s
 *   `{type, data: {…}}` (LangSmith "chat" datasets); `(role, content)` tuples.
 * - Role messages: OpenAI chat completions (`tool_calls: [{id, type, function: {name, arguments}}]`,
 *   tool messages with `tool_call_id`), Anthropic Messages (`tool_use` / `tool_result` blocks),
 *   LangChain's v1 format (`tool_call` / `reasoning` content blocks), the Vercel AI SDK's parts
 *   (`tool-call` / `tool-result`), as LangSmith's "Log LLM calls" guide and Langfuse's integrations
 *   write them.
 * - A model reply: `outputs.generations[[{message | text}]]` (LangChain's LLMResult), `choices[0].message`
 *   (OpenAI), `message`, `messages`, a message itself, or `output` (what `@traceable` wraps a non-dict
 *   return in).
 */

/** A message list's messages, and the tool specs Langfuse's LangChain handler appends to a prompt as `{role: "tool", content: spec}`. */
export interface Converted {
  messages: ChatMessage[];
  tools: unknown[];
  /** Elements that are no message (counted in `meta.skipped`). */
  unread: number;
}

const MAX_NESTING = 8;

const ROLES: Record<string, string> = {
  human: "user",
  user: "user",
  ai: "assistant",
  assistant: "assistant",
  model: "assistant",
  system: "system",
  developer: "system",
  tool: "tool",
  function: "tool",
};

/** LangChain message classes (the last element of a serialized message's `id`), by role. */
function classRole(name: string): string | undefined {
  const base = name.replace(/Chunk$/, "");
  if (base === "HumanMessage") return "user";
  if (base === "AIMessage") return "assistant";
  if (base === "SystemMessage") return "system";
  if (base === "ToolMessage" || base === "FunctionMessage") return "tool";
  if (base === "ChatMessage") return "chat";
  return undefined;
}

/** A message's role and the object holding its fields, whatever its serialization; undefined when it is no message. */
function unwrap(raw: unknown): { role: string; body: Record<string, unknown> } | undefined {
  if (typeof raw === "string") return { role: "user", body: { content: raw } };
  if (Array.isArray(raw)) {
    // A LangChain message-like tuple: (role, content).
    if (raw.length === 2 && typeof raw[0] === "string" && (typeof raw[1] === "string" || Array.isArray(raw[1]))) {
      const role = ROLES[raw[0].toLowerCase()];
      return role ? { role, body: { content: raw[1] } } : undefined;
    }
    return undefined;
  }
  if (!isRecord(raw)) return undefined;
  if (raw.lc === 1 && raw.type === "constructor" && Array.isArray(raw.id) && isRecord(raw.kwargs)) {
    const name = raw.id[raw.id.length - 1];
    const role = typeof name === "string" ? classRole(name) : undefined;
    if (!role) return undefined;
    return { role: role === "chat" ? chatRole(raw.kwargs.role) : role, body: raw.kwargs };
  }
  if (typeof raw.role === "string") return { role: ROLES[raw.role.toLowerCase()] ?? raw.role.toLowerCase(), body: raw };
  if (typeof raw.type === "string") {
    const type = raw.type.toLowerCase();
    const role = ROLES[type] ?? (type === "chat" ? "chat" : classRole(raw.type));
    if (!role) return undefined;
    // `messages_to_dict`: the fields under `data`.
    const body = isRecord(raw.data) && raw.content === undefined ? raw.data : raw;
    return { role: role === "chat" ? chatRole(body.role) : role, body };
  }
  return undefined;
}

function chatRole(role: unknown): string {
  return typeof role === "string" ? (ROLES[role.toLowerCase()] ?? role.toLowerCase()) : "user";
}

/** A call's arguments: JSON text parsed, a Python literal read (LangChain's `str(tool_input)`), anything else as it is. */
export function callArguments(args: unknown): unknown {
  if (args === undefined || args === null) return {};
  if (typeof args !== "string") return args;
  const parsed = maybeJson(args);
  if (parsed !== args) return parsed;
  return pythonLiteral(args) ?? args;
}

function makeCall(id: unknown, name: unknown, args: unknown): ChatCall | undefined {
  if (typeof name !== "string" || name === "") return undefined;
  return {
    ...(typeof id === "string" && id !== "" ? { id } : {}),
    type: "function",
    function: { name, arguments: callArguments(args) },
  };
}

/** One `tool_calls` entry: OpenAI's `{id, type, function: {name, arguments}}` or LangChain's `{name, args, id}`. */
function listedCall(raw: unknown): ChatCall | undefined {
  if (!isRecord(raw)) return undefined;
  if (isRecord(raw.function)) return makeCall(raw.id, raw.function.name, raw.function.arguments);
  return makeCall(raw.id, raw.name, raw.args ?? raw.arguments ?? raw.input);
}

/** Text of a tool result value: a string, content parts, a JSON value as its JSON text. */
function resultValueText(value: unknown): string {
  return resultText(value) ?? jsonTextOr(value, "");
}

interface Parts {
  text: string[];
  reasoning: string[];
  calls: ChatCall[];
  results: ChatMessage[];
}

/** A message's content: a string, or blocks of any of the dialects above. */
function contentParts(content: unknown): Parts {
  const parts: Parts = { text: [], reasoning: [], calls: [], results: [] };
  if (typeof content === "string") {
    parts.text.push(content);
    return parts;
  }
  if (content === null || content === undefined) return parts;
  if (!Array.isArray(content)) {
    parts.text.push(jsonTextOr(content, ""));
    return parts;
  }
  for (const block of content) {
    if (typeof block === "string") {
      parts.text.push(block);
      continue;
    }
    if (!isRecord(block)) continue;
    const type = typeof block.type === "string" ? block.type : "";
    if ((type === "text" || type === "input_text" || type === "output_text" || type === "") && typeof block.text === "string")
      parts.text.push(block.text);
    else if (type === "reasoning" || type === "thinking") {
      const text = block.reasoning ?? block.thinking ?? block.text ?? summaryText(block.summary);
      if (typeof text === "string" && text.trim() !== "") parts.reasoning.push(text);
    } else if (type === "redacted_thinking" || type === "tool_call_chunk") {
      // Nothing readable: an encrypted thought, a streaming fragment of a call also listed whole.
    } else if (type === "tool_use") pushCall(parts, makeCall(block.id, block.name, block.input));
    else if (type === "tool_call") pushCall(parts, makeCall(block.id, block.name, block.args ?? block.arguments));
    else if (type === "tool-call") pushCall(parts, makeCall(block.toolCallId, block.toolName, block.args ?? block.input));
    else if (type === "function_call") pushCall(parts, makeCall(block.call_id ?? block.id, block.name, block.arguments));
    else if (type === "tool_result")
      parts.results.push({
        role: "tool",
        content: resultValueText(block.content),
        ...(typeof block.tool_use_id === "string" ? { tool_call_id: block.tool_use_id } : {}),
        ...(block.is_error === true ? { is_error: true } : {}),
      });
    else if (type === "tool-result") parts.results.push(aiSdkResult(block));
    else if (typeof block.text === "string") parts.text.push(block.text);
    else if (type !== "") parts.text.push(`[${type.replace(/^input_/, "").replace(/_url$/, "")}]`);
  }
  return parts;
}

function summaryText(summary: unknown): string | undefined {
  if (!Array.isArray(summary)) return undefined;
  const texts = summary.flatMap((item) => (isRecord(item) && typeof item.text === "string" ? [item.text] : []));
  return texts.length > 0 ? texts.join("\n\n") : undefined;
}

function pushCall(parts: Parts, call: ChatCall | undefined): void {
  if (call) parts.calls.push(call);
}

/** A Vercel AI SDK `tool-result` part: `result` (v4) or `output: {type: "text" | "json" | "error-text" | …, value}` (v5). */
function aiSdkResult(block: Record<string, unknown>): ChatMessage {
  const output = isRecord(block.output) && typeof block.output.type === "string" ? block.output : undefined;
  const value = output ? output.value : (block.result ?? block.output);
  const error = block.isError === true || (output !== undefined && String(output.type).startsWith("error"));
  return {
    role: "tool",
    content: resultValueText(value),
    ...(typeof block.toolCallId === "string" ? { tool_call_id: block.toolCallId } : {}),
    ...(error ? { is_error: true } : {}),
  };
}

/** A tool spec where a message should be (Langfuse appends the offered tools to a prompt as `{role: "tool", content: spec}`). */
function isToolSpec(value: unknown): boolean {
  if (!isRecord(value)) return false;
  if (value.type === "function" && isRecord(value.function)) return true;
  return typeof value.name === "string" && (isRecord(value.parameters) || isRecord(value.input_schema) || isRecord(value.args_schema));
}

/** The messages one element of a message list stands for (an Anthropic user turn of tool results is one per result). */
function elementMessages(raw: unknown, out: Converted): void {
  const found = unwrap(raw);
  if (!found) {
    out.unread += 1;
    return;
  }
  const { role, body } = found;
  const content = body.content;
  if (role === "tool") {
    const id = body.tool_call_id ?? body.toolCallId;
    if (id === undefined && isToolSpec(maybeJson(content))) {
      out.tools.push(maybeJson(content));
      return;
    }
    const parts =
      Array.isArray(content) && content.some((b) => isRecord(b) && b.type === "tool-result") ? contentParts(content) : undefined;
    if (parts && parts.results.length > 0) {
      out.messages.push(...parts.results);
      return;
    }
    out.messages.push({
      role: "tool",
      content: resultValueText(content),
      ...(typeof id === "string" && id !== "" ? { tool_call_id: id } : {}),
      ...(body.status === "error" || body.is_error === true ? { is_error: true } : {}),
    });
    return;
  }
  const parts = contentParts(content);
  // Anthropic: the user turn after tool_use blocks carries their tool_result blocks.
  out.messages.push(...parts.results);
  const extra = isRecord(body.additional_kwargs) ? body.additional_kwargs : {};
  const calls: ChatCall[] = [];
  const add = (call: ChatCall | undefined) => {
    if (call) calls.push(call);
  };
  if (role === "assistant") {
    const listed = Array.isArray(body.tool_calls) && body.tool_calls.length > 0 ? body.tool_calls : extra.tool_calls;
    if (Array.isArray(listed)) for (const item of listed) add(listedCall(item));
    const legacy = body.function_call ?? extra.function_call;
    if (calls.length === 0 && isRecord(legacy)) add(makeCall(undefined, legacy.name, legacy.arguments));
    // Calls written as content blocks (Anthropic, LangChain v1), unless `tool_calls` lists them too.
    const ids = new Set(calls.map((call) => call.id));
    for (const call of parts.calls) if (call.id === undefined || !ids.has(call.id)) calls.push(call);
  }
  const reasoning = [extra.reasoning_content, body.reasoning_content, typeof body.reasoning === "string" ? body.reasoning : undefined]
    .concat(isRecord(extra.reasoning) ? [summaryText(extra.reasoning.summary)] : [])
    .filter((r): r is string => typeof r === "string" && r.trim() !== "")
    .concat(parts.reasoning);
  const text = parts.text.join("\n");
  if (parts.results.length > 0 && text.trim() === "" && calls.length === 0) return;
  out.messages.push({
    role,
    content: text,
    ...(reasoning.length > 0 ? { reasoning_content: reasoning.join("\n\n") } : {}),
    ...(calls.length > 0 ? { tool_calls: calls } : {}),
  });
}

/**
 * The messages of a message list, or of a record holding one (`messages`, or a chat dataset's
 * `input`), with Anthropic's top-level `system`. LangChain's batch (a list of lists): its first prompt.
 */
export function messageList(value: unknown, depth = 0): Converted {
  const out: Converted = { messages: [], tools: [], unread: 0 };
  if (depth > MAX_NESTING) return out;
  if (isRecord(value)) {
    const list = Array.isArray(value.messages) ? value.messages : Array.isArray(value.input) ? value.input : undefined;
    if (list === undefined) return out;
    const inner = messageList(list, depth + 1);
    const system =
      typeof value.system === "string" ? value.system : Array.isArray(value.system) ? contentParts(value.system).text.join("\n") : "";
    if (system.trim() !== "") inner.messages.unshift({ role: "system", content: system });
    if (Array.isArray(value.tools)) inner.tools.push(...value.tools);
    return inner;
  }
  if (!Array.isArray(value)) return out;
  const batch = value.length > 0 && value.every((element) => Array.isArray(element) && !isTuple(element)) ? value[0] : value;
  for (const element of batch as unknown[]) elementMessages(element, out);
  return out;
}

function isTuple(value: unknown[]): boolean {
  return value.length === 2 && typeof value[0] === "string" && ROLES[value[0].toLowerCase()] !== undefined;
}

/**
 * A model call's reply (its first choice), from what the call returned: LangChain's LLMResult
 * (`generations`), OpenAI's `choices`, `message`, a message list's last message, a message itself,
 * `output` (a `@traceable` function's return), or a string. Undefined when it holds none.
 */
export function replyMessage(value: unknown, depth = 0): ChatMessage | undefined {
  if (depth > MAX_NESTING || value === undefined || value === null) return undefined;
  if (typeof value === "string") return value.trim() === "" ? undefined : { role: "assistant", content: value };
  if (Array.isArray(value)) {
    // Content blocks (the Vercel AI SDK's `content` output), a `(role, content)` tuple, or a list of messages (its last).
    if (value.length > 0 && value.every((part) => isRecord(part) && typeof part.type === "string" && unwrap(part) === undefined))
      return asReply(messageList([{ role: "assistant", content: value }]).messages.at(-1));
    const out: Converted = { messages: [], tools: [], unread: 0 };
    if (isTuple(value)) elementMessages(value, out);
    return asReply((isTuple(value) ? out : messageList(value)).messages.at(-1));
  }
  if (!isRecord(value)) return undefined;
  if (Array.isArray(value.generations)) {
    const first = Array.isArray(value.generations[0]) ? value.generations[0][0] : value.generations[0];
    if (!isRecord(first)) return undefined;
    if (first.message !== undefined) return asReply(messageList([first.message]).messages.at(-1));
    return replyMessage(first.text, depth + 1);
  }
  if (Array.isArray(value.choices)) {
    const first = value.choices[0];
    if (!isRecord(first)) return undefined;
    if (isRecord(first.message)) return asReply(messageList([{ role: "assistant", ...first.message }]).messages.at(-1));
    return replyMessage(first.text, depth + 1);
  }
  if (isRecord(value.message)) return replyMessage(value.message, depth + 1);
  if (Array.isArray(value.messages)) return asReply(messageList(value.messages).messages.at(-1));
  const own = unwrap(value);
  if (own) return asReply(messageList([value]).messages.at(-1));
  if (value.output !== undefined) return replyMessage(value.output, depth + 1);
  return undefined;
}

function asReply(message: ChatMessage | undefined): ChatMessage | undefined {
  if (!message || message.role === "tool" || message.role === "user" || message.role === "system") return undefined;
  return { ...message, role: "assistant" };
}

/** What a tool returned: its text, the call id a LangChain ToolMessage names, and whether it says it failed. */
export interface ToolOutput {
  text: string;
  callId?: string;
  error: boolean;
}

/**
 * A tool run's result from what it returned: LangChain's `{"output": …}` wrapping (a string, a
 * ToolMessage serialized or dumped, an MCP CallToolResult), or the value itself.
 */
export function toolOutput(value: unknown): ToolOutput | undefined {
  if (value === undefined || value === null) return undefined;
  const inner = isRecord(value) && "output" in value && Object.keys(value).length === 1 ? value.output : value;
  if (inner === undefined || inner === null) return undefined;
  const message = unwrap(inner);
  if (message && message.role === "tool" && typeof inner !== "string" && !Array.isArray(inner)) {
    const { body } = message;
    const id = body.tool_call_id ?? body.toolCallId;
    return {
      text: resultValueText(body.content),
      ...(typeof id === "string" && id !== "" ? { callId: id } : {}),
      error: body.status === "error" || body.is_error === true,
    };
  }
  // An MCP CallToolResult: its text content, `isError` an error.
  if (isRecord(inner) && Array.isArray(inner.content) && inner.content.every((item) => isRecord(item) && typeof item.type === "string")) {
    const text = inner.content
      .map((item) =>
        typeof (item as Record<string, unknown>).text === "string"
          ? (item as Record<string, unknown>).text
          : `[${String((item as Record<string, unknown>).type)}]`,
      )
      .join("\n");
    return { text, error: inner.isError === true };
  }
  return { text: typeof inner === "string" ? inner : resultValueText(inner), error: false };
}

/** A tool run's arguments from its inputs: LangChain's `{"input": str(tool_input)}`, or the arguments themselves. */
export function toolInputArguments(value: unknown): unknown {
  if (isRecord(value) && Object.keys(value).length === 1 && "input" in value) return callArguments(value.input);
  return callArguments(value);
}

/** The user's request a run was given (a root run's inputs, a trace's input): its first user message, or a known text field. */
export function taskText(value: unknown): string | undefined {
  if (typeof value === "string") return value.trim() === "" ? undefined : value;
  const first = messageList(value).messages.find((m) => m.role === "user" && m.content.trim() !== "");
  if (first) return first.content;
  if (!isRecord(value)) return undefined;
  for (const key of ["input", "question", "query", "task", "prompt", "message", "user_input", "instruction"]) {
    const field = value[key];
    if (typeof field === "string" && field.trim() !== "") return field;
  }
  return undefined;
}
