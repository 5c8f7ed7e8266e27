import { createHash } from "node:crypto";
import { basename } from "node:path";
import type { Domain, SourceRef, Turn } from "../core/trajectory.ts";
import { openDecompressed } from "../io/open-input.ts";
import { type Line, readLines } from "../io/read-lines.ts";
import { isMessageOrItem } from "./chat-rows/responses-items.ts";
import { rowItem } from "./chat-rows/row-item.ts";
import { type CutNote, truncatedLineMeta, withoutCutLastRawLine } from "./cut-last-line.ts";
import {
  excerpt,
  firstLine,
  parseJsonLine,
  parseSniffedJson,
  type Reader,
  type ReaderOptions,
  type ReadItem,
  RecordLineError,
  refuseOversizedLine,
} from "./reader.ts";
import { describeType, isRecord, MAX_JSON_DEPTH, nestsTooDeep } from "./record-helpers.ts";

const FORMAT = "codex-rollout";

/*
 * Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl`, also `.jsonl.zst`),
 * as written by openai/codex (codex-rs `RolloutRecorder`). One file = one session = one trajectory.
 * Two layouts, both read:
 *
 * - since rust-v0.33: every line is a `RolloutLine` `{timestamp, type, payload}`, `type` one of
 *   `session_meta` (first line: id, cwd, originator, cli_version, source, model_provider, git, …),
 *   `response_item` (the model's history: a `ResponseItem`), `event_msg` (UI events: user_message,
 *   agent_message, token_count, task_complete, turn_aborted, …), `turn_context` (per user turn: cwd,
 *   model, policies) and `compacted` (a history compaction). Newer kinds (world_state, …) are counted.
 * - before: the first line is a bare session header `{id, timestamp, instructions, git?}`, then
 *   every line is a bare `ResponseItem` or a `{"record_type": "state"}` marker.
 *
 * A file of bare Responses API items with no session header, not named `rollout-*.jsonl`, is not a
 * Codex session (Codex writes its header first): it is read as one OpenAI Responses conversation by
 * the chat rows' Responses code, `agent` not claimed (`isHeaderlessItem`).
 *
 * Action: each tool call the model made, in call order — `function_call` (`shell` /
 * `container.exec` / `local_shell` with an argv `command` → the command line as a shell shows it,
 * `["bash", "-lc", script]` unwrapped to the script; `shell_command` → its `command`;
 * `exec_command` → its `cmd`; `apply_patch` → the patch; any other tool → `name arguments`),
 * `local_shell_call` (its `action.command` argv), `custom_tool_call` (`apply_patch` → the patch,
 * else `name input`) and `tool_search_call`. Observation: the output item with the same `call_id`
 * (`function_call_output`, `custom_tool_call_output`, `tool_search_output`), whenever it comes, so
 * parallel calls each get their own. Codex's exec framing is taken off the observation and kept in
 * `turn.meta`: the JSON form `{output, metadata: {exit_code, duration_seconds}}`, the unified-exec
 * header (`Chunk ID`, `Wall time`, `Process exited with code N` / `Process running with session ID
 * N`, `Original token count`, then `Output:`) and the shell header (`Exit code`, `Wall time`, `Total
 * output lines`, `Output:`). A command that printed nothing is observed as `[exit code N, no output]`
 * (`[no output, still running]`, `[no output]`), as the OpenHands reader does; an image in a tool's
 * output is `[image]` (its pixels are not kept).
 * Thinking: the reasoning summaries (else the reasoning text) and assistant messages since the
 * previous call, on the first call that follows them; encrypted reasoning is only counted.
 * Task: the first user message that Codex did not inject (`<environment_context>`,
 * `<user_instructions>`, `# AGENTS.md instructions`, `<user_shell_command>`, `<turn_aborted>`, …);
 * taken from the `response_item` messages, or, in a file that has none (the Codex Desktop rollouts
 * record user input only as `event_msg` `user_message`), from those events — never both, so a
 * message is not counted twice. Later user messages go to `turn.meta.user_message` of the next call.
 * `event_msg` lines are never turns (agent_message / agent_reasoning repeat response items).
 * Outcome: Codex records no verdict; a session whose last turn was aborted gets `meta.outcome =
 * {failure_mode: "turn_aborted: <reason>"}`. Id: the session id (`session_meta.id`, the legacy
 * header's `id`), else the uuid in the file name, else a hash of the content. Domain: `swe` when
 * the session records a git repository or applied a patch, else `terminal` (or `--domain`).
 * Calls that never got an output, outputs that answer no call, web searches (their results are not
 * in the rollout) and every other item are counted in `meta.skipped`. Any malformed line
 * quarantines the whole session at that line, with the field to blame — except a last line cut
 * while Codex wrote it (cut-last-line.ts): the session before it is read, and
 * `meta.truncated_line` says which line was left out.
 */

/** The RolloutLine kinds. */
const ENVELOPE_TYPES = new Set(["session_meta", "response_item", "event_msg", "turn_context", "compacted"]);

/** ResponseItem types that call a tool, and those that answer one (joined by `call_id`). */
const CALL_TYPES = new Set(["function_call", "custom_tool_call", "local_shell_call", "tool_search_call"]);
const OUTPUT_TYPES = new Set(["function_call_output", "custom_tool_call_output", "tool_search_output"]);

/** Codex's own user-role injections (codex-rs `contextual_user_message.rs`): context, not the task. */
const CONTEXT_WRAPPERS: readonly [string, string][] = [
  ["<environment_context>", "</environment_context>"],
  ["<user_instructions>", "</user_instructions>"],
  ["# agents.md instructions", "</instructions>"],
  ["<user_shell_command>", "</user_shell_command>"],
  ["<turn_aborted>", "</turn_aborted>"],
  ["<subagent_notification>", "</subagent_notification>"],
  ["<skill>", "</skill>"],
  ["<codex_internal_context", "</codex_internal_context>"],
  ["<goal_context>", "</goal_context>"],
];

/** Leading argv words of a shell running a script (`bash -lc script`): the script is the command. */
const SHELLS = new Set(["bash", "sh", "zsh", "dash", "ksh"]);
const SCRIPT_FLAGS = new Set(["-c", "-lc", "-ic", "-lic", "-cl"]);
const POWERSHELLS = new Set(["powershell", "powershell.exe", "pwsh", "pwsh.exe"]);

/** Function tools whose `command` argument is an argv (`shell_command` and `exec_command` take one string). */
const ARGV_TOOLS = new Set(["shell", "container.exec", "local_shell"]);

export const codexRolloutReader: Reader = {
  name: FORMAT,
  domain: "from the session (swe with a repository, else terminal)",
  description: "Codex CLI rollout JSONL (session_meta / response_item / event_msg lines, or the older bare layout): tool call → its output",

  sniff(head) {
    const line = firstLine(head.replace(/^\uFEFF/, ""));
    // The first line (session_meta with the whole system prompt) may be cut by the head: match its start.
    if (
      /^\s*\{\s*"timestamp"\s*:\s*"[^"]*"\s*,\s*"type"\s*:\s*"(session_meta|response_item|event_msg|turn_context|compacted)"\s*,\s*"payload"\s*:\s*\{/.test(
        line,
      )
    )
      return true;
    const parsed = parseSniffedJson(line);
    if (!parsed.ok || !isRecord(parsed.value)) return false;
    const value = parsed.value;
    if (typeof value.type === "string" && "payload" in value)
      return ENVELOPE_TYPES.has(value.type) && typeof value.timestamp === "string" && isRecord(value.payload);
    if (isLegacyHeader(value)) return true;
    if (value.record_type === "state") return Object.keys(value).every((k) => k === "record_type" || k === "id" || k === "timestamp");
    return isBareResponseItem(value);
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    const { stream } = await openDecompressed(path);
    const hash = createHash("sha256");
    const source: SourceRef = { uri: path, line: 1, offset: 0, format: FORMAT };
    const session = new Session();
    const cut: CutNote = {};
    // Set when the file is a bare Responses API conversation rather than a Codex session (see `isHeaderlessItem`).
    let items: unknown[] | undefined;
    const rolloutName = ROLLOUT_NAME.test(basename(path));
    try {
      for await (const line of withoutCutLastRawLine(readLines(stream, options.maxLineBytes), cut)) {
        refuseOversizedLine(line, options.maxLineBytes);
        hash.update(line.text).update("\n");
        if (line.text.trim() === "") continue;
        const parsed = parseJsonLine(line.text.replace(/^\uFEFF/, ""));
        if (!parsed.ok) throw new RecordLineError(`line ${line.lineNo}: ${parsed.reason}`, "line", line);
        if (items === undefined && session.lines === 0 && !rolloutName && isHeaderlessItem(parsed.value)) items = [];
        if (items !== undefined) {
          if (!(isRecord(parsed.value) && "record_type" in parsed.value)) items.push(parsed.value);
          continue;
        }
        session.take(parsed.value, line);
      }
      if (items !== undefined) {
        const row = { input: items };
        const item = rowItem(row, source, JSON.stringify(row), options);
        yield item.kind === "trajectory" && cut.truncated
          ? { ...item, trajectory: { ...item.trajectory, meta: { ...item.trajectory.meta, ...truncatedLineMeta(cut) } } }
          : item;
        return;
      }
      if (session.lines === 0) throw new RecordLineError("the file has no rollout lines");
    } catch (err) {
      if (!(err instanceof RecordLineError)) throw err;
      stream.destroy();
      const where = err.line ? { ...source, line: err.line.lineNo, offset: err.line.offset } : source;
      yield {
        kind: "quarantine",
        entry: {
          source: where,
          ...(session.id !== undefined ? { id: session.id } : {}),
          stage: "read",
          ...(err.field ? { field: err.field } : {}),
          reason: err.message,
          ...(err.line?.text ? { excerpt: excerpt(err.line.text) } : {}),
        },
      };
      return;
    }
    const id = session.id ?? uuidIn(basename(path)) ?? `codex-${hash.digest("hex").slice(0, 32)}`;
    const built = session.finish();
    if (built.turns.length === 0) {
      yield {
        kind: "quarantine",
        entry: {
          source,
          id,
          stage: "read",
          field: "response_item",
          reason: "no tool call was answered by its output: the session has no turns",
        },
      };
      return;
    }
    const domain: Domain = options.domain ?? (session.sweEvidence ? "swe" : "terminal");
    yield {
      kind: "trajectory",
      trajectory: {
        id,
        domain,
        source,
        ...(built.task !== undefined ? { task: built.task } : {}),
        turns: built.turns,
        meta: { ...built.meta, ...truncatedLineMeta(cut) },
      },
    };
  },
};

/** A Codex rollout's file name (`rollout-<time>-<uuid>.jsonl`, maybe compressed). */
const ROLLOUT_NAME = /^rollout-.*\.jsonl(?:\.(?:gz|zst))?$/i;

/**
 * A first line that is a Responses API item or message and no Codex header (`session_meta`, the
 * pre-0.33 `{id, timestamp, instructions}` header), envelope or state marker. Codex writes its
 * session header first, so such a file (not named `rollout-*.jsonl`) is one OpenAI Responses API
 * conversation, one item a line: read as chat-tool-rows reads a Responses `input` list
 * (src/read/chat-rows/responses-items.ts), its `agent` not claimed as codex.
 */
function isHeaderlessItem(value: unknown): boolean {
  return (
    isRecord(value) &&
    !("payload" in value) &&
    !ENVELOPE_TYPES.has(value.type as string) &&
    !("record_type" in value) &&
    !isLegacyHeader(value) &&
    isMessageOrItem(value)
  );
}

/** `{id, timestamp, instructions?, git?}` and nothing else: the pre-0.33 first line. */
function isLegacyHeader(value: Record<string, unknown>): boolean {
  const keys = Object.keys(value);
  return (
    typeof value.id === "string" &&
    typeof value.timestamp === "string" &&
    keys.every((k) => k === "id" || k === "timestamp" || k === "instructions" || k === "git") &&
    ("instructions" in value || "git" in value)
  );
}

/** A bare ResponseItem line of the pre-0.33 layout (as specific as its shape allows). */
function isBareResponseItem(value: Record<string, unknown>): boolean {
  switch (value.type) {
    case "function_call":
      return typeof value.call_id === "string" && typeof value.arguments === "string" && typeof value.name === "string";
    case "function_call_output":
      return typeof value.call_id === "string" && "output" in value;
    case "local_shell_call":
      return isRecord(value.action) && "status" in value;
    case "reasoning":
      return Array.isArray(value.summary);
    case "message":
      // Responses API content parts (input_text / output_text), which chat rows do not have.
      return (
        typeof value.role === "string" &&
        Array.isArray(value.content) &&
        value.content.some((part) => isRecord(part) && (part.type === "input_text" || part.type === "output_text"))
      );
    default:
      return false;
  }
}

function uuidIn(name: string): string | undefined {
  return /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i.exec(name)?.[0];
}

/** A turn being built: answered once its output came. */
interface OpenTurn {
  turn: Turn;
  answered: boolean;
  /** Later user messages that came before this call. */
  users: string[];
}

/** The error for a field of the current line that does not have the type Codex writes. */
type Bad = (field: string, wanted: string, got: unknown) => RecordLineError;

/** The session, line by line: metadata, the calls in order, and each call's output by `call_id`. */
class Session {
  lines = 0;
  id: string | undefined;
  sweEvidence = false;
  private readonly meta: Record<string, unknown> = { agent: "codex" };
  private readonly skipped: Record<string, number> = {};
  private readonly open: OpenTurn[] = [];
  private readonly byCallId = new Map<string, OpenTurn>();
  private thinking: string[] = [];
  private finalMessage: string | undefined;
  /** User messages, from response items and from events, each with the index of the call they precede. */
  private readonly userItems: { text: string; before: number }[] = [];
  private readonly userEvents: { text: string; before: number }[] = [];
  private readonly models: string[] = [];
  private sawSessionMeta = false;
  private lastLifecycle: { type: string; reason?: string } | undefined;

  take(value: unknown, line: Line): void {
    const at = `line ${line.lineNo}`;
    if (!isRecord(value)) throw new RecordLineError(`${at}: expected a JSON object, got ${describeType(value)}`, "line", line);
    this.lines += 1;
    if ("payload" in value || ENVELOPE_TYPES.has(value.type as string)) {
      if (typeof value.type !== "string")
        throw new RecordLineError(`${at}: type: expected a string, got ${describeType(value.type)}`, "type", line);
      if (!isRecord(value.payload))
        throw new RecordLineError(`${at}: payload: expected an object, got ${describeType(value.payload)}`, "payload", line);
      this.envelope(value.type, value.payload, line);
      return;
    }
    if (this.lines === 1 && isLegacyHeader(value)) {
      this.sessionMeta(value, line, "");
      return;
    }
    if ("record_type" in value) {
      this.count(`record_type_${String(value.record_type)}`);
      return;
    }
    if (typeof value.type === "string") {
      this.responseItem(value, line, "");
      return;
    }
    throw new RecordLineError(
      `${at}: not a Codex rollout line: expected {"timestamp", "type", "payload"} or a bare response item with a string "type"`,
      "type",
      line,
    );
  }

  private envelope(type: string, payload: Record<string, unknown>, line: Line): void {
    if (type === "session_meta") this.sessionMeta(payload, line, "payload.");
    else if (type === "response_item") this.responseItem(payload, line, "payload.");
    else if (type === "event_msg") this.event(payload, line);
    else if (type === "turn_context") {
      if (typeof payload.model === "string" && !this.models.includes(payload.model)) this.models.push(payload.model);
      if (this.meta.cwd === undefined && typeof payload.cwd === "string") this.meta.cwd = payload.cwd;
      this.count("turn_context");
    } else if (type === "compacted") this.count("compacted");
    else this.count(type);
  }

  private sessionMeta(payload: Record<string, unknown>, line: Line, prefix: string): void {
    // A fork or resume repeats earlier session_meta lines: the first one is this file's session.
    if (this.sawSessionMeta) {
      this.count("session_meta_repeated");
      return;
    }
    this.sawSessionMeta = true;
    if (typeof payload.id !== "string" || payload.id === "")
      throw new RecordLineError(
        `line ${line.lineNo}: ${prefix}id: expected the session id (a string), got ${describeType(payload.id)}`,
        `${prefix}id`,
        line,
      );
    this.id = payload.id;
    this.meta.session_id = payload.id;
    for (const key of ["timestamp", "cli_version", "originator", "model_provider", "forked_from_id", "agent_nickname", "agent_role"]) {
      if (typeof payload[key] === "string") this.meta[key === "timestamp" ? "started_at" : key] = payload[key];
    }
    if (typeof payload.cwd === "string") this.meta.cwd = payload.cwd;
    if (typeof payload.source === "string") this.meta.source = payload.source;
    else if (isRecord(payload.source)) {
      this.meta.source = Object.keys(payload.source)[0] ?? "unknown";
      const subagent = payload.source.subagent;
      if (typeof subagent === "string" || (isRecord(subagent) && !nestsTooDeep(subagent))) this.meta.subagent = subagent;
    }
    if (typeof payload.model === "string") this.models.push(payload.model);
    if (isRecord(payload.git)) {
      const git: Record<string, string> = {};
      for (const key of ["commit_hash", "branch", "repository_url"])
        if (typeof payload.git[key] === "string") git[key] = payload.git[key] as string;
      if (Object.keys(git).length > 0) {
        this.meta.git = git;
        this.sweEvidence = true;
      }
    }
  }

  private event(payload: Record<string, unknown>, line: Line): void {
    const type = payload.type;
    if (typeof type !== "string")
      throw new RecordLineError(`line ${line.lineNo}: payload.type: expected a string, got ${describeType(type)}`, "payload.type", line);
    if (type === "user_message") {
      if (typeof payload.message !== "string")
        throw new RecordLineError(
          `line ${line.lineNo}: payload.message: expected the user's text, got ${describeType(payload.message)}`,
          "payload.message",
          line,
        );
      if (payload.message.trim() === "") this.count("user_message_without_text");
      else if (!isInjected(payload.message)) this.userEvents.push({ text: payload.message.trim(), before: this.open.length });
    } else if (type === "task_complete" || type === "turn_complete") this.lastLifecycle = { type: "complete" };
    else if (type === "turn_aborted")
      this.lastLifecycle = { type: "aborted", ...(typeof payload.reason === "string" ? { reason: payload.reason } : {}) };
    else if (type === "task_started" || type === "turn_started") this.lastLifecycle = { type: "started" };
    else if (type === "token_count" && isRecord(payload.info) && isRecord(payload.info.total_token_usage)) {
      const usage = Object.entries(payload.info.total_token_usage).filter(([, n]) => typeof n === "number");
      this.meta.token_usage = Object.fromEntries(usage);
    }
    this.count("event_msg");
  }

  private responseItem(item: Record<string, unknown>, line: Line, prefix: string): void {
    const type = item.type;
    const at = `line ${line.lineNo}`;
    const bad: Bad = (field, wanted, got) =>
      new RecordLineError(`${at}: ${prefix}${field}: expected ${wanted}, got ${describeType(got)}`, `${prefix}${field}`, line);
    if (typeof type !== "string") throw bad("type", "a string", type);
    if (type === "message") {
      if (typeof item.role !== "string") throw bad("role", "a string", item.role);
      const text = contentText(item.content);
      if (text === undefined) throw bad("content", "an array of content parts", item.content);
      this.message(item.role, text);
    } else if (type === "reasoning") {
      if (!Array.isArray(item.summary)) throw bad("summary", "an array", item.summary);
      const summary = partTexts(item.summary);
      const text = summary !== "" ? summary : Array.isArray(item.content) ? partTexts(item.content) : "";
      if (text !== "") this.thinking.push(text);
      else this.count(typeof item.encrypted_content === "string" ? "encrypted_reasoning" : "empty_reasoning");
    } else if (CALL_TYPES.has(type)) {
      this.call(type, item, bad);
    } else if (OUTPUT_TYPES.has(type)) {
      if (typeof item.call_id !== "string") throw bad("call_id", "a string", item.call_id);
      if (type === "tool_search_output" && nestsTooDeep(item.tools ?? item.output))
        throw bad("tools", `JSON nested at most ${MAX_JSON_DEPTH} levels`, item.tools ?? item.output);
      const observed =
        type === "tool_search_output" ? { text: JSON.stringify(item.tools ?? item.output ?? null), meta: {} } : outputOf(item.output);
      if (observed === undefined) throw bad("output", "a string, content items or {content}", item.output);
      const open = this.byCallId.get(item.call_id);
      if (!open) {
        this.count("output_without_call");
        return;
      }
      this.byCallId.delete(item.call_id);
      open.answered = true;
      open.turn.observation = observed.text;
      if (Object.keys(observed.meta).length > 0) open.turn.meta = { ...open.turn.meta, ...observed.meta };
    } else {
      // web_search_call (its results are not recorded), ghost_snapshot, compaction, image_generation_call, other.
      this.count(type);
    }
  }

  private call(type: string, item: Record<string, unknown>, bad: Bad): void {
    let callId = item.call_id;
    let built: { action: string; meta: Record<string, unknown>; patch: boolean };
    if (type === "local_shell_call") {
      // call_id is null on the Chat Completions path, where the item's own id stands for it.
      if (callId === null || callId === undefined) callId = item.id;
      const action = item.action;
      if (!isRecord(action)) throw bad("action", "an object", action);
      if (!isArgv(action.command)) throw bad("action.command", "an array of strings", action.command);
      const command = argvCommand(action.command);
      built = {
        action: command.text,
        meta: { tool: "local_shell", ...(typeof item.status === "string" ? { status: item.status } : {}) },
        patch: command.patch,
      };
    } else if (type === "function_call") {
      if (typeof item.name !== "string") throw bad("name", "a string", item.name);
      if (typeof item.arguments !== "string") throw bad("arguments", "a JSON string", item.arguments);
      const name = typeof item.namespace === "string" && item.namespace !== "" ? `${item.namespace}.${item.name}` : item.name;
      const action = functionAction(item.name, name, item.arguments);
      built = { action: action.text, meta: { tool: name }, patch: action.patch };
    } else if (type === "custom_tool_call") {
      if (typeof item.name !== "string") throw bad("name", "a string", item.name);
      if (typeof item.input !== "string") throw bad("input", "a string", item.input);
      const patch = item.name === "apply_patch";
      built = { action: patch ? item.input : `${item.name} ${item.input}`, meta: { tool: item.name }, patch };
    } else {
      // Arguments are written back as JSON text: refuse what JSON.stringify cannot walk.
      if (nestsTooDeep(item.arguments)) throw bad("arguments", `JSON nested at most ${MAX_JSON_DEPTH} levels`, item.arguments);
      built = { action: `tool_search ${JSON.stringify(item.arguments ?? null)}`, meta: { tool: "tool_search" }, patch: false };
    }
    if (typeof callId !== "string") throw bad("call_id", "a string", callId);
    if (built.patch) this.sweEvidence = true;
    const turn: Turn = { action: built.action, observation: "", meta: built.meta };
    if (this.thinking.length > 0) turn.thinking = this.thinking.join("\n\n");
    this.thinking = [];
    this.finalMessage = undefined;
    const open: OpenTurn = { turn, answered: false, users: [] };
    if (this.byCallId.has(callId)) this.count("repeated_call_id");
    this.byCallId.set(callId, open);
    this.open.push(open);
  }

  private message(role: string, text: string): void {
    if (role === "assistant") {
      if (text.trim() !== "") {
        this.thinking.push(text.trim());
        this.finalMessage = text.trim();
      }
      return;
    }
    if (role === "user" && text.trim() === "") {
      // Images only (their pixels are not kept): nothing to read as an instruction.
      this.count("user_message_without_text");
      return;
    }
    if (role === "user" && !isInjected(text)) {
      // What the assistant said before a new user message answered the previous one: not this call's thinking.
      if (this.thinking.length > 0) this.count("assistant_reply");
      this.thinking = [];
      this.userItems.push({ text: text.trim(), before: this.open.length });
      return;
    }
    this.count(role === "user" ? "context_message" : `${role}_message`);
  }

  finish(): { task: string | undefined; turns: Turn[]; meta: Record<string, unknown> } {
    // One source of user messages: the response items when the file has any, else the events.
    const users = this.userItems.length > 0 ? this.userItems : this.userEvents;
    if (this.userItems.length > 0 && this.userEvents.length > 0) this.count("user_message_event_duplicate", this.userEvents.length);
    const [first, ...later] = users;
    for (const { text, before } of later) {
      const target = this.open[before];
      if (target) target.users.push(text);
      else this.count("user_message_after_last_call");
    }
    const turns: Turn[] = [];
    let carried: string[] = [];
    for (const open of this.open) {
      const userTexts = [...carried, ...open.users];
      if (!open.answered) {
        this.count("call_without_output");
        carried = userTexts;
        continue;
      }
      carried = [];
      if (userTexts.length > 0) open.turn.meta = { ...open.turn.meta, user_message: userTexts.join("\n\n") };
      turns.push(open.turn);
    }
    const meta: Record<string, unknown> = { ...this.meta };
    if (this.models.length > 0) meta.model = this.models[0];
    if (this.models.length > 1) meta.models = [...this.models];
    meta.user_messages = users.length;
    if (this.finalMessage !== undefined) meta.final_message = this.finalMessage;
    if (this.lastLifecycle?.type === "aborted")
      meta.outcome = { failure_mode: `turn_aborted${this.lastLifecycle.reason ? `: ${this.lastLifecycle.reason}` : ""}` };
    if (Object.keys(this.skipped).length > 0) meta.skipped = { ...this.skipped };
    return { task: first?.text, turns, meta };
  }

  private count(what: string, n = 1): void {
    this.skipped[what] = (this.skipped[what] ?? 0) + n;
  }
}

/** Text of `content` parts (input_text / output_text / text; images are left out), or undefined when not an array. */
function contentText(content: unknown): string | undefined {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return undefined;
  return partTexts(content);
}

function partTexts(parts: unknown[]): string {
  const texts: string[] = [];
  for (const part of parts) if (isRecord(part) && typeof part.text === "string") texts.push(part.text);
  return texts.join("\n");
}

function isInjected(text: string): boolean {
  const t = text.trim().toLowerCase();
  return CONTEXT_WRAPPERS.some(([open, close]) => t.startsWith(open) && t.endsWith(close));
}

function isArgv(value: unknown): value is string[] {
  return Array.isArray(value) && value.length > 0 && value.every((part) => typeof part === "string");
}

/** The action of a function call, from its JSON-string arguments (see the comment at the top). */
function functionAction(name: string, qualified: string, args: string): { text: string; patch: boolean } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    return { text: `${qualified} ${args}`, patch: false };
  }
  if (isRecord(parsed)) {
    if (ARGV_TOOLS.has(name) && isArgv(parsed.command)) return argvCommand(parsed.command);
    if (name === "shell_command" && typeof parsed.command === "string")
      return { text: parsed.command, patch: isPatchScript(parsed.command) };
    if (name === "exec_command" && typeof parsed.cmd === "string") return { text: parsed.cmd, patch: isPatchScript(parsed.cmd) };
    if (name === "apply_patch") {
      const patch = typeof parsed.input === "string" ? parsed.input : typeof parsed.patch === "string" ? parsed.patch : undefined;
      if (patch !== undefined) return { text: patch, patch: true };
    }
  }
  return { text: `${qualified} ${args}`, patch: false };
}

/** The command line of an argv: a shell's script unwrapped, `apply_patch PATCH` as the patch, else quoted words. */
function argvCommand(argv: string[]): { text: string; patch: boolean } {
  const [program = "", flag = "", script] = argv;
  const base = program.split(/[\\/]/).pop() ?? program;
  if (argv.length === 3 && script !== undefined && SHELLS.has(base) && SCRIPT_FLAGS.has(flag))
    return { text: script, patch: isPatchScript(script) };
  if (POWERSHELLS.has(base.toLowerCase()) && argv.length >= 3 && /^-(c|command)$/i.test(argv[argv.length - 2] ?? ""))
    return { text: argv[argv.length - 1] as string, patch: false };
  if ((base === "apply_patch" || base === "applypatch") && argv.length === 2) return { text: argv[1] as string, patch: true };
  return { text: argv.map(shellQuote).join(" "), patch: false };
}

function isPatchScript(script: string): boolean {
  return /^\s*(apply_patch|applypatch)\b/.test(script);
}

/** POSIX quoting, as Codex shows an argv (shlex join): bare when safe, else single quotes. */
function shellQuote(word: string): string {
  if (word !== "" && /^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'"'"'`)}'`;
}

/** Header lines of Codex's exec output (unified exec and the shell tool), before `Output:`. */
const HEADER_LINES: readonly [RegExp, (m: RegExpExecArray, meta: Record<string, unknown>) => void][] = [
  [/^Chunk ID: \S+$/, () => {}],
  [/^Wall time: ([\d.]+) seconds$/, (m, meta) => (meta.wall_time_seconds = Number(m[1]))],
  [/^Process exited with code (-?\d+)$/, (m, meta) => (meta.exit_code = Number(m[1]))],
  [/^Exit code: (-?\d+)$/, (m, meta) => (meta.exit_code = Number(m[1]))],
  [/^Process running with session ID (\d+)$/, (m, meta) => (meta.running_session_id = Number(m[1]))],
  [/^Original token count: (\d+)$/, (m, meta) => (meta.original_token_count = Number(m[1]))],
  [/^Total output lines: (\d+)$/, (m, meta) => (meta.total_output_lines = Number(m[1]))],
];

/** An output item's text and the exec facts taken off it; undefined when `output` has none of the known shapes. */
function outputOf(output: unknown): { text: string; meta: Record<string, unknown> } | undefined {
  if (typeof output === "string") return stringOutput(output);
  if (Array.isArray(output)) {
    // Content items: text parts, and each image as `[image]` where it was (the pixels are not kept).
    const texts = output.map((part) =>
      isRecord(part) && typeof part.text === "string" ? part.text : isRecord(part) && part.type === "input_image" ? "[image]" : "",
    );
    const images = output.filter((part) => isRecord(part) && part.type === "input_image").length;
    return withEmpty(texts.filter((text) => text !== "").join("\n"), images > 0 ? { images } : {}, false);
  }
  // Older serializations: {content, success} (and content_items).
  if (isRecord(output) && typeof output.content === "string") {
    const meta = typeof output.success === "boolean" ? { success: output.success } : {};
    return withEmpty(output.content, meta, false);
  }
  return undefined;
}

function stringOutput(output: string): { text: string; meta: Record<string, unknown> } {
  if (output.trimStart().startsWith("{")) {
    try {
      const parsed: unknown = JSON.parse(output);
      if (isRecord(parsed) && typeof parsed.output === "string" && isRecord(parsed.metadata)) {
        const meta: Record<string, unknown> = {};
        const { exit_code, duration_seconds } = parsed.metadata;
        if (typeof exit_code === "number") meta.exit_code = exit_code;
        if (typeof duration_seconds === "number") meta.duration_seconds = duration_seconds;
        return withEmpty(parsed.output, meta, true);
      }
    } catch {
      // Not JSON: plain output below.
    }
  }
  const cut = output.indexOf("Output:");
  if (cut > 0 && (output[cut - 1] === "\n" || output[cut - 1] === "\r")) {
    const meta: Record<string, unknown> = {};
    const header = output
      .slice(0, cut)
      .split(/\r?\n/)
      .filter((l) => l !== "");
    const known = header.every((text) =>
      HEADER_LINES.some(([pattern, take]) => {
        const m = pattern.exec(text);
        if (m) take(m, meta);
        return m !== null;
      }),
    );
    if (known && header.length > 0) return withEmpty(output.slice(cut + "Output:".length).replace(/^\r?\n/, ""), meta, true);
  }
  return withEmpty(output, {}, false);
}

/** Blank output → what the run still tells, so no observation is empty. */
function withEmpty(text: string, meta: Record<string, unknown>, exec: boolean): { text: string; meta: Record<string, unknown> } {
  if (text.trim() !== "") return { text, meta };
  if (exec && typeof meta.exit_code === "number") return { text: `[exit code ${meta.exit_code}, no output]`, meta };
  if (exec && meta.running_session_id !== undefined) return { text: "[no output, still running]", meta };
  return { text: "[no output]", meta };
}
