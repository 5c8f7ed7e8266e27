import { isRecord } from "../record-helpers.ts";
import { hasGeminiToolParts, isGeminiContents } from "./gemini-contents.ts";
import { RESPONSES_TOOL_ITEMS } from "./responses-items.ts";

/**
 * Batch API lines that wrap a chat row: the OpenAI Batch API (an input line `{custom_id, method,
 * url, body}` whose `body` is a Chat Completions or Responses request; an output line `{id,
 * custom_id, response: {status_code, body}, error}`; or both in one line, the output's `response`
 * joined to its input line) and Gemini batch prediction (Vertex AI / Gemini API lines
 * `{request: {contents, tools, systemInstruction}, response?: {candidates}, key?}`, the first
 * candidate's content being the model's last turn). The wrapped row is read as any other; the field
 * paths of its messages are given back in the line's own terms.
 */

export interface Envelope {
  /** The row the chat reader reads: the request (its `messages`, `input` or `contents`), the reply appended. */
  row: Record<string, unknown>;
  /** A field of the inner row (`messages.3`, `contents.1.parts.0`) as the line's own path. */
  field(inner: string): string;
  /** Counted in `meta.skipped` (a failed response read as no reply). */
  skipped: string[];
  /** A line that holds no conversation to read: the reason, and whether the reader claims such a line (tool use shows). */
  refusal?: { field: string; reason: string; claim: boolean };
}

const CHAT_URL = /(^|\/)chat\/completions\/?$/;
const RESPONSES_URL = /(^|\/)responses\/?$/;

/** Maps `key.i` of the inner row: the first `count` elements are the request's (`prefix.key.i`), the rest the reply's (`replyField`). */
function fieldMap(key: string, count: number, prefix: string, reply: string | undefined): (inner: string) => string {
  const pattern = new RegExp(`^${key}\\.(\\d+)(.*)$`);
  return (inner) => {
    const match = pattern.exec(inner);
    if (match && reply !== undefined && Number(match[1]) >= count) return `${reply}${match[2]}`;
    return `${prefix}${inner}`;
  };
}

/** The first choice's message of a Chat Completions response body, or a Responses response's output items. */
function openAiReply(
  body: unknown,
): { kind: "message"; value: Record<string, unknown> } | { kind: "output"; value: unknown[] } | undefined {
  if (!isRecord(body)) return undefined;
  if (Array.isArray(body.choices)) {
    const first = body.choices[0];
    if (isRecord(first) && isRecord(first.message)) return { kind: "message", value: first.message };
    return undefined;
  }
  if (Array.isArray(body.output) && body.output.length > 0) return { kind: "output", value: body.output };
  return undefined;
}

function replyUsesTools(reply: ReturnType<typeof openAiReply>): boolean {
  if (!reply) return false;
  if (reply.kind === "message") return Array.isArray(reply.value.tool_calls) && reply.value.tool_calls.length > 0;
  return reply.value.some((item) => isRecord(item) && typeof item.type === "string" && RESPONSES_TOOL_ITEMS.has(item.type));
}

function errorText(error: unknown): string {
  if (typeof error === "string") return error;
  if (isRecord(error)) {
    const code = typeof error.code === "string" ? `${error.code}: ` : "";
    return typeof error.message === "string" ? `${code}${error.message}` : JSON.stringify(error);
  }
  return JSON.stringify(error);
}

/** An OpenAI Batch API line (input, output, or the two joined), undefined when the row is none. */
function openAiBatch(row: Record<string, unknown>): Envelope | undefined {
  if (typeof row.custom_id !== "string") return undefined;
  const hasBody = isRecord(row.body);
  if (!hasBody && !("response" in row)) return undefined;
  const id = row.custom_id;
  const response = isRecord(row.response) ? row.response : undefined;
  const reply = openAiReply(response?.body);
  if (!hasBody) {
    // An output line alone: the reply, without the request's messages or any tool result.
    const failed = row.error !== undefined && row.error !== null && !reply;
    const reason = failed
      ? `an OpenAI Batch API output line (custom_id ${JSON.stringify(id)}) for a request that failed (${errorText(row.error)}): no reply and no conversation to read`
      : `an OpenAI Batch API output line (custom_id ${JSON.stringify(id)}): it holds the model's reply but not the request's messages, ` +
        "so no tool result; join it with its input line by custom_id (the input line with this line's `response` added) to read it";
    return {
      row,
      field: (inner) => inner,
      skipped: [],
      refusal: { field: failed ? "error" : "response", claim: replyUsesTools(reply), reason },
    };
  }
  const body = row.body as Record<string, unknown>;
  const url = typeof row.url === "string" ? (row.url.split("?")[0] ?? "") : "";
  const chat = CHAT_URL.test(url) || (url === "" && Array.isArray(body.messages));
  const responses = RESPONSES_URL.test(url) || (url === "" && body.input !== undefined);
  if (!chat && !responses) {
    return {
      row,
      field: (inner) => `body.${inner}`,
      skipped: [],
      refusal: { field: "url", claim: false, reason: `an OpenAI Batch API request to ${JSON.stringify(row.url)}: not a chat conversation` },
    };
  }
  // The request's custom_id is the trajectory's id (a request body has none of its own).
  const inner: Record<string, unknown> = { ...body };
  if (inner.id === undefined) inner.id = id;
  const skipped: string[] = [];
  const statusOk = response === undefined || response.status_code === undefined || response.status_code === 200;
  if (response !== undefined && (!statusOk || !reply)) skipped.push("batch_response_without_reply");
  else if (row.response === null && row.error !== undefined && row.error !== null) skipped.push("batch_response_error");
  if (chat && Array.isArray(body.messages)) {
    const count = body.messages.length;
    if (statusOk && reply?.kind === "message") inner.messages = [...body.messages, reply.value];
    return { row: inner, field: fieldMap("messages", count, "body.", "response.body.choices.0.message"), skipped };
  }
  if (responses) {
    if (statusOk && reply?.kind === "output") inner.output = reply.value;
    const map = (f: string) => (f.startsWith("output.") && reply?.kind === "output" ? `response.body.${f}` : `body.${f}`);
    return { row: inner, field: map, skipped };
  }
  return { row: inner, field: (f) => `body.${f}`, skipped };
}

/** The content of the first candidate of a Gemini response. */
function candidateContent(response: unknown): Record<string, unknown> | undefined {
  if (!isRecord(response) || !Array.isArray(response.candidates)) return undefined;
  const first = response.candidates[0];
  return isRecord(first) && isRecord(first.content) && Array.isArray(first.content.parts) ? first.content : undefined;
}

/** A Gemini batch-prediction line (Vertex AI or the Gemini API), undefined when the row is none. */
function geminiBatch(row: Record<string, unknown>): Envelope | undefined {
  const request = isRecord(row.request) ? row.request : undefined;
  const candidate = candidateContent(row.response);
  if (request === undefined) {
    if (candidate === undefined || row.contents !== undefined) return undefined;
    return {
      row: typeof row.key === "string" && row.id === undefined ? { ...row, id: row.key } : row,
      field: (inner) => inner,
      skipped: [],
      refusal: {
        field: "response",
        claim: hasGeminiToolParts([candidate]),
        reason:
          "a Gemini batch prediction output without its request: it holds the model's reply but not the conversation before it, " +
          "so no function result; read the output lines that keep their `request` (Vertex AI writes it beside the `response`) or join them by `key`",
      },
    };
  }
  if (!isGeminiContents(request.contents)) return undefined;
  const count = request.contents.length;
  const inner: Record<string, unknown> = { ...request };
  if (typeof row.key === "string" && inner.id === undefined) inner.id = row.key;
  const response = isRecord(row.response) ? row.response : undefined;
  if (inner.model === undefined && typeof response?.modelVersion === "string") inner.model = response.modelVersion;
  const skipped: string[] = [];
  if (candidate) inner.contents = [...request.contents, { role: "model", ...candidate }];
  else if (response !== undefined) skipped.push("batch_response_without_reply");
  return { row: inner, field: fieldMap("contents", count, "request.", "response.candidates.0.content"), skipped };
}

/** The batch line a row is, if any: the chat row inside it (or the reason it holds none). */
export function batchEnvelope(row: Record<string, unknown>): Envelope | undefined {
  return openAiBatch(row) ?? geminiBatch(row);
}
