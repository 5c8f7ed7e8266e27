import type { SourceRef } from "../core/trajectory.ts";
import { openDecompressed } from "../io/open-input.ts";
import { readWholeText } from "../io/read-whole-text.ts";
import { baseName, beside, sideFileSize } from "../io/side-files.ts";
import { isSqliteHead } from "./agent-log/sqlite-snapshot.ts";
import { layoutOfHead, readHead } from "./json-array.ts";
import { JsonSyntaxError, selectJson } from "./json-select.ts";
import { databaseCompanions, readOpenCodeDatabase } from "./opencode-db.ts";
import {
  checkInfo,
  checkPart,
  fromV1,
  isV1Message,
  type OpenCodeMessage,
  OpenCodeProblem,
  OpenCodeSessionBuilder,
} from "./opencode-session.ts";
import { anchorOf, jsonFiles, normalized, type SessionFiles, type StorageKind, sessionFilesOf, storageId } from "./opencode-storage.ts";
import type { Companions, Reader, ReaderOptions, ReadItem } from "./reader.ts";
import { describeType, FieldError, fileStem, isRecord, jsonObjectLines } from "./record-helpers.ts";

const FORMAT = "opencode";

/*
 * OpenCode sessions (sst/opencode, now anomalyco/opencode; the message schema is
 * `packages/opencode/src/session/message-v2.ts`). One session = one trajectory, id = the session
 * id (`ses_…`). Read from:
 *
 * - **`opencode export [sessionID]`**: one pretty-printed document `{info: Session, messages:
 *   [{info, parts}], todos?}`, streamed message by message; the same documents one per line
 *   (`jq -c`) are one session per line; the server's `GET /session/:id/message` answer (a JSON
 *   array of `{info, parts}`) is one session.
 * - **the storage folder** (`~/.local/share/opencode/storage/`, OpenCode 0.4 – 1.1; and the older
 *   per-project `project/<dir>/storage/session/`: src/read/opencode-storage.ts): a session is its
 *   session file with its message files and their part files. The session file is the record;
 *   its messages' and parts' folders and its diff, todo and share files are its companions, and a
 *   message or part file given as an input stands for the session file (`expand`), so a glob over
 *   the whole folder reads each session once. A session whose session file is missing is read
 *   from its first message file.
 * - **the SQLite database** of OpenCode ≥ 1.2 (`~/.local/share/opencode/opencode.db`, and its
 *   `-wal` beside it): each session's rows rebuilt as an export's (src/read/opencode-db.ts). Told by
 *   its tables (`detectFormat`); any other SQLite file is refused at detection.
 *
 * The turns (src/read/opencode-session.ts):
 * - **Action**: each tool part in message order: `bash` → its `command`; any other tool (read,
 *   edit, write, grep, glob, list, webfetch, task, todowrite, MCP tools `<server>_<tool>`, …) →
 *   `name {input as JSON}`.
 * - **Observation**: `state.output` of a completed call (bash's `<stdout>`/`<stderr>` framing of
 *   OpenCode ≤ 0.3 taken off; attachments as `[image]` / `[file: name]`; nothing printed →
 *   `[exit code N, no output]` for bash, `[no output]` else; `metadata.exit` → `turn.meta.exit_code`).
 *   `status: error` → the error text, `turn.meta.is_error`. Not turns, counted in `meta.skipped`:
 *   `pending` / `running` calls (the session was interrupted), calls the user's permission
 *   settings or answer refused (`denied_call`; a refusal with feedback puts the feedback in the
 *   next turn's `meta.user_messages`), and calls aborted before any output (`aborted_call`; an
 *   aborted command's partial output is a turn with `turn.meta.interrupted`).
 * - **Thinking**: the assistant's reasoning and text parts since the previous call.
 * - **Task**: the first user message's text (OpenCode's `synthetic` / `ignored` text — file
 *   contents it read for an `@` mention — left out); later user messages are the next turn's
 *   `turn.meta.user_messages`. A compaction (its `compaction` part and the `summary: true`
 *   assistant message) is counted, not read. A revert still pending (`session.revert`) hides the
 *   messages after it, as OpenCode does (counted).
 * - **Sub-agents**: a `task` call's child session (`parentID` = this session) is a trajectory of
 *   its own (`meta.parent_session_id`); the call's turn names it (`turn.meta.child_session_id`)
 *   and observes the sub-agent's answer.
 * - **Domain** (unless `--domain`): mostly MCP tools → mcp; mostly webfetch / websearch → web /
 *   search; any edit or file tool → swe; bash only → terminal; else swe.
 * - **Meta**: `agent: "opencode"`, `session_id`, `title`, `version`, `project_id`, `directory`,
 *   `parent_session_id`, `model` / `provider` (the most used; all in `models`), `mode` (the
 *   OpenCode agent: build, plan, …), `cwd`, `cost`, `tokens`, `assistant_errors`,
 *   `final_message` (the last assistant text with no call after it), `skipped`. No outcome: the
 *   format records none.
 *
 * Quarantined (one entry for the session, naming the file and the JSON path of the field): a file
 * that is not JSON, over `input.max_line_bytes` (storage files are read whole), a message whose
 * `info` / role / parts have the wrong type, a part without a type, a tool part without a tool
 * name or with an unknown state; a storage file whose session's messages are not beside it. A
 * session with no answered call (a chat) is yielded without turns and with `meta.read_filter`
 * (`no-tool-calls`), as gemini-cli's.
 */
export const openCodeReader: Reader = {
  name: FORMAT,
  domain: "from the tools",
  description:
    "OpenCode sessions: `opencode export` documents, the storage folder (session/, message/, part/ JSON files) and OpenCode ≥ 1.2's SQLite database (opencode.db): tool parts → their state.output",

  sniff(head) {
    return headKind(head) !== undefined;
  },

  async expand(path: string): Promise<string[] | undefined> {
    const located = await locate(path);
    if (!located || located.kind === "session") return undefined;
    const anchor = await anchorOf(located.files);
    return anchor !== undefined && anchor !== normalized(path) ? [anchor] : undefined;
  },

  async companions(path: string): Promise<Companions> {
    if (isSqliteHead(await readHead(path))) return databaseCompanions(path);
    const own = (await sideFileSize(normalized(path))) ?? 0;
    const alone: Companions = { dirs: [], files: [], bytes: own, label: `OpenCode file ${baseName(path)}` };
    const located = await locate(path);
    if (!located) return alone;
    const { files } = located;
    if ((await anchorOf(files)) !== normalized(path)) return alone;
    const messages = await jsonFiles(files.messageDir);
    const dirs = [files.messageDir, ...(files.partRoot ? [files.partRoot] : []), ...files.sideDirs];
    let bytes = own + messages.reduce((sum, file) => sum + file.bytes, 0);
    if (!files.sessionFile) bytes -= own;
    for (const message of messages) {
      const id = storageId(message.name) as string;
      const dir = files.partDir(id);
      if (!files.partRoot) dirs.push(dir);
      bytes += (await jsonFiles(dir)).reduce((sum, file) => sum + file.bytes, 0);
    }
    return { dirs, files: files.sideFiles, bytes, label: `OpenCode session ${files.sessionID}` };
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    if (options.range && options.range.start > 0) return;
    const head = await readHead(path);
    if (isSqliteHead(head)) {
      yield* readOpenCodeDatabase(path, options);
      return;
    }
    const kind = headKind(head);
    const source: SourceRef = { uri: path, format: FORMAT };
    if (kind === "session" || kind === "message" || kind === "part") {
      yield await readStorage(path, kind, head, options);
      return;
    }
    if (kind === undefined) {
      const reason =
        "not an OpenCode session: expected an `opencode export` document ({info, messages}), an array of {info, parts} messages, or a storage file (session, message or part JSON with ses_/msg_/prt_ ids)";
      yield { kind: "quarantine", entry: { source, stage: "read", reason } };
      return;
    }
    if (layoutOfHead(head).kind === "lines") {
      yield* readExportLines(path, options);
      return;
    }
    yield await readExport(path, options);
  },
};

type HeadKind = "export" | "messages" | StorageKind;

const FIRST_ID = /"id"\s*:\s*"(ses|msg|prt)_/;
const SESSION_REF = /"sessionID"\s*:\s*"ses_/;

/**
 * What an OpenCode file is, told by its start: an export (`{"info": {… "id": "ses_…"`), a
 * messages array, or a storage file, by the prefix of the first `"id"` in it (a session file's
 * own id comes first; a message's parts follow its info).
 */
function headKind(rawHead: string): HeadKind | undefined {
  const text = rawHead.replace(/^\uFEFF/, "").trimStart();
  if (text.startsWith("[")) {
    if (!/^\[\s*\{\s*"info"\s*:\s*\{/.test(text)) return undefined;
    return FIRST_ID.exec(text)?.[1] === "msg" && SESSION_REF.test(text) ? "messages" : undefined;
  }
  if (!text.startsWith("{")) return undefined;
  const first = FIRST_ID.exec(text)?.[1];
  if (/^\{\s*"info"\s*:\s*\{/.test(text)) return first === "ses" ? "export" : undefined;
  if (first === "prt") return /"messageID"\s*:\s*"msg_/.test(text) && /"type"\s*:\s*"/.test(text) ? "part" : undefined;
  if (first === "msg") {
    if (!/"role"\s*:\s*"(user|assistant)"/.test(text)) return undefined;
    // A MessageV1 names its session at its end, after its inline parts.
    const v1 = /"parts"\s*:\s*\[/.test(text) && /"type"\s*:\s*"(text|tool-invocation|step-start|reasoning|file)"/.test(text);
    return SESSION_REF.test(text) || v1 ? "message" : undefined;
  }
  if (first === "ses")
    return /"time"\s*:\s*\{/.test(text) && /"(title|version|projectID|directory)"\s*:/.test(text) ? "session" : undefined;
  return undefined;
}

/** A storage file's kind and its session's files, or undefined for any other file (or one out of its folder). */
async function locate(path: string): Promise<{ kind: StorageKind; files: SessionFiles } | undefined> {
  const head = await readHead(path);
  const kind = headKind(head);
  if (kind !== "session" && kind !== "message" && kind !== "part") return undefined;
  const sessionID = /"sessionID"\s*:\s*"(ses_[^"\\]+)"/.exec(head)?.[1];
  const files = await sessionFilesOf(path, kind, sessionID);
  return files ? { kind, files } : undefined;
}

async function readJsonFile(path: string, name: string, maxBytes: number): Promise<unknown> {
  const read = await readWholeText(path, maxBytes);
  if ("error" in read) throw new FieldError(undefined, `${name}: ${read.error}`);
  try {
    return JSON.parse(read.text.replace(/^\uFEFF/, ""));
  } catch (err) {
    throw new FieldError(undefined, `${name}: invalid JSON: ${(err as Error).message}`);
  }
}

/** A message read from storage: the message file, and its part files unless its parts are inline. */
async function storageMessage(files: SessionFiles, fileName: string, maxBytes: number): Promise<OpenCodeMessage> {
  const id = storageId(fileName) as string;
  const name = `message/${files.sessionID}/${fileName}`;
  const raw = await readJsonFile(beside(files.messageDir, fileName), name, maxBytes);
  try {
    if (!isRecord(raw)) throw new OpenCodeProblem("info", `expected a message object, got ${describeType(raw)}`);
    raw.id ??= id;
    if (isV1Message(raw)) return fromV1(raw, "");
    if (Array.isArray(raw.parts)) {
      // OpenCode 0.2's V2 messages kept their parts inline for a while; a tool part's id was its call id.
      const parts = raw.parts.map((part, i) => {
        const checked = checkPart(part, `parts.${i}`);
        return checked.type === "tool" && checked.callID === undefined ? { ...checked, callID: checked.id } : checked;
      });
      const { parts: _inline, ...info } = raw;
      return { info: checkInfo(info, ""), parts };
    }
    const info = checkInfo(raw, "");
    const parts: Record<string, unknown>[] = [];
    const dir = files.partDir(id);
    const partName = files.layout === "global" ? `part/${id}` : `part/${files.sessionID}/${id}`;
    for (const part of await jsonFiles(dir)) {
      const label = `${partName}/${part.name}`;
      const value = await readJsonFile(beside(dir, part.name), label, maxBytes);
      try {
        if (isRecord(value)) value.id ??= storageId(part.name);
        parts.push(checkPart(value, ""));
      } catch (err) {
        if (err instanceof OpenCodeProblem) throw new FieldError(err.field, `${label}: ${err.message}`);
        throw err;
      }
    }
    return { info, parts };
  } catch (err) {
    if (err instanceof OpenCodeProblem) throw new FieldError(err.field, `${name}: ${err.message}`);
    throw err;
  }
}

async function readStorage(path: string, kind: StorageKind, head: string, options: ReaderOptions): Promise<ReadItem> {
  const source: SourceRef = { uri: path, format: FORMAT };
  const sessionID = /"sessionID"\s*:\s*"(ses_[^"\\]+)"/.exec(head)?.[1];
  const files = await sessionFilesOf(path, kind, sessionID);
  const fallbackId = files?.sessionID ?? (kind === "session" ? storageId(baseName(path)) : sessionID) ?? fileStem(path, /\.json$/i);
  if (!files) {
    const where =
      kind === "session"
        ? `its messages are kept in storage/message/${fallbackId}/ beside storage/session/<project>/, not found from here`
        : "it is not inside an OpenCode storage folder (message/<session>/ or part/<message>/), so its session cannot be found";
    const reason = `an OpenCode ${kind} file read alone: ${where}; give the storage folder (or the session file inside it), or export the session with \`opencode export ${fallbackId}\``;
    return { kind: "quarantine", entry: { source, id: fallbackId, stage: "read", reason } };
  }
  const builder = new OpenCodeSessionBuilder();
  try {
    if (files.sessionFile) {
      const fileName = baseName(files.sessionFile);
      const name = files.layout === "global" ? `session/${baseName(beside(files.sessionFile, ".."))}/${fileName}` : `info/${fileName}`;
      const info = await readJsonFile(files.sessionFile, name, options.maxLineBytes);
      if (!isRecord(info)) throw new FieldError(undefined, `${name}: expected a session object, got ${describeType(info)}`);
      builder.sessionInfo(info);
    }
    const messages = await jsonFiles(files.messageDir);
    if (messages.length === 0)
      throw new FieldError(
        "messages",
        `no message files in message/${files.sessionID}/ beside the session: a session never prompted, or a storage folder copied without its messages`,
      );
    for (const message of messages) builder.message(await storageMessage(files, message.name, options.maxLineBytes));
  } catch (err) {
    if (!(err instanceof FieldError)) throw err;
    const id = builder.sessionId ?? fallbackId;
    return {
      kind: "quarantine",
      entry: { source, id, stage: "read", ...(err.field ? { field: err.field } : {}), reason: `OpenCode session ${id}: ${err.message}` },
    };
  }
  return builder.finish(source, fallbackId, options.domain);
}

/** One export document (or a messages array), streamed message by message. */
async function readExport(path: string, options: ReaderOptions): Promise<ReadItem> {
  const source: SourceRef = { uri: path, format: FORMAT };
  const builder = new OpenCodeSessionBuilder();
  // A list of messages: the export's `messages` (possibly empty: a session never prompted), or the file's root array.
  let sawList = false;
  try {
    const { stream } = await openDecompressed(path);
    for await (const { path: at, value } of selectJson(stream, (p, kind) => {
      if (p.length === 1 && (typeof p[0] === "number" || (p[0] === "messages" && kind === "array"))) sawList = true;
      return (
        (p.length === 1 && (p[0] === "info" || typeof p[0] === "number" || (p[0] === "messages" && kind !== "array"))) ||
        (p.length === 2 && p[0] === "messages")
      );
    })) {
      if (at[0] === "info") {
        if (!isRecord(value)) throw new OpenCodeProblem("info", `expected the session object, got ${describeType(value)}`);
        builder.sessionInfo(value);
        continue;
      }
      if (at.length === 1 && at[0] === "messages")
        throw new OpenCodeProblem("messages", `expected an array of {info, parts}, got ${describeType(value)}`);
      builder.message(exportMessage(value, at.length === 1 ? `${at[0]}` : `messages.${at[1]}`));
    }
    if (!sawList) throw new OpenCodeProblem("messages", "no messages list: not an `opencode export` document");
  } catch (err) {
    if (!(err instanceof OpenCodeProblem || err instanceof JsonSyntaxError)) throw err;
    const reason = err instanceof JsonSyntaxError ? `not an OpenCode export document: ${err.message}` : err.message;
    const field = err instanceof OpenCodeProblem ? err.field : undefined;
    return {
      kind: "quarantine",
      entry: { source, id: builder.sessionId ?? fileStem(path, /\.json$/i), stage: "read", ...(field ? { field } : {}), reason },
    };
  }
  return builder.finish(source, fileStem(path, /\.json$/i), options.domain);
}

/** An export's message `{info, parts}` checked, at its JSON path (`messages.3`). */
function exportMessage(value: unknown, at: string): OpenCodeMessage {
  if (!isRecord(value)) throw new OpenCodeProblem(at, `expected a message {info, parts}, got ${describeType(value)}`);
  const info = checkInfo(value.info, `${at}.info`);
  if (!Array.isArray(value.parts)) throw new OpenCodeProblem(`${at}.parts`, `expected an array, got ${describeType(value.parts)}`);
  return { info, parts: value.parts.map((part, i) => checkPart(part, `${at}.parts.${i}`)) };
}

/** Export documents one per line (`opencode export … | jq -c`): a session per line. */
async function* readExportLines(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
  const { range: _range, ...whole } = options;
  for await (const line of jsonObjectLines(path, whole, FORMAT)) {
    if (line.kind === "quarantine") {
      yield line;
      continue;
    }
    const { record, source } = line;
    const builder = new OpenCodeSessionBuilder();
    const fallback = `${fileStem(path, /\.jsonl?$/i)}-line${source.line}`;
    try {
      if (record.info !== undefined) {
        if (!isRecord(record.info)) throw new OpenCodeProblem("info", `expected the session object, got ${describeType(record.info)}`);
        builder.sessionInfo(record.info);
      }
      if (!Array.isArray(record.messages))
        throw new OpenCodeProblem("messages", `expected an array of {info, parts}, got ${describeType(record.messages)}`);
      record.messages.forEach((message, i) => {
        builder.message(exportMessage(message, `messages.${i}`));
      });
    } catch (err) {
      if (!(err instanceof OpenCodeProblem)) throw err;
      yield {
        kind: "quarantine",
        entry: {
          source,
          id: builder.sessionId ?? fallback,
          stage: "read",
          field: err.field,
          reason: `line ${source.line}: ${err.message}`,
        },
      };
      continue;
    }
    const item = builder.finish(source, fallback, options.domain);
    if (item.kind === "trajectory") item.trajectory.source = source;
    yield item;
  }
}
