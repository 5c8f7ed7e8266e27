import type { Domain, SourceRef } from "../core/trajectory.ts";
import { openDecompressed } from "../io/open-input.ts";
import { answerCall, byUse, SessionTurns } from "./agent-log/session-turns.ts";
import { type CutNote, truncatedLineMeta } from "./cut-last-line.ts";
import { readHeadBytes } from "./head-bytes.ts";
import { JsonSyntaxError, selectJson } from "./json-select.ts";
import type { Reader, ReaderOptions, ReadItem } from "./reader.ts";
import { describeJson, describeType, FieldError, fileStem, isRecord, jsonObjectLines, jsonTextOr } from "./record-helpers.ts";

const FORMAT = "copilot-chat";

/*
 * VS Code's chat sessions, as GitHub Copilot Chat's agent mode leaves them: one file per session
 * under `<user data>/User/workspaceStorage/<workspace id>/chatSessions/` (an empty window's under
 * `globalStorage/emptyWindowChatSessions/`), and the file "Chat: Export Chat..." writes.
 *
 * Sources (read for this reader, nothing copied): microsoft/vscode
 * `src/vs/workbench/contrib/chat/common/model/chatModel.ts` (ISerializableChatData versions 1-3,
 * the request and response-part shapes), `objectMutationLog.ts` and `chatSessionOperationLog.ts`
 * (the `.jsonl` operation log VS Code 1.109+ writes instead of the `.json` snapshot);
 * microsoft/vscode-copilot-chat `src/extension/prompt/common/intents.ts` (IToolCallRound, IToolCall)
 * and `conversation.ts` (the request result's metadata); microsoft/vscode-prompt-tsx
 * `src/base/jsonTypes.ts` (a tool result's element tree); `extHostTypes.ts` (how tool result parts
 * serialize: `{$mid, value}` text parts, `{$mid, mimeType, data}` data parts).
 *
 * Two layouts of one session object `{version?, sessionId?, creationDate?, customTitle?,
 * requesterUsername?, responderUsername?, initialLocation?, requests: [...]}`:
 * - `<session>.json` (VS Code before 1.109, and exports, which lack the id and dates): one JSON
 *   document, streamed request by request;
 * - `<session>.jsonl`: an operation log, one entry per line: `{kind: 0, v}` the whole session,
 *   `{kind: 1, k: path, v}` a value set at a path, `{kind: 2, k: path, v?: [...], i?}` an array cut
 *   to length `i` then items pushed, `{kind: 3, k: path}` a value deleted; replayed in order.
 *
 * Per request (one prompt and the agent's work on it):
 * - **Action**: each tool call of the Copilot agent's rounds (`result.metadata.toolCallRounds[]`:
 *   `{response, thinking?, toolCalls: [{id, name, arguments: JSON text}]}`), in order.
 *   `run_in_terminal` → its `command`; any other tool (read_file, replace_string_in_file,
 *   create_file, grep_search, fetch_webpage, an MCP server's `mcp_…` tools…) → `name {arguments}`.
 * - **Observation**: `result.metadata.toolCallResults[<call id>]`, the LanguageModelToolResult the
 *   model was given: text parts' `value`, prompt-tsx parts' element tree (`value.node`: its text
 *   nodes, a line break where one is marked, `[image]` for image pieces), data parts as
 *   `[data <mime type>]`. A result starting "ERROR while calling tool" (how Copilot hands a failed
 *   call back to the model) → `turn.meta.is_error`. A call without a result (the request was
 *   cancelled) makes no turn (counted `call_without_result`).
 * - Without rounds (another chat participant, or an older Copilot): the response parts. A
 *   terminal tool card (`toolInvocationSerialized` with `toolSpecificData.kind: "terminal"`) whose
 *   output was kept (`terminalCommandOutput`) → its command and output (`terminalCommandState.exitCode`
 *   → `turn.meta.exit_code`); a tool card with `resultDetails {input, output: [{type: "embed", value}]}`
 *   (MCP tools) → `toolId {input}` and the embedded text; other cards keep no result (counted
 *   `tool_card_without_result`). Markdown parts are the agent's text, `thinking` parts its thinking.
 * - **Thinking**: a round's thinking and its response text, on its first call; the text after the
 *   last call is `meta.final_message`. **Task**: the first request's `message.text`; later
 *   prompts are the next turn's `meta.user_messages` (src/read/agent-log/session-turns.ts).
 * - **Id**: `sessionId`, else the file name. **Domain** (unless `--domain`): mostly MCP tools →
 *   mcp; mostly fetch_webpage → web; any edit or file tool → swe; only the terminal → terminal.
 * - **Meta**: `agent: "copilot-chat"`, `session_id`, `title` (`customTitle`), `responder`,
 *   `location`, `creation_date`, `model` (the most used of `result.metadata.resolvedModel`, else
 *   `modelId`; all in `models`), `chat_agents` (the participants' ids), `tokens` (`promptTokens`,
 *   `completionTokens` summed), `requests`, `errors` (the first ten `result.errorDetails` messages),
 *   `skipped` (cancelled and failed requests, unanswered calls, cards without a result).
 *
 * Quarantined, one entry per file naming the field: a file that is not such a session (not JSON, no
 * `requests` list), a request, round, call or log entry of the wrong shape. A session without an
 * answered call (a chat) is well-formed: yielded without turns and with `meta.read_filter`
 * (`no-tool-calls`), so the runner counts it in `filtered/`. The log's last line cut while VS Code
 * wrote it is left out (`meta.truncated_line`).
 */
export const copilotChatReader: Reader = {
  name: FORMAT,
  domain: "from the tools",
  description:
    "VS Code Copilot Chat sessions (workspaceStorage/<id>/chatSessions/<session>.json / .jsonl operation log, Export Chat files): tool call rounds → tool results",
  sniff(head) {
    const text = head.replace(/^\uFEFF/, "").trimStart();
    if (LOG_START.test(text)) return SESSION_KEY.test(text) || REQUESTS.test(text);
    if (LOG_UPDATE.test(text)) return true;
    return DOCUMENT_START.test(text) && SESSION_KEY.test(text) && REQUESTS.test(text);
  },
  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    if (options.range && options.range.start > 0) return;
    const source: SourceRef = { uri: path, format: FORMAT };
    const session = new ChatSession();
    const cut: CutNote = {};
    try {
      const head = Buffer.from((await readHeadBytes(path, 256)).bytes)
        .toString("utf8")
        .replace(/^\uFEFF/, "")
        .trimStart();
      if (LOG_START.test(head) || LOG_UPDATE.test(head)) await readLog(path, options, session, cut);
      else await readDocument(path, session);
    } catch (err) {
      if (!(err instanceof FieldError || err instanceof JsonSyntaxError)) throw err;
      const line = err instanceof FieldError ? err.line : undefined;
      const field = err instanceof FieldError ? err.field : undefined;
      const reason = err instanceof JsonSyntaxError ? `not a VS Code chat session: ${err.message}` : err.message;
      yield {
        kind: "quarantine",
        entry: {
          source: { ...source, ...(line !== undefined ? { line } : {}) },
          id: session.id(path),
          stage: "read",
          ...(field !== undefined ? { field } : {}),
          reason,
        },
      };
      return;
    }
    yield session.finish(path, source, options.domain, cut);
  },
};

/** The operation log's first entry: the whole session (`{"kind":0,"v":{…`). */
const LOG_START = /^\{\s*"kind"\s*:\s*0\s*,\s*"v"\s*:\s*\{/;
/** A later entry of the log: a set, push or delete at a path into the session's own fields. */
const LOG_UPDATE =
  /^\{\s*"kind"\s*:\s*[123]\s*,\s*"k"\s*:\s*\[\s*"(?:requests|pendingRequests|inputState|customTitle|hasPendingEdits|repoData|responderUsername|initialLocation|creationDate|sessionId)"\s*[,\]]/;
/** A session document's first key, as VS Code and its export write them. */
const DOCUMENT_START =
  /^\{\s*"(?:version|requesterUsername|requesterAvatarIconUri|responderUsername|responderAvatarIconUri|initialLocation|sessionId|creationDate|customTitle)"\s*:/;
const SESSION_KEY = /"(?:requesterUsername|responderUsername|initialLocation)"\s*:/;
const REQUESTS = /"requests"\s*:\s*\[/;

const SHELL_TOOLS = new Set(["run_in_terminal", "runInTerminal", "copilot_runInTerminal"]);
const EDIT_TOOLS = new Set([
  "replace_string_in_file",
  "multi_replace_string_in_file",
  "insert_edit_into_file",
  "create_file",
  "create_directory",
  "apply_patch",
  "edit_file",
  "edit_notebook_file",
  "create_new_jupyter_notebook",
]);
const FILE_TOOLS = new Set([
  "read_file",
  "list_dir",
  "file_search",
  "grep_search",
  "semantic_search",
  "list_code_usages",
  "get_errors",
  "get_changed_files",
  "test_search",
  "run_tests",
]);
const WEB_TOOLS = new Set(["fetch_webpage", "open_simple_browser", "github_repo"]);
/** How Copilot hands a failed tool call back to the model (its tool-calling loop's text). */
const TOOL_ERROR = /^ERROR while calling tool\b/;
const ERRORS_KEPT = 10;
/** Object keys a log entry's path may not name: assigning them would change an object's prototype. */
const UNSAFE_KEYS = new Set(["__proto__", "constructor", "prototype"]);

/** A session, request by request, as the file yields them. */
class ChatSession {
  readonly turns = new SessionTurns();
  readonly header: Record<string, unknown> = {};
  private readonly models = new Map<string, number>();
  private readonly agents = new Set<string>();
  private readonly errors: string[] = [];
  private readonly tools: { name: string; mcp: boolean }[] = [];
  private requests = 0;
  private promptTokens = 0;
  private completionTokens = 0;

  id(path: string): string {
    return typeof this.header.sessionId === "string" && this.header.sessionId !== "" ? this.header.sessionId : fileStem(path, /\.jsonl?$/i);
  }

  request(value: unknown, at: string): void {
    if (!isRecord(value)) throw new FieldError(at, `${at}: expected a request object, got ${describeType(value)}`);
    this.requests += 1;
    const text = messageText(value.message, `${at}.message`);
    if (text !== undefined) this.turns.user(text);
    if (isRecord(value.agent) && typeof value.agent.id === "string" && value.agent.id !== "") this.agents.add(value.agent.id);
    if (typeof value.promptTokens === "number" && Number.isFinite(value.promptTokens)) this.promptTokens += value.promptTokens;
    if (typeof value.completionTokens === "number" && Number.isFinite(value.completionTokens))
      this.completionTokens += value.completionTokens;
    const state = isRecord(value.modelState) ? value.modelState.value : undefined;
    if (state === 2 || value.isCanceled === true) this.turns.count("cancelled_request");
    else if (state === 3) this.turns.count("failed_request");
    const result = value.result;
    if (result !== undefined && result !== null && !isRecord(result))
      throw new FieldError(`${at}.result`, `${at}.result: expected an object, got ${describeType(result)}`);
    const metadata = isRecord(result) && isRecord(result.metadata) ? result.metadata : undefined;
    if (isRecord(result) && isRecord(result.errorDetails) && typeof result.errorDetails.message === "string")
      if (this.errors.length < ERRORS_KEPT) this.errors.push(result.errorDetails.message);
    const model =
      typeof metadata?.resolvedModel === "string" && metadata.resolvedModel !== ""
        ? metadata.resolvedModel
        : typeof value.modelId === "string" && value.modelId !== ""
          ? value.modelId
          : undefined;
    if (model !== undefined) this.models.set(model, (this.models.get(model) ?? 0) + 1);
    const rounds = metadata?.toolCallRounds;
    if (rounds !== undefined && rounds !== null && !Array.isArray(rounds))
      throw new FieldError(
        `${at}.result.metadata.toolCallRounds`,
        `${at}.result.metadata.toolCallRounds: expected an array, got ${describeType(rounds)}`,
      );
    if (Array.isArray(rounds) && rounds.length > 0)
      this.rounds(rounds, metadata?.toolCallResults, cardResults(value.response), `${at}.result.metadata`);
    else if (Array.isArray(value.response)) this.responseParts(value.response, `${at}.response`);
    else if (value.response !== undefined && value.response !== null)
      throw new FieldError(`${at}.response`, `${at}.response: expected an array, got ${describeType(value.response)}`);
  }

  /** The Copilot agent's rounds: each one's thinking and text, then its calls answered by the results kept for them. */
  private rounds(rounds: unknown[], results: unknown, cards: Map<string, CardResult>, at: string): void {
    const byId = isRecord(results) ? results : {};
    rounds.forEach((round, r) => {
      const field = `${at}.toolCallRounds.${r}`;
      if (!isRecord(round)) throw new FieldError(field, `${field}: expected a round object, got ${describeType(round)}`);
      const thinking = thinkingText(round.thinking);
      if (thinking !== undefined) this.turns.thinking(thinking);
      if (typeof round.response === "string") this.turns.text(round.response);
      const calls = round.toolCalls ?? [];
      if (!Array.isArray(calls))
        throw new FieldError(`${field}.toolCalls`, `${field}.toolCalls: expected an array, got ${describeType(calls)}`);
      calls.forEach((call, c) => {
        const callField = `${field}.toolCalls.${c}`;
        if (!isRecord(call)) throw new FieldError(callField, `${callField}: expected a tool call object, got ${describeType(call)}`);
        const { id, name } = call;
        if (typeof name !== "string" || name === "")
          throw new FieldError(`${callField}.name`, `${callField}.name: expected a tool name, got ${describeType(name)}`);
        if (typeof id !== "string" || id === "")
          throw new FieldError(`${callField}.id`, `${callField}.id: expected a tool call id, got ${describeType(id)}`);
        const args = toolArguments(call.arguments, `${callField}.arguments`);
        this.tools.push({ name, mcp: name.startsWith("mcp_") });
        const open = this.turns.call(id, name, actionOf(name, args));
        const result = resultFor(byId, id);
        if (result !== undefined) {
          const observation = toolResultText(result.value, `${at}.toolCallResults.${result.key}`);
          this.turns.answer(id, observation, TOOL_ERROR.test(observation));
          return;
        }
        // No result kept in the metadata: the output its card kept (the card's id lacks the __vscode-N suffix).
        const kept = cards.get(id.replace(/__vscode-\d+$/, "")) ?? cards.get(id);
        if (kept === undefined) return;
        if (kept.exitCode !== undefined) (open.turn.meta as Record<string, unknown>).exit_code = kept.exitCode;
        this.turns.answer(id, kept.output, kept.isError);
      });
    });
  }

  /** A response's parts, when no rounds were kept: markdown, thinking, and tool cards that kept their result. */
  private responseParts(parts: unknown[], at: string): void {
    parts.forEach((part, p) => {
      const field = `${at}.${p}`;
      if (typeof part === "string") {
        this.turns.text(part);
        return;
      }
      if (!isRecord(part)) throw new FieldError(field, `${field}: expected a response part, got ${describeType(part)}`);
      if (part.kind === undefined) {
        if (typeof part.value === "string") this.turns.text(part.value);
        return;
      }
      switch (part.kind) {
        case "markdownContent":
          if (isRecord(part.content) && typeof part.content.value === "string") this.turns.text(part.content.value);
          return;
        case "thinking": {
          const text = Array.isArray(part.value) ? part.value.filter((v) => typeof v === "string").join("") : part.value;
          if (typeof text === "string") this.turns.thinking(text);
          return;
        }
        case "toolInvocationSerialized":
          this.toolCard(part);
          return;
        default:
          return;
      }
    });
  }

  /** A serialized tool card whose result was kept: a terminal command and its output, or a tool whose result details embed text. */
  private toolCard(card: Record<string, unknown>): void {
    const kept = cardResult(card);
    if (kept === undefined) {
      this.turns.count("tool_card_without_result");
      return;
    }
    const id = typeof card.toolCallId === "string" && card.toolCallId !== "" ? { tool_call_id: card.toolCallId } : {};
    this.tools.push({ name: kept.tool, mcp: kept.mcp });
    // The card holds its call and its result together: the call is answered at once.
    const call = this.turns.call(undefined, kept.tool, kept.action, {
      ...id,
      ...(kept.exitCode !== undefined ? { exit_code: kept.exitCode } : {}),
    });
    answerCall(call, kept.output, kept.isError);
  }

  finish(path: string, source: SourceRef, domain: Domain | undefined, cut: CutNote): ReadItem {
    const built = this.turns.finish();
    const meta: Record<string, unknown> = { agent: "copilot-chat" };
    const id = this.id(path);
    if (typeof this.header.sessionId === "string") meta.session_id = this.header.sessionId;
    const put = (key: string, value: unknown) => {
      if (typeof value === "string" && value !== "") meta[key] = value;
    };
    put("title", this.header.customTitle);
    put("responder", this.header.responderUsername);
    put("location", this.header.initialLocation);
    if (typeof this.header.creationDate === "number" && Number.isFinite(this.header.creationDate)) {
      const date = new Date(this.header.creationDate);
      if (!Number.isNaN(date.getTime())) meta.creation_date = date.toISOString();
    }
    const models = byUse(this.models);
    if (models.length > 0) meta.model = models[0];
    if (models.length > 1) meta.models = models;
    if (this.agents.size > 0) meta.chat_agents = [...this.agents].sort();
    if (this.promptTokens > 0 || this.completionTokens > 0) meta.tokens = { input: this.promptTokens, output: this.completionTokens };
    meta.requests = this.requests;
    if (this.errors.length > 0) meta.errors = this.errors;
    Object.assign(meta, truncatedLineMeta(cut));
    if (built.finalMessage !== undefined) meta.final_message = built.finalMessage;
    if (Object.keys(built.skipped).length > 0) meta.skipped = built.skipped;
    if (built.turns.length === 0) {
      // A chat (ask mode, or an agent that never ran a tool) is well-formed: read, then filtered with the reason.
      const counts = Object.entries(built.skipped).map(([key, n]) => `${n} ${key}`);
      const what = [`${this.requests} request${this.requests === 1 ? "" : "s"}`, ...counts].join(", ");
      meta.read_filter = { stage: "no-tool-calls", reason: `no tool call with a result in the session (${what}): a chat without actions` };
    }
    const domainOf = domain ?? inferCopilotChatDomain(this.tools);
    return {
      kind: "trajectory",
      trajectory: { id, domain: domainOf, source, ...(built.task !== undefined ? { task: built.task } : {}), turns: built.turns, meta },
    };
  }
}

/** What a tool card kept of its call and result. */
interface CardResult {
  tool: string;
  action: string;
  output: string;
  isError: boolean;
  exitCode?: number;
  mcp: boolean;
}

/** A tool card's kept result: a terminal card's command and output, or the input and embedded output of its result details. */
function cardResult(card: Record<string, unknown>): CardResult | undefined {
  const toolId = typeof card.toolId === "string" && card.toolId !== "" ? card.toolId : "tool";
  const specific = isRecord(card.toolSpecificData) ? card.toolSpecificData : undefined;
  if (specific?.kind === "terminal") {
    const line = isRecord(specific.commandLine) ? specific.commandLine : undefined;
    const command = [line?.toolEdited, line?.userEdited, line?.original, specific.command].find(
      (value): value is string => typeof value === "string" && value !== "",
    );
    const output = isRecord(specific.terminalCommandOutput) ? specific.terminalCommandOutput.text : undefined;
    if (command === undefined || typeof output !== "string") return undefined;
    const state = isRecord(specific.terminalCommandState) ? specific.terminalCommandState : undefined;
    const exitCode = typeof state?.exitCode === "number" ? state.exitCode : undefined;
    const silent = output.trim() === "" && exitCode !== undefined && exitCode !== 0;
    return {
      tool: "run_in_terminal",
      action: command,
      output: silent ? `[exit code ${exitCode}, no output]` : output,
      isError: false,
      ...(exitCode !== undefined ? { exitCode } : {}),
      mcp: false,
    };
  }
  const details = card.resultDetails;
  if (!isRecord(details) || !Array.isArray(details.output)) return undefined;
  const texts: string[] = [];
  for (const item of details.output) {
    if (!isRecord(item)) continue;
    if (item.type === "embed" && typeof item.value === "string")
      texts.push(item.isText === false ? `[data ${typeof item.mimeType === "string" ? item.mimeType : "binary"}]` : item.value);
    else if (item.type === "ref") texts.push("[reference]");
  }
  const input = typeof details.input === "string" ? toolArguments(details.input, "resultDetails.input") : {};
  const mcp = toolId.startsWith("mcp_") || (isRecord(card.source) && card.source.type === "mcp");
  return { tool: toolId, action: actionOf(toolId, input), output: texts.join("\n"), isError: details.isError === true, mcp };
}

/** The kept results of a response's tool cards, by call id: what answers a round's call whose result metadata lacks. */
function cardResults(response: unknown): Map<string, CardResult> {
  const byId = new Map<string, CardResult>();
  if (!Array.isArray(response)) return byId;
  for (const part of response)
    if (isRecord(part) && part.kind === "toolInvocationSerialized" && typeof part.toolCallId === "string") {
      const kept = cardResult(part);
      if (kept !== undefined) byId.set(part.toolCallId, kept);
    }
  return byId;
}

/** A request's prompt: a string (older sessions) or a parsed request's `text`. */
function messageText(message: unknown, field: string): string | undefined {
  if (message === undefined || message === null) return undefined;
  if (typeof message === "string") return message;
  if (isRecord(message)) {
    if (typeof message.text === "string") return message.text;
    if (message.text === undefined) return undefined;
  }
  throw new FieldError(field, `${field}: expected a string or {text}, got ${describeType(isRecord(message) ? message.text : message)}`);
}

/** A round's thinking: `{text: string | string[]}` (only encrypted thinking has none). */
function thinkingText(thinking: unknown): string | undefined {
  if (!isRecord(thinking)) return undefined;
  const { text } = thinking;
  if (typeof text === "string") return text;
  if (Array.isArray(text)) return text.filter((t) => typeof t === "string").join("");
  return undefined;
}

/** A call's arguments: JSON text as the model wrote it (parsed when it is JSON), or an object. */
function toolArguments(value: unknown, field: string): unknown {
  if (value === undefined || value === null) return {};
  if (isRecord(value)) return value;
  if (typeof value !== "string") throw new FieldError(field, `${field}: expected JSON text or an object, got ${describeType(value)}`);
  if (value.trim() === "") return {};
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

function actionOf(name: string, args: unknown): string {
  const command = isRecord(args) ? args.command : undefined;
  if (SHELL_TOOLS.has(name) && typeof command === "string") return command;
  return typeof args === "string" ? `${name} ${args}` : `${name} ${jsonTextOr(args, "{}")}`;
}

/**
 * The result kept for a call: by its id, else by the id without the `__vscode-N` suffix Copilot
 * adds to keep ids unique (a result keyed one way, the call the other).
 */
function resultFor(results: Record<string, unknown>, id: string): { key: string; value: unknown } | undefined {
  if (Object.hasOwn(results, id)) return { key: id, value: results[id] };
  const base = id.replace(/__vscode-\d+$/, "");
  for (const key of Object.keys(results)) if (key.replace(/__vscode-\d+$/, "") === base) return { key, value: results[key] };
  return undefined;
}

/** A LanguageModelToolResult's text: its parts' text in order (see the comment at the top). */
export function toolResultText(result: unknown, field: string): string {
  if (typeof result === "string") return result;
  const parts = isRecord(result) ? result.content : Array.isArray(result) ? result : undefined;
  if (!Array.isArray(parts))
    throw new FieldError(field, `${field}: expected a tool result with a content list, got ${describeType(result)}`);
  const out: string[] = [];
  for (const part of parts) {
    if (typeof part === "string") out.push(part);
    else if (!isRecord(part)) continue;
    else if (typeof part.value === "string") out.push(part.value);
    else if (isRecord(part.value) && isRecord(part.value.node)) out.push(elementText(part.value.node));
    else if (typeof part.mimeType === "string") out.push(`[data ${part.mimeType}]`);
    else if (typeof part.text === "string") out.push(part.text);
  }
  return out.join("\n");
}

/** A prompt-tsx element tree's text (Piece = 1 with children, Text = 2), walked without recursion. */
function elementText(root: Record<string, unknown>): string {
  let out = "";
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (!isRecord(node)) continue;
    if (node.type === 2 && typeof node.text === "string") {
      if (node.lineBreakBefore === true && out !== "") out += "\n";
      out += node.text;
    } else if (node.type === 1) {
      // An image chat message piece (PieceCtorKind 3) holds no text.
      if (node.ctor === 3) out += "[image]";
      else if (Array.isArray(node.children)) for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]);
    }
  }
  return out;
}

/** The domain of a session from the tools it called (see the comment at the top). */
export function inferCopilotChatDomain(tools: readonly { name: string; mcp: boolean }[]): Domain {
  const share = (test: (tool: { name: string; mcp: boolean }) => boolean) => tools.filter(test).length / Math.max(tools.length, 1);
  if (share((tool) => tool.mcp) > 0.5) return "mcp";
  if (share((tool) => WEB_TOOLS.has(tool.name)) > 0.5) return "web";
  if (tools.some((tool) => EDIT_TOOLS.has(tool.name) || FILE_TOOLS.has(tool.name))) return "swe";
  if (tools.length > 0 && tools.every((tool) => SHELL_TOOLS.has(tool.name) || tool.name === "get_terminal_output")) return "terminal";
  return "swe";
}

/** A `.json` session or export, streamed: the top-level scalars, then each request as it arrives. */
async function readDocument(path: string, session: ChatSession): Promise<void> {
  const { stream } = await openDecompressed(path);
  let sawRequests = false;
  for await (const { path: at, value } of selectJson(
    stream,
    (p, kind) =>
      (p.length === 1 && (kind === "scalar" || (p[0] === "requests" && kind !== "array"))) || (p.length === 2 && p[0] === "requests"),
  )) {
    if (at.length === 1 && at[0] === "requests")
      throw new FieldError("requests", `requests: expected an array, got ${describeType(value)}`);
    if (at.length === 1) {
      session.header[String(at[0])] = value;
      continue;
    }
    if (typeof at[1] !== "number") throw new FieldError("requests", "requests: expected an array, got an object");
    sawRequests = true;
    session.request(value, `requests.${at[1]}`);
  }
  if (!sawRequests && !("requesterUsername" in session.header || "responderUsername" in session.header || "sessionId" in session.header))
    throw new FieldError("requests", "no `requests` list: not a VS Code chat session");
}

/** A `.jsonl` operation log, replayed entry by entry into the session object, then read as one. */
async function readLog(path: string, options: ReaderOptions, session: ChatSession, cut: CutNote): Promise<void> {
  const { range: _range, ...whole } = options;
  let state: Record<string, unknown> | undefined;
  for await (const line of jsonObjectLines(path, whole, FORMAT, cut)) {
    if (line.kind === "quarantine")
      throw new FieldError(undefined, `line ${line.entry.source.line}: ${line.entry.reason}`, line.entry.source.line);
    const { record } = line;
    const at = line.source.line as number;
    const fail = (field: string, reason: string): never => {
      throw new FieldError(field, `line ${at}: ${field}: ${reason}`, at);
    };
    const { kind } = record;
    if (kind === 0) {
      if (!isRecord(record.v)) fail("v", `expected the session object, got ${describeType(record.v)}`);
      state = record.v as Record<string, unknown>;
      continue;
    }
    if (kind !== 1 && kind !== 2 && kind !== 3)
      fail("kind", `expected 0, 1, 2 or 3, got ${kind === undefined ? "nothing" : describeJson(kind)}`);
    if (state === undefined) fail("kind", "an update before the log's first entry (kind 0, the whole session)");
    applyEntry(state as Record<string, unknown>, record, fail);
  }
  if (state === undefined) throw new FieldError("kind", "no entry with the whole session (kind 0): not a VS Code chat session log");
  for (const [key, value] of Object.entries(state)) if (key !== "requests") session.header[key] = value;
  const requests = state.requests ?? [];
  if (!Array.isArray(requests)) throw new FieldError("requests", `requests: expected an array, got ${describeType(requests)}`);
  requests.forEach((request, i) => {
    session.request(request, `requests.${i}`);
  });
}

type Container = Record<string, unknown> | unknown[];

/** Applies one set (1), push (2) or delete (3) entry at its path `k`, as VS Code's log replays it. */
function applyEntry(root: Record<string, unknown>, entry: Record<string, unknown>, fail: (field: string, reason: string) => never): void {
  const { k: path } = entry;
  if (!Array.isArray(path) || path.some((key) => typeof key !== "string" && typeof key !== "number"))
    fail("k", `expected a path of keys and indices, got ${describeType(path)}`);
  const keys = path as (string | number)[];
  if (keys.length === 0) {
    if (entry.kind === 1 && isRecord(entry.v)) {
      for (const key of Object.keys(root)) delete root[key];
      Object.assign(root, entry.v);
      return;
    }
    fail("k", "an empty path (the whole session) for an update other than a set of an object");
  }
  let parent: Container = root;
  for (const [i, key] of keys.slice(0, -1).entries()) {
    const next = step(parent, key, `k.${i}`, fail);
    if (!isRecord(next) && !Array.isArray(next)) fail(`k.${i}`, `the path goes through ${describeType(next)} at ${JSON.stringify(key)}`);
    parent = next as Container;
  }
  const last = keys[keys.length - 1] as string | number;
  const lastField = `k.${keys.length - 1}`;
  if (entry.kind === 2) {
    const current = step(parent, last, lastField, fail);
    if (current !== undefined && current !== null && !Array.isArray(current)) fail(lastField, `a push onto ${describeType(current)}`);
    const array = (current as unknown[] | undefined) ?? [];
    if (entry.i !== undefined) {
      if (typeof entry.i !== "number" || !Number.isInteger(entry.i) || entry.i < 0 || entry.i > array.length)
        fail("i", `expected an index from 0 to ${array.length}, got ${entry.i === undefined ? "nothing" : describeJson(entry.i)}`);
      array.length = entry.i as number;
    }
    if (entry.v !== undefined) {
      if (!Array.isArray(entry.v)) fail("v", `expected an array of items to push, got ${describeType(entry.v)}`);
      for (const item of entry.v as unknown[]) array.push(item);
    }
    assign(parent, last, array, lastField, fail);
    return;
  }
  if (entry.kind === 3) {
    if (Array.isArray(parent)) assign(parent, last, undefined, lastField, fail);
    else if (typeof last === "string" && !UNSAFE_KEYS.has(last)) delete parent[last];
    return;
  }
  assign(parent, last, entry.v, lastField, fail);
}

function step(container: Container, key: string | number, field: string, fail: (field: string, reason: string) => never): unknown {
  if (Array.isArray(container)) {
    if (typeof key !== "number") fail(field, `an array indexed by ${JSON.stringify(key)}`);
    return container[key as number];
  }
  if (typeof key !== "string" || UNSAFE_KEYS.has(key)) fail(field, `an object key ${JSON.stringify(key)}`);
  return Object.hasOwn(container, key as string) ? container[key as string] : undefined;
}

function assign(
  container: Container,
  key: string | number,
  value: unknown,
  field: string,
  fail: (field: string, reason: string) => never,
): void {
  if (Array.isArray(container)) {
    // Within the array or one past its end: an index far past it would make a sparse array of that length.
    if (typeof key !== "number" || !Number.isInteger(key) || key < 0 || key > container.length)
      fail(field, `an index from 0 to ${container.length} into an array, got ${JSON.stringify(key)}`);
    container[key as number] = value;
    return;
  }
  if (typeof key !== "string" || UNSAFE_KEYS.has(key)) fail(field, `an object key ${JSON.stringify(key)}`);
  container[key as string] = value;
}
