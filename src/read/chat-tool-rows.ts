import type { QuarantineEntry } from "../core/errors.ts";
import type { Domain, SourceRef, Trajectory, Turn } from "../core/trajectory.ts";
import { openDecompressed } from "../io/open-input.ts";
import { messageText } from "./chat-turns.ts";
import { jsonFileLayout } from "./json-array.ts";
import { type JsonKind, type JsonPath, JsonSyntaxError, selectJson } from "./json-select.ts";
import { miniSweAgentReader } from "./mini-swe-agent.ts";
import { excerpt, firstLine, parseJsonLine, type Reader, type ReaderOptions, type ReadItem } from "./reader.ts";
import { contentId, describeType, isRecord, jsonObjectLines, MAX_JSON_DEPTH, nestsTooDeep } from "./record-helpers.ts";
import { sweSmithReader } from "./swe-smith.ts";

const FORMAT = "chat-tool-rows";

/**
 * Chat rows with tool calls, as SFT / agent corpora ship them (SWE-rebench-OpenHands, SWE-Gym,
 * tau-bench, Toucan-1.5M, Hermes function calling, LLaMA-Factory ShareGPT, APIGen-MT, ToolBench,
 * Glaive, Qwen-Agent, Anthropic Messages API and OpenAI Responses API logs): one conversation per
 * JSONL line, per element of a top-level JSON array (streamed element by element with stream-json),
 * or one pretty-printed JSON object (a file whose first line is `{` alone).
 *
 * The conversation is the row's `messages`, `conversations`, `traj` (tau-bench) or `trajectory`
 * (SWE-rebench) — an array, or a JSON string of one (Toucan). Messages are OpenAI-style
 * (`role` system/developer/user/assistant/tool, assistant `tool_calls[].function{name, arguments}`
 * with arguments a JSON string or an object, legacy `function_call` and role `function`,
 * `tool_call_id`, content a string, null or text parts; a tool content that is a JSON object or a
 * list of values is its JSON text) or ShareGPT-style (`from` system/human/gpt/function_call/
 * observation/tool, `value`). Hermes calls are `<tool_call>{json}</tool_call>` blocks in an
 * assistant text and `<tool_response>…</tool_response>` blocks in a tool text (or in a user text
 * that holds nothing else). Tool results given as content parts are their text parts, a media
 * part `[image]` / `[file]` / … (typed parts, and Qwen-Agent's `{text}` / `{image}` items).
 * Other dialects:
 * - Anthropic Messages API: `tool_use` blocks {id, name, input} of an assistant message are its
 *   calls, the `tool_result` blocks {tool_use_id, content} of the next user message their results
 *   (that message's own text is the user's words); `thinking` blocks are reasoning; server-tool
 *   blocks (`server_tool_use`, `web_search_tool_result`, …) and `redacted_thinking` are counted.
 * - OpenAI Responses API: a row with `input` (a string or a list of items) and/or `output` items
 *   (lists, or JSON strings of them). `function_call` / `custom_tool_call` / `local_shell_call`
 *   → their `*_output` by `call_id`; `mcp_call` holds its own output; a `reasoning` item's
 *   summary is the next assistant message's reasoning; `instructions` is the system; hosted-tool
 *   items whose results the log lacks (`web_search_call`, `computer_call`, …) are counted.
 * - ToolBench: with role `function` results, an assistant text "Thought: … Action: NAME
 *   Action Input: {…}" is a call (the thought its text); `Action: Finish` is the final answer.
 * - Glaive: `system` + a `chat` transcript of "USER:", "ASSISTANT:" (a call is
 *   `<functioncall> {"name", "arguments": '{…}'}`) and "FUNCTION RESPONSE:" parts.
 * - xLAM / APIGen rows (`query`, `answers`, `tools`: calls and no results) are claimed and each
 *   quarantined with that reason, never read as turns.
 *
 * - Action: the tool calls of one assistant step — one message's `tool_calls`, or consecutive
 *   assistant messages that each carry one call before any result (Toucan's parallel calls). A
 *   shell tool's call (bash, execute_bash, shell, run_command, …) is its `command` itself; any
 *   other call is `{"name": …, "arguments": {…}}` (arguments parsed when they are a JSON string).
 *   A Hermes block that is not JSON (Python-dict quoting) is kept as written.
 * - Observation: the tool results, matched to the calls by `tool_call_id` (`tool_use_id`,
 *   `call_id`), else by the function's `name` (legacy role `function`), else in order. With
 *   several calls in one step, the action is `[call i/N]` + each call and the observation
 *   `[result i/N]` + each result, in call order (a call without result shows `[no result]`).
 *   `turn.meta`: `tool` (or `tools` and `parallel_calls`), `observation_format: "json"` when the
 *   one result of a non-shell call is a JSON object or array.
 * - Thinking: the assistant's text beside its calls, and a text-only assistant message directly
 *   before a calling one, is `turn.meta.agent_thought`; `reasoning_content` / `reasoning` is
 *   `turn.meta.agent_reasoning`. Context, never observation.
 * - Not environment turns: assistant messages to the user (no call) and the user's replies. They
 *   go, in order, to the next turn's `meta.dialogue` ([{role, text}]); the last assistant text
 *   with no call after it is `meta.final_answer`. Calls never answered, results matching no call
 *   and unknown roles are counted in `meta.skipped`.
 * - Task: the first user message. `meta.agent_system`: the system message(s) and then the tools (`tools`,
 *   `available_tools` or `functions`, a list or a JSON string of one; a top-level `system` — a
 *   string or text blocks, Glaive's without its "SYSTEM:" label — or Responses `instructions`
 *   too), one spec per line under `## Tools`.
 * - Outcome / provenance in `meta`: `outcome` {resolved, success, reward, failure_mode} where the
 *   row has them, `agent`, `model`, `task_id` (`instance_id`, else `task_id`), `attempt`
 *   (`attempt`, else `trial`), and `repo`, `exit_status`, `subset_name`, `category`, `dataset`.
 * - Id: `trajectory_id`, `traj_id`, `id` or `uuid`; else, with only an `instance_id`, that id
 *   plus a hash of the row (attempts of one instance stay apart); else a hash of the row.
 * - Domain (unless set): a shell or file-editing tool → `swe` when the row shows a repository
 *   (an editing tool, a `repo`/`instance_id`/patch field, a git command), else `terminal`; a
 *   browser tool → `web`; a web-search tool → `search`; any other function tools → `mcp`.
 *
 * A row with no answered call is quarantined. Rows in Parquet are not read here (see the notes).
 */
export const chatToolRowsReader: Reader = {
  name: FORMAT,
  domain: "from the tools",
  description:
    "OpenAI / Hermes / ShareGPT chat rows with tool calls (messages or conversations, tools), one per JSONL line or JSON-array element",

  sniff(head, path) {
    const text = head.replace(/^\uFEFF/, "");
    const start = text.trimStart();
    if (start.startsWith("[")) {
      // An array of rows, not a bare message array (mini-swe-agent, OpenHands events).
      if (/^\[\s*\{\s*"(role|from|content|action|observation)"/.test(start)) return false;
      return /^\[\s*\{/.test(start) && CONVERSATION_KEY.test(start) && TOOL_EVIDENCE.test(start);
    }
    if (!start.startsWith("{")) return false;
    // SWE-smith rows (`messages` with `<function=…>` XML calls) and mini-swe-agent files are theirs.
    if (sweSmithReader.sniff(head, path) || miniSweAgentReader.sniff(head, path)) return false;
    const parsed = parseJsonLine(firstLine(text));
    if (parsed.ok) return isRecord(parsed.value) && isChatRow(parsed.value);
    // A pretty-printed row, or a first line longer than the head: the keys tell.
    return CONVERSATION_KEY.test(start) && TOOL_EVIDENCE.test(start) && !/"trajectory_format"\s*:/.test(start);
  },

  // JSONL is cut by byte range like any line-per-record file; a JSON array or a single document
  // is read whole by the task whose range starts the file (the others yield nothing).
  splittable: true,

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    const layout = await jsonFileLayout(path);
    if (layout === "jsonl") {
      for await (const line of jsonObjectLines(path, options, FORMAT)) {
        if (line.kind === "quarantine") yield line;
        else yield rowItem(line.record, line.source, line.source.offset === 0 ? line.text.replace(/^\uFEFF/, "") : line.text, options);
      }
      return;
    }
    if (options.range && options.range.start > 0) return;
    yield* readDocument(path, layout, options);
  },
};

/** Keys holding the conversation, in the order they are looked for. */
const CONVERSATION_KEYS = ["messages", "conversations", "traj", "trajectory"] as const;

const CONVERSATION_KEY = new RegExp(
  [
    String.raw`"(messages|conversations|traj|trajectory)"\s*:\s*(\[\s*\{\s*"(role|from|content|value|name|tool_calls|tool_call_id|reasoning_content|type)"|"\s*\[\s*\{\s*\\"(role|from|content|type)\\")`,
    // OpenAI Responses API items.
    String.raw`"(input|output)"\s*:\s*\[\s*\{\s*"(type|role|id)"`,
    // Glaive's `chat` transcript.
    String.raw`"chat"\s*:\s*"(SYSTEM|USER|ASSISTANT): `,
  ].join("|"),
);

/** Signs of tool use in a head too long to parse (quotes may be escaped: Toucan's messages are a JSON string). */
const TOOL_EVIDENCE = new RegExp(
  [
    String.raw`\\?"tool_calls\\?"\s*:\s*\[\s*\{`,
    String.raw`\\?"function_call\\?"\s*:\s*[{"\\]`,
    String.raw`\\?"role\\?"\s*:\s*\\?"(tool|function|ipython)\\?"`,
    String.raw`\\?"from\\?"\s*:\s*\\?"(function_call|observation|tool|function|tool_call|tool_response)\\?"`,
    // Anthropic content blocks, OpenAI Responses items.
    String.raw`\\?"type\\?"\s*:\s*\\?"(tool_use|tool_result|function_call|function_call_output)\\?"`,
    "<tool_call>",
    "<functioncall>",
    String.raw`"(tools|available_tools|functions)"\s*:\s*(\[\s*\{|"\s*\[)`,
  ].join("|"),
);

/** A message (a string `role` or `from`) or an OpenAI Responses API item of a known type. */
function isMessageOrItem(m: unknown): boolean {
  return (
    isRecord(m) && (typeof m.role === "string" || typeof m.from === "string" || (typeof m.type === "string" && RESPONSES_ITEMS.has(m.type)))
  );
}

/**
 * A parsed row that is a chat with tool use: a conversation of role/from messages (or Responses
 * items) and a sign of tools. An xLAM / APIGen row (`query`, `answers`, `tools`) is claimed too,
 * to be refused with its reason rather than left unrecognized.
 */
export function isChatRow(row: Record<string, unknown>): boolean {
  const found = conversationOf(row);
  if (!found) return isXlamRow(row);
  if (found.key === "chat") return typeof row.chat === "string" && /<functioncall>|(^|\n)\s*FUNCTION RESPONSE:/.test(row.chat);
  if (!Array.isArray(found.value) || found.value.length === 0) return false;
  const messages = found.value;
  if (!messages.every(isMessageOrItem)) return false;
  if (toolSpecs(row).length > 0) return true;
  return messages.some((m) => {
    const message = m as Record<string, unknown>;
    if (typeof message.type === "string" && RESPONSES_TOOL_ITEMS.has(message.type)) return true;
    const role = String(message.role ?? message.from).toLowerCase();
    if (Array.isArray(message.tool_calls) && message.tool_calls.length > 0) return true;
    if (isRecord(message.function_call)) return true;
    if (TOOL_ROLES.has(role) || CALL_ROLES.has(role)) return true;
    if (Array.isArray(message.content) && message.content.some((b) => isRecord(b) && (b.type === "tool_use" || b.type === "tool_result")))
      return true;
    const text = typeof message.content === "string" ? message.content : typeof message.value === "string" ? message.value : "";
    return text.includes("<tool_call>");
  });
}

/**
 * An xLAM / APIGen function-calling row: a `query`, the `answers` (the calls a model should make)
 * and the `tools`; no tool ever ran, so there is no result to observe.
 */
function isXlamRow(row: Record<string, unknown>): boolean {
  return typeof row.query === "string" && row.answers !== undefined && row.answers !== null && row.tools !== undefined;
}

/**
 * The conversation of a row: its key and elements (a JSON string parsed), with each element's
 * field path where it is not `key.i`; undefined when none. Looked for in CONVERSATION_KEYS, then
 * OpenAI Responses items (`input` then `output`), then Glaive's `chat` transcript.
 */
function conversationOf(row: Record<string, unknown>): { key: string; value: unknown; fields?: string[]; parseError?: string } | undefined {
  for (const key of CONVERSATION_KEYS) {
    // A null column is absent: a Hub dataset mixing layouts (Parquet) has every layout's column, null where unused.
    if (!(key in row) || row[key] === null) continue;
    const value = row[key];
    if (typeof value !== "string") return { key, value };
    const parsed = parseJsonLine(value);
    return parsed.ok ? { key, value: parsed.value } : { key, value, parseError: parsed.reason };
  }
  const responses = responsesConversation(row);
  if (responses) return responses;
  if (typeof row.chat === "string") {
    const messages = glaiveMessages(row.chat);
    if (messages) return { key: "chat", value: messages, fields: messages.map(() => "chat") };
  }
  return undefined;
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
function responsesConversation(row: Record<string, unknown>): { key: string; value: unknown[]; fields: string[] } | undefined {
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

/** A top-level array of rows (each element assembled on its own) or one pretty-printed row. */
async function* readDocument(path: string, layout: "array" | "document", options: ReaderOptions): AsyncGenerator<ReadItem> {
  const wanted =
    layout === "array"
      ? (at: JsonPath, _kind: JsonKind) => at.length === 1 && typeof at[0] === "number"
      : (at: JsonPath, _kind: JsonKind) => at.length === 0;
  const { stream } = await openDecompressed(path);
  let index = 0;
  try {
    for await (const { path: at, value } of selectJson(stream, wanted)) {
      // Offset 0: the whole document belongs to the task whose byte range starts the file; the
      // element's index names it.
      const source: SourceRef =
        layout === "array" ? { uri: path, offset: 0, row: at[0] as number, format: FORMAT } : { uri: path, offset: 0, format: FORMAT };
      const where = layout === "array" ? `element ${at[0]}: ` : "";
      index += 1;
      if (!isRecord(value)) {
        yield quarantine(source, { reason: `${where}expected a JSON object (a chat row), got ${describeType(value)}` });
        continue;
      }
      // Checked before stringifying: a row nested thousands deep would overflow the stack.
      if (nestsTooDeep(value)) {
        yield quarantine(source, { reason: `${where}the row nests deeper than ${MAX_JSON_DEPTH} levels` });
        continue;
      }
      yield rowItem(value, source, JSON.stringify(value), options, where);
    }
  } catch (err) {
    if (!(err instanceof JsonSyntaxError)) throw err;
    const what = layout === "array" ? `the JSON array breaks after element ${index - 1}` : "the file is not one JSON document";
    yield quarantine({ uri: path, format: FORMAT }, { reason: `${what}: ${err.message}` });
  }
}

function quarantine(source: SourceRef, entry: Omit<QuarantineEntry, "source" | "stage">, text?: string): ReadItem {
  return { kind: "quarantine", entry: { source, stage: "read", ...entry, ...(text !== undefined ? { excerpt: excerpt(text) } : {}) } };
}

// ---------------------------------------------------------------------------------------------
// Messages

/** One tool call: its name and id when known, its arguments parsed, or its text as written. */
interface Call {
  name?: string;
  id?: string;
  args?: unknown;
  /** A call that could not be parsed (a Hermes block in Python-dict quoting): the action as written. */
  raw?: string;
}

/**
 * A message in one shape whatever the row's dialect. Besides the chat roles, `reasoning` (a
 * Responses reasoning item: context for the next assistant message) and `other` (an element that
 * is no message of the interaction, counted under `skipped`).
 */
interface Message {
  role: string;
  text: string;
  calls: Call[];
  /** A tool message's results (several `<tool_response>` blocks in one Hermes message). */
  results: string[];
  toolCallId?: string;
  /** The function a result answers, where the message names it and no id (Qwen-Agent's role `function` + `name`). */
  toolName?: string;
  reasoning?: string;
  /** What the message held that is left out, counted in `meta.skipped`. */
  skipped?: string[];
}

/** A problem with one field of a row. */
class FieldError extends Error {
  readonly field: string;
  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

const ROLE_ALIASES: Record<string, string> = {
  human: "user",
  user: "user",
  gpt: "assistant",
  assistant: "assistant",
  model: "assistant",
  chatgpt: "assistant",
  system: "system",
  // OpenAI's newer name for the system message.
  developer: "system",
};
/** Roles whose message is a tool result. */
const TOOL_ROLES = new Set(["tool", "function", "observation", "ipython", "tool_response", "function_response"]);
/** ShareGPT roles whose message is a call (its value a JSON call or list of calls). */
const CALL_ROLES = new Set(["function_call", "tool_call"]);
/** Responses API items that are a tool call or its output (read as turns). */
const RESPONSES_TOOL_ITEMS = new Set([
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

const TOOL_CALL_BLOCK = /<tool_call>([\s\S]*?)(?:<\/tool_call>|$)/g;
const TOOL_RESPONSE_BLOCK = /<tool_response>([\s\S]*?)<\/tool_response>/g;

/** How the row's messages are read: `react` when results come as tool messages (ToolBench), so a ReAct `Action:` is a call. */
interface Dialect {
  react: boolean;
}

function makeMessage(role: string, text: string, extra: Partial<Message> = {}): Message {
  return { role, text, calls: [], results: [], ...extra };
}

/** One element of a conversation as its message(s): an Anthropic user turn of tool results is one per result. */
function normalizeMessage(raw: unknown, field: string, dialect: Dialect): Message[] {
  if (raw instanceof GlaiveMessage) return [raw.message];
  if (!isRecord(raw)) throw new FieldError(field, `${field}: expected a message object, got ${describeType(raw)}`);
  const shareGpt = typeof raw.role !== "string" && typeof raw.from === "string";
  const roleValue = shareGpt ? raw.from : raw.role;
  // A Responses API item (`{type: "message", role, …}` has a role and is read as a message).
  if (typeof roleValue !== "string" && typeof raw.type === "string") return responsesItem(raw, raw.type, field);
  if (typeof roleValue !== "string") throw new FieldError(`${field}.role`, `${field}: expected a message with a string role (or from)`);
  const contentKey = shareGpt ? "value" : "content";
  const lower = roleValue.toLowerCase();
  // A missing content is an empty one (an assistant message with only tool calls).
  const content = raw[contentKey] === undefined ? null : raw[contentKey];
  // Anthropic Messages API: the user turn after tool_use blocks carries their tool_result blocks.
  if (Array.isArray(content) && content.some((b) => isRecord(b) && b.type === "tool_result")) {
    return anthropicResults(content, `${field}.${contentKey}`);
  }
  const text = TOOL_ROLES.has(lower) ? resultText(content) : messageText(content);
  if (text === undefined) {
    throw new FieldError(
      `${field}.${contentKey}`,
      `${field}.${contentKey}: expected a string or text parts, got ${describeType(raw[contentKey])}`,
    );
  }
  // Anthropic thinking blocks, else `reasoning_content` / `reasoning`.
  const thinking = Array.isArray(content)
    ? content
        .flatMap((b) => (isRecord(b) && b.type === "thinking" && typeof b.thinking === "string" ? [b.thinking.trim()] : []))
        .join("\n\n")
    : "";
  const reasoning = [raw.reasoning_content, raw.reasoning, thinking]
    .find((r): r is string => typeof r === "string" && r.trim() !== "")
    ?.trim();
  const base = { text, results: [] as string[], ...(reasoning ? { reasoning } : {}) };
  if (CALL_ROLES.has(lower)) return [{ ...base, role: "assistant", text: "", calls: shareGptCalls(text, `${field}.${contentKey}`) }];
  // A user turn that only carries `<tool_response>` blocks (Hermes exports that answer as the user) is a tool message.
  const userResponses =
    ROLE_ALIASES[lower] === "user" && text.includes("<tool_response>") && text.replace(TOOL_RESPONSE_BLOCK, "").trim() === "";
  if (TOOL_ROLES.has(lower) || userResponses) {
    const blocks = [...text.matchAll(TOOL_RESPONSE_BLOCK)].map((m) => (m[1] as string).trim());
    const id = typeof raw.tool_call_id === "string" && raw.tool_call_id !== "" ? raw.tool_call_id : undefined;
    const name = id === undefined && typeof raw.name === "string" && raw.name !== "" ? raw.name : undefined;
    return [
      {
        ...base,
        role: "tool",
        calls: [],
        results: blocks.length > 0 ? blocks : [text],
        ...(id ? { toolCallId: id } : {}),
        ...(name ? { toolName: name } : {}),
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
  const skipped = Array.isArray(content) ? skippedBlocks(content) : [];
  const withSkipped = skipped.length > 0 ? { ...base, skipped } : base;
  // Hermes / Qwen: calls written into the text.
  const blocks = [...text.matchAll(TOOL_CALL_BLOCK)];
  if (blocks.length > 0) {
    const rest = text.replace(TOOL_CALL_BLOCK, "").trim();
    return [{ ...withSkipped, role, text: rest, calls: blocks.map((m) => textCall(m[1] as string)) }];
  }
  // ToolBench: "Thought: … Action: NAME Action Input: {…}", answered by a role `function` message.
  const react = dialect.react ? reactStep(text) : undefined;
  if (react) return [{ ...withSkipped, role, text: react.text, calls: react.calls }];
  return [{ ...withSkipped, role, calls: [] }];
}

/**
 * A tool result's text: a string; null or absent (empty); a list of content parts, whose text
 * parts are joined by newlines and whose media parts are `[image]`, `[file]`, … (OpenAI / Anthropic
 * typed parts, Qwen-Agent's `{text}` / `{image}` items). Undefined when it is none of these.
 */
function partsText(content: unknown): string | undefined {
  if (typeof content === "string") return content;
  if (content === null || content === undefined) return "";
  if (!Array.isArray(content)) return undefined;
  const texts: string[] = [];
  for (const part of content) {
    if (typeof part === "string") texts.push(part);
    else if (!isContentPart(part)) return undefined;
    else if (typeof part.text === "string") texts.push(part.text);
    else {
      const kind = typeof part.type === "string" ? part.type : (Object.keys(part)[0] as string);
      texts.push(`[${kind.replace(/^input_/, "").replace(/_url$/, "")}]`);
    }
  }
  return texts.join("\n");
}

const MEDIA_KEYS = new Set(["text", "image", "file", "audio", "video"]);

/** A content part: a typed one (`{type, …}`), or a Qwen-Agent item (one key of text / image / file / audio / video). */
function isContentPart(part: unknown): part is Record<string, unknown> {
  if (!isRecord(part)) return false;
  if (typeof part.type === "string") return true;
  const keys = Object.keys(part);
  return keys.length === 1 && MEDIA_KEYS.has(keys[0] as string) && typeof part[keys[0] as string] === "string";
}

/**
 * A tool message's content: a string, null (empty) or content parts (partsText); a JSON value
 * stored as it is (an object, or a list of anything but content parts) is its JSON text.
 */
function resultText(content: unknown): string | undefined {
  if (isRecord(content)) return JSON.stringify(content);
  if (Array.isArray(content) && !content.every((part) => typeof part === "string" || isContentPart(part))) return JSON.stringify(content);
  return partsText(content);
}

/** An Anthropic assistant turn's `tool_use` blocks as calls, its text blocks as its text. */
function anthropicCalls(content: unknown[], field: string): Pick<Message, "calls" | "skipped"> {
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
function skippedBlocks(content: unknown[]): string[] {
  return content.flatMap((block) =>
    isRecord(block) && typeof block.type === "string" && typeof block.text !== "string" && !["thinking", "tool_use"].includes(block.type)
      ? [`${block.type}_block`]
      : [],
  );
}

/** An Anthropic user turn with `tool_result` blocks: a tool message per result, then the user's own text, if any. */
function anthropicResults(content: unknown[], field: string): Message[] {
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
      messages.push(makeMessage("tool", text, { results: [text], ...(id ? { toolCallId: id } : {}) }));
    } else if (typeof block.text === "string") texts.push(block.text);
  }
  const text = texts.join("\n");
  if (text.trim() !== "") messages.push(makeMessage("user", text));
  return messages;
}

/** One OpenAI Responses API item (an element of `input` / `output` with no role). */
function responsesItem(raw: Record<string, unknown>, type: string, field: string): Message[] {
  const callId = typeof raw.call_id === "string" && raw.call_id !== "" ? raw.call_id : typeof raw.id === "string" ? raw.id : undefined;
  const withId = callId !== undefined ? { id: callId } : {};
  const name = () => {
    if (typeof raw.name === "string" && raw.name !== "") return raw.name;
    throw new FieldError(`${field}.name`, `${field}.name: expected a non-empty string, got ${describeType(raw.name)}`);
  };
  const output = (value: unknown, key: string) => {
    const text = isRecord(value) ? JSON.stringify(value) : partsText(value);
    if (text === undefined)
      throw new FieldError(`${field}.${key}`, `${field}.${key}: expected a string or content parts, got ${describeType(value)}`);
    return makeMessage("tool", text, { results: [text], ...(callId !== undefined ? { toolCallId: callId } : {}) });
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
      if (raw.error !== undefined && raw.error !== null) return [call, output(raw.error, "error")];
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

/** OpenAI `tool_calls` or the legacy `function_call` of an assistant message. */
function structuredCalls(raw: Record<string, unknown>, field: string): Call[] {
  if (raw.tool_calls !== undefined && raw.tool_calls !== null) {
    if (!Array.isArray(raw.tool_calls)) {
      throw new FieldError(`${field}.tool_calls`, `${field}.tool_calls: expected an array, got ${describeType(raw.tool_calls)}`);
    }
    return raw.tool_calls.map((call, i) => {
      const at = `${field}.tool_calls.${i}`;
      if (!isRecord(call)) throw new FieldError(at, `${at}: expected a tool call object, got ${describeType(call)}`);
      const fn = isRecord(call.function) ? call.function : call;
      if (typeof fn.name !== "string" || fn.name === "") {
        throw new FieldError(`${at}.function.name`, `${at}.function.name: expected a non-empty string, got ${describeType(fn.name)}`);
      }
      return {
        name: fn.name,
        ...(typeof call.id === "string" ? { id: call.id } : {}),
        args: parseArguments(fn.arguments ?? fn.parameters),
      };
    });
  }
  if (raw.function_call !== undefined && raw.function_call !== null) {
    const fn = raw.function_call;
    if (!isRecord(fn) || typeof fn.name !== "string") {
      throw new FieldError(`${field}.function_call`, `${field}.function_call: expected {name, arguments}, got ${describeType(fn)}`);
    }
    return [{ name: fn.name, args: parseArguments(fn.arguments) }];
  }
  return [];
}

/** Arguments as a value: a JSON string parsed, an object as it is, a non-JSON string kept as text. */
function parseArguments(args: unknown): unknown {
  if (args === undefined || args === null) return {};
  if (typeof args !== "string") return args;
  const parsed = parseJsonLine(args);
  return parsed.ok ? parsed.value : args;
}

/** A ShareGPT `function_call` message's value: one call or a list of calls, as JSON. */
function shareGptCalls(text: string, field: string): Call[] {
  const parsed = parseJsonLine(text);
  if (!parsed.ok) return [textCall(text)];
  const list = Array.isArray(parsed.value) ? parsed.value : [parsed.value];
  if (list.length === 0) throw new FieldError(field, `${field}: an empty list of calls`);
  return list.map((value) => callFromJson(value) ?? { raw: JSON.stringify(value) });
}

/** A call written as text (a Hermes block): JSON `{name, arguments}`, else the text as written. */
function textCall(inner: string): Call {
  const text = inner.trim();
  const parsed = parseJsonLine(text);
  const call = parsed.ok ? callFromJson(parsed.value) : undefined;
  if (call) return call;
  const name = /["']name["']\s*:\s*["']([^"']+)["']/.exec(text)?.[1];
  return { raw: text, ...(name ? { name } : {}) };
}

function callFromJson(value: unknown): Call | undefined {
  if (!isRecord(value) || typeof value.name !== "string") return undefined;
  return { name: value.name, args: parseArguments(value.arguments ?? value.parameters) };
}

/**
 * A ToolBench assistant message "Thought: … Action: NAME Action Input: {…}" (the first `Action:`
 * line directly followed by an `Action Input:` line, which runs to the end): one call, the thought
 * its text. `Finish` is ToolBench's closing function, never answered: its `final_answer` (or its
 * input) is the message's text, a reply with no call. Read line by line (no backtracking regex).
 */
function reactStep(text: string): { text: string; calls: Call[] } | undefined {
  const lines = text.split("\n");
  for (let i = 0; i + 1 < lines.length; i++) {
    const action = /^[ \t]*Action:(.*)$/.exec(lines[i] as string);
    const input = action ? /^[ \t]*Action Input:(.*)$/.exec(lines[i + 1] as string) : null;
    const name = action?.[1]?.trim();
    if (!input || !name) continue;
    const argsText = [input[1], ...lines.slice(i + 2)].join("\n").trim();
    const args = argsText === "" ? {} : parseArguments(argsText);
    if (name === "Finish") {
      const answer = isRecord(args) && typeof args.final_answer === "string" ? args.final_answer : argsText;
      return { text: answer, calls: [] };
    }
    const thought = lines
      .slice(0, i)
      .join("\n")
      .trim()
      .replace(/^Thought:\s*/, "");
    return { text: thought, calls: [{ name, args }] };
  }
  return undefined;
}

/** A message Glaive's `chat` transcript holds, already in the reader's shape. */
class GlaiveMessage {
  readonly message: Message;
  constructor(message: Message) {
    this.message = message;
  }
}

const GLAIVE_MARKER = /(?:^|\n)[ \t]*(USER|ASSISTANT|FUNCTION RESPONSE|SYSTEM):[ \t]?/g;
const GLAIVE_ROLES: Record<string, string> = { USER: "user", ASSISTANT: "assistant", "FUNCTION RESPONSE": "tool", SYSTEM: "system" };

/**
 * Glaive function-calling (v1/v2) `chat`: "USER: …", "ASSISTANT: …" (a call is
 * `<functioncall> {"name": …, "arguments": '{…}'}`), "FUNCTION RESPONSE: …", each reply ending
 * in `<|endoftext|>`. Undefined when the text has no such marker.
 */
function glaiveMessages(chat: string): GlaiveMessage[] | undefined {
  const markers = [...chat.matchAll(GLAIVE_MARKER)];
  if (markers.length === 0) return undefined;
  const messages: GlaiveMessage[] = [];
  const before = chat.slice(0, markers[0]?.index).trim();
  if (before !== "") messages.push(new GlaiveMessage(makeMessage("other", "", { skipped: ["chat_text_before_first_role"] })));
  for (const [i, marker] of markers.entries()) {
    const end = markers[i + 1]?.index ?? chat.length;
    const text = chat
      .slice((marker.index as number) + marker[0].length, end)
      .trim()
      .replace(/\s*<\|endoftext\|>$/, "");
    const role = GLAIVE_ROLES[marker[1] as string] as string;
    const at = text.indexOf("<functioncall>");
    if (role === "assistant" && at !== -1) {
      const call = glaiveCall(text.slice(at + "<functioncall>".length).replace(/\s*<\|endoftext\|>/g, ""));
      messages.push(new GlaiveMessage(makeMessage("assistant", text.slice(0, at).trim(), { calls: [call] })));
    } else if (role === "tool") messages.push(new GlaiveMessage(makeMessage("tool", text, { results: [text] })));
    else messages.push(new GlaiveMessage(makeMessage(role, text)));
  }
  return messages;
}

/** A Glaive call: JSON, or JSON whose `arguments` is a single-quoted JSON string (as the dataset writes it). */
function glaiveCall(text: string): Call {
  const quoted = /^\{\s*"name"\s*:\s*"([^"]+)"\s*,\s*"arguments"\s*:\s*'([\s\S]*)'\s*\}$/.exec(text.trim());
  if (quoted) return { name: quoted[1] as string, args: parseArguments(quoted[2]) };
  return textCall(text);
}

// ---------------------------------------------------------------------------------------------
// Tools and domains

/** Lower-case words of a tool name (`execute_bash` → execute, bash; `runShellCommand` → run, shell, command). */
function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== "");
}

const SHELL_WORDS = new Set(["bash", "shell", "sh", "zsh", "terminal", "powershell", "cmd"]);
const RUN_WORDS = new Set(["run", "exec", "execute"]);
const EDIT_NAMES =
  /^(str_replace_editor|str_replace_based_edit_tool|edit_file|write_file|create_file|apply_patch|file_editor|replace_in_file|search_replace|edit|insert_content|write_to_file)$/i;
const BROWSER_WORDS = new Set(["browser", "browse", "click", "goto", "navigate", "playwright", "puppeteer", "selenium", "scroll", "hover"]);
const SEARCH_ENGINE_WORDS = new Set([
  "web",
  "google",
  "bing",
  "brave",
  "tavily",
  "duckduckgo",
  "ddg",
  "serper",
  "serp",
  "serpapi",
  "exa",
  "searx",
  "searxng",
  "internet",
]);

function isShellTool(name: string): boolean {
  const words = nameWords(name);
  if (words.some((w) => SHELL_WORDS.has(w))) return true;
  return words.some((w) => RUN_WORDS.has(w)) && words.some((w) => w === "command" || w === "cmd");
}

function isEditTool(name: string): boolean {
  return EDIT_NAMES.test(name);
}

function isBrowserTool(name: string): boolean {
  return nameWords(name).some((w) => BROWSER_WORDS.has(w));
}

function isSearchTool(name: string): boolean {
  const words = nameWords(name);
  return (words.length === 1 && words[0] === "search") || (words.includes("search") && words.some((w) => SEARCH_ENGINE_WORDS.has(w)));
}

/** A shell call's command: `command` (or `cmd`) as a string, or an argv (`["bash", "-lc", "ls"]` → `ls`). */
function shellCommand(call: Call): string | undefined {
  if (call.name === undefined || !isShellTool(call.name) || !isRecord(call.args)) return undefined;
  const command = call.args.command ?? call.args.cmd;
  if (typeof command === "string") return command;
  if (Array.isArray(command) && command.length > 0 && command.every((part) => typeof part === "string")) {
    const argv = command as string[];
    if (argv.length === 3 && /^(ba|z)?sh$/.test(argv[0] as string) && /^-l?c$/.test(argv[1] as string)) return argv[2];
    return argv.join(" ");
  }
  return undefined;
}

/** The tool specs of a row (`tools`, `available_tools` or legacy `functions`: a list, or a JSON string of one). */
function toolSpecs(row: Record<string, unknown>): unknown[] {
  for (const key of ["tools", "available_tools", "functions"]) {
    let value = row[key];
    if (typeof value === "string") {
      const parsed = parseJsonLine(value);
      value = parsed.ok ? parsed.value : value.trim() === "" ? undefined : [value];
    }
    if (Array.isArray(value) && value.length > 0) return value;
  }
  return [];
}

function specName(spec: unknown): string | undefined {
  if (!isRecord(spec)) return undefined;
  const fn = isRecord(spec.function) ? spec.function : spec;
  return typeof fn.name === "string" ? fn.name : undefined;
}

const REPO_FIELDS = ["repo", "instance_id", "model_patch", "patch", "git_patch"];

function inferDomain(row: Record<string, unknown>, toolNames: readonly string[], commands: readonly string[]): Domain {
  const shell = toolNames.some(isShellTool);
  const edit = toolNames.some(isEditTool);
  if (shell || edit) {
    const repository =
      edit ||
      REPO_FIELDS.some((key) => typeof row[key] === "string" && row[key] !== "") ||
      commands.some((command) => /(^|[\s;&|(])git\s/.test(command) || command.includes("diff --git"));
    return repository ? "swe" : "terminal";
  }
  if (toolNames.some(isBrowserTool)) return "web";
  if (toolNames.some(isSearchTool)) return "search";
  return "mcp";
}

// ---------------------------------------------------------------------------------------------
// Turns

interface Step {
  calls: Call[];
  results: (string | undefined)[];
  thought: string[];
  reasoning: string[];
  dialogue: { role: string; text: string }[];
}

/** Pairs each assistant step's calls with their results, message by message. */
class StepPairer {
  readonly turns: Turn[] = [];
  readonly skipped: Record<string, number> = {};
  readonly systems: string[] = [];
  readonly commands: string[] = [];
  readonly calledNames: string[] = [];
  task: string | undefined;
  finalAnswer: string | undefined;
  private step: Step | undefined;
  /** Whether the last message added calls to `step` (consecutive calling messages are one step). */
  private lastWasCall = false;
  private sawAssistant = false;
  /** A text-only assistant message waiting: thought if calls follow at once, else dialogue. */
  private pending: { text: string; reasoning?: string } | undefined;
  private dialogue: { role: string; text: string }[] = [];

  add(message: Message): void {
    for (const what of message.skipped ?? []) this.count(what);
    const wasCall = this.lastWasCall;
    // An element that is no message (a hosted tool's item) leaves consecutive calls one step.
    if (message.role === "other") return;
    this.lastWasCall = false;
    switch (message.role) {
      case "system":
        if (message.text.trim() !== "") this.systems.push(message.text);
        return;
      case "user":
        this.flushPending();
        // A user message right after calls that got no result stands for their output (exports
        // that write tool output as user messages); otherwise it is the task or dialogue.
        if (this.step?.results.every((r) => r === undefined)) {
          this.count("user_message_as_result");
          this.takeResult(message.text, undefined, undefined);
          return;
        }
        this.closeStep();
        if (!this.sawAssistant && this.task === undefined) this.task = message.text;
        else this.dialogue.push({ role: "user", text: message.text });
        return;
      case "tool":
        this.flushPending();
        for (const result of message.results) this.takeResult(result, message.toolCallId, message.toolName);
        return;
      case "assistant":
        this.sawAssistant = true;
        if (message.calls.length === 0) {
          this.flushPending();
          this.closeStep();
          if (message.text.trim() !== "")
            this.pending = { text: message.text, ...(message.reasoning ? { reasoning: message.reasoning } : {}) };
          else this.count("empty_assistant_message");
          return;
        }
        this.addCalls(message, wasCall);
        this.lastWasCall = true;
        return;
      default:
        this.count(`${message.role}_message`);
    }
  }

  finish(): void {
    this.closeStep();
    if (this.pending !== undefined) {
      this.finalAnswer = this.pending.text;
      this.pending = undefined;
    }
    if (this.dialogue.length > 0) this.count("dialogue_after_last_turn", this.dialogue.length);
  }

  private addCalls(message: Message, consecutive: boolean): void {
    const open = this.step && consecutive && this.step.results.every((r) => r === undefined);
    if (!open) this.closeStep();
    if (!this.step) this.step = { calls: [], results: [], thought: [], reasoning: [], dialogue: this.takeDialogue() };
    const step = this.step;
    if (this.pending !== undefined) {
      step.thought.push(this.pending.text.trim());
      if (this.pending.reasoning) step.reasoning.push(this.pending.reasoning);
      this.pending = undefined;
    }
    if (message.text.trim() !== "") step.thought.push(message.text.trim());
    if (message.reasoning) step.reasoning.push(message.reasoning);
    for (const call of message.calls) {
      step.calls.push(call);
      step.results.push(undefined);
      if (call.name !== undefined) this.calledNames.push(call.name);
      const command = shellCommand(call);
      if (command !== undefined) this.commands.push(command);
    }
  }

  /** Matches a result to its call by id, else by the function's name (legacy role `function`), else in order. */
  private takeResult(result: string, toolCallId: string | undefined, toolName: string | undefined): void {
    const step = this.step;
    if (!step) {
      this.count("tool_result_without_call");
      return;
    }
    const open = (match: (c: Call) => boolean) => step.calls.findIndex((c, i) => match(c) && step.results[i] === undefined);
    let index = toolCallId === undefined ? -1 : open((c) => c.id === toolCallId);
    if (index === -1 && toolName !== undefined) index = open((c) => c.name === toolName);
    if (index === -1) index = step.results.indexOf(undefined);
    if (index === -1) {
      this.count("tool_result_without_call");
      return;
    }
    step.results[index] = result;
  }

  /** Ends the open step: a turn when any of its calls was answered, else its calls are counted. */
  private closeStep(): void {
    const step = this.step;
    if (!step) return;
    this.step = undefined;
    const answered = step.results.filter((r) => r !== undefined).length;
    if (answered === 0) {
      this.count("call_without_result", step.calls.length);
      this.dialogue = [...step.dialogue, ...this.dialogue];
      return;
    }
    if (answered < step.calls.length) this.count("call_without_result", step.calls.length - answered);
    this.turns.push(stepTurn(step));
  }

  private flushPending(): void {
    if (this.pending === undefined) return;
    this.dialogue.push({ role: "assistant", text: this.pending.text });
    this.pending = undefined;
  }

  private takeDialogue(): { role: string; text: string }[] {
    const dialogue = this.dialogue;
    this.dialogue = [];
    return dialogue;
  }

  count(what: string, n = 1): void {
    this.skipped[what] = (this.skipped[what] ?? 0) + n;
  }
}

function renderCall(call: Call): string {
  if (call.raw !== undefined) return call.raw;
  return shellCommand(call) ?? JSON.stringify({ name: call.name, arguments: call.args ?? {} });
}

function isJsonContainer(text: string): boolean {
  const trimmed = text.trim();
  if (!/^[[{]/.test(trimmed)) return false;
  return parseJsonLine(trimmed).ok;
}

function stepTurn(step: Step): Turn {
  const n = step.calls.length;
  const actions = step.calls.map(renderCall);
  const results = step.results.map((r) => r ?? "[no result]");
  const action = n === 1 ? (actions[0] as string) : actions.map((a, i) => `[call ${i + 1}/${n}]\n${a}`).join("\n");
  const observation = n === 1 ? (results[0] as string) : results.map((r, i) => `[result ${i + 1}/${n}]\n${r}`).join("\n");
  const names = step.calls.map((c) => c.name ?? "");
  const meta: Record<string, unknown> = n === 1 ? { tool: names[0] } : { tools: names, parallel_calls: n };
  const answered = step.results.filter((r): r is string => r !== undefined);
  // One JSON result of a function tool (not shell output, which stays as printed).
  if (n === 1 && shellCommand(step.calls[0] as Call) === undefined && answered.every(isJsonContainer)) {
    meta.observation_format = "json";
  }
  if (step.thought.length > 0) meta.agent_thought = step.thought.join("\n\n");
  if (step.reasoning.length > 0) meta.agent_reasoning = step.reasoning.join("\n\n");
  if (step.dialogue.length > 0) meta.dialogue = step.dialogue;
  return { action, observation, meta };
}

// ---------------------------------------------------------------------------------------------
// Rows

function rowItem(row: Record<string, unknown>, source: SourceRef, text: string, options: ReaderOptions, where = ""): ReadItem {
  const id = rowId(row, text);
  const fail = (field: string | undefined, reason: string): ReadItem =>
    quarantine(source, { id, ...(field ? { field } : {}), reason: `${where}${reason}` }, text);
  const found = conversationOf(row);
  if (!found && isXlamRow(row)) {
    return fail(
      "answers",
      "an xLAM / APIGen function-calling row (query, answers, tools): it holds the calls a model should make but no tool results, " +
        "so there is no environment output to learn from; not read",
    );
  }
  if (!found) {
    const keys = Object.keys(row).slice(0, 12).join(", ");
    return fail(
      "messages",
      `no conversation: expected "messages", "conversations", "traj" or "trajectory" (an array of messages), Responses API "input" / "output" items or a Glaive "chat"; the row has keys ${keys}`,
    );
  }
  if (found.parseError) return fail(found.key, `${found.key}: a string that is not a JSON list of messages (${found.parseError})`);
  if (!Array.isArray(found.value)) return fail(found.key, `${found.key}: expected an array of messages, got ${describeType(found.value)}`);
  // Calls and tool specs are written back as JSON: refuse what JSON.stringify cannot recurse through.
  // (The conversation too: a JSON string column parsed here is not part of the row's own depth.)
  if (nestsTooDeep(row) || nestsTooDeep(found.value)) return fail(undefined, `the row nests deeper than ${MAX_JSON_DEPTH} levels`);
  const pairer = new StepPairer();
  // ToolBench answers a ReAct "Action:" with a role `function` message: only then is such text a call.
  const dialect: Dialect = {
    react: found.value.some((m) => isRecord(m) && TOOL_ROLES.has(String(m.role ?? m.from).toLowerCase())),
  };
  try {
    // A Responses reasoning item is the thinking of the assistant message after it.
    let reasoning: string[] = [];
    for (const [i, raw] of found.value.entries()) {
      for (const message of normalizeMessage(raw, found.fields?.[i] ?? `${found.key}.${i}`, dialect)) {
        if (message.role === "reasoning") {
          reasoning.push(message.text);
          continue;
        }
        if (reasoning.length > 0 && message.role === "assistant") {
          pairer.add({ ...message, reasoning: [...reasoning, ...(message.reasoning ? [message.reasoning] : [])].join("\n\n") });
          reasoning = [];
          continue;
        }
        if (reasoning.length > 0 && message.role !== "other") {
          pairer.count("reasoning_without_reply", reasoning.length);
          reasoning = [];
        }
        pairer.add(message);
      }
    }
    if (reasoning.length > 0) pairer.count("reasoning_without_reply", reasoning.length);
  } catch (err) {
    if (!(err instanceof FieldError)) throw err;
    return fail(err.field, err.message);
  }
  pairer.finish();
  if (pairer.turns.length === 0) {
    const counts = Object.entries(pairer.skipped)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ");
    return fail(found.key, `${found.key}: no tool call was followed by its result${counts ? ` (${counts})` : ""}`);
  }
  const specs = toolSpecs(row);
  const toolNames = [...specs.map(specName).filter((n): n is string => n !== undefined), ...pairer.calledNames];
  const domain = options.domain ?? inferDomain(row, toolNames, pairer.commands);
  // The agent's system prompt and tools describe the agent, not the environment: kept in meta, so
  // the world model trains with its domain's own system prompt (as for every agent-log reader).
  const agentSystem = systemText(row, found.key, pairer.systems, specs);
  const meta = { ...rowMeta(row, pairer), ...(agentSystem !== undefined ? { agent_system: agentSystem } : {}) };
  const trajectory: Trajectory = {
    id,
    domain,
    source,
    ...(pairer.task !== undefined ? { task: pairer.task } : {}),
    turns: pairer.turns,
    ...(Object.keys(meta).length > 0 ? { meta } : {}),
  };
  return { kind: "trajectory", trajectory };
}

function nonEmptyString(value: unknown): string | undefined {
  if (typeof value === "string" && value.trim() !== "") return value;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return undefined;
}

function rowId(row: Record<string, unknown>, text: string): string {
  const own = nonEmptyString(row.trajectory_id) ?? nonEmptyString(row.traj_id) ?? nonEmptyString(row.id) ?? nonEmptyString(row.uuid);
  if (own !== undefined) return own;
  const instance = nonEmptyString(row.instance_id);
  return contentId(instance ?? "chat", text);
}

/**
 * The row's own system text: `system` (ShareGPT, APIGen-MT, Glaive less its "SYSTEM:" label; a
 * string or Anthropic's list of text blocks), else `instructions` (Responses API).
 */
function topSystem(row: Record<string, unknown>, key: string): string | undefined {
  const value = row.system ?? row.instructions;
  const text = messageText(value ?? null);
  if (text === undefined || text.trim() === "") return undefined;
  return key === "chat" ? text.replace(/^\s*SYSTEM:[ \t]?/, "") : text;
}

function systemText(row: Record<string, unknown>, key: string, systems: readonly string[], specs: readonly unknown[]): string | undefined {
  const parts = [...systems];
  const top = topSystem(row, key);
  if (top !== undefined) parts.unshift(top);
  if (specs.length > 0)
    parts.push(`## Tools\n\n${specs.map((spec) => (typeof spec === "string" ? spec : JSON.stringify(spec))).join("\n")}`);
  return parts.length > 0 ? parts.join("\n\n") : undefined;
}

function rowMeta(row: Record<string, unknown>, pairer: StepPairer): Record<string, unknown> {
  const meta: Record<string, unknown> = {};
  const outcome: Record<string, unknown> = {};
  if (typeof row.resolved === "boolean") outcome.resolved = row.resolved;
  else if (row.resolved === 0 || row.resolved === 1) outcome.resolved = row.resolved === 1;
  if (typeof row.success === "boolean") outcome.success = row.success;
  const info = isRecord(row.info) ? row.info : {};
  const rewardInfo = isRecord(info.reward_info) ? info.reward_info : {};
  const reward = typeof row.reward === "number" ? row.reward : rewardInfo.reward;
  if (typeof reward === "number" && Number.isFinite(reward)) outcome.reward = reward;
  if (typeof row.failure_mode === "string") outcome.failure_mode = row.failure_mode;
  if (Object.keys(outcome).length > 0) meta.outcome = outcome;
  const agent = nonEmptyString(row.agent) ?? nonEmptyString(row.agent_name);
  const model = nonEmptyString(row.model) ?? nonEmptyString(row.model_name);
  const taskId = nonEmptyString(row.instance_id) ?? nonEmptyString(row.task_id);
  const attempt = row.attempt ?? row.trial;
  if (agent !== undefined) meta.agent = agent;
  if (model !== undefined) meta.model = model;
  if (taskId !== undefined) meta.task_id = taskId;
  if ((typeof attempt === "number" && Number.isFinite(attempt)) || (typeof attempt === "string" && attempt !== "")) meta.attempt = attempt;
  for (const key of ["repo", "exit_status", "subset_name", "category", "subcategory", "dataset"]) {
    const value = nonEmptyString(row[key]);
    if (value !== undefined) meta[key] = value;
  }
  if (pairer.finalAnswer !== undefined) meta.final_answer = pairer.finalAnswer;
  if (Object.keys(pairer.skipped).length > 0) meta.skipped = { ...pairer.skipped };
  return meta;
}
