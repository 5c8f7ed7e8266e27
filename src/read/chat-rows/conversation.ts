import { parseJsonLine } from "../reader.ts";
import { isRecord } from "../record-helpers.ts";
import { batchEnvelope } from "./batch-envelopes.ts";
import { isFencedCommandChat } from "./fenced-commands.ts";
import { geminiConversation, geminiDeclarations, hasGeminiToolParts } from "./gemini-contents.ts";
import { glaiveMessages } from "./glaive-transcript.ts";
import { CALL_ROLES, TOOL_ROLES } from "./message.ts";
import { isMessageOrItem, RESPONSES_TOOL_ITEMS, responsesConversation } from "./responses-items.ts";
import { isTaggedSearchConversation, taggedSearchRow } from "./tagged-search.ts";
import { toolSpecs } from "./tools.ts";

/**
 * Where a row keeps its conversation (`messages`, `conversations`, `traj`, `trajectory`, Gemini
 * `contents`, Responses `input` / `output` items or a Glaive `chat`; a Batch API line's inside), and whether a parsed row is a chat with tool use
 * (or an xLAM / APIGen row, claimed only to be refused with its reason).
 */

/** Keys holding the conversation, in the order they are looked for. */
const CONVERSATION_KEYS = ["messages", "conversations", "traj", "trajectory"] as const;

/**
 * A parsed row that is a chat with tool use: a conversation of role/from messages (or Responses
 * items) and a sign of tools. An xLAM / APIGen row (`query`, `answers`, `tools`) is claimed too,
 * to be refused with its reason rather than left unrecognized.
 */
export function isChatRow(row: Record<string, unknown>): boolean {
  // A Batch API line: the chat row it wraps (a line refused for what it lacks is claimed only when it shows tool use).
  const envelope = batchEnvelope(row);
  if (envelope) return envelope.refusal ? envelope.refusal.claim : isPlainChatRow(envelope.row);
  return isPlainChatRow(row);
}

function isPlainChatRow(row: Record<string, unknown>): boolean {
  const found = conversationOf(row);
  if (!found) return isXlamRow(row);
  if (found.key === "contents")
    return hasGeminiToolParts(row.contents as unknown[]) || (Array.isArray(row.tools) && geminiDeclarations(row.tools) !== undefined);
  if (found.key === "chat") return typeof row.chat === "string" && /<functioncall>|(^|\n)\s*FUNCTION RESPONSE:/.test(row.chat);
  if (!Array.isArray(found.value) || found.value.length === 0) return false;
  const messages = found.value;
  if (!messages.every(isMessageOrItem)) return false;
  if (toolSpecs(row).length > 0) return true;
  if (isFencedCommandChat(messages)) return true;
  if (isTaggedSearchConversation(messages)) return true;
  return messages.some((m) => {
    const message = m as Record<string, unknown>;
    if (typeof message.type === "string" && RESPONSES_TOOL_ITEMS.has(message.type)) return true;
    const role = String(message.role ?? message.from).toLowerCase();
    if (Array.isArray(message.tool_calls) && message.tool_calls.length > 0) return true;
    if (isRecord(message.function_call)) return true;
    if (TOOL_ROLES.has(role) || CALL_ROLES.has(role)) return true;
    if (Array.isArray(message.content) && message.content.some((b) => isRecord(b) && (b.type === "tool_use" || b.type === "tool_result")))
      return true;
    const text = typeof message.content === "string" ? message.content : typeof message.value === "string" ? message.value : "";
    return text.includes("<tool_call>");
  });
}

/**
 * An xLAM / APIGen function-calling row: a `query`, the `answers` (the calls a model should make)
 * and the `tools`; no tool ever ran, so there is no result to observe.
 */
export function isXlamRow(row: Record<string, unknown>): boolean {
  return typeof row.query === "string" && row.answers !== undefined && row.answers !== null && row.tools !== undefined;
}

/**
 * The conversation of a row: its key and elements (a JSON string parsed), with each element's
 * field path where it is not `key.i`; undefined when none. Looked for in CONVERSATION_KEYS, then
 * Gemini `contents`, then OpenAI Responses items (`input` then `output`), then Glaive's `chat` transcript.
 */
export function conversationOf(
  row: Record<string, unknown>,
  rollout?: number,
): { key: string; value: unknown; fields?: string[]; parseError?: string } | undefined {
  for (const key of CONVERSATION_KEYS) {
    // A null column is absent: a Hub dataset mixing layouts (Parquet) has every layout's column, null where unused.
    if (!(key in row) || row[key] === null) continue;
    const value = row[key];
    if (typeof value !== "string") return { key, value };
    const parsed = parseJsonLine(value);
    return parsed.ok ? { key, value: parsed.value } : { key, value, parseError: parsed.reason };
  }
  // Gemini API `contents` (gemini-contents.ts).
  const gemini = geminiConversation(row);
  if (gemini) return gemini;
  const responses = responsesConversation(row);
  if (responses) return responses;
  if (typeof row.chat === "string") {
    const messages = glaiveMessages(row.chat);
    if (messages) return { key: "chat", value: messages, fields: messages.map(() => "chat") };
  }
  // A search agent's rollout as a prompt and the model's text with tagged calls (tagged-search.ts).
  return taggedSearchRow(row, rollout);
}
