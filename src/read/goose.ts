import type { Domain, Turn } from "../core/trajectory.ts";
import { type CutNote, truncatedLineMeta } from "./cut-last-line.ts";
import { firstLine, parseSniffedJson, type Reader, type ReaderOptions, type ReadItem } from "./reader.ts";
import { describeType, fileStem, isRecord, jsonObjectLines, jsonTextOr, MAX_JSON_DEPTH, nestsTooDeep } from "./record-helpers.ts";

const FORMAT = "goose";

/*
 * Goose session files (`~/.local/share/goose/sessions/<name>.jsonl`, block/goose
 * `crates/goose/src/session/legacy.rs`): one file = one session = one trajectory. The first line is
 * the session metadata (`working_dir`, `description`, `schedule_id`, `message_count`, token counts;
 * goose's loader also takes a first line that is a message), then one `Message` per line
 * (`conversation/message.rs`): `{id?, role: user | assistant, created, content: [...], metadata:
 * {userVisible, agentVisible}}`. Content items are tagged by `type`: `text`, `image`, `thinking`,
 * `redactedThinking`, `toolRequest {id, toolCall}`, `toolResponse {id, toolResult}`,
 * `frontendToolRequest`, `toolConfirmationRequest`, `systemNotification`, … A `toolCall` /
 * `toolResult` is goose's ToolResult serde (`tool_result_serde.rs`): `{status: "success", value}` or
 * `{status: "error", error: "message"}`; a successful toolResult's value is an MCP CallToolResult
 * `{content: [...], isError?}` or, in older sessions, the content list itself.
 *
 * - **Action**: each toolRequest with a successful toolCall `{name, arguments}`: a shell tool
 *   (`developer__shell`, `shell`) → its `command`; any other → `name {arguments as JSON}`. A
 *   toolCall that failed to parse (`status: error`) is no action (counted).
 * - **Observation**: the toolResponse with the same id (in the next user message, usually): the
 *   MCP content's text — items whose `annotations.audience` leaves out the assistant (goose's
 *   developer tools send the output twice, once for the user) are left out; an image is `[image]`,
 *   an embedded resource its text. `status: error` → the error text and `turn.meta.is_error`, as
 *   an `isError: true` CallToolResult. A shell call that printed nothing → `[no output]`.
 * - **Thinking**: the assistant's text and `thinking` items before the call, on its first call.
 * - **Task**: the first user text; later user texts are `turn.meta.user_messages` of the next
 *   turn. Messages with `metadata.userVisible: false` (goose's summaries and injected context
 *   after a compaction) are counted, not read; the text after the last call is `meta.final_message`.
 * - **Id**: the file name. **Domain** (unless `--domain`): the developer extension's shell alone →
 *   terminal; its editor → swe; mostly `computercontroller__web_*` / fetch tools → web; mostly
 *   other extensions → mcp; else swe. **Meta**: `agent: "goose"`, `working_dir`, `description`,
 *   `total_tokens`, `skipped`.
 *
 * Quarantined: a line that is not a JSON object, a message whose `role` or `content` has the wrong
 * type or whose content item has no string `type` (naming the line and field); a session without
 * a tool call that got a result. A last line cut while goose wrote it is left out
 * (`meta.truncated_line`, cut-last-line.ts).
 */
export const gooseReader: Reader = {
  name: FORMAT,
  domain: "from the tools",
  description: "Goose session JSONL (metadata line, then messages: toolRequest → toolResponse)",

  sniff(head) {
    const line = firstLine(head.replace(/^\uFEFF/, "")).trim();
    if (!line.startsWith("{")) return false;
    const parsed = parseSniffedJson(line);
    if (!parsed.ok) return /^\{\s*"working_dir"\s*:\s*"[^"]*"\s*,\s*"description"\s*:/.test(line);
    const value = parsed.value;
    if (!isRecord(value)) return false;
    if (isSessionMetadata(value)) return true;
    return isGooseMessage(value);
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    const { range, ...whole } = options;
    if (range && range.start > 0) return;
    const id = fileStem(path, /\.jsonl?$/i);
    const session = new Session();
    const cut: CutNote = {};
    for await (const line of jsonObjectLines(path, whole, FORMAT, cut)) {
      if (line.kind === "quarantine") {
        yield { kind: "quarantine", entry: { ...line.entry, id, reason: `line ${line.entry.source.line}: ${line.entry.reason}` } };
        return;
      }
      const lineNo = line.source.line as number;
      const problem = session.take(line.record, lineNo);
      if (problem) {
        yield {
          kind: "quarantine",
          entry: {
            source: line.source,
            id,
            stage: "read",
            field: problem.field,
            reason: `line ${lineNo}: ${problem.field}: ${problem.reason}`,
          },
        };
        return;
      }
    }
    const source = { uri: path, format: FORMAT };
    const built = session.finish();
    if (built.turns.length === 0) {
      const counts = Object.entries(built.skipped).map(([key, n]) => `${n} ${key}`);
      const reason = `no tool call with a result in the session (${[`${session.messages} messages`, ...counts].join(", ")}): a chat without actions`;
      yield { kind: "quarantine", entry: { source, id, stage: "read", field: "content", reason } };
      return;
    }
    yield {
      kind: "trajectory",
      trajectory: {
        id,
        domain: options.domain ?? inferGooseDomain(built.tools),
        source,
        ...(built.task !== undefined ? { task: built.task } : {}),
        turns: built.turns,
        meta: { ...built.meta, ...truncatedLineMeta(cut) },
      },
    };
  },
};

/** Goose's SessionMetadata line: `working_dir` and `description` (with its token counts). */
function isSessionMetadata(value: Record<string, unknown>): boolean {
  return (
    typeof value.working_dir === "string" &&
    "description" in value &&
    ("message_count" in value || "total_tokens" in value || "schedule_id" in value)
  );
}

const CONTENT_TYPES = new Set([
  "text",
  "image",
  "toolRequest",
  "toolResponse",
  "toolConfirmationRequest",
  "frontendToolRequest",
  "thinking",
  "redactedThinking",
  "systemNotification",
  "contextLengthExceeded",
  "summarizationRequested",
  "actionRequired",
  "reasoning",
]);

/** A Goose Message line: a role, a numeric `created`, content items of Goose's camelCase types. */
function isGooseMessage(value: Record<string, unknown>): boolean {
  return (
    (value.role === "user" || value.role === "assistant") &&
    typeof value.created === "number" &&
    Array.isArray(value.content) &&
    value.content.length > 0 &&
    value.content.every((item) => isRecord(item) && CONTENT_TYPES.has(item.type as string))
  );
}

interface OpenCall {
  turn: Turn;
  name: string;
  answered: boolean;
}

class Session {
  messages = 0;
  private readonly meta: Record<string, unknown> = { agent: "goose" };
  private readonly skipped: Record<string, number> = {};
  private readonly calls: OpenCall[] = [];
  private readonly byId = new Map<string, OpenCall>();
  private reasoning: string[] = [];
  private userMessages: string[] = [];
  private task: string | undefined;
  private lastText: string | undefined;
  private sawMessage = false;

  take(record: Record<string, unknown>, line: number): { field: string; reason: string } | undefined {
    if (!this.sawMessage && line === 1 && !("role" in record)) {
      for (const key of ["working_dir", "description", "schedule_id", "total_tokens", "input_tokens", "output_tokens"])
        if (record[key] !== undefined && record[key] !== null && !isRecord(record[key])) this.meta[key] = record[key];
      return undefined;
    }
    this.sawMessage = true;
    this.messages += 1;
    if (record.role !== "user" && record.role !== "assistant")
      return { field: "role", reason: `expected "user" or "assistant", got ${jsonTextOr(record.role, "a value")}` };
    if (!Array.isArray(record.content))
      return { field: "content", reason: `expected an array of content items, got ${describeType(record.content)}` };
    if (nestsTooDeep(record.content)) return { field: "content", reason: `nested deeper than ${MAX_JSON_DEPTH} levels` };
    for (const [i, item] of record.content.entries())
      if (!isRecord(item) || typeof item.type !== "string")
        return { field: `content.${i}.type`, reason: `expected a content item with a string type, got ${describeType(item)}` };
    const metadata = isRecord(record.metadata) ? record.metadata : {};
    if (metadata.userVisible === false) {
      this.count("agent_only_message");
      return undefined;
    }
    const items = record.content as Record<string, unknown>[];
    return record.role === "assistant" ? this.assistant(items) : this.user(items);
  }

  private assistant(items: Record<string, unknown>[]): { field: string; reason: string } | undefined {
    for (const [i, item] of items.entries()) {
      if (item.type === "text" && typeof item.text === "string") {
        if (item.text.trim() !== "") {
          this.reasoning.push(item.text.trim());
          this.lastText = item.text.trim();
        }
      } else if (item.type === "thinking" && typeof item.thinking === "string") {
        if (item.thinking.trim() !== "") this.reasoning.push(item.thinking.trim());
      } else if (item.type === "toolRequest" || item.type === "frontendToolRequest") {
        if (typeof item.id !== "string") return { field: `content.${i}.id`, reason: `expected a string, got ${describeType(item.id)}` };
        const call = item.toolCall;
        if (!isRecord(call) || (call.status !== "success" && call.status !== "error"))
          return {
            field: `content.${i}.toolCall`,
            reason: `expected {status: "success", value} or {status: "error", error}, got ${describeType(call)}`,
          };
        if (call.status === "error") {
          this.count("invalid_tool_call");
          continue;
        }
        const value = call.value;
        if (!isRecord(value) || typeof value.name !== "string" || value.name === "")
          return {
            field: `content.${i}.toolCall.value.name`,
            reason: `expected a tool name, got ${isRecord(value) ? describeType(value.name) : describeType(value)}`,
          };
        const args = isRecord(value.arguments) ? value.arguments : {};
        const meta: Record<string, unknown> = { tool: value.name, tool_call_id: item.id };
        if (this.userMessages.length > 0) meta.user_messages = this.userMessages;
        this.userMessages = [];
        const turn: Turn = { action: gooseAction(value.name, args), observation: "", meta };
        if (this.reasoning.length > 0) turn.thinking = this.reasoning.join("\n\n");
        this.reasoning = [];
        this.lastText = undefined;
        const open = { turn, name: value.name, answered: false };
        this.calls.push(open);
        this.byId.set(item.id, open);
      } else this.count(`assistant_${item.type}`);
    }
    return undefined;
  }

  private user(items: Record<string, unknown>[]): { field: string; reason: string } | undefined {
    const texts: string[] = [];
    for (const [i, item] of items.entries()) {
      if (item.type === "toolResponse") {
        if (typeof item.id !== "string") return { field: `content.${i}.id`, reason: `expected a string, got ${describeType(item.id)}` };
        const result = item.toolResult;
        if (!isRecord(result) || (result.status !== "success" && result.status !== "error"))
          return {
            field: `content.${i}.toolResult`,
            reason: `expected {status: "success", value} or {status: "error", error}, got ${describeType(result)}`,
          };
        const open = this.byId.get(item.id);
        if (!open || open.answered) {
          this.count("result_without_call");
          continue;
        }
        const meta = open.turn.meta as Record<string, unknown>;
        if (result.status === "error") {
          open.turn.observation = typeof result.error === "string" ? result.error : jsonTextOr(result.error, "");
          meta.is_error = true;
        } else {
          const value = result.value;
          const content = Array.isArray(value) ? value : isRecord(value) ? value.content : undefined;
          if (!Array.isArray(content))
            return {
              field: `content.${i}.toolResult.value`,
              reason: `expected MCP content (a list, or {content: [...]}), got ${describeType(value)}`,
            };
          open.turn.observation = contentText(content, this);
          if (isRecord(value) && value.isError === true) meta.is_error = true;
        }
        if (open.turn.observation.trim() === "") open.turn.observation = "[no output]";
        open.answered = true;
        this.byId.delete(item.id);
      } else if (item.type === "text" && typeof item.text === "string") texts.push(item.text);
      else if (item.type === "image") texts.push("[image]");
      else this.count(`user_${item.type}`);
    }
    const text = texts.join("\n").trim();
    if (text !== "") {
      if (this.task === undefined && this.calls.length === 0) this.task = text;
      else {
        if (this.reasoning.length > 0) this.count("assistant_reply");
        this.reasoning = [];
        this.userMessages.push(text);
      }
    }
    return undefined;
  }

  finish(): { task?: string; turns: Turn[]; tools: string[]; meta: Record<string, unknown>; skipped: Record<string, number> } {
    const turns: Turn[] = [];
    const tools: string[] = [];
    for (const call of this.calls) {
      if (!call.answered) {
        this.count("call_without_result");
        continue;
      }
      turns.push(call.turn);
      tools.push(call.name);
    }
    const meta = { ...this.meta };
    if (this.lastText !== undefined) meta.final_message = this.lastText;
    if (Object.keys(this.skipped).length > 0) meta.skipped = this.skipped;
    return { ...(this.task !== undefined ? { task: this.task } : {}), turns, tools, meta, skipped: this.skipped };
  }

  count(what: string, n = 1): void {
    this.skipped[what] = (this.skipped[what] ?? 0) + n;
  }
}

/** MCP content as text: items meant for the assistant (or for everyone), images and resources named. */
function contentText(content: unknown[], session: Session): string {
  const parts: string[] = [];
  for (const item of content) {
    if (!isRecord(item)) continue;
    const annotations = isRecord(item.annotations) ? item.annotations : {};
    if (Array.isArray(annotations.audience) && !annotations.audience.includes("assistant")) {
      session.count("user_only_content");
      continue;
    }
    if (item.type === "text" && typeof item.text === "string") parts.push(item.text);
    else if (item.type === "resource" && isRecord(item.resource))
      parts.push(typeof item.resource.text === "string" ? item.resource.text : `[resource ${String(item.resource.uri ?? "")}]`);
    else parts.push(`[${String(item.type ?? "content")}]`);
  }
  return parts.join("\n");
}

const SHELL_TOOLS = new Set(["developer__shell", "shell"]);

function gooseAction(name: string, args: Record<string, unknown>): string {
  if (SHELL_TOOLS.has(name) && typeof args.command === "string") return args.command;
  return `${name} ${jsonTextOr(args, "{}")}`;
}

/** The domain of a session from its tools (see the comment at the top). */
export function inferGooseDomain(tools: readonly string[]): Domain {
  const share = (test: (tool: string) => boolean) => tools.filter(test).length / Math.max(tools.length, 1);
  const web = (tool: string) => /^computercontroller__web_|__fetch$|^fetch__/.test(tool);
  if (share(web) > 0.5) return "web";
  if (share((tool) => !tool.startsWith("developer__") && !tool.startsWith("platform__") && !SHELL_TOOLS.has(tool) && !web(tool)) > 0.5)
    return "mcp";
  if (tools.some((tool) => /^developer__(text_editor|edit|write|read|list_windows)/.test(tool) || tool === "text_editor")) return "swe";
  if (tools.length > 0 && tools.every((tool) => SHELL_TOOLS.has(tool))) return "terminal";
  return "swe";
}
