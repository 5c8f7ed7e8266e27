import type { Domain, SourceRef, Turn } from "../core/trajectory.ts";
import { openDecompressed } from "../io/open-input.ts";
import { readSideJsonObject } from "../io/read-whole-text.ts";
import { baseName, beside, parentOf, sideFileSize } from "../io/side-files.ts";
import { toolResultText } from "./chat-rows/anthropic-blocks.ts";
import { readHead } from "./json-array.ts";
import { JsonSyntaxError, selectJson } from "./json-select.ts";
import { type Companions, excerpt, type Reader, type ReaderOptions, type ReadItem } from "./reader.ts";
import { describeType, FieldError, fileStem, isRecord, jsonTextOr, MAX_JSON_DEPTH, nestsTooDeep } from "./record-helpers.ts";

const FORMAT = "cline";

/*
 * Cline task folders (`…/globalStorage/saoudrizwan.claude-dev/tasks/<taskId>/`) and the forks that
 * keep Cline's layout (Roo Code `rooveterinaryinc.roo-cline`, Kilo Code): one task = one trajectory.
 *
 * - `api_conversation_history.json`: the conversation the model saw, a JSON array of Anthropic
 *   MessageParam `{role: user | assistant, content: string | blocks, ts?}` (streamed element by
 *   element). Two ways tools appear, both read:
 *   - XML tool uses in the assistant's text (Cline's and Roo's own protocol):
 *     `<execute_command><command>ls</command>…</execute_command>`; their results are text blocks
 *     of the next user message, each opened by `[execute_command for 'ls'] Result:` (the result in
 *     the same block after a newline, or in the blocks after it);
 *   - native `tool_use` blocks `{id, name, input}` answered by `tool_result {tool_use_id, content,
 *     is_error}` blocks (Claude Dev, and newer Cline / Roo with native tool calling; the content may
 *     start with the same `[… ] Result:` header, taken off).
 *   `task_metadata.json` beside it (`model_usage[].model_id`) gives the model; it and
 *   `ui_messages.json`, `context_history.json`, `settings.json` are its companions.
 * - `ui_messages.json` read alone (no history beside it as an input): the UI log, ClineMessage
 *   `{ts, type: ask | say, ask | say, text}`; only what it shows whole is read: each `command`
 *   → the `command_output` messages after it, each `use_mcp_server` request → its
 *   `mcp_server_response`. Other messages are counted.
 *
 * The world-model turn is one tool the agent ran against the workspace:
 * - **Action**: `execute_command` → its command; any other tool → `name {params as JSON}` (XML
 *   parameters are strings as written, trimmed).
 * - **Observation**: the tool's result text. Cline's harness text around it is taken off: the
 *   `<environment_details>` block appended to every user message (counted), the `Command
 *   executed.` / Roo's `Command executed in terminal … Exit code: N` header (→ `turn.meta.exit_code`),
 *   `The tool execution failed with the following error: <error>…</error>` (→ the error text,
 *   `turn.meta.is_error`, as `tool_result.is_error` is). A command that printed nothing is
 *   `[exit code N, no output]` (`[no output]` when no code is known).
 * - Not environment turns (counted in `meta.skipped`): a call the user denied, a call skipped
 *   after a denial or because one tool already ran in the message, and the agent's exchanges with
 *   the user — `attempt_completion` (its result is `meta.final_message`), `ask_followup_question`
 *   (the `<answer>` goes to the next turn's `meta.user_messages`), `plan_mode_respond`,
 *   `new_task`, `switch_mode`, `condense`, `summarize_task`, `update_todo_list`, `report_bug`.
 *   User feedback (`<feedback>`) and later user messages are `turn.meta.user_messages` of the
 *   next turn.
 * - **Thinking**: the assistant's text before the call (`<thinking>` tags taken off), and
 *   `thinking` blocks, on the message's first call.
 * - **Task**: the first user message's `<task>` text. **Id**: the task folder's name (the task id).
 * - **Domain** (unless `--domain`): mostly `use_mcp_tool` / `access_mcp_resource` → mcp; mostly
 *   `browser_action` / `web_fetch` → web; only `execute_command` → terminal; else swe.
 * - **Meta**: `agent` (`cline`, `roo-code` or `kilo-code`, from the extension's folder in the
 *   path, else `cline`), `task_id`, `model` (task_metadata.json), `final_message`, `skipped`.
 *
 * Quarantined (one entry for the task, naming the element and field): a file that is not a JSON
 * array of messages, a message that is not `{role, content}` with a known role, a content block
 * without a string type, a tool_use without a name; a task where no tool call got a result.
 */

/** Tool names of Cline, Roo Code and Kilo Code (the XML tags their prompts define). */
const TOOL_NAMES = [
  "execute_command",
  "read_file",
  "write_to_file",
  "replace_in_file",
  "apply_diff",
  "insert_content",
  "search_and_replace",
  "edit_file",
  "apply_patch",
  "search_files",
  "list_files",
  "list_code_definition_names",
  "codebase_search",
  "browser_action",
  "web_fetch",
  "web_search",
  "use_mcp_tool",
  "access_mcp_resource",
  "load_mcp_documentation",
  "fetch_instructions",
  "generate_image",
  "run_slash_command",
  "ask_followup_question",
  "attempt_completion",
  "plan_mode_respond",
  "new_task",
  "switch_mode",
  "condense",
  "summarize_task",
  "update_todo_list",
  "report_bug",
  "new_rule",
  "focus_chain",
];
const TOOL_TAG = new RegExp(`<(${TOOL_NAMES.join("|")})>`, "g");
/** Calls that talk to the user or steer the agent: not environment turns. */
const DIALOGUE_TOOLS = new Set([
  "ask_followup_question",
  "attempt_completion",
  "plan_mode_respond",
  "new_task",
  "switch_mode",
  "condense",
  "summarize_task",
  "update_todo_list",
  "report_bug",
  "focus_chain",
]);
/** Parameters whose value may hold tags of its own: closed by their last closing tag. */
const WHOLE_PARAMS = new Set(["content", "diff", "args", "result", "todos", "patch"]);

const SHELL_TOOLS = new Set(["execute_command"]);
const EDIT_TOOLS = new Set([
  "write_to_file",
  "replace_in_file",
  "apply_diff",
  "insert_content",
  "search_and_replace",
  "edit_file",
  "apply_patch",
  "new_rule",
]);
const FILE_TOOLS = new Set(["read_file", "search_files", "list_files", "list_code_definition_names", "codebase_search"]);

const RESULT_HEADER = /^\[([a-z_]+)(?: (?:for|to|named|in) [\s\S]*?)?\] Result:[ \t]*(?:\r?\n|$)/;
const ENVIRONMENT_DETAILS = /\s*<environment_details>[\s\S]*?(<\/environment_details>\s*$|$)/;
const TOOL_ERROR = /^The tool execution failed with the following error:\s*<error>\s*([\s\S]*?)\s*<\/error>\s*$/;
const FEEDBACK = /^The user provided the following feedback:\s*<feedback>\s*([\s\S]*?)\s*<\/feedback>\s*$/;
const DENIED = /^The user denied this operation\b/;
const NOT_EXECUTED = /^(Skipping tool \[|Tool \[[^\]]*\] was (not executed|interrupted and not executed))/;

export const clineReader: Reader = {
  name: FORMAT,
  domain: "from the tools",
  description:
    "Cline / Roo Code / Kilo Code task folders (api_conversation_history.json: XML or native tool calls → their results; ui_messages.json alone: commands → output)",

  sniff(head) {
    const text = head.replace(/^\uFEFF/, "").trimStart();
    if (UI_START.test(text)) return true;
    if (!HISTORY_START.test(text)) return false;
    // Cline's own framing: the task, the environment details, a result header.
    return /<task>|<environment_details>|\] Result:|<feedback>\\n/.test(text);
  },

  async companions(path: string): Promise<Companions> {
    const dir = parentOf(path);
    const own = await sideFileSize(path);
    if (baseName(path).replace(/\.(gz|zst|zstd)$/i, "") !== HISTORY_FILE)
      return { dirs: [], files: [], bytes: own ?? 0, label: `Cline task ${baseName(dir)}` };
    const files = SIDE_FILES.map((name) => beside(dir, name));
    const sizes = await Promise.all(files.map(async (file) => (await sideFileSize(file)) ?? 0));
    return {
      dirs: [],
      files,
      bytes: (own ?? 0) + sizes.reduce((sum, size) => sum + size, 0),
      label: `Cline task ${baseName(dir)}`,
    };
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    if (options.range && options.range.start > 0) return;
    const head = (await readHead(path)).replace(/^\uFEFF/, "").trimStart();
    if (UI_START.test(head)) yield await readUi(path, options);
    else yield await readHistory(path, options);
  },
};

const HISTORY_FILE = "api_conversation_history.json";
const SIDE_FILES = ["ui_messages.json", "task_metadata.json", "context_history.json", "settings.json"];
const UI_START = /^\[\s*\{\s*"ts"\s*:\s*\d+\s*,\s*"type"\s*:\s*"(say|ask)"\s*,\s*"(say|ask)"\s*:/;
const HISTORY_START = /^\[\s*\{\s*"role"\s*:\s*"(user|assistant)"\s*,\s*"content"\s*:/;

/** A field problem whose message starts with the field; its own class, caught only by this reader's catches. */
class Problem extends FieldError {
  declare readonly field: string;
  constructor(field: string, message: string) {
    super(field, `${field}: ${message}`);
  }
}

/** The task id: the folder of an `api_conversation_history.json` / `ui_messages.json`, else the file's stem. */
function taskId(path: string): string {
  const name = baseName(path).replace(/\.(gz|zst|zstd)$/i, "");
  return name === HISTORY_FILE || name === "ui_messages.json" ? baseName(parentOf(path)) : fileStem(path, /\.json$/i);
}

/** Which fork wrote the folder, told by the VS Code extension's storage folder in the path. */
function agentOf(path: string): string {
  if (/rooveterinaryinc\.roo-cline/i.test(path)) return "roo-code";
  if (/kilocode\.kilo-code/i.test(path)) return "kilo-code";
  return "cline";
}

interface Call {
  name: string;
  id?: string;
  params: Record<string, unknown>;
  thinking?: string;
}

interface Result {
  name?: string;
  id?: string;
  text: string;
  isError: boolean;
}

async function readHistory(path: string, options: ReaderOptions): Promise<ReadItem> {
  const id = taskId(path);
  const source: SourceRef = { uri: path, format: FORMAT };
  const builder = new Builder();
  let index = 0;
  try {
    const { stream } = await openDecompressed(path);
    for await (const { value } of selectJson(stream, (at) => at.length === 1 && typeof at[0] === "number")) {
      builder.message(value, String(index));
      index += 1;
    }
    if (index === 0) throw new Problem("0", "no message: expected a JSON array of {role, content} messages");
  } catch (err) {
    if (!(err instanceof Problem || err instanceof JsonSyntaxError)) throw err;
    const field = err instanceof Problem ? err.field : undefined;
    const reason = err instanceof Problem ? `element ${err.message}` : `not a Cline api_conversation_history.json: ${err.message}`;
    return { kind: "quarantine", entry: { source, id, stage: "read", ...(field ? { field } : {}), reason } };
  }
  const built = builder.finish();
  if (built.turns.length === 0) {
    const counts = Object.entries(built.skipped).map(([key, n]) => `${n} ${key}`);
    const what = [built.task !== undefined ? `the task ${JSON.stringify(excerpt(built.task))}` : "no task", `${index} messages`, ...counts];
    return {
      kind: "quarantine",
      entry: {
        source,
        id,
        stage: "read",
        field: "content",
        reason: `no tool call with a result in the task (${what.join(", ")}): a chat without actions`,
      },
    };
  }
  const meta: Record<string, unknown> = { agent: agentOf(path), task_id: id, ...(await taskMetadata(path)) };
  if (built.finalMessage !== undefined) meta.final_message = built.finalMessage;
  if (Object.keys(built.skipped).length > 0) meta.skipped = built.skipped;
  return {
    kind: "trajectory",
    trajectory: {
      id,
      domain: options.domain ?? inferClineDomain(built.tools),
      source,
      ...(built.task !== undefined ? { task: built.task } : {}),
      turns: built.turns,
      meta,
    },
  };
}

/** The model task_metadata.json names (the most used `model_usage[].model_id`), if it is beside the history. */
async function taskMetadata(path: string): Promise<Record<string, unknown>> {
  if (baseName(path).replace(/\.(gz|zst|zstd)$/i, "") !== HISTORY_FILE) return {};
  const value = await readSideJsonObject(beside(parentOf(path), "task_metadata.json"), 16 << 20);
  if (!value || !Array.isArray(value.model_usage)) return {};
  const counts: Record<string, number> = {};
  for (const usage of value.model_usage)
    if (isRecord(usage) && typeof usage.model_id === "string" && usage.model_id !== "")
      counts[usage.model_id] = (counts[usage.model_id] ?? 0) + 1;
  const ranked = Object.entries(counts).sort((a, b) => b[1] - a[1]);
  if (ranked.length === 0) return {};
  return { model: (ranked[0] as [string, number])[0], ...(ranked.length > 1 ? { models: Object.fromEntries(ranked) } : {}) };
}

/** Pairs each assistant message's calls with the results of the user message after it. */
class Builder {
  readonly turns: Turn[] = [];
  readonly skipped: Record<string, number> = {};
  readonly tools: string[] = [];
  task: string | undefined;
  finalMessage: string | undefined;
  private open: Call[] = [];
  private userMessages: string[] = [];

  message(raw: unknown, at: string): void {
    if (!isRecord(raw)) throw new Problem(at, `expected a message object {role, content}, got ${describeType(raw)}`);
    if (nestsTooDeep(raw)) throw new Problem(at, `nested deeper than ${MAX_JSON_DEPTH} levels`);
    const blocks = contentBlocks(raw.content, `${at}.content`);
    if (raw.role === "assistant") this.assistant(blocks, at);
    else if (raw.role === "user") this.user(blocks, at);
    else throw new Problem(`${at}.role`, `expected "user" or "assistant", got ${JSON.stringify(raw.role) ?? "nothing"}`);
  }

  private assistant(blocks: Record<string, unknown>[], at: string): void {
    this.closeOpen();
    const calls: Call[] = [];
    let thinking: string[] = [];
    for (const [i, block] of blocks.entries()) {
      if (block.type === "text") {
        for (const part of xmlToolUses(block.text as string)) {
          if (part.kind === "text") {
            if (part.text.trim() !== "") thinking.push(part.text.trim());
          } else {
            calls.push({ ...part.call, ...(thinking.length > 0 ? { thinking: thinking.join("\n\n") } : {}) });
            thinking = [];
          }
        }
      } else if (block.type === "thinking" && typeof block.thinking === "string") {
        if (block.thinking.trim() !== "") thinking.push(block.thinking.trim());
      } else if (block.type === "tool_use") {
        const field = `${at}.content.${i}`;
        if (typeof block.name !== "string" || block.name === "")
          throw new Problem(`${field}.name`, `expected a tool name, got ${describeType(block.name)}`);
        const input = block.input ?? {};
        if (!isRecord(input)) throw new Problem(`${field}.input`, `expected an object, got ${describeType(input)}`);
        calls.push({
          name: block.name,
          params: input,
          ...(typeof block.id === "string" ? { id: block.id } : {}),
          ...(thinking.length > 0 ? { thinking: thinking.join("\n\n") } : {}),
        });
        thinking = [];
      } else this.count(`assistant_${String(block.type)}_block`);
    }
    for (const call of calls) {
      if (call.name === "attempt_completion" && typeof call.params.result === "string") this.finalMessage = call.params.result.trim();
      if (DIALOGUE_TOOLS.has(call.name)) this.count(`${call.name}_call`);
    }
    this.open = calls;
    // Words after the last call (or a reply without a call) are the assistant's, to the user.
    if (thinking.length > 0) {
      if (calls.length === 0) this.finalMessage = thinking.join("\n\n");
      this.count("assistant_text");
    }
  }

  private user(blocks: Record<string, unknown>[], at: string): void {
    const results: Result[] = [];
    let current: Result | undefined;
    const texts: string[] = [];
    for (const [i, block] of blocks.entries()) {
      if (block.type === "tool_result") {
        const text = toolResultText(block.content);
        if (text === undefined)
          throw new Problem(`${at}.content.${i}.content`, `expected a string or content blocks, got ${describeType(block.content)}`);
        const header = RESULT_HEADER.exec(text);
        current = undefined;
        results.push({
          ...(typeof block.tool_use_id === "string" ? { id: block.tool_use_id } : {}),
          ...(header ? { name: header[1] } : {}),
          text: stripEnvironment(header ? text.slice(header[0].length) : text),
          isError: block.is_error === true,
        });
        continue;
      }
      const text = block.type === "text" ? (block.text as string) : `[${String(block.type)}]`;
      if (block.type === "text" && /^\s*<environment_details>/.test(text)) {
        this.count("environment_details");
        current = undefined;
        continue;
      }
      const header = block.type === "text" ? RESULT_HEADER.exec(text) : null;
      if (header) {
        current = { name: header[1] as string, text: stripEnvironment(text.slice(header[0].length)), isError: false };
        results.push(current);
        continue;
      }
      const feedback = FEEDBACK.exec(text.trim());
      if (feedback) {
        current = undefined;
        if ((feedback[1] as string).trim() !== "") this.userMessages.push((feedback[1] as string).trim());
        continue;
      }
      if (current) current.text = current.text === "" ? stripEnvironment(text) : `${current.text}\n${stripEnvironment(text)}`;
      else texts.push(stripEnvironment(text));
    }
    for (const result of results) this.take(result);
    this.closeOpen();
    const words = texts.join("\n").trim();
    if (words === "") return;
    if (/^\[TASK RESUMPTION\]/.test(words)) this.count("task_resumption");
    else if (/^\[ERROR\] You did not use a tool/.test(words)) this.count("no_tool_used_notice");
    else {
      const task = /^<task>\s*([\s\S]*?)\s*<\/task>/.exec(words)?.[1];
      const answer = /^<answer>\s*([\s\S]*?)\s*<\/answer>$/.exec(words)?.[1];
      if (this.task === undefined && this.turns.length === 0 && task !== undefined) this.task = task;
      else if (this.task === undefined && this.turns.length === 0) this.task = words;
      else this.userMessages.push(answer ?? task ?? words);
    }
  }

  /** A result: matched to an open call by id, else by the tool name in its header, else in order. */
  private take(result: Result): void {
    let index = result.id !== undefined ? this.open.findIndex((call) => call.id === result.id) : -1;
    if (index === -1 && result.name !== undefined) index = this.open.findIndex((call) => call.name === result.name);
    if (index === -1 && result.id === undefined && result.name === undefined) index = 0;
    const call = this.open[index];
    if (!call) {
      this.count("result_without_call");
      return;
    }
    this.open.splice(index, 1);
    const text = result.text.trim();
    if (DIALOGUE_TOOLS.has(call.name)) {
      const answer = /^<answer>\s*([\s\S]*?)\s*<\/answer>$/.exec(text)?.[1];
      if (answer !== undefined && answer !== "") this.userMessages.push(answer);
      return;
    }
    if (DENIED.test(text)) {
      this.count("denied_call");
      return;
    }
    if (NOT_EXECUTED.test(text)) {
      this.count("not_executed_call");
      return;
    }
    const meta: Record<string, unknown> = { tool: call.name };
    if (call.id !== undefined) meta.tool_use_id = call.id;
    let observation = result.text.replace(/^\r?\n/, "");
    const error = TOOL_ERROR.exec(observation.trim());
    if (error) observation = error[1] as string;
    if (error || result.isError) meta.is_error = true;
    if (SHELL_TOOLS.has(call.name) && !error) observation = commandOutput(observation, meta);
    if (observation.trim() === "" || observation === "(tool did not return anything)")
      observation = typeof meta.exit_code === "number" ? `[exit code ${meta.exit_code}, no output]` : "[no output]";
    if (this.userMessages.length > 0) meta.user_messages = this.userMessages;
    this.userMessages = [];
    this.tools.push(call.name);
    this.turns.push({ action: action(call), observation, ...(call.thinking !== undefined ? { thinking: call.thinking } : {}), meta });
  }

  /** Calls of the last assistant message that no result answered (the task ended, or Cline dropped them). */
  private closeOpen(): void {
    for (const call of this.open) if (!DIALOGUE_TOOLS.has(call.name)) this.count("call_without_result");
    this.open = [];
  }

  finish(): { turns: Turn[]; skipped: Record<string, number>; tools: string[]; task?: string; finalMessage?: string } {
    this.closeOpen();
    if (this.userMessages.length > 0) this.count("user_message_after_last_call", this.userMessages.length);
    return {
      turns: this.turns,
      skipped: this.skipped,
      tools: this.tools,
      ...(this.task !== undefined ? { task: this.task } : {}),
      ...(this.finalMessage !== undefined ? { finalMessage: this.finalMessage } : {}),
    };
  }

  count(what: string, n = 1): void {
    this.skipped[what] = (this.skipped[what] ?? 0) + n;
  }
}

/** A message's content as blocks (a string is one text block), each checked to have a string type. */
function contentBlocks(content: unknown, field: string): Record<string, unknown>[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (!Array.isArray(content)) throw new Problem(field, `expected a string or an array of content blocks, got ${describeType(content)}`);
  return content.map((block, i) => {
    if (!isRecord(block) || typeof block.type !== "string")
      throw new Problem(`${field}.${i}`, `expected a content block with a string type, got ${describeType(block)}`);
    if (block.type === "text" && typeof block.text !== "string")
      throw new Problem(`${field}.${i}.text`, `expected a string, got ${describeType(block.text)}`);
    return block;
  });
}

function stripEnvironment(text: string): string {
  const match = ENVIRONMENT_DETAILS.exec(text);
  return match && match.index > 0 ? text.slice(0, match.index) : match ? "" : text;
}

type Part = { kind: "text"; text: string } | { kind: "call"; call: Call };

/**
 * The text and XML tool uses of an assistant text, in order, as Cline's parser reads them: a tool's
 * tag, its parameters as `<name>value</name>` (values trimmed; `content`, `diff`, … closed by their
 * last closing tag, since they may hold tags), a call left unclosed at the end still a call.
 */
export function xmlToolUses(text: string): Part[] {
  const parts: Part[] = [];
  let at = 0;
  TOOL_TAG.lastIndex = 0;
  for (let match = TOOL_TAG.exec(text); match; match = TOOL_TAG.exec(text)) {
    const name = match[1] as string;
    const before = text.slice(at, match.index);
    if (before.trim() !== "") parts.push({ kind: "text", text: withoutThinkingTags(before) });
    const bodyStart = match.index + match[0].length;
    const close = text.indexOf(`</${name}>`, bodyStart);
    const bodyEnd = close === -1 ? text.length : close;
    parts.push({ kind: "call", call: { name, params: xmlParams(text.slice(bodyStart, bodyEnd)) } });
    at = close === -1 ? text.length : close + name.length + 3;
    TOOL_TAG.lastIndex = at;
  }
  const rest = text.slice(at);
  if (rest.trim() !== "") parts.push({ kind: "text", text: withoutThinkingTags(rest) });
  return parts;
}

function xmlParams(body: string): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  const open = /<([a-z_][a-z0-9_]*)>/g;
  for (let match = open.exec(body); match; match = open.exec(body)) {
    const name = match[1] as string;
    const start = match.index + match[0].length;
    const closeTag = `</${name}>`;
    const close = WHOLE_PARAMS.has(name) ? body.lastIndexOf(closeTag) : body.indexOf(closeTag, start);
    if (close < start) continue;
    params[name] = body
      .slice(start, close)
      .replace(/^\r?\n/, "")
      .replace(/\r?\n$/, "")
      .trim();
    open.lastIndex = close + closeTag.length;
  }
  return params;
}

function withoutThinkingTags(text: string): string {
  return text.replace(/<\/?thinking>/g, "").trim();
}

function action(call: Call): string {
  if (SHELL_TOOLS.has(call.name) && typeof call.params.command === "string") return call.params.command;
  return `${call.name} ${jsonTextOr(call.params, "{}")}`;
}

/** Cline's `Command executed.` / Roo's `Command executed in terminal … Exit code: N` framing → the output, facts to meta. */
function commandOutput(text: string, meta: Record<string, unknown>): string {
  const cline = /^Command executed\.\s*(?:\nOutput:\n([\s\S]*))?$/.exec(text);
  if (cline) return cline[1] ?? "";
  const roo = /^Command executed in terminal\s*\S*\s*within working directory '([^'\n]*)'\.([\s\S]*?)(?:\nOutput:\n([\s\S]*))?$/.exec(text);
  if (roo) {
    meta.cwd = roo[1];
    const code = /Exit code: (-?\d+)/.exec(roo[2] as string);
    if (code) meta.exit_code = Number(code[1]);
    if (/Process terminated by signal/.test(roo[2] as string)) meta.signal = true;
    return roo[3] ?? "";
  }
  return text;
}

/** The domain of a task from the tools it ran (see the comment at the top). */
export function inferClineDomain(tools: readonly string[]): Domain {
  const share = (test: (tool: string) => boolean) => tools.filter(test).length / Math.max(tools.length, 1);
  if (share((tool) => tool === "use_mcp_tool" || tool === "access_mcp_resource") > 0.5) return "mcp";
  if (share((tool) => tool === "browser_action" || tool === "web_fetch") > 0.5) return "web";
  if (tools.some((tool) => EDIT_TOOLS.has(tool) || FILE_TOOLS.has(tool))) return "swe";
  if (tools.length > 0 && tools.every((tool) => SHELL_TOOLS.has(tool))) return "terminal";
  return "swe";
}

/**
 * `ui_messages.json` alone: each `command` (ask or say) → the `command_output` texts after it,
 * each `use_mcp_server` request → its `mcp_server_response`. Other messages are counted.
 */
async function readUi(path: string, options: ReaderOptions): Promise<ReadItem> {
  const id = taskId(path);
  const source: SourceRef = { uri: path, format: FORMAT };
  const turns: Turn[] = [];
  const skipped: Record<string, number> = {};
  const count = (what: string) => {
    skipped[what] = (skipped[what] ?? 0) + 1;
  };
  const tools: string[] = [];
  let task: string | undefined;
  let finalMessage: string | undefined;
  let open: { turn: Turn; tool: string; outputs: string[] } | undefined;
  const close = () => {
    if (!open) return;
    if (open.outputs.length === 0) count("command_without_output");
    else {
      open.turn.observation = open.outputs.join("\n").trim() === "" ? "[no output]" : open.outputs.join("\n");
      turns.push(open.turn);
      tools.push(open.tool);
    }
    open = undefined;
  };
  let index = 0;
  try {
    const { stream } = await openDecompressed(path);
    for await (const { value } of selectJson(stream, (at) => at.length === 1 && typeof at[0] === "number")) {
      const at = String(index);
      index += 1;
      if (!isRecord(value) || (value.type !== "say" && value.type !== "ask"))
        throw new Problem(
          `${at}.type`,
          `expected a ClineMessage {ts, type: "ask" | "say", …}, got ${isRecord(value) ? JSON.stringify(value.type) : describeType(value)}`,
        );
      const kind = value.type === "say" ? value.say : value.ask;
      if (typeof kind !== "string") throw new Problem(`${at}.${value.type}`, `expected a string, got ${describeType(kind)}`);
      if (value.text !== undefined && value.text !== null && typeof value.text !== "string")
        throw new Problem(`${at}.text`, `expected a string, got ${describeType(value.text)}`);
      if (value.partial === true) {
        count("partial_message");
        continue;
      }
      const text = typeof value.text === "string" ? value.text : "";
      if (kind === "command_output") {
        if (open?.tool === "execute_command") open.outputs.push(text);
        else count("output_without_command");
        continue;
      }
      if (kind === "mcp_server_response") {
        if (open?.tool === "use_mcp_tool") open.outputs.push(text);
        else count("output_without_command");
        continue;
      }
      close();
      // An ask that needs approval carries Cline's REQ_APP marker after the command.
      if (kind === "command")
        open = {
          turn: { action: text.replace(/REQ_APP$/, ""), observation: "", meta: { tool: "execute_command" } },
          tool: "execute_command",
          outputs: [],
        };
      else if (kind === "use_mcp_server") {
        let request: unknown;
        try {
          request = JSON.parse(text);
        } catch {
          request = undefined;
        }
        if (isRecord(request) && request.type === "use_mcp_tool" && typeof request.toolName === "string") {
          const args = typeof request.arguments === "string" ? request.arguments : "{}";
          open = {
            turn: {
              action: `use_mcp_tool ${JSON.stringify({ server_name: request.serverName, tool_name: request.toolName, arguments: args })}`,
              observation: "",
              meta: { tool: "use_mcp_tool" },
            },
            tool: "use_mcp_tool",
            outputs: [],
          };
        } else count("use_mcp_server");
      } else if (kind === "task" && task === undefined) task = text;
      else if (kind === "completion_result") {
        finalMessage = text;
        count(kind);
      } else count(kind);
    }
    close();
    if (index === 0) throw new Problem("0", "no message: expected a JSON array of ClineMessage objects");
  } catch (err) {
    if (!(err instanceof Problem || err instanceof JsonSyntaxError)) throw err;
    const field = err instanceof Problem ? err.field : undefined;
    const reason = err instanceof Problem ? `element ${err.message}` : `not a Cline ui_messages.json: ${err.message}`;
    return { kind: "quarantine", entry: { source, id, stage: "read", ...(field ? { field } : {}), reason } };
  }
  if (turns.length === 0) {
    const counts = Object.entries(skipped).map(([key, n]) => `${n} ${key}`);
    return {
      kind: "quarantine",
      entry: {
        source,
        id,
        stage: "read",
        reason: `no command with its output in the UI log (${index} messages: ${counts.join(", ")}); read the task's api_conversation_history.json, which holds every tool result`,
      },
    };
  }
  const meta: Record<string, unknown> = { agent: agentOf(path), task_id: id, ui_messages: true };
  if (finalMessage !== undefined) meta.final_message = finalMessage;
  if (Object.keys(skipped).length > 0) meta.skipped = skipped;
  return {
    kind: "trajectory",
    trajectory: { id, domain: options.domain ?? inferClineDomain(tools), source, ...(task !== undefined ? { task } : {}), turns, meta },
  };
}
