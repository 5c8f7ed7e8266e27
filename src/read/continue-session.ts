import type { Domain, SourceRef } from "../core/trajectory.ts";
import { openDecompressed } from "../io/open-input.ts";
import { baseName, beside, parentOf, sideFileExists, sideFileSize } from "../io/side-files.ts";
import { answerCall, type OpenCall, SessionTurns } from "./agent-log/session-turns.ts";
import { JsonSyntaxError, selectJson } from "./json-select.ts";
import type { Companions, Reader, ReaderOptions, ReadItem } from "./reader.ts";
import { describeType, FieldError, fileStem, isRecord, jsonTextOr } from "./record-helpers.ts";

const FORMAT = "continue";

/*
 * Continue's chat sessions (continuedev/continue, the VS Code and JetBrains extension and `cn`):
 * `~/.continue/sessions/<sessionId>.json`, one session per file, with `sessions.json` beside them
 * listing every session's id, title, date and folder (read as the sessions' companion, never as a
 * record). The schema is continuedev/continue `core/index.d.ts`: `Session {sessionId, title,
 * workspaceDirectory, history: ChatHistoryItem[], mode?, chatModelTitle?, usage?}`;
 * `ChatHistoryItem {message, contextItems, toolCallStates?: ToolCallState[] (older: one
 * toolCallState), reasoning?: {text}, conversationSummary?}`; a message is `{role: user |
 * assistant | thinking | system | tool, content: string | [{type: "text", text} | {type:
 * "imageUrl"}], toolCalls?, toolCallId?}`; `ToolCallState {toolCallId, toolCall: {id, type,
 * function: {name, arguments}}, status: generating | generated | calling | done | errored |
 * canceled, parsedArgs, output?: ContextItem[] ({name, description, content})}`.
 *
 * - **Action**: each tool call of an assistant item (its `toolCallStates`, else its message's
 *   `toolCalls`): `run_terminal_command` (`builtin_run_terminal_command` in older versions) → its
 *   `command`; any other tool (read_file, edit_existing_file, create_new_file, grep_search,
 *   file_glob_search, ls, search_web, fetch_url_content, an MCP server's) → `name {arguments}`
 *   (`parsedArgs`, else the arguments' JSON text).
 * - **Observation**: the `tool` message with its `toolCallId` (what the model was given), else the
 *   call's `output` context items' `content`; status `errored` → `turn.meta.is_error`. A call
 *   cancelled or never run makes no turn (`call_without_result`).
 * - **Thinking**: `thinking` messages and an item's `reasoning.text`, and the assistant's text,
 *   on the next call; the text after the last call is `meta.final_message`. **Task**: the first
 *   user message; later ones are the next turn's `meta.user_messages`.
 * - **Id**: `sessionId`, else the file name. **Domain** (unless `--domain`): only the terminal →
 *   terminal; mostly MCP or web tools → mcp / web / search; else swe.
 * - **Meta**: `agent: "continue"`, `session_id`, `title`, `workspace`, `mode`, `model`
 *   (`chatModelTitle`), `tokens` (`usage`), `skipped`, `final_message`.
 *
 * The file is streamed item by item. Quarantined, naming the field: not JSON, no `history` list,
 * an item, message or tool call of the wrong shape. A session with no answered call (a chat) is
 * yielded without turns and with `meta.read_filter` (`no-tool-calls`).
 */
export const continueSessionReader: Reader = {
  name: FORMAT,
  domain: "from the tools",
  description: "Continue chat sessions (~/.continue/sessions/<id>.json): tool call states → tool messages",
  sniff(head) {
    const text = head.replace(/^\uFEFF/, "").trimStart();
    return text.startsWith("{") && SESSION_ID.test(text) && HISTORY.test(text);
  },
  async companions(path: string): Promise<Companions> {
    const index = beside(parentOf(path), "sessions.json");
    const hasIndex = baseName(path) !== "sessions.json" && (await sideFileExists(index));
    return {
      dirs: [],
      files: hasIndex ? [index] : [],
      bytes: (await sideFileSize(path)) ?? 0,
      label: `Continue session ${baseName(path)}`,
    };
  },
  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    if (options.range && options.range.start > 0) return;
    const source: SourceRef = { uri: path, format: FORMAT };
    const session = new ContinueSession();
    try {
      await readSession(path, session);
    } catch (err) {
      if (!(err instanceof FieldError || err instanceof JsonSyntaxError)) throw err;
      const field = err instanceof FieldError ? err.field : undefined;
      const reason = err instanceof JsonSyntaxError ? `not a Continue session: ${err.message}` : err.message;
      yield {
        kind: "quarantine",
        entry: { source, id: session.id(path), stage: "read", ...(field !== undefined ? { field } : {}), reason },
      };
      return;
    }
    yield session.finish(path, source, options.domain);
  },
};

const SESSION_ID = /"sessionId"\s*:\s*"/;
/** A `history` list that is empty or starts with an item's message. */
const HISTORY = /"history"\s*:\s*\[\s*(?:\]|\{\s*"message"\s*:\s*\{)/;

const TERMINAL_TOOLS = new Set(["run_terminal_command"]);
const WEB_TOOLS = new Set(["fetch_url_content"]);
const SEARCH_TOOLS = new Set(["search_web"]);
/** Continue's built-in tools, with and without the `builtin_` prefix older versions gave them. */
const BUILT_IN = new Set([
  "read_file",
  "read_file_range",
  "read_currently_open_file",
  "edit_existing_file",
  "single_find_and_replace",
  "multi_edit",
  "create_new_file",
  "run_terminal_command",
  "grep_search",
  "file_glob_search",
  "search_web",
  "fetch_url_content",
  "view_diff",
  "ls",
  "create_rule_block",
  "request_rule",
  "codebase",
  "read_skill",
  "view_repo_map",
  "view_subdirectory",
  "exact_search",
]);
const plainName = (name: string): string => name.replace(/^builtin_/, "");

async function readSession(path: string, session: ContinueSession): Promise<void> {
  const { stream } = await openDecompressed(path);
  let sawHistory = false;
  for await (const { path: at, value } of selectJson(
    stream,
    (p, kind) =>
      (p.length === 1 && (kind === "scalar" || p[0] === "usage" || (p[0] === "history" && kind !== "array"))) ||
      (p.length === 2 && p[0] === "history"),
  )) {
    if (at.length === 1 && at[0] === "history") throw new FieldError("history", `history: expected an array, got ${describeType(value)}`);
    if (at.length === 1) {
      session.header[String(at[0])] = value;
      continue;
    }
    if (typeof at[1] !== "number") throw new FieldError("history", "history: expected an array, got an object");
    sawHistory = true;
    session.item(value, `history.${at[1]}`);
  }
  if (!sawHistory && !("sessionId" in session.header)) throw new FieldError("history", "no `history` list: not a Continue session");
}

/** A call waiting for its result: its turn, the output its state kept, whether it failed or ever ran. */
interface PendingCall {
  call: OpenCall;
  output?: string;
  errored: boolean;
  ran: boolean;
}

class ContinueSession {
  readonly turns = new SessionTurns();
  readonly header: Record<string, unknown> = {};
  private readonly tools: string[] = [];
  /** Calls answered by their `tool` message when one comes, else by the output their state kept. */
  private readonly pending = new Map<string, PendingCall>();
  private items = 0;

  id(path: string): string {
    return typeof this.header.sessionId === "string" && this.header.sessionId !== "" ? this.header.sessionId : fileStem(path, /\.json$/i);
  }

  item(value: unknown, at: string): void {
    if (!isRecord(value)) throw new FieldError(at, `${at}: expected a history item, got ${describeType(value)}`);
    this.items += 1;
    const message = value.message;
    if (!isRecord(message)) throw new FieldError(`${at}.message`, `${at}.message: expected a message object, got ${describeType(message)}`);
    const role = message.role;
    const text = contentText(message.content, `${at}.message.content`);
    switch (role) {
      case "user":
        this.turns.user(text);
        return;
      case "thinking":
        this.turns.thinking(text);
        return;
      case "system":
        this.turns.count("system_message");
        return;
      case "tool":
        this.toolMessage(message, text, at);
        return;
      case "assistant":
        break;
      default:
        throw new FieldError(
          `${at}.message.role`,
          `${at}.message.role: expected user, assistant, thinking, system or tool, got ${describeType(role)}`,
        );
    }
    if (isRecord(value.reasoning) && typeof value.reasoning.text === "string") this.turns.thinking(value.reasoning.text);
    this.turns.text(text);
    const states = value.toolCallStates ?? (value.toolCallState !== undefined ? [value.toolCallState] : undefined);
    if (states !== undefined && states !== null) {
      if (!Array.isArray(states))
        throw new FieldError(`${at}.toolCallStates`, `${at}.toolCallStates: expected an array, got ${describeType(states)}`);
      states.forEach((state, i) => {
        this.toolCallState(state, `${at}.toolCallStates.${i}`);
      });
      return;
    }
    // No states kept: the message's own calls, answered by the tool messages that follow.
    const calls = message.toolCalls;
    if (calls === undefined || calls === null) return;
    if (!Array.isArray(calls))
      throw new FieldError(`${at}.message.toolCalls`, `${at}.message.toolCalls: expected an array, got ${describeType(calls)}`);
    calls.forEach((call, i) => {
      const field = `${at}.message.toolCalls.${i}`;
      if (!isRecord(call)) throw new FieldError(field, `${field}: expected a tool call, got ${describeType(call)}`);
      this.open(call, undefined, field);
    });
  }

  private toolCallState(state: unknown, field: string): void {
    if (!isRecord(state)) throw new FieldError(field, `${field}: expected a tool call state, got ${describeType(state)}`);
    if (!isRecord(state.toolCall))
      throw new FieldError(`${field}.toolCall`, `${field}.toolCall: expected a tool call, got ${describeType(state.toolCall)}`);
    const entry = this.open(state.toolCall, state, `${field}.toolCall`);
    if (entry === undefined) return;
    const output = state.output;
    if (Array.isArray(output)) {
      const texts = output
        .map((item) => (isRecord(item) && typeof item.content === "string" ? item.content : ""))
        .filter((text) => text !== "");
      entry.output = texts.join("\n");
    } else if (output !== undefined && output !== null)
      throw new FieldError(`${field}.output`, `${field}.output: expected a list of context items, got ${describeType(output)}`);
    entry.errored = state.status === "errored";
    // A call cancelled, or never run, has no result: its output (or the note its tool message carries) is not an observation.
    entry.ran = !(state.status === "canceled" || state.status === "generating" || state.status === "generated");
  }

  /** Opens a call `{id, function: {name, arguments}}`; its state's `parsedArgs` are its arguments when given. */
  private open(call: Record<string, unknown>, state: Record<string, unknown> | undefined, field: string) {
    const fn = isRecord(call.function) ? call.function : undefined;
    const name = fn?.name;
    if (typeof name !== "string" || name === "")
      throw new FieldError(`${field}.function.name`, `${field}.function.name: expected a tool name, got ${describeType(name)}`);
    const id = [state?.toolCallId, call.id].find((value): value is string => typeof value === "string" && value !== "");
    if (id === undefined) throw new FieldError(`${field}.id`, `${field}.id: expected a tool call id, got ${describeType(call.id)}`);
    const args = isRecord(state?.parsedArgs) ? state.parsedArgs : parsedArguments(fn?.arguments);
    const plain = plainName(name);
    const command = isRecord(args) ? args.command : undefined;
    const action =
      TERMINAL_TOOLS.has(plain) && typeof command === "string"
        ? command
        : `${name} ${typeof args === "string" ? args : jsonTextOr(args, "{}")}`;
    this.tools.push(plain);
    const open = this.turns.call(id, name, action);
    const entry: PendingCall = { call: open, errored: false, ran: true };
    this.pending.set(id, entry);
    return entry;
  }

  private toolMessage(message: Record<string, unknown>, text: string, at: string): void {
    const id = message.toolCallId;
    if (typeof id !== "string" || id === "")
      throw new FieldError(`${at}.message.toolCallId`, `${at}.message.toolCallId: expected a tool call id, got ${describeType(id)}`);
    const entry = this.pending.get(id);
    if (entry === undefined || entry.call.answered) {
      this.turns.count("result_without_call");
      return;
    }
    if (!entry.ran) {
      this.turns.count("cancelled_call_note");
      return;
    }
    answerCall(entry.call, text, entry.errored);
  }

  finish(path: string, source: SourceRef, domain: Domain | undefined): ReadItem {
    // Calls no tool message answered: the output their state kept, when they ran.
    for (const entry of this.pending.values())
      if (!entry.call.answered && entry.ran && entry.output !== undefined) answerCall(entry.call, entry.output, entry.errored);
    const built = this.turns.finish();
    const id = this.id(path);
    const meta: Record<string, unknown> = { agent: "continue" };
    if (typeof this.header.sessionId === "string") meta.session_id = this.header.sessionId;
    for (const [key, name] of [
      ["title", "title"],
      ["workspaceDirectory", "workspace"],
      ["mode", "mode"],
      ["chatModelTitle", "model"],
    ] as const)
      if (typeof this.header[key] === "string" && this.header[key] !== "") meta[name] = this.header[key];
    const usage = this.header.usage;
    if (isRecord(usage)) {
      const tokens: Record<string, number> = {};
      for (const [key, name] of [
        ["promptTokens", "input"],
        ["completionTokens", "output"],
      ] as const)
        if (typeof usage[key] === "number" && Number.isFinite(usage[key])) tokens[name] = usage[key] as number;
      if (Object.keys(tokens).length > 0) meta.tokens = tokens;
    }
    if (built.finalMessage !== undefined) meta.final_message = built.finalMessage;
    if (Object.keys(built.skipped).length > 0) meta.skipped = built.skipped;
    if (built.turns.length === 0) {
      const counts = Object.entries(built.skipped).map(([key, n]) => `${n} ${key}`);
      const what = [`${this.items} item${this.items === 1 ? "" : "s"}`, ...counts].join(", ");
      meta.read_filter = { stage: "no-tool-calls", reason: `no tool call with a result in the session (${what}): a chat without actions` };
    }
    return {
      kind: "trajectory",
      trajectory: {
        id,
        domain: domain ?? inferContinueDomain(this.tools),
        source,
        ...(built.task !== undefined ? { task: built.task } : {}),
        turns: built.turns,
        meta,
      },
    };
  }
}

/** A message's content: a string, or parts whose text is joined (an image part is `[image]`). */
function contentText(content: unknown, field: string): string {
  if (content === undefined || content === null) return "";
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) throw new FieldError(field, `${field}: expected a string or a list of parts, got ${describeType(content)}`);
  return content
    .map((part) => {
      if (!isRecord(part)) return "";
      if (typeof part.text === "string") return part.text;
      return part.type === "imageUrl" || part.type === "image_url" ? "[image]" : "";
    })
    .filter((text) => text !== "")
    .join("\n");
}

/** Arguments as the model wrote them: JSON text (parsed when it is JSON), or an object. */
function parsedArguments(value: unknown): unknown {
  if (isRecord(value)) return value;
  if (typeof value !== "string" || value.trim() === "") return {};
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

/** The domain of a session from its tools (names without `builtin_`; see the comment at the top). */
export function inferContinueDomain(tools: readonly string[]): Domain {
  const share = (test: (tool: string) => boolean) => tools.filter(test).length / Math.max(tools.length, 1);
  if (tools.length > 0 && tools.every((tool) => TERMINAL_TOOLS.has(tool))) return "terminal";
  if (share((tool) => !BUILT_IN.has(tool)) > 0.5) return "mcp";
  if (share((tool) => WEB_TOOLS.has(tool) || SEARCH_TOOLS.has(tool)) > 0.5)
    return share((tool) => SEARCH_TOOLS.has(tool)) > 0.5 ? "search" : "web";
  return "swe";
}
