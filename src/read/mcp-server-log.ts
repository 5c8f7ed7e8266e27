import { createHash } from "node:crypto";
import type { SourceRef } from "../core/trajectory.ts";
import { openDecompressed } from "../io/open-input.ts";
import { readLines } from "../io/read-lines.ts";
import { type CutNote, isCutJson, type TruncatedLine, truncatedLineMeta, withoutCutLastLine } from "./cut-last-line.ts";
import { isRpcObject, type McpMessage, type McpSender, McpTranscriptError, pairMcpTurns } from "./mcp-pairing.ts";
import { excerpt, firstLine, type LineSource, oversizedLineItem, type Reader, type ReaderOptions, type ReadItem } from "./reader.ts";
import { fileStem, MAX_JSON_DEPTH, nestsTooDeep } from "./record-helpers.ts";

/**
 * Claude Desktop MCP logs (`~/Library/Logs/Claude/mcp-server-<name>.log`, `mcp.log`; Windows
 * `%APPDATA%\Claude\logs\`). Each line the host writes is
 * `<ISO time>Z [<server>] [<level>] <text>` (mcp.log also has `[<level>] [<server>]`), with an
 * optional ` { metadata: … }` tail in newer versions; the traffic is
 * `Message from client: {json}` / `Message from server: {json}`. Everything else is context:
 * host events (`Initializing server...`, `Server started and connected successfully`,
 * `Server transport closed`, `Server disconnected…`) and the server's own stderr, copied in as
 * raw lines without the prefix.
 *
 * Records: one trajectory per server session — a client `initialize` request starts a new session
 * of that server, and the host's `Initializing server...` (a restart) ends the one before (mcp.log
 * interleaves several servers: each has its own sessions); messages before
 * the first `initialize` (a rotated log) are a session of their own, with meta `partial_start`.
 * Turns come from the shared MCP pairing (mcp-pairing.ts, the mcp-jsonrpc convention): action =
 * the client request (`initialize`, `tools/list`, `tools/call`, …), observation = the server's
 * reply with that id (result or JSON-RPC error), canonical JSON; notifications are counted.
 * Task: none (the log holds no user prompt). Domain: mcp. Meta: `agent` = the client's
 * `clientInfo.name` from `initialize` (e.g. `claude-ai`), `mcp_server` (the log's server name and
 * the reply's `serverInfo`), `server_log` (first and last time, line counts, the host's `[error]`
 * lines, the server's stderr line count), and the pairing counts. A session with a message line
 * that is not JSON, or no client request, is quarantined whole (reason names the line) — except
 * when that line is the file's last and was cut while Claude Desktop wrote it (its JSON never
 * closes, cut-last-line.ts) after a message of the same session: the session is read without it,
 * with `meta.truncated_line`. A line over `input.max_line_bytes` is quarantined on its own and
 * counted in its session's `oversized_lines`.
 */

const FORMAT = "mcp-server-log";

const LEVELS = new Set(["info", "error", "warn", "warning", "debug", "trace"]);
const PREFIX = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z) \[([^\]]+)\] \[([^\]]+)\] ?(.*)$/;
const MESSAGE = /^Message from (client|server): ([\s\S]*)$/;
const CLAUDE_PHRASE =
  /\] (Message from (client|server): |Initializing server|Server started and connected|Server transport closed|Client transport closed)/;
/** The tail newer Claude Desktop versions print after the JSON (never valid inside JSON text). */
const METADATA_TAIL = / \{ metadata: [\s\S]*$/;
const MAX_ERRORS_KEPT = 5;

interface LogLine {
  time: string;
  server: string;
  level: string;
  text: string;
}

/** Splits a Claude Desktop log line into time, server, level and text, or undefined for a raw line. */
export function parseClaudeLogLine(line: string): LogLine | undefined {
  const match = PREFIX.exec(line.replace(/\r$/, ""));
  if (!match) return undefined;
  const [, time, first, second, text] = match as unknown as [string, string, string, string, string];
  // mcp.log writes `[level] [server]` in some versions, per-server logs `[server] [level]`.
  const levelFirst = LEVELS.has(first.toLowerCase()) && !LEVELS.has(second.toLowerCase());
  return { time, server: levelFirst ? second : first, level: (levelFirst ? first : second).toLowerCase(), text };
}

interface Session {
  server: string;
  ordinal: number;
  source: LineSource;
  messages: McpMessage[];
  hash: ReturnType<typeof createHash>;
  partialStart: boolean;
  firstTime: string;
  lastTime: string;
  lines: number;
  stderrLines: number;
  oversizedLines: number;
  errors: string[];
  errorLines: number;
  failure?: { reason: string; field?: string; excerpt: string; source: LineSource };
  /** The file's last line, when it was a message of this session cut mid-write (left out). */
  cut: CutNote;
}

export const mcpServerLogReader: Reader = {
  name: FORMAT,
  domain: "mcp",
  description:
    "Claude Desktop MCP logs (mcp-server-<name>.log, mcp.log): Message from client/server lines → one trajectory per server session",

  sniff(head) {
    const line = firstLine(head.replace(/^\uFEFF/, ""));
    return parseClaudeLogLine(line) !== undefined && CLAUDE_PHRASE.test(head);
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    let items = 0;
    for await (const item of readSessions(path, options)) {
      items += 1;
      yield item;
    }
    // Text with no "Message from" line of a known shape (e.g. old Mac line ends make it one line): one quarantine entry.
    if (items === 0 && (await hasText(path, options)))
      yield {
        kind: "quarantine",
        entry: {
          source: { uri: path, line: 1, format: FORMAT },
          stage: "read",
          reason: 'no MCP session in the file: no line of the form "<time> [<server>] [<level>] Message from client|server: {…}"',
        },
      };
  },
};

/** True when the file has a non-blank line. */
async function hasText(path: string, options: ReaderOptions): Promise<boolean> {
  const { stream } = await openDecompressed(path);
  try {
    for await (const line of readLines(stream, options.maxLineBytes))
      if (line.oversizedBytes !== undefined || line.text.trim() !== "") return true;
    return false;
  } finally {
    stream.destroy();
  }
}

/** The file's sessions, as the reader yields them (nothing for a file with none). */
async function* readSessions(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
  const stem = fileStem(path, /\.(log|txt)$/i);
  const open = new Map<string, Session>();
  const ordinals = new Map<string, number>();
  let last: Session | undefined;
  const start = (server: string, source: LineSource, time: string, partialStart: boolean): Session => {
    const ordinal = (ordinals.get(server) ?? 0) + 1;
    ordinals.set(server, ordinal);
    const session: Session = {
      server,
      ordinal,
      source,
      messages: [],
      hash: createHash("sha256"),
      partialStart,
      firstTime: time,
      lastTime: time,
      lines: 0,
      stderrLines: 0,
      oversizedLines: 0,
      errors: [],
      errorLines: 0,
      cut: {},
    };
    open.set(server, session);
    return session;
  };
  // The file's last line, when it is a message cut mid-write and its session has a message before it.
  const cut: CutNote = {};
  let cutSession: Session | undefined;
  const cutMessage = (line: LogItem): TruncatedLine | undefined => {
    const parsed = line.kind === "line" ? parseClaudeLogLine(line.text) : undefined;
    const message = parsed ? MESSAGE.exec(parsed.text) : undefined;
    const session = parsed ? open.get(parsed.server) : undefined;
    if (line.kind !== "line" || !message || !session || session.messages.length === 0 || session.failure) return undefined;
    if (!isCutJson(message[2] as string) || line.source.line === undefined) return undefined;
    cutSession = session;
    return { line: line.source.line, bytes: Buffer.byteLength(line.text) };
  };
  for await (const line of withoutCutLastLine(logLines(path, options), cutMessage, cut)) {
    if (line.kind === "quarantine") {
      if (last) last.oversizedLines += 1;
      yield line;
      continue;
    }
    const parsed = parseClaudeLogLine(line.text);
    if (!parsed) {
      // The server's own stderr (or a multi-line host entry): context of the session last written to.
      if (last) {
        last.stderrLines += 1;
        last.lines += 1;
      }
      continue;
    }
    const message = MESSAGE.exec(parsed.text);
    let session = open.get(parsed.server);
    if (message) {
      const sender = message[1] as McpSender;
      const value = parseMessage(message[2] as string);
      const isInitialize = sender === "client" && isRpcObject(value) && value.method === "initialize" && "id" in value;
      if (isInitialize && session && session.messages.length > 0) {
        yield finish(session, stem, options);
        session = undefined;
      }
      session ??= start(parsed.server, line.source, parsed.time, !isInitialize);
      const where = `line ${line.source.line ?? "?"}`;
      if (!session.failure) {
        if (typeof value === "string") session.failure = { reason: `${where}: ${value}`, excerpt: excerpt(line.text), source: line.source };
        else if (!isRpcObject(value) || value.jsonrpc !== "2.0")
          session.failure = {
            reason: `${where}: "Message from ${sender}" is not a JSON-RPC 2.0 message (no "jsonrpc": "2.0")`,
            field: "jsonrpc",
            excerpt: excerpt(line.text),
            source: line.source,
          };
        else session.messages.push({ sender, message: value, raw: JSON.stringify(value), where });
      }
      session.hash.update(`${sender}\u0000${message[2]}\n`);
    } else if (session && /^Initializing server\b/.test(parsed.text) && (session.messages.length > 0 || session.failure)) {
      // The host starts the server again: a new process, so a new session from its next message on.
      open.delete(parsed.server);
      last = undefined;
      yield finish(session, stem, options);
      continue;
    } else if (!session) {
      // Host events before the first message of a server (Initializing server, Server started): no session yet.
      last = undefined;
      continue;
    } else if (parsed.level === "error") {
      session.errorLines += 1;
      if (session.errors.length < MAX_ERRORS_KEPT) session.errors.push(excerpt(parsed.text));
    }
    session.lines += 1;
    session.lastTime = parsed.time;
    last = session;
  }
  if (cutSession && cut.truncated) cutSession.cut.truncated = cut.truncated;
  for (const session of open.values()) if (session.messages.length > 0 || session.failure) yield finish(session, stem, options);
}

type LogItem = { kind: "line"; text: string; source: LineSource } | Extract<ReadItem, { kind: "quarantine" }>;

/** The file's non-empty lines (a text log: not recordLines, which reads JSON lines); an over-long line as its quarantine item. */
async function* logLines(path: string, options: ReaderOptions): AsyncGenerator<LogItem> {
  const { stream } = await openDecompressed(path);
  for await (const line of readLines(stream, options.maxLineBytes)) {
    const source: LineSource = { uri: path, line: line.lineNo, offset: line.offset, format: FORMAT };
    if (line.oversizedBytes !== undefined) yield oversizedLineItem(source, line.oversizedBytes, options.maxLineBytes);
    else if (line.text.trim() !== "") yield { kind: "line", text: line.text, source };
  }
}

/** The JSON of a message line (without the ` { metadata: … }` tail), or why it is not JSON. */
function parseMessage(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    const trimmed = text.replace(METADATA_TAIL, "");
    try {
      value = JSON.parse(trimmed);
    } catch (err) {
      return `invalid JSON after "Message from …:": ${(err as Error).message}`;
    }
  }
  // Messages are written back as JSON text.
  if (nestsTooDeep(value)) return `JSON nested deeper than ${MAX_JSON_DEPTH} levels`;
  return value;
}

function finish(session: Session, stem: string, options: ReaderOptions): ReadItem {
  const id = `${stem}-${session.server}-${session.ordinal}-${session.hash.digest("hex").slice(0, 12)}`;
  const source: SourceRef = session.source;
  if (session.failure) {
    const { reason, field, excerpt: text, source: at } = session.failure;
    return {
      kind: "quarantine",
      entry: {
        source: at,
        id,
        stage: "read",
        ...(field ? { field } : {}),
        reason: `server "${session.server}" session ${session.ordinal}, ${reason}`,
        excerpt: text,
      },
    };
  }
  try {
    const { turns, stats } = pairMcpTurns(session.messages);
    if (turns.length === 0)
      throw new McpTranscriptError(
        `server "${session.server}" session ${session.ordinal}: no client request in the session: nothing to pair with a reply`,
      );
    const init = session.messages.find((m) => m.sender === "client" && m.message.method === "initialize");
    const initReply = init
      ? session.messages.find(
          (m) => m.sender === "server" && JSON.stringify(m.message.id) === JSON.stringify(init.message.id) && "result" in m.message,
        )
      : undefined;
    const clientInfo = isRpcObject(init?.message.params) ? init.message.params.clientInfo : undefined;
    const agent = isRpcObject(clientInfo) && typeof clientInfo.name === "string" ? clientInfo.name : undefined;
    const serverInfo = isRpcObject(initReply?.message.result) ? initReply.message.result.serverInfo : undefined;
    return {
      kind: "trajectory",
      trajectory: {
        id,
        domain: options.domain ?? "mcp",
        source,
        turns,
        meta: {
          ...(agent !== undefined ? { agent } : {}),
          mcp_server: { name: session.server, ...(isRpcObject(serverInfo) ? { server_info: serverInfo } : {}) },
          server_log: {
            session: session.ordinal,
            first_time: session.firstTime,
            last_time: session.lastTime,
            lines: session.lines,
            stderr_lines: session.stderrLines,
            error_lines: session.errorLines,
            ...(session.errors.length > 0 ? { errors: session.errors } : {}),
            ...(session.oversizedLines > 0 ? { oversized_lines: session.oversizedLines } : {}),
            ...(session.partialStart ? { partial_start: true } : {}),
          },
          ...stats,
          ...truncatedLineMeta(session.cut),
        },
      },
    };
  } catch (err) {
    if (!(err instanceof McpTranscriptError)) throw err;
    const reason = err.message.startsWith("server ")
      ? err.message
      : `server "${session.server}" session ${session.ordinal}, ${err.message}`;
    return { kind: "quarantine", entry: { source, id, stage: "read", reason } };
  }
}
