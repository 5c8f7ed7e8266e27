import type { Domain, SourceRef, Turn } from "../core/trajectory.ts";
import { baseName, listFolder, parentOf, sideFileSize } from "../io/side-files.ts";
import { type CutNote, truncatedLineMeta } from "./cut-last-line.ts";
import {
  type Companions,
  excerpt,
  firstLine,
  parseJsonLine,
  parseSniffedJson,
  type Reader,
  type ReaderOptions,
  type ReadItem,
} from "./reader.ts";
import {
  describeType,
  FieldError,
  fileStem,
  isRecord,
  jsonObjectLines,
  jsonTextOr,
  MAX_JSON_DEPTH,
  nestsTooDeep,
} from "./record-helpers.ts";

const FORMAT = "copilot-cli";

/*
 * GitHub Copilot CLI session logs (`copilot`, npm `@github/copilot`), as the CLI writes them under
 * `~/.copilot/session-state/`: a folder per session `<session-id>/events.jsonl` (with
 * `workspace.yaml`, `checkpoints/`, `files/`, `plan.md` beside it), or, in older versions,
 * `<session-id>.jsonl` directly. Both are the same event log; one file = one session.
 *
 * Sources (read for this reader, nothing copied): the event schema github/copilot-sdk generates
 * from `session-events.schema.json` (`nodejs/src/generated/session-events.ts` at commit
 * 01396124b646ec00b4380a67112d78d071df776f); how VS Code replays these events
 * (microsoft/vscode-copilot-chat `src/extension/chatSessions/copilotcli/common/copilotCLITools.ts`
 * at 199ff62fde60c3079abf7b902ca989b83c3129ff: the tool names and arguments; its tests of
 * `processToolExecutionComplete` show bash's `<exited with exit code N>` trailer); and the layouts community viewers read
 * (qiaolei81/copilot-session-viewer `src/adapters/CopilotAdapter.js` at
 * 4e762ceddd656d21e7bf04398c0380ca5b631c19: folder and `<id>.jsonl` sessions; its
 * `__tests__/fixtures/sessions/copilot-cli/session-demo/events.jsonl` at
 * ea0aa81ba28f5304fb2ac2d504f4aea507203f26: a sub-agent's
 * events carrying `agentId` and `parentToolCallId`, `session.shutdown`'s `modelMetrics`).
 *
 * One line = one event `{type, data, id, timestamp, parentId, agentId?, ephemeral?}`:
 * - **Action**: each tool call, in the order the assistant asked for them: an `assistant.message`'s
 *   `toolRequests` `{toolCallId, name, arguments}` (a call that only has a `tool.execution_start`
 *   `{toolCallId, toolName, arguments}`, or a `tool.user_requested` — the user's own `!command` —
 *   is one too). `bash` / `powershell` / `shell` → its `command`; any other tool (view, edit,
 *   create, str_replace_editor, grep, glob, web_fetch, task, MCP tools, …) → `name {arguments}`.
 * - **Observation**: the `tool.execution_complete` with that `toolCallId`, whenever it comes:
 *   `result.content` (what the model was given; `detailedContent` is the UI's diff and is not
 *   read). A shell's `<exited with exit code N>` trailer is taken off into `turn.meta.exit_code`;
 *   nothing printed reads `[exit code N, no output]` (`[no output]` for other tools).
 *   `success: false` → `turn.meta.is_error`, the observation being `error.message` (and
 *   `turn.meta.error_code`: `failure`, `denied`, …). A call never completed (interrupted,
 *   aborted) makes no turn (counted: `call_without_result`).
 * - **Thinking**: the assistant's reasoning (`assistant.reasoning`, a message's `reasoningText`,
 *   the same text once) and its text since the previous call, on the first call that follows them.
 *   Text after the last call is `meta.final_message`.
 * - **Task**: the first `user.message`'s `content` written by the user (`source` absent or `user`;
 *   skill, command, autopilot and agent-injected messages are counted, the first of them the task
 *   only when the person wrote none); later ones go to the next turn's `meta.user_messages`.
 * - **Sub-agents**: events a sub-agent emitted (`agentId`, or the older `data.parentToolCallId`)
 *   are a trajectory of their own, id `<session id>/agent-<agentId>`, task the spawning `task`
 *   call's `prompt`, `meta.sidechain` naming it; the spawning call's turn names it in
 *   `turn.meta.agent_id` and observes the sub-agent's answer, as the claude-code reader does.
 * - **Id**: `session.start`'s `sessionId`, else the session folder's name (`events.jsonl`) or the
 *   file name (`<id>.jsonl`). **Domain** (unless `--domain`): mostly MCP tools → mcp; mostly
 *   web_fetch / web_search → web / search; any edit or file tool → swe; shell only → terminal.
 * - **VS Code's Copilot Chat** writes the same log as its agent transcript
 *   (`workspaceStorage/<id>/GitHub.copilot-chat/transcripts/<session>.jsonl`, microsoft/vscode-copilot-chat
 *   `sessionTranscriptService.ts`): `session.start` adds `vscodeVersion` (`agent: "copilot-chat"`),
 *   tool requests' `arguments` are the model's JSON text (read as the object), and its tool names
 *   (`run_in_terminal`, `replace_string_in_file`, `read_file`, …) count as the CLI's do.
 * - **Meta**: `agent: "copilot-cli"` (`"copilot-chat"` for a VS Code transcript), `session_id`,
 *   `vscode_version`, `version` (copilotVersion), `producer`,
 *   `start_time`, `cwd`, `git_root`, `branch`, `repository`, `head_commit`, `model` (the assistant
 *   messages' most used; a message without one counts for the model selected then, by
 *   `session.start` / `session.model_change`; all in `models`), `model_changes`, `output_tokens`
 *   (the messages' `outputTokens` summed), `tokens` / `premium_requests` / `code_changes` (from
 *   `session.shutdown`: `modelMetrics` summed over models, and over the file's shutdowns — one per
 *   run of a resumed session), `shutdown` (an error shutdown), `errors` (`session.error`s, the first
 *   ten), `final_message`, `skipped` (events and calls that made no turn, by kind). No outcome: the
 *   format records none.
 *
 * Companions: a session folder's other files (workspace.yaml, checkpoints/, files/, plan.md, …)
 * are covered by its `events.jsonl`, so a glob over `~/.copilot/session-state/` reads each session
 * once and quarantines none of them (a folder is taken as a session's when it holds
 * `workspace.yaml` or is named by a UUID).
 *
 * Quarantined (one entry for the session, naming the line and field): a line that is not a JSON
 * object (unless it is the last line, cut while the CLI wrote it: the events before it are read and
 * `meta.truncated_line` says so, cut-last-line.ts), an event whose `type`, `data` or read fields have
 * the wrong type, a file with no event. Event types this reader does not know are counted, never
 * refused; so is a `tool.execution_complete` whose `toolCallId` no request or start named before it
 * (`meta.skipped.completion_without_call`: its call is not in the log, the other turns are read). A
 * session (or sub-agent) with no completed call is yielded without turns and with `meta.read_filter`
 * (`no-tool-calls`), as the gemini-cli reader does.
 */
export const copilotCliReader: Reader = {
  name: FORMAT,
  domain: "from the tools",
  description:
    "GitHub Copilot CLI session logs (~/.copilot/session-state/<id>/events.jsonl, older <id>.jsonl): tool requests → tool.execution_complete",

  sniff(head) {
    const line = firstLine(head.replace(/^\uFEFF/, "")).trim();
    if (!line.startsWith("{")) return false;
    const parsed = parseSniffedJson(line);
    // A line longer than the head (a system.message with the whole prompt) is cut: its start.
    if (!parsed.ok) return CUT_EVENT_START.test(line);
    return isEvent(parsed.value);
  },

  async companions(path: string): Promise<Companions> {
    const own = (await sideFileSize(path)) ?? 0;
    const dir = parentOf(path);
    const label = `Copilot CLI session ${baseName(dir)}`;
    if (!/^events\.jsonl(\.(gz|zst|zstd))?$/i.test(baseName(path))) return { dirs: [], files: [], bytes: own, label };
    // Only a session's own folder: a folder of many logs named events.jsonl by someone else keeps its files.
    const listing = await listFolder(dir);
    const session = listing.files.has("workspace.yaml") || UUID.test(baseName(dir));
    return { dirs: session ? [dir] : [], files: [], bytes: own, label };
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    const { range: _range, ...whole } = options;
    const session = new Session(path);
    try {
      for await (const line of jsonObjectLines(path, whole, FORMAT, session.cut)) {
        if (line.kind === "quarantine") {
          const at = line.entry.source.line;
          throw new FieldError(undefined, `${at !== undefined ? `line ${at}: ` : ""}${line.entry.reason}`, at);
        }
        session.take(line.record, line.source.line as number);
      }
      if (session.events === 0)
        throw new FieldError(undefined, "not a Copilot CLI session log: no event (a line with a `type` and a `data` object)");
    } catch (err) {
      if (!(err instanceof FieldError)) throw err;
      const source: SourceRef = { uri: path, format: FORMAT, ...(err.line !== undefined ? { line: err.line } : {}) };
      yield {
        kind: "quarantine",
        entry: { source, id: session.id, stage: "read", ...(err.field ? { field: err.field } : {}), reason: err.message },
      };
      return;
    }
    yield* session.finish(options.domain);
  },
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Event namespaces of the schema (`session.start`, `tool.execution_complete`, …); `abort` has none. */
const EVENT_TYPE =
  /^(session|user|assistant|tool|subagent|hook|skill|system|permission|pending_messages|external_tool|command|commands|elicitation|sampling|mcp|model|exit_plan_mode|user_input|capabilities|tools|skills|custom_agents|extensions|background_tasks|auto_mode_switch)\.[a-z_]+$/;
/** The start of an event line as the CLI writes it (JSON.stringify, keys in this order). */
const CUT_EVENT_START = /^\{"type":"(session|user|assistant|tool|subagent|hook|skill|system)\.[a-z_]+","data":\{/;

/** An event's envelope: a namespaced type, a data object, an id and a timestamp. */
function isEvent(value: unknown): boolean {
  return (
    isRecord(value) &&
    typeof value.type === "string" &&
    (EVENT_TYPE.test(value.type) || value.type === "abort") &&
    isRecord(value.data) &&
    typeof value.id === "string" &&
    typeof value.timestamp === "string"
  );
}

// With VS Code's Copilot Chat tool names (its transcripts): run_in_terminal, replace_string_in_file, read_file, …
const SHELL_TOOLS = new Set(["bash", "powershell", "shell", "run_in_terminal"]);
const EDIT_TOOLS = new Set([
  "edit",
  "create",
  "str_replace",
  "str_replace_editor",
  "insert",
  "apply_patch",
  "write",
  "replace_string_in_file",
  "multi_replace_string_in_file",
  "insert_edit_into_file",
  "create_file",
]);
const FILE_TOOLS = new Set([
  "view",
  "show_file",
  "grep",
  "rg",
  "glob",
  "lsp",
  "read_file",
  "list_dir",
  "grep_search",
  "file_search",
  "semantic_search",
]);
const SEARCH_TOOLS = new Set(["web_search"]);
const WEB_TOOLS = new Set(["web_fetch"]);
/** The shell tool's trailer: `<exited with exit code N>` after the command's output. */
const EXIT_TRAILER = /\n?<exited with exit code (-?\d+)>\s*$/;
/** Errors kept in `meta.errors` (all are counted). */
const ERRORS_KEPT = 10;

const MAIN = "main";

interface Call {
  id: string;
  name: string;
  args: unknown;
  turn: Turn;
  observed: boolean;
  mcp: boolean;
  group: Group;
}

/** One agent's conversation: the session's main agent, or a sub-agent (its events carry its agentId). */
class Group {
  readonly key: string;
  readonly firstLine: number;
  readonly calls: Call[] = [];
  readonly skipped: Record<string, number> = {};
  readonly models: Record<string, number> = {};
  /** Reasoning and text since the previous call: the next call's thinking. */
  pending: string[] = [];
  /** The last assistant text no call followed (yet). */
  tail: string | undefined;
  lastReply: string | undefined;
  userMessages: string[] = [];
  task: string | undefined;
  injectedTask: string | undefined;
  outputTokens = 0;
  /** A sub-agent's spawning call, name and end. */
  parentCallId: string | undefined;
  agentName: string | undefined;
  status: string | undefined;
  subagent: Record<string, unknown> = {};

  constructor(key: string, line: number) {
    this.key = key;
    this.firstLine = line;
  }

  count(what: string, n = 1): void {
    this.skipped[what] = (this.skipped[what] ?? 0) + n;
  }

  think(text: string): void {
    const trimmed = text.trim();
    if (trimmed !== "" && !this.pending.includes(trimmed)) this.pending.push(trimmed);
  }

  prompt(text: string): void {
    if (text.trim() === "") return;
    // Assistant words the person answered: a reply, not reasoning for the next call.
    if (this.pending.length > 0) {
      this.lastReply = this.tail ?? this.pending.join("\n\n");
      this.count("assistant_reply");
      this.pending = [];
      this.tail = undefined;
    }
    if (this.task === undefined) this.task = text;
    else this.userMessages.push(text);
  }
}

class Session {
  readonly path: string;
  readonly cut: CutNote = {};
  events = 0;
  sessionId: string | undefined;
  private readonly header: Record<string, unknown> = {};
  private currentModel: string | undefined;
  private readonly modelChanges: string[] = [];
  private readonly groups = new Map<string, Group>();
  private readonly calls = new Map<string, Call>();
  private readonly errors: { error_type?: string; message: string }[] = [];
  private tokens: Record<string, number> | undefined;
  private premiumRequests: number | undefined;
  private codeChanges: { lines_added: number; lines_removed: number; files_modified: number } | undefined;
  private shutdown: Record<string, unknown> | undefined;

  constructor(path: string) {
    this.path = path;
  }

  /** The session id, else the folder's name (`<id>/events.jsonl`) or the file's (`<id>.jsonl`). */
  get id(): string {
    if (this.sessionId !== undefined) return this.sessionId;
    const stem = fileStem(this.path, /\.jsonl$/i);
    return stem === "events" ? baseName(parentOf(this.path)) : stem;
  }

  private group(key: string, line: number): Group {
    let group = this.groups.get(key);
    if (!group) {
      group = new Group(key, line);
      this.groups.set(key, group);
    }
    return group;
  }

  take(record: Record<string, unknown>, line: number): void {
    const fail: (field: string, reason: string) => never = (field, reason) => {
      throw new FieldError(field, `line ${line}: "${field}": ${reason}`, line);
    };
    const { type, data } = record;
    if (typeof type !== "string") fail("type", `expected an event type string, got ${describeType(type)}`);
    if (data === undefined) {
      // A line of another shape among the events (a CLI's closing summary): counted.
      this.group(MAIN, line).count(`${type}_without_data`);
      return;
    }
    if (!isRecord(data)) fail("data", `expected an object, got ${describeType(data)}`);
    if (nestsTooDeep(data)) fail("data", `nested deeper than ${MAX_JSON_DEPTH} levels`);
    this.events += 1;
    const str = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined);
    const agentKey = str(record.agentId) ?? str(data.parentToolCallId);
    const group = this.group(type.startsWith("subagent.") ? (agentKey ?? str(data.toolCallId) ?? MAIN) : (agentKey ?? MAIN), line);
    const text = (field: string, value: unknown): string => {
      if (value === undefined || value === null) return "";
      if (typeof value !== "string") return fail(`data.${field}`, `expected a string, got ${describeType(value)}`);
      return value;
    };
    switch (type) {
      case "session.start":
      case "session.resume": {
        if (type === "session.start") {
          this.sessionId ??= str(data.sessionId);
          for (const [key, name] of [
            ["copilotVersion", "version"],
            ["vscodeVersion", "vscode_version"],
            ["producer", "producer"],
            ["startTime", "start_time"],
          ] as const)
            if (str(data[key]) !== undefined) this.header[name] ??= data[key];
        } else group.count(type);
        if (isRecord(data.context))
          for (const [key, name] of [
            ["cwd", "cwd"],
            ["gitRoot", "git_root"],
            ["branch", "branch"],
            ["repository", "repository"],
            ["headCommit", "head_commit"],
          ] as const)
            if (str(data.context[key]) !== undefined) this.header[name] ??= data.context[key];
        if (str(data.selectedModel) !== undefined) this.currentModel = data.selectedModel as string;
        return;
      }
      case "session.model_change": {
        const model = text("newModel", data.newModel);
        if (model !== "") {
          this.currentModel = model;
          this.modelChanges.push(model);
        }
        return;
      }
      case "session.error": {
        group.count(type);
        const message = text("message", data.message);
        if (this.errors.length < ERRORS_KEPT)
          this.errors.push({ ...(str(data.errorType) !== undefined ? { error_type: data.errorType as string } : {}), message });
        return;
      }
      case "session.shutdown":
        group.count(type);
        this.takeShutdown(data);
        return;
      case "user.message": {
        const content = text("content", data.content);
        const source = str(data.source);
        if (source !== undefined && source !== "user") {
          group.count("injected_user_message");
          if (content.trim() !== "") group.injectedTask ??= content;
        } else group.prompt(content);
        return;
      }
      case "assistant.reasoning":
        group.think(text("content", data.content));
        return;
      case "assistant.message":
        this.assistant(group, data, fail, text);
        return;
      case "tool.user_requested":
      case "tool.execution_start": {
        const id = data.toolCallId;
        if (typeof id !== "string" || id === "") fail("data.toolCallId", `expected a tool call id, got ${describeType(id)}`);
        const name = data.toolName;
        if (typeof name !== "string" || name === "") fail("data.toolName", `expected a tool name, got ${describeType(name)}`);
        const args = toolArguments(data.arguments, "data.arguments", fail);
        const call = this.calls.get(id) ?? this.register(group, id, name, args);
        if (str(data.mcpServerName) !== undefined) {
          call.mcp = true;
          (call.turn.meta as Record<string, unknown>).mcp_server = data.mcpServerName;
        }
        if (type === "tool.user_requested") (call.turn.meta as Record<string, unknown>).user_requested = true;
        return;
      }
      case "tool.execution_complete":
        this.complete(group, data, fail, text);
        return;
      case "subagent.started":
        group.parentCallId ??= str(data.toolCallId);
        group.agentName ??= str(data.agentName) ?? str(data.agentDisplayName);
        return;
      case "subagent.completed":
      case "subagent.failed":
        group.status = type === "subagent.completed" ? "completed" : "failed";
        group.parentCallId ??= str(data.toolCallId);
        for (const [key, name] of [
          ["model", "model"],
          ["totalTokens", "total_tokens"],
          ["totalToolCalls", "total_tool_calls"],
          ["durationMs", "duration_ms"],
          ["error", "error"],
        ] as const)
          if (data[key] !== undefined && data[key] !== null) group.subagent[name] = data[key];
        return;
      default:
        // Bookkeeping (turn bounds, hooks, info, truncation, compaction, abort, system prompt…) and kinds newer than this reader.
        group.count(type);
    }
  }

  private assistant(
    group: Group,
    data: Record<string, unknown>,
    fail: (field: string, reason: string) => never,
    text: (field: string, value: unknown) => string,
  ): void {
    const reasoning = text("reasoningText", data.reasoningText);
    const content = text("content", data.content);
    const requests = data.toolRequests ?? [];
    if (!Array.isArray(requests)) fail("data.toolRequests", `expected an array, got ${describeType(requests)}`);
    const model = typeof data.model === "string" && data.model !== "" ? data.model : this.currentModel;
    if (model !== undefined) group.models[model] = (group.models[model] ?? 0) + 1;
    if (typeof data.outputTokens === "number" && Number.isFinite(data.outputTokens)) group.outputTokens += data.outputTokens;
    group.think(reasoning);
    group.think(content);
    (requests as unknown[]).forEach((request, i) => {
      const field = `data.toolRequests[${i}]`;
      if (!isRecord(request)) fail(field, `expected a tool request object, got ${describeType(request)}`);
      const { toolCallId: id, name } = request as Record<string, unknown>;
      if (typeof id !== "string" || id === "") fail(`${field}.toolCallId`, `expected a tool call id, got ${describeType(id)}`);
      if (typeof name !== "string" || name === "") fail(`${field}.name`, `expected a tool name, got ${describeType(name)}`);
      const args = toolArguments((request as Record<string, unknown>).arguments, `${field}.arguments`, fail);
      if (this.calls.has(id as string)) {
        group.count("repeated_tool_request");
        return;
      }
      this.register(group, id as string, name as string, args);
      if (typeof (request as Record<string, unknown>).mcpServerName === "string") (this.calls.get(id as string) as Call).mcp = true;
    });
    if (requests.length === 0 && content.trim() !== "") group.tail = content.trim();
  }

  private register(group: Group, id: string, name: string, args: unknown): Call {
    const command = isRecord(args) ? args.command : undefined;
    const action =
      SHELL_TOOLS.has(name) && typeof command === "string"
        ? command
        : typeof args === "string"
          ? `${name} ${args}`
          : `${name} ${jsonTextOr(args ?? {}, "{}")}`;
    const meta: Record<string, unknown> = { tool: name, tool_call_id: id };
    if (group.userMessages.length > 0) meta.user_messages = group.userMessages;
    const thinking = group.pending.join("\n\n");
    const turn: Turn = { action, observation: "", ...(thinking !== "" ? { thinking } : {}), meta };
    const call: Call = { id, name, args, turn, observed: false, mcp: false, group };
    group.calls.push(call);
    this.calls.set(id, call);
    group.pending = [];
    group.tail = undefined;
    group.userMessages = [];
    return call;
  }

  private complete(
    group: Group,
    data: Record<string, unknown>,
    fail: (field: string, reason: string) => never,
    text: (field: string, value: unknown) => string,
  ): void {
    const id = data.toolCallId;
    if (typeof id !== "string" || id === "") fail("data.toolCallId", `expected a tool call id, got ${describeType(id)}`);
    const call = this.calls.get(id);
    // A result whose call the log does not hold (lost from a resumed or damaged log) makes no turn;
    // it is counted, and the session's other turns are read.
    if (!call) {
      group.count("completion_without_call");
      return;
    }
    const { success, error, result } = data;
    if (success !== undefined && success !== null && typeof success !== "boolean")
      fail("data.success", `expected a boolean, got ${describeType(success)}`);
    let errorText: string | undefined;
    let errorCode: string | undefined;
    if (typeof error === "string") errorText = error;
    else if (isRecord(error)) {
      errorText = text("error.message", error.message) || undefined;
      if (typeof error.code === "string" && error.code !== "") errorCode = error.code;
    } else if (error !== undefined && error !== null) fail("data.error", `expected an object or a string, got ${describeType(error)}`);
    let output = "";
    if (typeof result === "string") output = result;
    else if (isRecord(result)) output = text("result.content", result.content) || contentsText(result.contents);
    else if (result !== undefined && result !== null) fail("data.result", `expected an object, got ${describeType(result)}`);
    if (call.observed) {
      call.group.count("repeated_completion");
      return;
    }
    const failed = success === false || (success !== true && (errorText !== undefined || errorCode !== undefined));
    const meta = call.turn.meta as Record<string, unknown>;
    const shell = SHELL_TOOLS.has(call.name);
    let observation = failed ? (errorText ?? output) : output;
    let exitCode: number | undefined;
    if (shell) {
      const trailer = EXIT_TRAILER.exec(observation);
      if (trailer) {
        exitCode = Number(trailer[1]);
        observation = observation.slice(0, trailer.index);
        meta.exit_code = exitCode;
      }
    }
    if (observation.trim() === "") observation = shell && !failed ? `[exit code ${exitCode ?? 0}, no output]` : "[no output]";
    call.turn.observation = observation;
    call.observed = true;
    if (failed) meta.is_error = true;
    if (errorCode !== undefined) meta.error_code = errorCode;
    if (data.isUserRequested === true) meta.user_requested = true;
  }

  private takeShutdown(data: Record<string, unknown>): void {
    if (isRecord(data.modelMetrics)) {
      const tokens = this.tokens ?? { input: 0, output: 0, cache_read: 0, cache_write: 0 };
      for (const metric of Object.values(data.modelMetrics)) {
        const usage = isRecord(metric) && isRecord(metric.usage) ? metric.usage : undefined;
        if (!usage) continue;
        for (const [key, name] of [
          ["inputTokens", "input"],
          ["outputTokens", "output"],
          ["cacheReadTokens", "cache_read"],
          ["cacheWriteTokens", "cache_write"],
          ["reasoningTokens", "reasoning"],
        ] as const)
          if (typeof usage[key] === "number" && Number.isFinite(usage[key])) tokens[name] = (tokens[name] ?? 0) + (usage[key] as number);
      }
      this.tokens = tokens;
    }
    if (typeof data.totalPremiumRequests === "number") this.premiumRequests = (this.premiumRequests ?? 0) + data.totalPremiumRequests;
    if (isRecord(data.codeChanges)) {
      const changes = data.codeChanges;
      const known = this.codeChanges ?? { lines_added: 0, lines_removed: 0, files_modified: 0 };
      if (typeof changes.linesAdded === "number") known.lines_added += changes.linesAdded;
      if (typeof changes.linesRemoved === "number") known.lines_removed += changes.linesRemoved;
      if (Array.isArray(changes.filesModified)) known.files_modified += changes.filesModified.length;
      this.codeChanges = known;
    }
    if (data.shutdownType === "error")
      this.shutdown = { type: "error", ...(typeof data.errorReason === "string" ? { error_reason: data.errorReason } : {}) };
  }

  *finish(domain: Domain | undefined): Generator<ReadItem> {
    const session = this.id;
    const main = this.groups.get(MAIN) ?? new Group(MAIN, 1);
    // The spawning call of each sub-agent names it and is told its answer by its own completion.
    for (const group of this.groups.values()) {
      if (group === main) continue;
      const parent = this.calls.get(group.parentCallId ?? group.key);
      if (parent) {
        group.parentCallId = parent.id;
        (parent.turn.meta as Record<string, unknown>).agent_id = group.key;
      }
    }
    yield this.trajectory(main, session, domain);
    for (const group of this.groups.values()) if (group !== main) yield this.trajectory(group, session, domain);
  }

  private trajectory(group: Group, session: string, domain: Domain | undefined): ReadItem {
    const sub = group.key !== MAIN;
    const id = sub ? `${session}/agent-${group.key}` : session;
    const source: SourceRef = { uri: this.path, format: FORMAT, ...(sub ? { line: group.firstLine } : {}) };
    const unanswered = group.calls.filter((call) => !call.observed).length;
    if (unanswered > 0) group.count("call_without_result", unanswered);
    const answered = group.calls.filter((call) => call.observed);
    const turns = answered.map((call) => call.turn);
    let task = group.task ?? group.injectedTask;
    if (sub && task === undefined) {
      const parent = group.parentCallId !== undefined ? this.calls.get(group.parentCallId) : undefined;
      if (parent && isRecord(parent.args) && typeof parent.args.prompt === "string") task = parent.args.prompt;
    }
    // VS Code's Copilot Chat writes the same log as its agent's transcript, naming the VS Code it ran in.
    const meta: Record<string, unknown> = { agent: this.header.vscode_version !== undefined ? "copilot-chat" : "copilot-cli" };
    const models = Object.entries(group.models).sort((a, b) => b[1] - a[1]);
    const model = models[0]?.[0] ?? (sub ? undefined : this.currentModel);
    if (model !== undefined) meta.model = model;
    if (models.length > 1) meta.models = Object.fromEntries(models);
    meta.session_id = session;
    if (sub)
      meta.sidechain = {
        agent_id: group.key,
        ...(group.parentCallId !== undefined ? { tool_call_id: group.parentCallId } : {}),
        ...(group.agentName !== undefined ? { agent_name: group.agentName } : {}),
        ...(group.status !== undefined ? { status: group.status } : {}),
        ...group.subagent,
      };
    else {
      Object.assign(meta, this.header);
      if (this.modelChanges.length > 0) meta.model_changes = this.modelChanges;
      if (this.tokens) meta.tokens = this.tokens;
      if (this.premiumRequests !== undefined) meta.premium_requests = this.premiumRequests;
      if (this.codeChanges) meta.code_changes = this.codeChanges;
      if (this.shutdown) meta.shutdown = this.shutdown;
      if (this.errors.length > 0) meta.errors = this.errors;
    }
    if (group.outputTokens > 0) meta.output_tokens = group.outputTokens;
    const final = group.tail ?? group.lastReply;
    if (final !== undefined) meta.final_message = final;
    if (Object.keys(group.skipped).length > 0) meta.skipped = group.skipped;
    if (!sub) Object.assign(meta, truncatedLineMeta(this.cut));
    if (turns.length === 0) {
      const counts = Object.entries(group.skipped).map(([key, n]) => `${n} ${key}`);
      const what = [task !== undefined ? `the prompt ${JSON.stringify(excerpt(task))}` : "no prompt", ...counts];
      meta.read_filter = {
        stage: "no-tool-calls",
        reason: `no tool call with a result in the ${sub ? `sub-agent ${group.key}` : "session"} (${what.join(", ")}): a chat without actions`,
      };
    }
    const tools = answered.map((call) => ({ name: call.name, mcp: call.mcp }));
    return {
      kind: "trajectory",
      trajectory: {
        id,
        domain: domain ?? inferCopilotDomain(tools),
        source,
        ...(task !== undefined ? { task } : {}),
        turns,
        meta,
      },
    };
  }
}

/** A tool's arguments: an object, a string (a grammar-based custom tool's input), or none. */
function toolArguments(value: unknown, field: string, fail: (field: string, reason: string) => never): unknown {
  // VS Code's transcripts keep a tool request's arguments as the JSON text the model wrote.
  if (typeof value === "string" && value.trimStart().startsWith("{")) {
    const parsed = parseJsonLine(value);
    if (parsed.ok && isRecord(parsed.value)) return parsed.value;
  }
  if (value === undefined || value === null || typeof value === "string" || isRecord(value)) return value ?? undefined;
  return fail(field, `expected an object, got ${describeType(value)}`);
}

/** A result's `contents` blocks as text (when it has no `content`): text and terminal output, others by kind. */
function contentsText(contents: unknown): string {
  if (!Array.isArray(contents)) return "";
  const out: string[] = [];
  for (const block of contents) {
    if (!isRecord(block)) continue;
    if (typeof block.text === "string") out.push(block.text);
    else if (isRecord(block.resource) && typeof block.resource.text === "string") out.push(block.resource.text);
    else if (typeof block.type === "string") out.push(`[${block.type}]`);
  }
  return out.join("\n");
}

/** The domain of a conversation from the tools it called (see the reader's comment). */
export function inferCopilotDomain(tools: readonly { name: string; mcp: boolean }[]): Domain {
  const share = (test: (tool: { name: string; mcp: boolean }) => boolean) => tools.filter(test).length / Math.max(tools.length, 1);
  if (share((tool) => tool.mcp) > 0.5) return "mcp";
  if (share((tool) => WEB_TOOLS.has(tool.name) || SEARCH_TOOLS.has(tool.name)) > 0.5)
    return share((tool) => SEARCH_TOOLS.has(tool.name)) > 0.5 ? "search" : "web";
  if (tools.some((tool) => EDIT_TOOLS.has(tool.name) || FILE_TOOLS.has(tool.name))) return "swe";
  if (tools.some((tool) => SHELL_TOOLS.has(tool.name))) return "terminal";
  return "swe";
}
