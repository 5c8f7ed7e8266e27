import type { Domain } from "../core/trajectory.ts";
import { readSideJsonObject } from "../io/read-whole-text.ts";
import { baseName, beside, parentOf, sideFileSize } from "../io/side-files.ts";
import { BranchIndex } from "./agent-log/branch-index.ts";
import { SessionTurns, sessionItem } from "./agent-log/session-turns.ts";
import { toolResultText } from "./chat-rows/anthropic-blocks.ts";
import { type CutNote, truncatedLineMeta } from "./cut-last-line.ts";
import { type Companions, firstLine, parseSniffedJson, type Reader, type ReaderOptions, type ReadItem } from "./reader.ts";
import { describeType, fileStem, isRecord, jsonObjectLines, jsonTextOr, MAX_JSON_DEPTH, nestsTooDeep } from "./record-helpers.ts";

const FORMAT = "factory-droid";

/*
 * Factory Droid sessions (`~/.factory/sessions/<cwd slug>/<uuid>.jsonl`, older releases
 * `~/.factory/projects/…`), with `<uuid>.settings.json` beside them (the model, token usage).
 * Factory documents no schema; the shape here is what Droid writes and what the tools that
 * read its sessions agree on: a `session_start` line `{id, title, sessionTitle, owner, version,
 * cwd}`, then `message` lines `{id, timestamp, parentId?, message: {role: user | assistant,
 * content: [...]}}` whose content is Anthropic Messages blocks (`text`, `thinking`, `tool_use
 * {id, name, input}`, `tool_result {tool_use_id, content, is_error}`, `image`), and bookkeeping
 * lines (`todo_state`, `compaction_state`, …). One file = one session = one trajectory.
 *
 * - **Record**: the messages in file order; where messages name a `parentId` (a rewind writes a
 *   new branch into the same file), the branch from the last message back to the root, entries
 *   off it counted in `meta.off_branch` (read twice: links first, then the branch's content).
 * - **Action**: a `tool_use`: `Execute` (Droid's shell; also `Bash`, `Shell`) → its `command`;
 *   any other tool (Read, LS, Grep, Glob, Create, Edit, MultiEdit, ApplyPatch, FetchUrl,
 *   WebSearch, TodoWrite, an MCP server's) → `name {input as JSON}`.
 * - **Observation**: the `tool_result` with that `tool_use_id` (text blocks joined by newlines, an
 *   image as `[image]`); `is_error` → `turn.meta.is_error`. Empty → `[no output]`. A call never
 *   answered makes no turn (counted).
 * - **Thinking**, **task**, **user messages**, **final message**: as for the other session logs
 *   (src/read/agent-log/session-turns.ts); `<system-reminder>` blocks Droid adds to user text are
 *   taken off (counted).
 * - **Id**: the `session_start` id, else the file name. **Domain** (unless `--domain`): only the
 *   shell → terminal; mostly MCP tools (`server___tool`, `mcp__…`) → mcp; mostly FetchUrl /
 *   WebSearch → web; else swe. **Meta**: `agent: "factory-droid"`, `session_id`, `title`, `cwd`,
 *   `version`, `model` and `token_usage` from the settings file beside it, `compactions`,
 *   `final_message`, `skipped`, `off_branch`.
 *
 * Quarantined (naming the line and field): a line that is not a JSON object or has no string
 * `type`; a message on the branch whose `message`, `role`, `content` or tool blocks have the
 * wrong type; a session without a tool call that got a result. A last line cut while Droid wrote
 * it is left out (`meta.truncated_line`).
 */
export const factoryDroidReader: Reader = {
  name: FORMAT,
  domain: "from the tools",
  description: "Factory Droid session JSONL (~/.factory/sessions/…/<uuid>.jsonl): session_start, then messages with tool_use → tool_result",

  sniff(head) {
    const line = firstLine(head.replace(/^\uFEFF/, "")).trim();
    if (!line.startsWith("{")) return false;
    const parsed = parseSniffedJson(line);
    if (!parsed.ok) return /^\{\s*"type"\s*:\s*"session_start"\s*,\s*"id"\s*:/.test(line);
    const value = parsed.value;
    if (!isRecord(value)) return false;
    if (value.type === "session_start")
      return typeof value.id === "string" && (typeof value.cwd === "string" || "sessionTitle" in value || "title" in value);
    return isDroidMessage(value);
  },

  async companions(path: string): Promise<Companions> {
    const settings = settingsPath(path);
    const [own, side] = await Promise.all([sideFileSize(path), sideFileSize(settings)]);
    return {
      dirs: [],
      files: side === undefined ? [] : [settings],
      bytes: (own ?? 0) + (side ?? 0),
      label: `Factory Droid session ${baseName(path)}`,
    };
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    const { range, ...whole } = options;
    if (range && range.start > 0) return;
    const source = { uri: path, format: FORMAT };
    const fallbackId = fileStem(path, /\.jsonl?$/i);

    // First pass: the session_start line and every entry's links.
    const links = new BranchIndex();
    let start: Record<string, unknown> | undefined;
    const cut: CutNote = {};
    for await (const line of jsonObjectLines(path, whole, FORMAT, cut)) {
      if (line.kind === "quarantine") {
        yield {
          kind: "quarantine",
          entry: { ...line.entry, id: fallbackId, reason: `line ${line.entry.source.line}: ${line.entry.reason}` },
        };
        return;
      }
      const lineNo = line.source.line as number;
      const { record } = line;
      if (typeof record.type !== "string") {
        const reason = `line ${lineNo}: type: expected a string, got ${describeType(record.type)}`;
        yield { kind: "quarantine", entry: { source: line.source, id: fallbackId, stage: "read", field: "type", reason } };
        return;
      }
      if (record.type === "session_start") start ??= record;
      // Only messages form the tree: bookkeeping lines (todo_state, …) have ids but no parent, and stay on every branch.
      else if (record.type === "message") links.add(lineNo, record.id, record.parentId, typeof record.parentId === "string");
      else links.add(lineNo, undefined, undefined, false);
    }
    const branch = links.branch();

    // Second pass: the branch's entries, in file order.
    const session = new Session(start);
    for await (const line of jsonObjectLines(path, whole, FORMAT, {})) {
      if (line.kind === "quarantine") continue;
      const lineNo = line.source.line as number;
      if (!branch.lines.has(lineNo)) continue;
      const problem = session.take(line.record);
      if (problem) {
        const reason = `line ${lineNo}: ${problem.field}: ${problem.reason}`;
        yield { kind: "quarantine", entry: { source: line.source, id: fallbackId, stage: "read", field: problem.field, reason } };
        return;
      }
    }
    const built = session.turns.finish();
    const id = typeof start?.id === "string" && start.id !== "" ? start.id : fallbackId;
    const meta: Record<string, unknown> = { ...session.meta, ...(await settingsMeta(path)) };
    if (session.compactions > 0) meta.compactions = session.compactions;
    if (branch.offBranch > 0) meta.off_branch = branch.offBranch;
    Object.assign(meta, truncatedLineMeta(cut));
    yield sessionItem(built, {
      id,
      source,
      domain: options.domain ?? inferDroidDomain(built.tools),
      meta,
      messages: session.messages,
      field: "message",
      where: " in the session",
    });
  },
};

const BLOCK_TYPES = new Set(["text", "thinking", "redacted_thinking", "tool_use", "tool_result", "image"]);

/** A Droid message line: `type: "message"`, an id, and an Anthropic message of Anthropic blocks. */
function isDroidMessage(value: Record<string, unknown>): boolean {
  const message = value.message;
  return (
    value.type === "message" &&
    typeof value.id === "string" &&
    isRecord(message) &&
    (message.role === "user" || message.role === "assistant") &&
    Array.isArray(message.content) &&
    message.content.length > 0 &&
    message.content.every((block) => isRecord(block) && BLOCK_TYPES.has(block.type as string))
  );
}

interface Problem {
  field: string;
  reason: string;
}

/** The branch's entries into turns. */
class Session {
  messages = 0;
  compactions = 0;
  readonly turns = new SessionTurns();
  readonly meta: Record<string, unknown> = { agent: "factory-droid" };

  constructor(start: Record<string, unknown> | undefined) {
    if (!start) return;
    for (const [from, to] of [
      ["id", "session_id"],
      ["sessionTitle", "title"],
      ["cwd", "cwd"],
      ["version", "version"],
    ] as const)
      if (typeof start[from] === "string" || typeof start[from] === "number") this.meta[to] = start[from];
    if (this.meta.title === undefined && typeof start.title === "string") this.meta.title = start.title;
  }

  take(record: Record<string, unknown>): Problem | undefined {
    if (record.type === "compaction_state") {
      this.compactions += 1;
      return undefined;
    }
    if (record.type !== "message") {
      this.turns.count(String(record.type));
      return undefined;
    }
    const message = record.message;
    if (!isRecord(message)) return { field: "message", reason: `expected an object, got ${describeType(message)}` };
    if (nestsTooDeep(message)) return { field: "message", reason: `nested deeper than ${MAX_JSON_DEPTH} levels` };
    this.messages += 1;
    if (message.role !== "user" && message.role !== "assistant")
      return { field: "message.role", reason: `expected "user" or "assistant", got ${jsonTextOr(message.role, "a value")}` };
    const content = typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
    if (!Array.isArray(content))
      return { field: "message.content", reason: `expected a string or a list of content blocks, got ${describeType(message.content)}` };
    const texts: string[] = [];
    for (const [i, block] of content.entries()) {
      const at = `message.content.${i}`;
      if (!isRecord(block) || typeof block.type !== "string")
        return { field: `${at}.type`, reason: `expected a content block with a string type, got ${describeType(block)}` };
      if (block.type === "text" && typeof block.text === "string") {
        if (message.role === "assistant") this.turns.text(block.text);
        else texts.push(this.withoutReminders(block.text));
      } else if (block.type === "thinking" && typeof block.thinking === "string") this.turns.thinking(block.thinking);
      else if (block.type === "tool_use" && message.role === "assistant") {
        if (typeof block.id !== "string" || block.id === "")
          return { field: `${at}.id`, reason: `expected a non-empty string, got ${describeType(block.id)}` };
        if (typeof block.name !== "string" || block.name === "")
          return { field: `${at}.name`, reason: `expected a non-empty string, got ${describeType(block.name)}` };
        const input = isRecord(block.input) ? block.input : {};
        this.turns.call(block.id, block.name, droidAction(block.name, input));
      } else if (block.type === "tool_result") {
        const callId = typeof block.tool_use_id === "string" ? block.tool_use_id : block.toolUseId;
        if (typeof callId !== "string") return { field: `${at}.tool_use_id`, reason: `expected a string, got ${describeType(callId)}` };
        const text = toolResultText(block.content, { bareStrings: true });
        if (text === undefined)
          return { field: `${at}.content`, reason: `expected a string or a list of content blocks, got ${describeType(block.content)}` };
        this.turns.answer(callId, text, block.is_error === true || block.isError === true);
      } else if (block.type === "image" && message.role === "user") texts.push("[image]");
      else this.turns.count(`${message.role}_${block.type}`);
    }
    if (texts.length > 0) this.turns.user(texts.join("\n"));
    return undefined;
  }

  /** User text without the `<system-reminder>` blocks Droid appends for the model (counted). */
  private withoutReminders(text: string): string {
    return text.replace(/<system-reminder>[\s\S]*?<\/system-reminder>/g, () => {
      this.turns.count("system_reminder");
      return "";
    });
  }
}

/** `<uuid>.settings.json` beside `<uuid>.jsonl`. */
function settingsPath(path: string): string {
  return beside(parentOf(path), `${fileStem(path, /\.jsonl?$/i)}.settings.json`);
}

/** The model and token usage the settings file beside the session names, if there is one. */
async function settingsMeta(path: string): Promise<Record<string, unknown>> {
  const value = await readSideJsonObject(settingsPath(path), 1 << 20);
  if (!value) return {};
  const meta: Record<string, unknown> = {};
  if (typeof value.model === "string" && value.model !== "") meta.model = value.model;
  if (isRecord(value.tokenUsage)) {
    const usage = Object.entries(value.tokenUsage).filter(([, n]) => typeof n === "number");
    if (usage.length > 0) meta.token_usage = Object.fromEntries(usage);
  }
  return meta;
}

const SHELL_TOOLS = new Set(["Execute", "Bash", "Shell", "execute", "bash", "shell"]);

function droidAction(name: string, input: Record<string, unknown>): string {
  if (SHELL_TOOLS.has(name) && typeof input.command === "string") return input.command;
  return `${name} ${jsonTextOr(input, "{}")}`;
}

/** The domain of a session from its tools (see the comment at the top). */
export function inferDroidDomain(tools: readonly string[]): Domain {
  const share = (test: (tool: string) => boolean) => tools.filter(test).length / Math.max(tools.length, 1);
  if (tools.length > 0 && tools.every((tool) => SHELL_TOOLS.has(tool))) return "terminal";
  if (share((tool) => tool.includes("___") || tool.startsWith("mcp__")) > 0.5) return "mcp";
  if (share((tool) => tool === "FetchUrl" || tool === "WebSearch") > 0.5) return "web";
  return "swe";
}
