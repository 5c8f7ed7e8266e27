import { parseJsonLine } from "../reader.ts";
import { isRecord, jsonTextOr } from "../record-helpers.ts";
import type { OtelSpan } from "./otlp.ts";

/*
 * What a span says in either convention, as OpenAI-style chat messages (what chat-rows reads):
 *
 * - OpenTelemetry GenAI semantic conventions (docs/gen-ai in open-telemetry/semantic-conventions):
 *   `gen_ai.operation.name` (`chat`, `text_completion`, `generate_content`, `invoke_agent`,
 *   `execute_tool`); a tool span's `gen_ai.tool.name`, `gen_ai.tool.call.id`,
 *   `gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`; an inference span's
 *   `gen_ai.system_instructions`, `gen_ai.input.messages`, `gen_ai.output.messages` (JSON text or
 *   structured: `[{role, parts: [{type: text|reasoning|tool_call|tool_call_response, …}]}]`), the
 *   older `gen_ai.prompt.N.*` / `gen_ai.completion.N.*` attributes, and span events
 *   `gen_ai.{system,user,assistant,tool}.message` / `gen_ai.choice` (their body in
 *   `gen_ai.event.content`, or as attributes) and `gen_ai.content.prompt` / `gen_ai.content.completion`
 *   (`gen_ai.prompt` / `gen_ai.completion` JSON).
 * - OpenInference (Arize Phoenix): `openinference.span.kind` LLM / TOOL / AGENT / CHAIN; a TOOL span's
 *   `tool.name`, `tool.id`, `input.value` (its arguments) and `output.value`; an LLM span's flattened
 *   `llm.input_messages.N.message.{role, content, contents.M.message_content.*, tool_calls.K.tool_call.*,
 *   tool_call_id}` and `llm.output_messages.N.message.*`, and `llm.tools.N.tool.json_schema`.
 * - OpenLLMetry (Traceloop): `traceloop.span.kind: tool` with `traceloop.entity.name`,
 *   `traceloop.entity.input` / `traceloop.entity.output`.
 */

export interface ChatCall {
  id?: string;
  type: "function";
  function: { name: string; arguments: unknown };
}

/** An OpenAI-style message, as chat-rows reads it. */
export interface ChatMessage {
  role: string;
  content: string;
  reasoning_content?: string;
  tool_calls?: ChatCall[];
  tool_call_id?: string;
  is_error?: boolean;
}

const INFERENCE_OPERATIONS = new Set(["chat", "text_completion", "generate_content", "completion"]);

export function isToolSpan(span: OtelSpan): boolean {
  const a = span.attrs;
  if (a["gen_ai.operation.name"] === "execute_tool") return true;
  if (String(a["openinference.span.kind"]).toUpperCase() === "TOOL") return true;
  if (a["traceloop.span.kind"] === "tool") return true;
  // Pydantic AI before the execute_tool name: a "running tool" span with the tool's name.
  return typeof a["gen_ai.tool.name"] === "string" && (span.name.startsWith("execute_tool") || span.name === "running tool");
}

export function isLlmSpan(span: OtelSpan): boolean {
  const a = span.attrs;
  if (INFERENCE_OPERATIONS.has(String(a["gen_ai.operation.name"]))) return true;
  if (String(a["openinference.span.kind"]).toUpperCase() === "LLM") return true;
  if (a["traceloop.span.kind"] === "llm" || typeof a["llm.request.type"] === "string") return true;
  return Object.keys(a).some((key) => /^(gen_ai\.(input|output)\.messages|gen_ai\.prompt\.0\.|llm\.input_messages\.0\.)/.test(key));
}

/** Any span of an agent framework or model client: GenAI, OpenInference or OpenLLMetry attributes. */
export function isGenAiSpan(span: OtelSpan): boolean {
  return (
    isToolSpan(span) ||
    isLlmSpan(span) ||
    Object.keys(span.attrs).some((key) => key.startsWith("gen_ai.") || key === "openinference.span.kind" || key.startsWith("traceloop.")) ||
    span.events.some((event) => event.name.startsWith("gen_ai."))
  );
}

/** A JSON text parsed (a value kept as it is when it is not text or not JSON); the LangSmith readers' too. */
export function maybeJson(value: unknown): unknown {
  if (typeof value !== "string") return value;
  const trimmed = value.trim();
  if (!/^[[{"]/.test(trimmed)) return value;
  const parsed = parseJsonLine(trimmed);
  return parsed.ok ? parsed.value : value;
}

function text(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  if (Array.isArray(value) && value.every((part) => isRecord(part) && typeof (part.text ?? part.content) === "string"))
    return value.map((part) => String((part as Record<string, unknown>).text ?? (part as Record<string, unknown>).content)).join("\n");
  return jsonTextOr(value, "");
}

/** The objects under a flattened prefix (`gen_ai.prompt.0.role` …) as a list, by index. */
export function unflatten(attrs: Record<string, unknown>, prefix: string): Record<string, unknown>[] {
  const root: Record<string, unknown> = {};
  const start = `${prefix}.`;
  for (const [key, value] of Object.entries(attrs)) {
    if (!key.startsWith(start)) continue;
    const path = key.slice(start.length).split(".");
    let node: Record<string, unknown> = root;
    for (const [i, segment] of path.entries()) {
      if (i === path.length - 1) node[segment] = value;
      else {
        const next = node[segment];
        node[segment] = isRecord(next) ? next : {};
        node = node[segment] as Record<string, unknown>;
      }
    }
  }
  return indexed(root);
}

/** An object keyed 0, 1, 2… as the list of its record values, in index order. */
function indexed(value: unknown): Record<string, unknown>[] {
  if (Array.isArray(value)) return value.filter(isRecord);
  if (!isRecord(value)) return [];
  return Object.keys(value)
    .filter((key) => /^\d+$/.test(key))
    .sort((a, b) => Number(a) - Number(b))
    .map((key) => value[key])
    .filter(isRecord);
}

function call(id: unknown, name: unknown, args: unknown): ChatCall | undefined {
  if (typeof name !== "string" || name === "") return undefined;
  return { ...(typeof id === "string" && id !== "" ? { id } : {}), type: "function", function: { name, arguments: maybeJson(args) ?? {} } };
}

/** A GenAI semconv message (`{role, parts}`), or an OpenAI-style one some instrumentations write there. */
function semconvMessages(raw: unknown): ChatMessage[] {
  if (!isRecord(raw)) return [];
  const role = typeof raw.role === "string" ? raw.role : "user";
  if (!Array.isArray(raw.parts)) return [openAiMessage(raw)];
  const texts: string[] = [];
  const reasoning: string[] = [];
  const calls: ChatCall[] = [];
  const results: ChatMessage[] = [];
  for (const part of raw.parts) {
    if (!isRecord(part)) continue;
    if (part.type === "text" && typeof part.content === "string") texts.push(part.content);
    else if ((part.type === "reasoning" || part.type === "thinking") && typeof part.content === "string") reasoning.push(part.content);
    else if (part.type === "tool_call") {
      const made = call(part.id, part.name, part.arguments);
      if (made) calls.push(made);
    } else if (part.type === "tool_call_response")
      results.push({
        role: "tool",
        content: text(maybeJson(part.response ?? part.result)),
        ...(typeof part.id === "string" ? { tool_call_id: part.id.trim() } : {}),
      });
    else if (typeof part.type === "string") texts.push(`[${part.type}]`);
  }
  if (results.length > 0) return results;
  return [
    {
      role,
      content: texts.join("\n"),
      ...(reasoning.length > 0 ? { reasoning_content: reasoning.join("\n\n") } : {}),
      ...(calls.length > 0 ? { tool_calls: calls } : {}),
    },
  ];
}

/** An OpenAI-style message (`{role, content, tool_calls, tool_call_id}`; legacy flattened calls `{id, name, arguments}`). */
function openAiMessage(raw: Record<string, unknown>): ChatMessage {
  const calls = indexed(raw.tool_calls).flatMap((c) => {
    const fn = isRecord(c.function) ? c.function : c;
    return call(c.id, fn.name, fn.arguments) ?? [];
  });
  const toolCallId = raw.tool_call_id ?? raw.id;
  const role = typeof raw.role === "string" ? raw.role : "user";
  return {
    role,
    content: text(raw.content),
    ...(typeof raw.reasoning_content === "string" ? { reasoning_content: raw.reasoning_content } : {}),
    ...(calls.length > 0 ? { tool_calls: calls } : {}),
    ...(role === "tool" && typeof toolCallId === "string" ? { tool_call_id: toolCallId } : {}),
  };
}

/** An OpenInference flattened message (`{message: {role, content | contents, tool_calls, tool_call_id}}`). */
function openInferenceMessage(raw: Record<string, unknown>): ChatMessage | undefined {
  const message = isRecord(raw.message) ? raw.message : undefined;
  if (!message) return undefined;
  const texts: string[] = [];
  const reasoning: string[] = [];
  if (typeof message.content === "string") texts.push(message.content);
  for (const item of indexed(message.contents)) {
    const content = isRecord(item.message_content) ? item.message_content : {};
    if (content.type === "reasoning" && typeof content.text === "string") reasoning.push(content.text);
    else if (typeof content.text === "string") texts.push(content.text);
    else if (typeof content.type === "string" && content.type !== "tool_use") texts.push(`[${content.type}]`);
  }
  const calls = indexed(message.tool_calls).flatMap((item) => {
    const c = isRecord(item.tool_call) ? item.tool_call : {};
    const fn = isRecord(c.function) ? c.function : {};
    return call(c.id, fn.name, fn.arguments) ?? [];
  });
  if (typeof message.function_call_name === "string") {
    const legacy = call(undefined, message.function_call_name, message.function_call_arguments_json);
    if (legacy) calls.push(legacy);
  }
  const role = typeof message.role === "string" ? message.role : "user";
  return {
    role,
    content: texts.join("\n"),
    ...(reasoning.length > 0 ? { reasoning_content: reasoning.join("\n\n") } : {}),
    ...(calls.length > 0 ? { tool_calls: calls } : {}),
    ...(typeof message.tool_call_id === "string" ? { tool_call_id: message.tool_call_id } : {}),
  };
}

function messageList(value: unknown): ChatMessage[] {
  const parsed = maybeJson(value);
  if (!Array.isArray(parsed)) return [];
  return parsed.flatMap(semconvMessages);
}

function eventBody(attrs: Record<string, unknown>): Record<string, unknown> {
  const body = maybeJson(attrs["gen_ai.event.content"] ?? attrs.body);
  return isRecord(body) ? { ...attrs, ...body } : attrs;
}

const EVENT_ROLES: Record<string, string> = {
  "gen_ai.system.message": "system",
  "gen_ai.user.message": "user",
  "gen_ai.assistant.message": "assistant",
  "gen_ai.tool.message": "tool",
};

/** The system text an inference span was given apart from its messages (`gen_ai.system_instructions`). */
export function systemInstructions(span: OtelSpan): string | undefined {
  const value = maybeJson(span.attrs["gen_ai.system_instructions"]);
  if (value === undefined) return undefined;
  const out = Array.isArray(value)
    ? value
        .flatMap((part) => (isRecord(part) && typeof part.content === "string" ? [part.content] : typeof part === "string" ? [part] : []))
        .join("\n")
    : text(value);
  return out.trim() === "" ? undefined : out;
}

/** The messages an inference span sent to the model, in order. */
export function inputMessages(span: OtelSpan): ChatMessage[] {
  const a = span.attrs;
  if (a["gen_ai.input.messages"] !== undefined) return messageList(a["gen_ai.input.messages"]);
  if (Object.keys(a).some((key) => key.startsWith("llm.input_messages.")))
    return unflatten(a, "llm.input_messages").flatMap((m) => openInferenceMessage(m) ?? []);
  if (Object.keys(a).some((key) => key.startsWith("gen_ai.prompt."))) return unflatten(a, "gen_ai.prompt").map(openAiMessage);
  const fromEvents: ChatMessage[] = [];
  for (const event of span.events) {
    const role = EVENT_ROLES[event.name];
    if (role) fromEvents.push(openAiMessage({ ...eventBody(event.attrs), role }));
    else if (event.name === "gen_ai.content.prompt") fromEvents.push(...messageList(event.attrs["gen_ai.prompt"]));
  }
  if (fromEvents.length > 0) return fromEvents;
  return messageList(a["gen_ai.prompt"]);
}

/** The model's reply on an inference span (its first choice). */
export function outputMessage(span: OtelSpan): ChatMessage | undefined {
  const a = span.attrs;
  let messages: ChatMessage[] = [];
  if (a["gen_ai.output.messages"] !== undefined) messages = messageList(a["gen_ai.output.messages"]);
  else if (Object.keys(a).some((key) => key.startsWith("llm.output_messages.")))
    messages = unflatten(a, "llm.output_messages").flatMap((m) => openInferenceMessage(m) ?? []);
  else if (Object.keys(a).some((key) => key.startsWith("gen_ai.completion.")))
    messages = unflatten(a, "gen_ai.completion").map(openAiMessage);
  else {
    for (const event of span.events) {
      if (event.name === "gen_ai.choice") {
        const body = eventBody(event.attrs);
        const message = maybeJson(body.message);
        messages.push(openAiMessage({ role: "assistant", ...(isRecord(message) ? message : body) }));
      } else if (event.name === "gen_ai.content.completion") messages.push(...messageList(event.attrs["gen_ai.completion"]));
    }
    if (messages.length === 0 && a["gen_ai.completion"] !== undefined) messages = messageList(a["gen_ai.completion"]);
  }
  const first = messages[0];
  return first ? { ...first, role: "assistant" } : undefined;
}

/** Tool specs the model was offered (`gen_ai.tool.definitions`, OpenInference `llm.tools.N.tool.json_schema`). */
export function toolDefinitions(span: OtelSpan): unknown[] {
  const defined = maybeJson(span.attrs["gen_ai.tool.definitions"]);
  if (Array.isArray(defined)) return defined;
  return unflatten(span.attrs, "llm.tools").flatMap((item) => {
    const tool = isRecord(item.tool) ? item.tool : {};
    const schema = maybeJson(tool.json_schema);
    return schema !== undefined ? [schema] : [];
  });
}

export interface ToolExecution {
  call: ChatCall;
  /** The result as text, undefined when the span recorded none. */
  result?: string;
  error: boolean;
}

/** What a tool span ran and what it returned (an MCP CallToolResult's text, a JSON string's text). */
export function toolExecution(span: OtelSpan): ToolExecution | undefined {
  const a = span.attrs;
  const name = a["gen_ai.tool.name"] ?? a["tool.name"] ?? a["traceloop.entity.name"] ?? span.name.replace(/^execute_tool\s+/, "");
  const args =
    a["gen_ai.tool.call.arguments"] ??
    a["tool_call.function.arguments"] ??
    a["input.value"] ??
    a.tool_arguments ??
    a["traceloop.entity.input"];
  const made = call(a["gen_ai.tool.call.id"] ?? a["tool.id"] ?? a["tool_call.id"], name, args);
  if (!made) return undefined;
  const raw = a["gen_ai.tool.call.result"] ?? a["output.value"] ?? a.tool_response ?? a["traceloop.entity.output"];
  let error = span.error || a["error.type"] !== undefined;
  let result: string | undefined;
  if (raw !== undefined) {
    const value = maybeJson(raw);
    // An MCP CallToolResult: its text content, `isError` an error.
    if (isRecord(value) && Array.isArray(value.content) && value.content.every((item) => isRecord(item) && typeof item.type === "string")) {
      result = value.content.map((item) => (typeof item.text === "string" ? item.text : `[${String(item.type ?? "content")}]`)).join("\n");
      if (value.isError === true) error = true;
    } else result = typeof value === "string" ? value : text(raw);
  }
  if (result === undefined && error) result = errorText(span);
  return { call: made, ...(result !== undefined ? { result } : {}), error };
}

/** A failed span's error: its exception event, else its status message, else `error.type`. */
function errorText(span: OtelSpan): string {
  const exception = span.events.find((event) => event.name === "exception");
  if (exception) {
    const type = exception.attrs["exception.type"];
    const message = exception.attrs["exception.message"];
    const parts = [typeof type === "string" ? type : "", typeof message === "string" ? message : ""].filter((p) => p !== "");
    if (parts.length > 0) return parts.join(": ");
  }
  if (span.statusMessage !== undefined) return span.statusMessage;
  const type = span.attrs["error.type"];
  return typeof type === "string" ? `[error: ${type}]` : "[error]";
}

/** A task given to an agent span (`gen_ai.input.messages`, OpenInference `input.value`): its text. */
export function agentInput(span: OtelSpan): string | undefined {
  const first = inputMessages(span).find((m) => m.role === "user" && m.content.trim() !== "");
  if (first) return first.content;
  const value = maybeJson(span.attrs["input.value"]);
  if (typeof value === "string") return value.trim() === "" ? undefined : value;
  if (isRecord(value)) {
    for (const key of ["input", "query", "question", "task", "prompt", "message", "user_input"])
      if (typeof value[key] === "string" && (value[key] as string).trim() !== "") return value[key] as string;
  }
  return undefined;
}
