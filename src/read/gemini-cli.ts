import { createHash } from "node:crypto";
import type { Domain, Turn } from "../core/trajectory.ts";
import { openDecompressed } from "../io/open-input.ts";
import { type CutNote, truncatedLineMeta } from "./cut-last-line.ts";
import { JsonSyntaxError, selectJson } from "./json-select.ts";
import { firstLine, parseJsonLine, parseSniffedJson, type Reader, type ReaderOptions, type ReadItem } from "./reader.ts";
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

const FORMAT = "gemini-cli";

/*
 * Gemini CLI chat recordings (`~/.gemini/tmp/<project_hash>/chats/session-<time>-<id8>.json`), as
 * gemini-cli's ChatRecordingService writes them. Two layouts, both read; one file = one session =
 * one trajectory:
 * - `.json` (gemini-cli ≤ 0.2x): one pretty-printed `ConversationRecord` {sessionId, projectHash,
 *   startTime, lastUpdated, messages[], summary?, directories?}, streamed message by message.
 * - `.jsonl` (newer): a first metadata line {sessionId, projectHash, startTime, …}, then message
 *   records (the same message id is written again, whole, each time its tool calls, results or
 *   tokens change: the last one wins, at its first place), `{"$rewindTo": id}` (that message and
 *   every later one are dropped) and `{"$set": {…}}` (metadata; a `messages` list replaces the
 *   history, as gemini-cli's own loader does).
 * Also read: `/chat save` checkpoints (`checkpoint-<tag>.json`, Gemini API contents; see
 * `readCheckpoint`), `logs.json` (prompts only; see `readLogs`) and Qwen Code's chat recordings
 * (a Gemini CLI fork whose records differ: `~/.qwen/projects/<project>/chats/<sessionId>.jsonl`,
 * see `readQwen`).
 *
 * A message is {id, timestamp, type: user | gemini | info | error | warning, content (a string or
 * Gemini parts), thoughts?, tokens?, model?, toolCalls?}. A tool call is {id, name, args, result
 * (parts: `functionResponse {id, name, response: {output | error}}`), status, resultDisplay, …}.
 * - **Action**: each tool call, in call order (parallel calls are consecutive turns):
 *   `run_shell_command` → its `command`; any other tool → `name {args as JSON}`.
 * - **Observation**: its functionResponse `response.output` (else `response.error`, else the
 *   response as JSON), text parts joined; without a result, a string `resultDisplay`. `status`
 *   error → `turn.meta.is_error`. A call with neither (cancelled before it ran) makes no turn.
 * - **Thinking**: the gemini message's `thoughts` (`subject: description`) and its text, on its
 *   first call; text replies without calls go to the next turn's `meta.assistant_messages`; the
 *   last one after the final call is `meta.final_message`.
 * - **Task**: the first user message (slash commands left out); later user messages are
 *   `turn.meta.user_messages` of the next turn. info / error / warning messages are counted.
 * - **Id**: `sessionId`, else the file name. **Domain** (unless `--domain`): from the tools
 *   called: an edit or file tool → swe; shell only → terminal; mostly `web_fetch` → web; mostly
 *   `google_web_search` → search; mostly tools gemini-cli does not ship (MCP servers) → mcp.
 * - **Meta**: `agent: "gemini-cli"`, `model` (the most used; all in `models`), `session_id`,
 *   `project_hash`, `start_time`, `last_updated`, `summary`, `tokens` (summed), `skipped`.
 *   The format records no outcome.
 *
 * Quarantined: a file that is not such a record (not JSON, no `messages` list, a message or tool
 * call of the wrong type — naming the message and field). A `.jsonl` whose last line was cut while
 * gemini-cli wrote it is read without that line, noted as `meta.truncated_line` (cut-last-line.ts);
 * any other line that is not JSON quarantines the file at that line. A session without any tool call that
 * got a result (a chat) is well-formed: yielded without turns and with `meta.read_filter`
 * (`no-tool-calls`, the reason saying what it held), so the runner counts it in `filtered/`.
 */
export const geminiCliReader: Reader = {
  name: FORMAT,
  domain: "from the tools",
  description: "Gemini CLI chat recordings (~/.gemini/tmp/<hash>/chats/session-*.json / .jsonl): toolCalls → functionResponse",

  sniff(head) {
    const text = head.replace(/^\uFEFF/, "");
    const start = text.trimStart();
    if (CHECKPOINT.test(start) || LOGS.test(start)) return true;
    const line = firstLine(text).trim();
    if (line === "{") {
      // The pretty-printed record: its own keys, in the order gemini-cli writes them.
      return /^\{\s*"sessionId"\s*:\s*"[^"]*",\s*"projectHash"\s*:/.test(text.trimStart()) && /"messages"\s*:\s*\[/.test(text);
    }
    if (!line.startsWith("{")) return false;
    const parsed = parseSniffedJson(line);
    if (!parsed.ok || !isRecord(parsed.value)) return /^\{\s*"sessionId"\s*:\s*"[^"]*",\s*"projectHash"\s*:/.test(line);
    const record = parsed.value;
    if (isQwenRecord(record)) return true;
    if (typeof record.sessionId === "string" && typeof record.projectHash === "string") return true;
    if (typeof record.$rewindTo === "string") return true;
    if (isRecord(record.$set) && (typeof record.$set.lastUpdated === "string" || Array.isArray(record.$set.messages))) return true;
    return (
      typeof record.id === "string" &&
      typeof record.timestamp === "string" &&
      MESSAGE_TYPES.has(record.type as string) &&
      "content" in record &&
      (record.type !== "gemini" || "tokens" in record || "thoughts" in record || "toolCalls" in record || "model" in record)
    );
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    const source = { uri: path, format: FORMAT };
    const session = new Session();
    const layout = await layoutOf(path);
    if (layout === "logs") {
      yield* readLogs(path, options.domain);
      return;
    }
    try {
      if (layout === "jsonl") await readJsonl(path, options, session);
      else if (layout === "qwen") await readQwen(path, options, session);
      else if (layout === "checkpoint") await readCheckpoint(path, session);
      else await readDocument(path, session);
    } catch (err) {
      if (!(err instanceof FieldError || err instanceof JsonSyntaxError)) throw err;
      const field = err instanceof FieldError ? err.field : undefined;
      const line = err instanceof FieldError ? err.line : undefined;
      const reason = err instanceof JsonSyntaxError ? `not a Gemini CLI session record: ${err.message}` : err.message;
      yield {
        kind: "quarantine",
        entry: {
          source: { ...source, ...(line !== undefined ? { line } : {}) },
          ...idOf(session, path),
          stage: "read",
          ...(field ? { field } : {}),
          reason,
        },
      };
      return;
    }
    yield session.finish(path, options.domain);
  },
};

const MESSAGE_TYPES = new Set(["user", "gemini", "info", "error", "warning"]);

function idOf(session: Session, path: string): { id: string } {
  return { id: session.sessionId ?? fileStem(path, /\.jsonl?$/i) };
}

/** The first 64 KiB of the decompressed file (its first line whole, when shorter). */
async function headText(path: string): Promise<string> {
  const { stream } = await openDecompressed(path);
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      total += chunk.length;
      if (total >= 1 << 16) break;
    }
  } finally {
    stream.destroy();
  }
  return Buffer.concat(chunks).toString("utf8");
}

const CHECKPOINT = /^(\[|\{\s*"history"\s*:\s*\[)\s*\{\s*"role"\s*:\s*"(user|model)"\s*,\s*"parts"\s*:\s*\[/;
const LOGS = /^\[\s*\{\s*"sessionId"\s*:\s*"[^"]*"\s*,\s*"messageId"\s*:\s*\d+\s*,\s*"type"\s*:/;

/** Which of the layouts the file is: told by its first bytes, as `sniff` does. */
async function layoutOf(path: string): Promise<"document" | "jsonl" | "qwen" | "checkpoint" | "logs"> {
  const head = (await headText(path)).replace(/^\uFEFF/, "").trimStart();
  if (CHECKPOINT.test(head)) return "checkpoint";
  if (LOGS.test(head)) return "logs";
  const line = firstLine(head).trim();
  if (line === "{") return "document";
  const parsed = parseJsonLine(line);
  if (parsed.ok && isRecord(parsed.value) && isQwenRecord(parsed.value)) return "qwen";
  return parsed.ok && isRecord(parsed.value) && !Array.isArray(parsed.value.messages) ? "jsonl" : "document";
}

async function readDocument(path: string, session: Session): Promise<void> {
  const { stream } = await openDecompressed(path);
  let sawMessages = false;
  let index = 0;
  for await (const { path: at, value } of selectJson(
    stream,
    (p, kind) =>
      (p.length === 1 && (kind === "scalar" || (p[0] === "messages" && kind === "object"))) || (p.length === 2 && p[0] === "messages"),
  )) {
    if (at.length === 1 && at[0] === "messages") {
      // A list's items arrive one by one; anything else arrives whole.
      throw new FieldError("messages", `"messages": expected an array, got ${describeType(value)}`);
    }
    if (at.length === 1) {
      session.header(String(at[0]), value);
      continue;
    }
    if (typeof at[1] !== "number") throw new FieldError("messages", `"messages": expected an array, got an object`);
    sawMessages = true;
    session.upsert(value, `messages[${index}]`);
    index += 1;
  }
  if (!sawMessages)
    throw new FieldError("messages", `no message in a "messages" list: not a Gemini CLI session record, or one without messages`);
}

async function readJsonl(path: string, options: ReaderOptions, session: Session): Promise<void> {
  const { range: _range, ...whole } = options;
  for await (const line of jsonObjectLines(path, whole, FORMAT, session.cut)) {
    if (line.kind === "quarantine")
      throw new FieldError(undefined, `line ${line.entry.source.line}: ${line.entry.reason}`, line.entry.source.line);
    const { record } = line;
    const lineNo = line.source.line as number;
    if (typeof record.$rewindTo === "string") session.rewind(record.$rewindTo);
    else if ("$set" in record) {
      if (!isRecord(record.$set))
        throw new FieldError("$set", `line ${lineNo}: "$set": expected an object, got ${describeType(record.$set)}`, lineNo);
      for (const [key, value] of Object.entries(record.$set)) {
        if (key !== "messages") session.header(key, value);
        else if (Array.isArray(value)) {
          session.replace();
          value.forEach((message, i) => {
            session.upsert(message, `line ${lineNo}: $set.messages[${i}]`, lineNo);
          });
        }
      }
    } else if (typeof record.id === "string" && "type" in record) session.upsert(record, `line ${lineNo}`, lineNo);
    else if (typeof record.sessionId === "string") for (const [key, value] of Object.entries(record)) session.header(key, value);
    else session.count("unknown_line");
  }
}

const QWEN_TYPES = new Set(["user", "assistant", "tool_result", "system"]);

/**
 * A Qwen Code `ChatRecord` line: `{uuid, parentUuid, sessionId, timestamp, type: user | assistant |
 * tool_result | system, cwd, version, message: Gemini Content {role, parts}}` (Claude Code's
 * entries have these links too, but a `message` with `content`, never `parts`).
 */
function isQwenRecord(record: Record<string, unknown>): boolean {
  if (typeof record.uuid !== "string" || !("parentUuid" in record) || typeof record.sessionId !== "string") return false;
  if (!QWEN_TYPES.has(record.type as string)) return false;
  if (isRecord(record.message)) return Array.isArray(record.message.parts) && !("content" in record.message);
  return record.type === "system" && "systemPayload" in record;
}

interface QwenRecord {
  record: Record<string, unknown>;
  line: number;
}

/**
 * Qwen Code's chat recording (QwenLM/qwen-code `chatRecordingService.ts`): one `ChatRecord` per
 * line, linked by `uuid` / `parentUuid` (a resumed session goes on from its last completed record,
 * leaving what came after it as a side branch). The conversation is the chain from the last record
 * back to the first; records off it are counted (`off_chain`). A `user` record's text parts are a
 * prompt; an `assistant` record's parts are its text, `thought: true` parts and `functionCall
 * {id, name, args}` calls; a `tool_result` record's `functionResponse` parts answer calls by id,
 * its `toolCallResult.status` telling an error (`error` → `turn.meta.is_error`) or a call the user
 * cancelled (no turn: `cancelled_call`); `system` records (compression checkpoints, slash
 * commands, telemetry) are counted.
 */
async function readQwen(path: string, options: ReaderOptions, session: Session): Promise<void> {
  session.agent = "qwen-code";
  const { range: _range, ...whole } = options;
  const records = new Map<string, QwenRecord>();
  let last: string | undefined;
  for await (const line of jsonObjectLines(path, whole, FORMAT, session.cut)) {
    if (line.kind === "quarantine")
      throw new FieldError(undefined, `line ${line.entry.source.line}: ${line.entry.reason}`, line.entry.source.line);
    const lineNo = line.source.line as number;
    const { record } = line;
    if (typeof record.uuid !== "string" || record.uuid === "")
      throw new FieldError("uuid", `line ${lineNo}: "uuid": expected a string, got ${describeType(record.uuid)}`, lineNo);
    if (records.has(record.uuid)) session.count("duplicate_uuid");
    records.set(record.uuid, { record, line: lineNo });
    last = record.uuid;
  }
  const chain = new Set<string>();
  for (let at = last; at !== undefined && !chain.has(at); ) {
    chain.add(at);
    const parent = records.get(at)?.record.parentUuid;
    at = typeof parent === "string" ? parent : undefined;
  }
  const open = new Map<string, { call: Record<string, unknown>; calls: Record<string, unknown>[] }>();
  for (const [uuid, { record, line }] of records) {
    if (!chain.has(uuid)) {
      session.count("off_chain");
      continue;
    }
    for (const key of ["sessionId", "cwd", "version", "gitBranch"]) if (typeof record[key] === "string") session.header(key, record[key]);
    const where = `line ${line}`;
    if (record.type === "system") {
      session.count(`system_${typeof record.subtype === "string" ? record.subtype : "record"}`);
      continue;
    }
    const message = record.message;
    if (message === undefined || message === null) {
      session.count(`${String(record.type)}_without_message`);
      continue;
    }
    if (!isRecord(message) || !Array.isArray(message.parts))
      throw new FieldError(
        "message.parts",
        `${where}: "message.parts": expected a Gemini content {role, parts}, got ${isRecord(message) ? describeType(message.parts) : describeType(message)}`,
        line,
      );
    const parts = message.parts.filter(isRecord);
    if (record.type === "tool_result") {
      const result = isRecord(record.toolCallResult) ? record.toolCallResult : {};
      for (const part of parts) {
        const response = part.functionResponse;
        if (!isRecord(response)) continue;
        const id = typeof response.id === "string" ? response.id : typeof result.callId === "string" ? result.callId : undefined;
        const found = id !== undefined ? open.get(id) : undefined;
        if (!found) {
          session.count("result_without_call");
          continue;
        }
        if (id !== undefined) open.delete(id);
        if (result.status === "cancelled") {
          // The user cancelled the call before it ran: nothing was observed.
          found.calls.splice(found.calls.indexOf(found.call), 1);
          session.count("cancelled_call");
          continue;
        }
        found.call.result = [{ functionResponse: response }];
        found.call.status =
          result.status === "error" || (isRecord(response.response) && "error" in response.response) ? "error" : "success";
      }
      continue;
    }
    if (record.type === "user") {
      if (typeof record.subtype === "string") {
        session.count(`user_${record.subtype}`);
        continue;
      }
      session.upsert(
        { id: uuid, type: "user", content: parts.filter((part) => part.thought !== true && typeof part.text === "string") },
        where,
        line,
      );
      continue;
    }
    const calls = parts
      .filter((part) => isRecord(part.functionCall))
      .map((part) => ({ ...(part.functionCall as Record<string, unknown>) }));
    const thoughts = parts
      .filter((part) => part.thought === true && typeof part.text === "string" && part.text.trim() !== "")
      .map((part) => ({ description: part.text }));
    const text = parts
      .filter((part) => part.thought !== true && typeof part.text === "string")
      .map((part) => part.text as string)
      .join("");
    const usage = isRecord(record.usageMetadata) ? record.usageMetadata : undefined;
    session.upsert(
      {
        id: uuid,
        type: "gemini",
        content: text,
        thoughts,
        toolCalls: calls,
        ...(typeof record.model === "string" ? { model: record.model } : {}),
        ...(usage && typeof usage.totalTokenCount === "number" ? { tokens: { total: usage.totalTokenCount } } : {}),
      },
      where,
      line,
    );
    for (const call of calls) if (typeof call.id === "string") open.set(call.id, { call, calls });
  }
}

/** gemini-cli's environment context, the first user turn of every chat (`getEnvironmentContext`). */
const SETUP_CONTEXT = /^This is the Gemini CLI\. We are setting up the context for our chat\./;

/**
 * A `/chat save` checkpoint (`checkpoint-<tag>.json`): the model's history as Gemini API contents,
 * a bare `Content[]` or `{history: Content[], authType}`. A model content's `functionCall` parts
 * are its calls; the `functionResponse` parts of the user content after it answer them (by `id`,
 * else by name in order). `thought: true` text parts are thinking.
 */
async function readCheckpoint(path: string, session: Session): Promise<void> {
  const { stream } = await openDecompressed(path);
  let open: Record<string, unknown>[] = [];
  let index = 0;
  const hash = createHash("sha256");
  for await (const { value } of selectJson(
    stream,
    (p) => (p.length === 1 && typeof p[0] === "number") || (p.length === 2 && p[0] === "history" && typeof p[1] === "number"),
  )) {
    const where = `content[${index}]`;
    index += 1;
    hash.update(`${jsonTextOr(value, "")}\n`);
    if (!isRecord(value) || !Array.isArray(value.parts))
      throw new FieldError(
        "parts",
        `${where}: expected a Gemini content {role, parts: [...]}, got ${isRecord(value) ? `"parts": ${describeType(value.parts)}` : describeType(value)}`,
      );
    if (nestsTooDeep(value)) throw new FieldError("parts", `${where}: nested deeper than ${MAX_JSON_DEPTH} levels`);
    const parts = value.parts.filter(isRecord);
    if (value.role === "model") {
      const calls = parts
        .filter((part) => isRecord(part.functionCall))
        .map((part) => ({ ...(part.functionCall as Record<string, unknown>) }));
      const thoughts = parts.filter((part) => part.thought === true && typeof part.text === "string").map((part) => part.text as string);
      const text = parts
        .filter((part) => part.thought !== true && typeof part.text === "string")
        .map((part) => part.text as string)
        .join("");
      if (open.length > 0) session.count("call_without_result", open.length);
      open = [...calls];
      if (/^Got it\. Thanks for the context!?\s*$/.test(text) && calls.length === 0) {
        session.count("context_reply");
        continue;
      }
      session.upsert(
        { type: "gemini", content: text, toolCalls: calls, thoughts: thoughts.map((description) => ({ description })) },
        where,
      );
      continue;
    }
    if (value.role !== "user")
      throw new FieldError("role", `${where}: "role": expected "user" or "model", got ${JSON.stringify(value.role)}`);
    const texts: string[] = [];
    for (const part of parts) {
      const response = part.functionResponse;
      if (isRecord(response)) {
        const at = open.findIndex(
          (call) =>
            (response.id !== undefined && call.id === response.id) ||
            (response.id === undefined && call.name === response.name && call.result === undefined),
        );
        const call = open[at];
        if (call) {
          call.result = [{ functionResponse: response }];
          open.splice(at, 1);
        } else session.count("result_without_call");
      } else if (typeof part.text === "string") texts.push(part.text);
    }
    const text = texts.join("\n");
    if (SETUP_CONTEXT.test(text)) session.system ??= text;
    else if (text.trim() !== "") session.upsert({ type: "user", content: text }, where);
  }
  if (open.length > 0) session.count("call_without_result", open.length);
  if (index === 0) throw new FieldError("history", "no Gemini content in the checkpoint");
  // Checkpoints are named by their tag only (`checkpoint-<tag>.json` in every project): the content tells them apart.
  session.sessionId = `${fileStem(path, /\.json$/i)}-${hash.digest("hex").slice(0, 12)}`;
}

/**
 * gemini-cli's `logs.json` (`~/.gemini/tmp/<hash>/logs.json`): the user's prompts only
 * ({sessionId, messageId, type: "user", message, timestamp}), no replies or tools. Each session in
 * it is one record with no turns and `meta.read_filter` (`prompts-only`): nothing to train on.
 */
async function* readLogs(path: string, domain: Domain | undefined): AsyncGenerator<ReadItem> {
  const { stream } = await openDecompressed(path);
  const sessions = new Map<string, { prompts: number; first: string | undefined }>();
  try {
    for await (const { value } of selectJson(stream, (p) => p.length === 1)) {
      const id = isRecord(value) && typeof value.sessionId === "string" && value.sessionId !== "" ? value.sessionId : "(no sessionId)";
      const entry = sessions.get(id) ?? { prompts: 0, first: undefined };
      entry.prompts += 1;
      if (entry.first === undefined && isRecord(value) && typeof value.message === "string" && !value.message.startsWith("/"))
        entry.first = value.message;
      sessions.set(id, entry);
    }
  } catch (err) {
    if (!(err instanceof JsonSyntaxError)) throw err;
    yield {
      kind: "quarantine",
      entry: { source: { uri: path, format: FORMAT }, stage: "read", reason: `not a Gemini CLI logs.json: ${err.message}` },
    };
    return;
  }
  for (const [id, { prompts, first }] of sessions) {
    const reason = `Gemini CLI logs.json holds only the user's prompts (${prompts} in session ${id}), no replies, tool calls or results: nothing to pair actions with observations (the session's chats/session-*.json has them)`;
    yield {
      kind: "trajectory",
      trajectory: {
        id,
        domain: domain ?? "swe",
        source: { uri: path, format: FORMAT },
        ...(first !== undefined ? { task: first } : {}),
        turns: [],
        meta: { agent: "gemini-cli", session_id: id, prompts, read_filter: { stage: "prompts-only", reason } },
      },
    };
  }
}

interface Message {
  type: string;
  text: string;
  thoughts: string[];
  model: string | undefined;
  calls: Record<string, unknown>[];
  tokens: number | undefined;
  where: string;
  line: number | undefined;
}

class Session {
  sessionId: string | undefined;
  /** Who wrote the recording: gemini-cli, or its fork Qwen Code. */
  agent = "gemini-cli";
  /** A checkpoint's environment context (its first user turn). */
  system: string | undefined;
  private readonly headers: Record<string, unknown> = {};
  private readonly messages = new Map<string, Message>();
  private readonly skipped: Record<string, number> = {};
  private anonymous = 0;
  /** A `.jsonl` log's last line, when it was cut mid-write and left out. */
  readonly cut: CutNote = {};

  header(key: string, value: unknown): void {
    if (key === "sessionId" && typeof value === "string" && value !== "") this.sessionId = value;
    else if (
      ["projectHash", "startTime", "lastUpdated", "summary", "kind", "cwd", "version", "gitBranch"].includes(key) &&
      typeof value === "string"
    )
      this.headers[key] = value;
  }

  count(what: string, n = 1): void {
    this.skipped[what] = (this.skipped[what] ?? 0) + n;
  }

  rewind(id: string): void {
    const ids = [...this.messages.keys()];
    const at = ids.indexOf(id);
    for (const key of at < 0 ? ids : ids.slice(at)) this.messages.delete(key);
    this.count("rewind");
  }

  replace(): void {
    this.messages.clear();
    this.count("history_replaced");
  }

  upsert(raw: unknown, where: string, line?: number): void {
    if (!isRecord(raw)) throw new FieldError("messages", `${where}: expected a message object, got ${describeType(raw)}`, line);
    if (nestsTooDeep(raw)) throw new FieldError("messages", `${where}: nested deeper than ${MAX_JSON_DEPTH} levels`, line);
    if (typeof raw.type !== "string")
      throw new FieldError("type", `${where}: "type": expected a string, got ${describeType(raw.type)}`, line);
    const text = contentText(raw.content);
    if (text === undefined)
      throw new FieldError("content", `${where}: "content": expected a string or Gemini parts, got ${describeType(raw.content)}`, line);
    const calls = raw.toolCalls ?? [];
    if (!Array.isArray(calls))
      throw new FieldError("toolCalls", `${where}: "toolCalls": expected an array, got ${describeType(calls)}`, line);
    calls.forEach((call, i) => {
      if (!isRecord(call))
        throw new FieldError("toolCalls", `${where}: "toolCalls[${i}]": expected an object, got ${describeType(call)}`, line);
      if (typeof call.name !== "string" || call.name === "")
        throw new FieldError("toolCalls.name", `${where}: "toolCalls[${i}].name": expected a string, got ${describeType(call.name)}`, line);
    });
    const thoughts: string[] = [];
    if (Array.isArray(raw.thoughts))
      for (const thought of raw.thoughts)
        if (isRecord(thought)) {
          const parts = [thought.subject, thought.description].filter((p): p is string => typeof p === "string" && p.trim() !== "");
          if (parts.length > 0) thoughts.push(parts.join(": "));
        }
    const tokens = isRecord(raw.tokens) && typeof raw.tokens.total === "number" ? raw.tokens.total : undefined;
    const id = typeof raw.id === "string" ? raw.id : `#${this.anonymous++}`;
    this.messages.set(id, {
      type: raw.type,
      text,
      thoughts,
      model: typeof raw.model === "string" ? raw.model : undefined,
      calls: calls as Record<string, unknown>[],
      tokens,
      where,
      line,
    });
  }

  finish(path: string, domain: Domain | undefined): ReadItem {
    const turns: Turn[] = [];
    const tools: string[] = [];
    const models: Record<string, number> = {};
    let task: string | undefined;
    let userMessages: string[] = [];
    let assistantMessages: string[] = [];
    let tokens = 0;
    let lastReply: string | undefined;
    for (const message of this.messages.values()) {
      if (message.tokens !== undefined) tokens += message.tokens;
      if (message.type === "user") {
        const text = message.text.trim();
        if (task === undefined && text !== "" && !text.startsWith("/")) task = text;
        else if (text !== "") userMessages.push(text);
        lastReply = undefined;
        continue;
      }
      if (message.type !== "gemini") {
        this.count(`${message.type}_message`);
        continue;
      }
      if (message.model !== undefined) models[message.model] = (models[message.model] ?? 0) + 1;
      const reasoning = [...message.thoughts, message.text.trim()].filter((part) => part !== "");
      let thinkingGiven = false;
      let answered = 0;
      for (const call of message.calls) {
        const name = call.name as string;
        const observation = callObservation(call);
        if (observation === undefined) {
          this.count("call_without_result");
          continue;
        }
        answered += 1;
        tools.push(name);
        const turn: Turn = { action: callAction(call), observation: observation === "" ? emptyObservation(name, call) : observation };
        if (!thinkingGiven && reasoning.length > 0) turn.thinking = reasoning.join("\n\n");
        thinkingGiven = true;
        const meta: Record<string, unknown> = { tool: name };
        if (typeof call.status === "string") meta.status = call.status;
        if (call.status === "error") meta.is_error = true;
        if (message.calls.length > 1) meta.calls_in_message = message.calls.length;
        if (userMessages.length > 0) meta.user_messages = userMessages;
        if (assistantMessages.length > 0) meta.assistant_messages = assistantMessages;
        userMessages = [];
        assistantMessages = [];
        turn.meta = meta;
        turns.push(turn);
      }
      if (answered === 0 && reasoning.length > 0) {
        assistantMessages.push(reasoning.join("\n\n"));
        lastReply = message.text.trim() || undefined;
      } else if (answered > 0) lastReply = undefined;
    }
    const id = this.sessionId ?? fileStem(path, /\.jsonl?$/i);
    const source = { uri: path, format: FORMAT };
    const meta: Record<string, unknown> = { agent: this.agent };
    if (turns.length === 0) {
      // A chat: well-formed, nothing to train a world model on; filtered with its reason.
      const counts = Object.entries(this.skipped).map(([key, n]) => `${n} ${key}`);
      const what = [
        task !== undefined ? `the prompt ${JSON.stringify(task.slice(0, 200))}` : "no prompt",
        `${this.messages.size} messages`,
        ...counts,
      ];
      meta.read_filter = {
        stage: "no-tool-calls",
        reason: `no tool call with a result in the session (${what.join(", ")}): a chat without actions`,
      };
    }
    const ranked = Object.entries(models).sort((a, b) => b[1] - a[1]);
    if (ranked[0]) meta.model = ranked[0][0];
    if (ranked.length > 1) meta.models = Object.fromEntries(ranked);
    meta.session_id = id;
    const names: Record<string, string> = {
      projectHash: "project_hash",
      startTime: "start_time",
      lastUpdated: "last_updated",
      summary: "summary",
      kind: "kind",
      cwd: "cwd",
      version: "version",
      gitBranch: "git_branch",
    };
    for (const [key, name] of Object.entries(names)) if (this.headers[key] !== undefined) meta[name] = this.headers[key];
    if (tokens > 0) meta.tokens = tokens;
    if (lastReply !== undefined) meta.final_message = lastReply;
    if (Object.keys(this.skipped).length > 0) meta.skipped = this.skipped;
    Object.assign(meta, truncatedLineMeta(this.cut));
    return {
      kind: "trajectory",
      trajectory: {
        id,
        domain: domain ?? inferGeminiDomain(tools),
        source,
        ...(this.system !== undefined ? { system: this.system } : {}),
        ...(task !== undefined ? { task } : {}),
        turns,
        meta,
      },
    };
  }
}

/** A content value's text: a string, a part, or a list of parts (text joined; others as `[kind]`). */
function contentText(content: unknown): string | undefined {
  if (content === undefined || content === null) return "";
  if (typeof content === "string") return content;
  const parts = Array.isArray(content) ? content : [content];
  const out: string[] = [];
  for (const part of parts) {
    if (typeof part === "string") out.push(part);
    else if (isRecord(part)) {
      if (part.thought === true) continue;
      if (typeof part.text === "string") out.push(part.text);
      else out.push(`[${Object.keys(part)[0] ?? "part"}]`);
    } else return undefined;
  }
  return out.join("\n");
}

function callAction(call: Record<string, unknown>): string {
  const name = call.name as string;
  const args = isRecord(call.args) ? call.args : {};
  if (SHELL_TOOLS.has(name) && typeof args.command === "string") return args.command;
  return `${name} ${JSON.stringify(call.args ?? {})}`;
}

/** The call's result text, or undefined when it has none (never ran). */
function callObservation(call: Record<string, unknown>): string | undefined {
  const result = call.result;
  if (result !== undefined && result !== null) {
    const parts = Array.isArray(result) ? result : [result];
    const out: string[] = [];
    for (const part of parts) {
      if (typeof part === "string") out.push(part);
      else if (isRecord(part) && isRecord(part.functionResponse)) {
        const response = part.functionResponse.response;
        if (isRecord(response) && typeof response.output === "string") out.push(response.output);
        else if (isRecord(response) && typeof response.error === "string") out.push(response.error);
        else if (response !== undefined) out.push(JSON.stringify(response));
      } else if (isRecord(part) && typeof part.text === "string") out.push(part.text);
      else if (isRecord(part)) out.push(`[${Object.keys(part)[0] ?? "part"}]`);
    }
    if (out.length > 0) return out.join("\n");
  }
  if (typeof call.resultDisplay === "string" && call.resultDisplay !== "") return call.resultDisplay;
  return undefined;
}

function emptyObservation(name: string, call: Record<string, unknown>): string {
  return SHELL_TOOLS.has(name) && call.status !== "error" ? "[exit code 0, no output]" : "[no output]";
}

const SHELL_TOOLS = new Set(["run_shell_command"]);
const EDIT_TOOLS = new Set(["write_file", "replace", "edit", "smart_edit"]);
const FILE_TOOLS = new Set(["read_file", "read_many_files", "list_directory", "glob", "search_file_content", "grep", "grep_search", "ls"]);
const NEUTRAL_TOOLS = new Set([
  "save_memory",
  "write_todos",
  "delegate_to_agent",
  "codebase_investigator",
  "activate_skill",
  "ask_user",
  // Qwen Code's own.
  "todo_write",
  "task",
  "exit_plan_mode",
  "skill",
]);
/** gemini-cli's Google search, Qwen Code's web search. */
const SEARCH_TOOLS = new Set(["google_web_search", "web_search"]);
const BUILT_IN = new Set([...SHELL_TOOLS, ...EDIT_TOOLS, ...FILE_TOOLS, ...NEUTRAL_TOOLS, ...SEARCH_TOOLS, "web_fetch"]);

/** The domain of a session from the tools it called (see the reader's comment). */
export function inferGeminiDomain(tools: readonly string[]): Domain {
  const share = (test: (tool: string) => boolean) => tools.filter(test).length / Math.max(tools.length, 1);
  if (share((tool) => !BUILT_IN.has(tool)) > 0.5) return "mcp";
  if (share((tool) => tool === "web_fetch" || SEARCH_TOOLS.has(tool)) > 0.5)
    return share((tool) => SEARCH_TOOLS.has(tool)) > 0.5 ? "search" : "web";
  if (tools.some((tool) => EDIT_TOOLS.has(tool) || FILE_TOOLS.has(tool))) return "swe";
  if (tools.some((tool) => SHELL_TOOLS.has(tool))) return "terminal";
  return "swe";
}
