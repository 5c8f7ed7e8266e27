import type { Turn } from "../core/trajectory.ts";
import { canonicalJson } from "../normalize/json-canonical.ts";
import { excerpt } from "./reader.ts";

/**
 * The MCP pairing convention, shared by every reader of MCP traffic (mcp-jsonrpc transcripts,
 * recorder cassettes, Claude Desktop logs): the same messages always give the same turns.
 *
 * Turns: EVERY client request (`initialize`, `tools/list`, `tools/call`, `ping`, …), in the order
 * the client sent them. Action = the request, observation = the server's reply with the same `id`
 * (first unanswered request of that id: ids may repeat, replies may come out of order), both as
 * canonical JSON. Turn meta: `method`, `error_code`, `is_error`, `unanswered`. Notifications of
 * either side, server→client requests, the client's responses to them and replies matching no
 * request are counted, not turned.
 *
 * This is mcp-jsonrpc.ts's `pairTurns`/`toTurn`, moved here so the other MCP readers import it
 * instead of copying it (scratch/notes/reader-os-mcp.md gives the change that makes mcp-jsonrpc.ts
 * import it too; until the lead applies it, test/read-mcp-server-log.test.ts checks both give the
 * same turns on the shared transcripts).
 */

/** Requests and notifications only a server sends (used to place bare messages). */
export const SERVER_METHODS: ReadonlySet<string> = new Set([
  "roots/list",
  "sampling/createMessage",
  "elicitation/create",
  "notifications/message",
  "notifications/resources/updated",
  "notifications/resources/list_changed",
  "notifications/tools/list_changed",
  "notifications/prompts/list_changed",
]);

export type McpSender = "client" | "server";
export type McpRpc = Record<string, unknown>;

export interface McpMessage {
  /** Who sent it, when the source says; undefined for a bare message (placed by method and id). */
  sender: McpSender | undefined;
  message: McpRpc;
  /** The message's own text, as the source holds it (kept so key order and numbers survive). */
  raw: string;
  /** Where it is, for error messages: `line 12`. */
  where: string;
}

/** A transcript that cannot be paired: the reader quarantines the record with this message. */
export class McpTranscriptError extends Error {}

export interface McpPairStats {
  messages: number;
  client_notifications: number;
  server_notifications: number;
  server_requests: number;
  client_responses: number;
  unmatched_replies: number;
  unanswered_requests: number;
}

interface PendingTurn {
  request: McpMessage;
  /** Its position in the stream (to tell which of two same-id requests was sent last). */
  at: number;
  reply?: McpMessage;
}

/** Pairs each client request with the first reply carrying its id; counts everything else. */
export function pairMcpTurns(messages: readonly McpMessage[]): { turns: Turn[]; stats: McpPairStats } {
  const stats: McpPairStats = {
    messages: messages.length,
    client_notifications: 0,
    server_notifications: 0,
    server_requests: 0,
    client_responses: 0,
    unmatched_replies: 0,
    unanswered_requests: 0,
  };
  const pending: PendingTurn[] = [];
  const waitingClient = new Map<string, PendingTurn[]>();
  // Positions of the server's unanswered requests, per id (each side numbers its own requests, so ids collide).
  const waitingServer = new Map<string, number[]>();
  for (const [at, entry] of messages.entries()) {
    const { message } = entry;
    const hasId = "id" in message;
    const key = JSON.stringify(message.id ?? null);
    if (typeof message.method === "string") {
      const sender = entry.sender ?? (SERVER_METHODS.has(message.method) ? "server" : "client");
      if (!hasId) stats[`${sender}_notifications`] += 1;
      else if (sender === "server") {
        stats.server_requests += 1;
        waitingServer.set(key, [...(waitingServer.get(key) ?? []), at]);
      } else {
        const turn: PendingTurn = { request: entry, at };
        pending.push(turn);
        waitingClient.set(key, [...(waitingClient.get(key) ?? []), turn]);
      }
    } else if (hasId && ("result" in message || "error" in message)) {
      const queue = waitingClient.get(key) ?? [];
      const serverAsked = waitingServer.get(key) ?? [];
      // A bare reply whose id both sides have pending answers the request sent last: a server request
      // made while a client request is open (sampling, elicitation, roots/list during a tools/call) is
      // answered before the client request it serves.
      const clientAnswersServer =
        entry.sender === "client" ||
        (entry.sender === undefined &&
          serverAsked.length > 0 &&
          (queue.length === 0 || (serverAsked.at(-1) as number) > (queue.at(-1) as PendingTurn).at));
      if (clientAnswersServer) {
        stats.client_responses += 1;
        serverAsked.pop();
      } else {
        const turn = queue.shift();
        if (turn) turn.reply = entry;
        else stats.unmatched_replies += 1;
      }
    } else {
      throw new McpTranscriptError(
        `${entry.where}: a JSON-RPC message needs a "method" or an "id" with "result"/"error": ${excerpt(entry.raw)}`,
      );
    }
  }
  const turns = pending.map(({ request, reply }) => {
    if (!reply) stats.unanswered_requests += 1;
    return mcpTurn(request, reply);
  });
  return { turns, stats };
}

/** One turn: the request → its reply (or "" and `unanswered`), as canonical JSON. */
export function mcpTurn(request: McpMessage, reply: McpMessage | undefined): Turn {
  const meta: Record<string, unknown> = { method: request.message.method };
  if (!reply) meta.unanswered = true;
  const error = reply?.message.error;
  if (isRpcObject(error) && typeof error.code === "number") meta.error_code = error.code;
  const result = reply?.message.result;
  if (isRpcObject(result) && result.isError === true) meta.is_error = true;
  return {
    action: canonicalJson(request.raw) ?? request.raw,
    observation: reply ? (canonicalJson(reply.raw) ?? reply.raw) : "",
    meta,
  };
}

export function isRpcObject(value: unknown): value is McpRpc {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A JSON-RPC 2.0 message (request, notification or response) by its `jsonrpc` marker. */
export function isJsonRpcMessage(value: unknown): value is McpRpc {
  return isRpcObject(value) && value.jsonrpc === "2.0";
}
