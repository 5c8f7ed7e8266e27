import { basename } from "node:path";
import type { SourceRef } from "../core/trajectory.ts";
import { readWholeText } from "../io/read-whole-text.ts";
import {
  isJsonRpcMessage,
  isRpcObject,
  type McpMessage,
  type McpRpc,
  type McpSender,
  McpTranscriptError,
  pairMcpTurns,
  SERVER_METHODS,
} from "./mcp-pairing.ts";
import { excerpt, parseJsonLine, parseSniffedJson, type Reader, type ReaderOptions, type ReadItem } from "./reader.ts";
import { contentId, describeType, MAX_JSON_DEPTH, nestsTooDeep } from "./record-helpers.ts";

/**
 * MCP record/replay cassettes: one JSON document = one recorded session = one trajectory.
 * Layouts (all `interactions[]` of request/response pairs):
 *
 * - mcp-recorder (devhelmhq/mcp-recorder, `_types.py` Cassette): `{"version", "metadata":
 *   {"server_url", "protocol_version", "server_info", "recorded_at"}, "interactions": [{"type":
 *   "jsonrpc_request" | "notification" | "lifecycle", "request", "response", "latency_ms", …}]}`.
 *   `lifecycle` entries (HTTP DELETE/GET of the session, no JSON-RPC) are counted, not turned.
 * - agent-vcr (`.vcr`): `{"format_version", "metadata": {"client_info", "server_info",
 *   "transport", …}, "session": {"initialize_request", "initialize_response", "interactions":
 *   [{"direction": "client_to_server" | "server_to_client", "request", "response",
 *   "notifications": []}]}}`. The initialize pair is the first turn; notifications recorded with an
 *   interaction are taken as the responder's (counted, not turned).
 * - the bare VCR shape `{"interactions": [{"request": {…}, "response": {…}}]}`.
 *
 * Without a `direction`, a request whose method only a server sends (`sampling/createMessage`,
 * `elicitation/create`, `roots/list`) is the server's and its response the client's (counted).
 *
 * Each interaction becomes messages in wire order (request, notifications, response) and the turns
 * come from the shared MCP pairing (mcp-pairing.ts, the mcp-jsonrpc convention): every client
 * request is a turn, action = the request, observation = the reply with its id, both canonical
 * JSON; JSON-RPC errors and `isError` results are part of the observation (turn meta `error_code`,
 * `is_error`). A request recorded without a response stays a turn with observation "" and
 * `unanswered: true`. Task: none (a cassette holds no user instruction). Domain: mcp.
 * Meta: `cassette` (layout, version, server, recorded time), the pairing counts, and `agent` = the
 * recorded client's name where the cassette names it (agent-vcr `client_info`). A cassette whose
 * request or response is not a JSON-RPC message, or with no client request, is quarantined whole
 * (field = the interaction's path).
 */

const FORMAT = "mcp-cassette";

interface Layout {
  layout: "mcp-recorder" | "agent-vcr" | "interactions";
  interactions: unknown[];
  /** Where the interactions are, for fields: `interactions` or `session.interactions`. */
  at: string;
  prelude: McpMessage[];
  meta: Record<string, unknown>;
  agent?: string;
}

class FieldError extends McpTranscriptError {
  readonly field: string;
  constructor(field: string, message: string) {
    super(`${field}: ${message}`);
    this.field = field;
  }
}

export const mcpCassetteReader: Reader = {
  name: FORMAT,
  domain: "mcp",
  description: "MCP record/replay cassettes (mcp-recorder, agent-vcr): interactions[] of JSON-RPC request/response → one trajectory",

  sniff(head) {
    const text = head.replace(/^\uFEFF/, "");
    if (!/^\s*\{/.test(text)) return false;
    const parsed = parseSniffedJson(text);
    if (parsed.ok) return layoutOf(parsed.value) !== undefined && /"jsonrpc"\s*:\s*"2\.0"/.test(text);
    // Longer than the head: the keys tell (a JSON-RPC message inside an interactions list).
    const interactions = text.search(/"interactions"\s*:\s*\[/);
    if (interactions === -1) return false;
    return /"(request|initialize_request)"\s*:\s*\{/.test(text) && /"jsonrpc"\s*:\s*"2\.0"/.test(text);
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    const source: SourceRef = { uri: path, line: 1, offset: 0, format: FORMAT };
    const whole = await readWholeText(path, options.maxLineBytes);
    if ("error" in whole) {
      yield { kind: "quarantine", entry: { source, stage: "read", reason: `${whole.error}: one cassette is one record` } };
      return;
    }
    const text = whole.text.replace(/^\uFEFF/, "");
    const id = contentId(
      basename(path)
        .replace(/\.(gz|zst|zstd)$/i, "")
        .replace(/\.[^.]*$/, ""),
      text,
    );
    const quarantine = (reason: string, field?: string): ReadItem => ({
      kind: "quarantine",
      entry: { source, id, stage: "read", ...(field ? { field } : {}), reason, excerpt: excerpt(text) },
    });
    const parsed = parseJsonLine(text);
    if (!parsed.ok) {
      yield quarantine(parsed.reason);
      return;
    }
    if (nestsTooDeep(parsed.value)) {
      yield quarantine(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
      return;
    }
    const layout = layoutOf(parsed.value);
    if (!layout) {
      yield quarantine(
        `not an MCP cassette: expected an object with an "interactions" array, got ${describeShape(parsed.value)}`,
        "interactions",
      );
      return;
    }
    try {
      const messages = [
        ...layout.prelude,
        ...layout.interactions.flatMap((interaction, i) => interactionMessages(interaction, `${layout.at}.${i}`)),
      ];
      const { turns, stats } = pairMcpTurns(messages);
      if (turns.length === 0) throw new McpTranscriptError("no client request in the cassette: nothing to pair with a reply");
      const lifecycle = layout.interactions.filter((entry) => isRpcObject(entry) && entry.type === "lifecycle").length;
      yield {
        kind: "trajectory",
        trajectory: {
          id,
          domain: options.domain ?? "mcp",
          source,
          turns,
          meta: {
            cassette: { layout: layout.layout, ...layout.meta },
            ...stats,
            ...(lifecycle > 0 ? { lifecycle_interactions: lifecycle } : {}),
            ...(layout.agent !== undefined ? { agent: layout.agent } : {}),
          },
        },
      };
    } catch (err) {
      if (!(err instanceof McpTranscriptError)) throw err;
      yield quarantine(err.message, err instanceof FieldError ? err.field : undefined);
    }
  },
};

function describeShape(value: unknown): string {
  if (!isRpcObject(value)) return describeType(value);
  return `an object with keys ${Object.keys(value).slice(0, 8).join(", ")}`;
}

/** Which cassette layout a parsed document is, with its interactions and metadata. */
function layoutOf(value: unknown): Layout | undefined {
  if (!isRpcObject(value)) return undefined;
  const metadata = isRpcObject(value.metadata) ? value.metadata : {};
  const session = value.session;
  if (isRpcObject(session) && Array.isArray(session.interactions)) {
    const prelude: McpMessage[] = [];
    if (isJsonRpcMessage(session.initialize_request))
      prelude.push(message("client", session.initialize_request, "session.initialize_request"));
    if (isJsonRpcMessage(session.initialize_response))
      prelude.push(message("server", session.initialize_response, "session.initialize_response"));
    const client =
      isRpcObject(metadata.client_info) && typeof metadata.client_info.name === "string" ? metadata.client_info.name : undefined;
    return {
      layout: "agent-vcr",
      interactions: session.interactions,
      at: "session.interactions",
      prelude,
      meta: pick({ format_version: value.format_version, ...metadata }, [
        "format_version",
        "recorded_at",
        "transport",
        "server_info",
        "client_info",
        "server_command",
      ]),
      ...(client !== undefined ? { agent: client } : {}),
    };
  }
  if (!Array.isArray(value.interactions)) return undefined;
  const recorder = value.interactions.some((entry) => isRpcObject(entry) && typeof entry.type === "string");
  return {
    layout: recorder ? "mcp-recorder" : "interactions",
    interactions: value.interactions,
    at: "interactions",
    prelude: [],
    meta: pick({ version: value.version, ...metadata }, ["version", "recorded_at", "server_url", "protocol_version", "server_info"]),
  };
}

function pick(from: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of keys) if (from[key] !== undefined && from[key] !== null && from[key] !== "") out[key] = from[key];
  return out;
}

function message(sender: McpSender, value: McpRpc, where: string): McpMessage {
  return { sender, message: value, raw: JSON.stringify(value), where };
}

/** One interaction → its messages in wire order: request, notifications, response. */
function interactionMessages(interaction: unknown, at: string): McpMessage[] {
  if (!isRpcObject(interaction)) throw new FieldError(at, `expected an interaction object, got ${describeType(interaction)}`);
  if (interaction.type === "lifecycle") return [];
  const { request, response } = interaction;
  if (!isJsonRpcMessage(request))
    throw new FieldError(
      `${at}.request`,
      `expected a JSON-RPC 2.0 message (an object with "jsonrpc": "2.0"), got ${isRpcObject(request) ? excerpt(JSON.stringify(request)) : describeType(request)}`,
    );
  // No direction recorded (mcp-recorder, bare interactions): a method only a server sends
  // (sampling/createMessage, elicitation/create, roots/list, …) is the server's request.
  const requester: McpSender =
    interaction.direction === "server_to_client" ||
    (interaction.direction === undefined && typeof request.method === "string" && SERVER_METHODS.has(request.method))
      ? "server"
      : "client";
  const responder: McpSender = requester === "client" ? "server" : "client";
  const out = [message(requester, request, `${at}.request`)];
  const notifications = Array.isArray(interaction.notifications) ? interaction.notifications : [];
  notifications.forEach((note, i) => {
    if (!isJsonRpcMessage(note))
      throw new FieldError(`${at}.notifications.${i}`, `expected a JSON-RPC 2.0 notification, got ${describeType(note)}`);
    out.push(message(responder, note, `${at}.notifications.${i}`));
  });
  if (response === undefined || response === null) return out;
  if (!isJsonRpcMessage(response))
    throw new FieldError(
      `${at}.response`,
      `expected a JSON-RPC 2.0 response or null, got ${isRpcObject(response) ? excerpt(JSON.stringify(response)) : describeType(response)}`,
    );
  out.push(message(responder, response, `${at}.response`));
  return out;
}
