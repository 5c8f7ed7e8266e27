import type { Domain } from "../core/trajectory.ts";
import { BranchIndex } from "./agent-log/branch-index.ts";
import { answerCall, byUse, mostUsed, SessionTurns, sessionItem } from "./agent-log/session-turns.ts";
import { toolResultText } from "./chat-rows/anthropic-blocks.ts";
import { type CutNote, truncatedLineMeta } from "./cut-last-line.ts";
import { firstLine, parseSniffedJson, type Reader, type ReaderOptions, type ReadItem } from "./reader.ts";
import { describeType, fileStem, isRecord, jsonObjectLines, jsonTextOr, MAX_JSON_DEPTH, nestsTooDeep } from "./record-helpers.ts";

const FORMAT = "pi";

/*
 * pi coding-agent sessions (badlogic/pi-mono, `~/.pi/agent/sessions/--<cwd>--/<timestamp>_<uuid>.jsonl`;
 * the format is documented in `packages/coding-agent/docs/session.md`). One file = one session =
 * one trajectory. The first line is the header `{"type": "session", "version", "id", "timestamp",
 * "cwd", "parentSession"?}`; every other line is an entry `{type, id, parentId, timestamp, …}`:
 * `message` (an AgentMessage in `message`), `model_change`, `thinking_level_change`, `compaction`,
 * `branch_summary`, `custom`, `custom_message`, `label`, `session_info`. From version 2 the entries
 * form a tree by `id` / `parentId` (pi branches in place, appending the new branch to the file);
 * version 1 files are a plain sequence.
 *
 * - **Record**: the branch pi was on last: the chain from the file's last entry back to the root
 *   (entries off it, abandoned branches, are counted in `meta.off_branch`). The file is streamed
 *   twice: first the links (id, parent, line), then the content of the chain's lines, so memory
 *   grows with the number of entries, never with abandoned content. Version 1: every entry.
 * - **Action**: an assistant message's `toolCall {id, name, arguments}`: `bash` → its `command`;
 *   any other tool (read, edit, write, grep, find, ls, an extension's) → `name {arguments as
 *   JSON}`. A command the user ran with `!` (a `bashExecution` message) is a turn too: its
 *   `command`, `turn.meta.user_command: true`.
 * - **Observation**: the `toolResult` message with that `toolCallId`: its text blocks joined by
 *   newlines, an image as `[image]`; `isError` → `turn.meta.is_error`. A `bashExecution`'s
 *   `output` (`exitCode`, `cancelled`, `truncated` in `turn.meta`). Empty → `[no output]`. A call
 *   never answered (aborted) makes no turn (counted).
 * - **Thinking**: the assistant's `thinking` and `text` blocks since the previous call.
 * - **Task**: the first user message's text; later ones are `turn.meta.user_messages` of the next
 *   turn. Text after the last call is `meta.final_message`.
 * - **Id**: the header's `id`, else the file name. **Domain** (unless `--domain`): only `bash` →
 *   terminal; mostly tools that are not pi's own (an extension's) → mcp; else swe. **Meta**:
 *   `agent: "pi"`, `session_id`, `cwd`, `version`, `parent_session`, `session_name` (`/name`), `model` (the assistant
 *   messages' most used, all in `models`), `provider`, `compactions`, `skipped`.
 *
 * Messages of other roles (`custom`, `branchSummary`, `compactionSummary`, a fork's own) are counted.
 * Quarantined (naming the line and field): a line that is not a JSON object or has no string
 * `type`; a message on the branch whose `role`, `content`, tool call or tool result has the wrong
 * type; a session without a tool call that got a result. A last line cut while pi wrote it is left
 * out (`meta.truncated_line`).
 *
 * **`pi --mode json` event streams** (`pi --mode json "…" > run.jsonl`; `docs/json.md`): the same
 * session header, then AgentSessionEvents. pi's agent loop emits a `message_end` with the whole
 * message for every prompt, assistant reply, tool result and steering message, in order, so those
 * messages are read as a session's branch (nothing in a stream branches); the streaming events
 * (`message_start`, `message_update`, `tool_execution_*`, `turn_*`, `agent_*`, `auto_retry_*`)
 * repeat them and are left out; `auto_compaction_end` counts as a compaction; `meta.mode: "json"`.
 * A stream saved without its header line is taken from its first line `{"type":"agent_start"}`.
 * A file of session entries that also holds events reads its entries and says so.
 */
export const piSessionReader: Reader = {
  name: FORMAT,
  domain: "from the tools",
  description:
    "pi coding-agent session JSONL (~/.pi/agent/sessions/…): session header, then an id/parentId tree of entries; or a `pi --mode json` event stream",

  sniff(head) {
    const line = firstLine(head.replace(/^\uFEFF/, "")).trim();
    if (!line.startsWith("{")) return false;
    const parsed = parseSniffedJson(line);
    if (!parsed.ok) return /^\{\s*"type"\s*:\s*"session"\s*,\s*"version"\s*:\s*\d+\s*,\s*"id"\s*:/.test(line);
    return isRecord(parsed.value) && (isSessionHeader(parsed.value) || isHeadlessStream(parsed.value, head));
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    const { range, ...whole } = options;
    if (range && range.start > 0) return;
    const source = { uri: path, format: FORMAT };
    const quarantine = (reason: string, field: string, line?: number): ReadItem => ({
      kind: "quarantine",
      entry: { source: line === undefined ? source : { ...source, line }, id: fileStem(path, /\.jsonl?$/i), stage: "read", field, reason },
    });

    // First pass: the header and every entry's links.
    const index = new SessionIndex();
    const cut: CutNote = {};
    for await (const line of jsonObjectLines(path, whole, FORMAT, cut)) {
      if (line.kind === "quarantine") {
        yield { kind: "quarantine", entry: { ...line.entry, reason: `line ${line.entry.source.line}: ${line.entry.reason}` } };
        return;
      }
      const lineNo = line.source.line as number;
      const problem = index.take(line.record, lineNo);
      if (problem) {
        yield quarantine(`line ${lineNo}: ${problem.field}: ${problem.reason}`, problem.field, lineNo);
        return;
      }
    }
    // An event stream (no session entries, only events): its messages are its branch.
    const stream = index.entryLines === 0 && index.eventLines > 0;
    const branch = stream ? { lines: index.messageEndLines, offBranch: 0 } : index.links.branch();

    // Second pass: the branch's entries, in file order (a parent is always written before its children).
    const session = new Session(index.header, stream ? index.streamCompactions : 0);
    for await (const line of jsonObjectLines(path, whole, FORMAT, {})) {
      if (line.kind === "quarantine") continue;
      const lineNo = line.source.line as number;
      if (!branch.lines.has(lineNo)) continue;
      // A message_end event carries its message as a `message` entry does.
      const problem = session.take(stream ? { type: "message", message: line.record.message } : line.record);
      if (problem) {
        yield quarantine(`line ${lineNo}: ${problem.field}: ${problem.reason}`, problem.field, lineNo);
        return;
      }
    }
    const built = session.turns.finish();
    const id = typeof index.header?.id === "string" && index.header.id !== "" ? index.header.id : fileStem(path, /\.jsonl?$/i);
    const meta: Record<string, unknown> = { ...session.meta(), ...truncatedLineMeta(cut) };
    if (stream) meta.mode = "json";
    if (branch.offBranch > 0) meta.off_branch = branch.offBranch;
    const events =
      !stream && index.eventLines > 0
        ? `; ${index.eventLines} lines are \`pi --mode json\` events among the session entries, left out`
        : "";
    yield sessionItem(built, {
      id,
      source,
      domain: options.domain ?? inferPiDomain(built.tools),
      meta,
      messages: session.messages,
      field: "message",
      where: " on the session's branch",
      note: events,
    });
  },
};

/** pi's session header: `type: "session"` with an id, a timestamp, and a version or the working directory (forks leave out `cwd`). */
function isSessionHeader(value: Record<string, unknown>): boolean {
  return (
    value.type === "session" &&
    typeof value.id === "string" &&
    "timestamp" in value &&
    (typeof value.cwd === "string" || typeof value.version === "number")
  );
}

/** The event types `pi --mode json` prints (an AgentSessionEvent stream: AgentEvent and the session's own). */
const JSON_MODE_EVENTS = new Set([
  "agent_start",
  "agent_end",
  "turn_start",
  "turn_end",
  "message_start",
  "message_update",
  "message_end",
  "tool_execution_start",
  "tool_execution_update",
  "tool_execution_end",
  "auto_compaction_start",
  "auto_compaction_end",
  "auto_retry_start",
  "auto_retry_end",
]);

/**
 * A `pi --mode json` stream saved without its header line: the agent loop's first event,
 * `{"type":"agent_start"}` alone, followed in the head by a turn or a message event.
 */
function isHeadlessStream(first: Record<string, unknown>, head: string): boolean {
  return (
    first.type === "agent_start" && Object.keys(first).length === 1 && /"type"\s*:\s*"(?:turn_start|message_start|message_end)"/.test(head)
  );
}

interface Problem {
  field: string;
  reason: string;
}

/** First pass: the header, each entry's links, and which lines are `--mode json` events. */
class SessionIndex {
  header: Record<string, unknown> | undefined;
  entryLines = 0;
  eventLines = 0;
  /** `auto_compaction_end` events that compacted (not aborted). */
  streamCompactions = 0;
  /** The lines of `message_end` events: a stream's messages. */
  readonly messageEndLines = new Set<number>();
  readonly links = new BranchIndex();

  take(record: Record<string, unknown>, line: number): Problem | undefined {
    if (typeof record.type !== "string") return { field: "type", reason: `expected a string, got ${describeType(record.type)}` };
    if (record.type === "session") {
      this.header ??= record;
      return undefined;
    }
    if (JSON_MODE_EVENTS.has(record.type)) {
      this.eventLines += 1;
      if (record.type === "message_end") this.messageEndLines.add(line);
      // A stream's compactions (a session file has `compaction` entries instead).
      if (record.type === "auto_compaction_end" && record.aborted !== true) this.streamCompactions += 1;
      return undefined;
    }
    this.entryLines += 1;
    this.links.add(line, record.id, record.parentId, "parentId" in record);
    return undefined;
  }
}

/** Second pass: the branch's entries into turns. */
class Session {
  messages = 0;
  readonly turns = new SessionTurns();
  private readonly facts: Record<string, unknown> = { agent: "pi" };
  private readonly models = new Map<string, number>();
  private compactions: number;

  /** `compactions`: those counted before the entries are read (a stream's `auto_compaction_end` events). */
  constructor(header: Record<string, unknown> | undefined, compactions = 0) {
    this.compactions = compactions;
    if (!header) return;
    for (const [from, to] of [
      ["id", "session_id"],
      ["cwd", "cwd"],
      ["version", "version"],
      ["parentSession", "parent_session"],
    ] as const)
      if (typeof header[from] === "string" || typeof header[from] === "number") this.facts[to] = header[from];
  }

  take(record: Record<string, unknown>): Problem | undefined {
    switch (record.type) {
      case "message":
        break;
      case "model_change":
        if (typeof record.provider === "string") this.facts.provider = record.provider;
        return undefined;
      case "compaction":
        this.compactions += 1;
        return undefined;
      case "session_info":
        if (typeof record.name === "string" && record.name.trim() !== "") this.facts.session_name = record.name.trim();
        return undefined;
      default:
        this.turns.count(String(record.type));
        return undefined;
    }
    const message = record.message;
    if (!isRecord(message)) return { field: "message", reason: `expected an object, got ${describeType(message)}` };
    if (nestsTooDeep(message)) return { field: "message", reason: `nested deeper than ${MAX_JSON_DEPTH} levels` };
    this.messages += 1;
    switch (message.role) {
      case "user":
        return this.user(message);
      case "assistant":
        return this.assistant(message);
      case "toolResult":
        return this.toolResult(message);
      case "bashExecution":
        return this.bashExecution(message);
      default:
        // custom, hookMessage (version 2's name for it), branchSummary, compactionSummary, and roles of pi's forks and extensions.
        if (typeof message.role !== "string" || message.role === "")
          return {
            field: "message.role",
            reason: `expected a string such as user, assistant or toolResult, got ${describeType(message.role)}`,
          };
        this.turns.count(`${message.role}_message`);
        return undefined;
    }
  }

  private user(message: Record<string, unknown>): Problem | undefined {
    const text = toolResultText(message.content);
    if (text === undefined)
      return { field: "message.content", reason: `expected a string or a list of content blocks, got ${describeType(message.content)}` };
    this.turns.user(text);
    return undefined;
  }

  private assistant(message: Record<string, unknown>): Problem | undefined {
    if (!Array.isArray(message.content))
      return { field: "message.content", reason: `expected a list of content blocks, got ${describeType(message.content)}` };
    if (typeof message.model === "string" && message.model !== "")
      this.models.set(message.model, (this.models.get(message.model) ?? 0) + 1);
    if (typeof message.provider === "string") this.facts.provider = message.provider;
    if (message.stopReason === "error" || message.stopReason === "aborted") this.turns.count(`assistant_${message.stopReason}`);
    for (const [i, block] of message.content.entries()) {
      if (!isRecord(block) || typeof block.type !== "string")
        return { field: `message.content.${i}.type`, reason: `expected a content block with a string type, got ${describeType(block)}` };
      if (block.type === "text" && typeof block.text === "string") this.turns.text(block.text);
      else if (block.type === "thinking" && typeof block.thinking === "string") this.turns.thinking(block.thinking);
      else if (block.type === "toolCall") {
        if (typeof block.id !== "string" || block.id === "")
          return { field: `message.content.${i}.id`, reason: `expected a non-empty string, got ${describeType(block.id)}` };
        if (typeof block.name !== "string" || block.name === "")
          return { field: `message.content.${i}.name`, reason: `expected a non-empty string, got ${describeType(block.name)}` };
        const args = isRecord(block.arguments) ? block.arguments : {};
        this.turns.call(block.id, block.name, piAction(block.name, args));
      } else this.turns.count(`assistant_${block.type}`);
    }
    return undefined;
  }

  private toolResult(message: Record<string, unknown>): Problem | undefined {
    if (typeof message.toolCallId !== "string")
      return { field: "message.toolCallId", reason: `expected a string, got ${describeType(message.toolCallId)}` };
    const text = toolResultText(message.content);
    if (text === undefined)
      return { field: "message.content", reason: `expected a string or a list of content blocks, got ${describeType(message.content)}` };
    this.turns.answer(message.toolCallId, text, message.isError === true);
    return undefined;
  }

  /** A command the user ran with `!` (or `!!`, kept out of the model's context): it ran in the shell, so it is a turn. */
  private bashExecution(message: Record<string, unknown>): Problem | undefined {
    if (typeof message.command !== "string")
      return { field: "message.command", reason: `expected a string, got ${describeType(message.command)}` };
    if (message.output !== undefined && typeof message.output !== "string")
      return { field: "message.output", reason: `expected a string, got ${describeType(message.output)}` };
    const meta: Record<string, unknown> = { user_command: true };
    if (typeof message.exitCode === "number") meta.exit_code = message.exitCode;
    if (message.cancelled === true) meta.cancelled = true;
    if (message.truncated === true) meta.truncated = true;
    answerCall(this.turns.call(undefined, "bash", message.command, meta), typeof message.output === "string" ? message.output : "", false);
    return undefined;
  }

  /** The session's meta: the header's, the model most used (all in `models` when several), compactions. */
  meta(): Record<string, unknown> {
    const meta = { ...this.facts };
    const model = mostUsed(this.models);
    if (model !== undefined) meta.model = model;
    if (this.models.size > 1) meta.models = byUse(this.models);
    if (this.compactions > 0) meta.compactions = this.compactions;
    return meta;
  }
}

/** pi's own tools (the coding agent's built-ins); anything else was added by an extension. */
const PI_TOOLS = new Set(["bash", "read", "edit", "write", "grep", "find", "ls"]);

function piAction(name: string, args: Record<string, unknown>): string {
  if (name === "bash" && typeof args.command === "string") return args.command;
  return `${name} ${jsonTextOr(args, "{}")}`;
}

/** The domain of a session from its tools (see the comment at the top). */
export function inferPiDomain(tools: readonly string[]): Domain {
  if (tools.length > 0 && tools.every((tool) => tool === "bash")) return "terminal";
  if (tools.filter((tool) => !PI_TOOLS.has(tool)).length / Math.max(tools.length, 1) > 0.5) return "mcp";
  return "swe";
}
