import { createHash } from "node:crypto";
import { basename } from "node:path";
import type { SourceRef } from "../core/trajectory.ts";
import { readWholeText } from "../io/read-whole-text.ts";
import { jsonValueEnd, type TruncatedLine, truncatedLineMeta, withoutCutLastLineOfText } from "./cut-last-line.ts";
import {
  type McpMessage as Message,
  pairMcpTurns as pairTurns,
  type McpSender as Sender,
  McpTranscriptError as TranscriptError,
} from "./mcp-pairing.ts";
import { excerpt, firstLine, parseJsonLine, parseSniffedJson, type Reader, type ReaderOptions, type ReadItem } from "./reader.ts";
import { MAX_JSON_DEPTH, nestsTooDeep } from "./record-helpers.ts";

/**
 * MCP (JSON-RPC 2.0) transcripts. One file = one transcript = one trajectory. Two layouts:
 *
 * 1. Go-SDK conformance txtar: a comment (→ `task`), then `-- client --` and `-- server --`
 *    sections, each a stream of concatenated (pretty or compact) JSON values: what the client
 *    sent and what the server answered. Other sections (`-- tools --`) go to `meta.txtar_sections`.
 * 2. A message stream (`.jsonl`, or concatenated JSON values; a JSON array is a batch and is
 *    flattened), in wire order, each message either wrapped as
 *    `{"direction": "client" | "server", "message": {…}}` — `direction` names the SENDER — or
 *    bare. Bare requests/notifications count as the client's except the methods only a server
 *    sends (`roots/list`, `sampling/createMessage`, …); a bare response pairs with the pending
 *    request of its id, and when both sides have one pending (each numbers its own requests),
 *    with the one sent last (a server request made during a client request is answered first).
 *
 * Turns: EVERY client request (`initialize`, `tools/list`, `tools/call`, `ping`, …), in the
 * order the client sent them — the world model learns the whole server, handshake and errors
 * included. Action = the request, observation = the server's reply with the same `id` (first
 * unanswered request of that id: ids may repeat, replies may come out of order), both as
 * canonical JSON. `content[]`, `structuredContent`, `isError` and JSON-RPC `error` objects are
 * all part of the reply, hence of the observation. Turn meta: `method`, `error_code`, `is_error`.
 *
 * Kept out of turns and counted in trajectory meta: notifications (no `id`) of either side,
 * server→client requests, the client's responses to them, replies matching no request.
 * A request the transcript never answers stays a turn, with observation "" and meta
 * `unanswered: true` (later turns may depend on it having been sent); a loss policy can skip it.
 * A transcript with no client request, a JSON error, or a value that is not a JSON-RPC message
 * is quarantined as a whole — except, in a message stream, a last line cut while it was written
 * (a JSON value that never closes, after a line before it; cut-last-line.ts): the transcript is
 * read without it and `meta.truncated_line` says which line was left out.
 */

const FORMAT = "mcp-jsonrpc";

type Rpc = Record<string, unknown>;

export const mcpJsonRpcReader: Reader = {
  name: FORMAT,
  domain: "mcp",
  description: "MCP JSON-RPC 2.0 transcripts: go-sdk conformance txtar, or a JSONL/concatenated message stream",

  sniff(head) {
    if (/^-- client --\r?$/m.test(head)) return /"jsonrpc"\s*:\s*"2\.0"/.test(head);
    const text = head.replace(/^\uFEFF/, "");
    const first = firstLine(text);
    const parsed = parseSniffedJson(first);
    const value = parsed.ok ? parsed.value : firstJsonValue(text);
    const candidate = Array.isArray(value) ? value[0] : value;
    if (isObject(candidate) && isObject(candidate.message) && typeof candidate.direction === "string") {
      return candidate.message.jsonrpc === "2.0";
    }
    return isObject(candidate) && candidate.jsonrpc === "2.0";
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    const source: SourceRef = { uri: path, line: 1, offset: 0, format: FORMAT };
    const whole = await readWholeText(path, options.maxLineBytes);
    if ("error" in whole) {
      yield { kind: "quarantine", entry: { source, stage: "read", reason: `${whole.error}: one transcript is one record` } };
      return;
    }
    const text = whole.text.replace(/^\uFEFF/, "");
    const id = `${basename(path).replace(/\.[^.]*$/, "")}-${createHash("sha256").update(text).digest("hex").slice(0, 12)}`;
    try {
      const transcript = /^-- client --\r?$/m.test(text) ? fromTxtar(text) : fromMessageStream(text);
      const { turns, stats } = pairTurns(transcript.messages);
      if (turns.length === 0) throw new TranscriptError("no client request in the transcript: nothing to pair with a reply");
      yield {
        kind: "trajectory",
        trajectory: {
          id,
          domain: options.domain ?? "mcp",
          source,
          ...("task" in transcript && transcript.task ? { task: transcript.task } : {}),
          turns,
          meta: {
            transcript: transcript.layout,
            ...stats,
            ...("sections" in transcript && Object.keys(transcript.sections).length > 0 ? { txtar_sections: transcript.sections } : {}),
            ...("truncated" in transcript ? truncatedLineMeta(transcript) : {}),
          },
        },
      };
    } catch (err) {
      if (!(err instanceof TranscriptError)) throw err;
      yield { kind: "quarantine", entry: { source, id, stage: "read", reason: err.message, excerpt: excerpt(text) } };
    }
  },
};

/** txtar → comment + client messages then server messages (pairing is by id, not by position). */
function fromTxtar(text: string): { layout: string; task: string; sections: Record<string, string>; messages: Message[] } {
  const lines = text.split("\n");
  const comment: string[] = [];
  const bodies = new Map<string, { startLine: number; lines: string[] }>();
  let current: string[] = comment;
  lines.forEach((line, i) => {
    const marker = /^-- (.+) --\r?$/.exec(line);
    if (!marker) {
      current.push(line);
      return;
    }
    const name = marker[1] as string;
    const body = { startLine: i + 2, lines: [] as string[] };
    bodies.set(name, body);
    current = body.lines;
  });
  const client = bodies.get("client");
  const server = bodies.get("server");
  const sections: Record<string, string> = {};
  for (const [name, body] of bodies) if (name !== "client" && name !== "server") sections[name] = body.lines.join("\n").trim();
  const messages = [
    ...(client ? fromStream(client.lines.join("\n"), client.startLine, "client") : []),
    ...(server ? fromStream(server.lines.join("\n"), server.startLine, "server") : []),
  ];
  return { layout: "txtar", task: comment.join("\n").trim(), sections, messages };
}

/** A message stream (JSONL, or concatenated values): its messages, read without a last line cut mid-write. */
function fromMessageStream(text: string): { layout: string; messages: Message[]; truncated?: TruncatedLine } {
  const { text: kept, truncated } = withoutCutLastLineOfText(text);
  return { layout: "jsonrpc-stream", messages: fromStream(kept, 1), ...(truncated ? { truncated } : {}) };
}

/** A stream of concatenated JSON values (JSONL is one case) → messages, unwrapping `{direction, message}`. */
function fromStream(text: string, firstLineNo: number, sender?: Sender): Message[] {
  const messages: Message[] = [];
  for (const { raw, line } of splitJsonValues(text, firstLineNo)) {
    const where = `line ${line}`;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (err) {
      throw new TranscriptError(`${where}: invalid JSON: ${(err as Error).message}`);
    }
    // Messages are written back as JSON text (batches, wrapped messages, ids as keys).
    if (nestsTooDeep(value)) throw new TranscriptError(`${where}: JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
    const items = Array.isArray(value) ? value.map((v) => ({ v, raw: JSON.stringify(v) })) : [{ v: value, raw }];
    for (const { v, raw: itemRaw } of items) {
      if (isObject(v) && isObject(v.message) && (v.direction === "client" || v.direction === "server")) {
        messages.push({ sender: v.direction, message: v.message, raw: JSON.stringify(v.message), where });
      } else if (isObject(v) && v.jsonrpc === "2.0") {
        messages.push({ sender, message: v, raw: itemRaw, where });
      } else {
        throw new TranscriptError(`${where}: not a JSON-RPC 2.0 message (no "jsonrpc": "2.0"): ${excerpt(itemRaw)}`);
      }
    }
  }
  return messages;
}

/**
 * Splits concatenated JSON values (`{…}{…}`, one per line or pretty-printed over many) by
 * bracket depth, outside strings. Each value's own text and 1-based starting line are returned;
 * JSON.parse checks each one afterwards.
 */
function splitJsonValues(text: string, firstLineNo: number): { raw: string; line: number }[] {
  const values: { raw: string; line: number }[] = [];
  let line = firstLineNo;
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (c === "\n") line += 1;
    if (/\s/.test(c)) {
      i += 1;
      continue;
    }
    if (c !== "{" && c !== "[")
      throw new TranscriptError(`line ${line}: expected a JSON object, found ${JSON.stringify(text.slice(i, i + 20))}`);
    const end = jsonValueEnd(text, i);
    if (end === undefined) throw new TranscriptError(`line ${line}: unterminated JSON value`);
    const raw = text.slice(i, end);
    values.push({ raw, line });
    for (const ch of raw) if (ch === "\n") line += 1;
    i = end;
  }
  return values;
}

/** The first complete JSON value of a head (for sniffing pretty-printed streams), if any. */
function firstJsonValue(head: string): unknown {
  const start = head.search(/\S/);
  if (start === -1 || (head[start] !== "{" && head[start] !== "[")) return undefined;
  const end = jsonValueEnd(head, start);
  if (end === undefined) return undefined;
  const parsed = parseJsonLine(head.slice(start, end));
  return parsed.ok ? parsed.value : undefined;
}

function isObject(value: unknown): value is Rpc {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
