/**
 * MCP edge cases, on JSON-RPC 2.0 responses (canonical JSON):
 *
 * - rpc_error: a JSON-RPC error object (`"error": {"code": -32602, "message": …}`; facts.code, and
 *   facts.message when the message has no escapes), or a tool result with `"isError": true` —
 *   evidenced by its `MCP error -32602: …` text when the server's SDK wrote one (facts.code,
 *   facts.message), else by the `"isError": true` member (the instruction templates tell the two
 *   apart by that evidence: a successful response carrying a tool error is no JSON-RPC error);
 * - inside an error's message (or an isError result), what the error says: timeouts, missing
 *   files, permission and disk errors, rate limits, HTTP statuses;
 * - anywhere: HTTP statuses and rate limits in JSON error shapes (`"status": 429`, `"error":
 *   {"code": 429}`, `"text": "HTTP 503 …"`), pagination (`nextCursor`, `hasMore: true`, …) and empty
 *   results (`"tools": []`, `"content": []`, "No results found").
 *
 * A tool that returns the word "Error" as ordinary content (`"text": "Error: Operation failed"`
 * without `isError`) is not an error: the result is the tool's answer.
 */
import type { ControlLabelName, DetectorTurn, DomainDetector } from "../control-label.ts";
import { httpStatusPhrases, jsonHttpErrors, jsonValueHttpStatus, rateLimitPhrases } from "./rules/http.ts";
import { jsonRpcErrors } from "./rules/json.ts";
import { emptyResults, jsonPagination } from "./rules/pagination.ts";
import { type Hit, hit, matchesOf, shifted } from "./rules/spans.ts";

const IS_ERROR = /"isError"[ \t\r\n]*:[ \t\r\n]*true\b/g;
const MCP_ERROR_TEXT = /MCP error (-?\d+):[^"\\\r\n]{0,300}/g;

/** What an error message says, inside a JSON string (escaped newlines: no line anchors). */
const INSIDE_ERROR: [ControlLabelName, RegExp][] = [
  ["timeout", /\b(?:timed out|[Tt]imeout|TIMEOUT|ETIMEDOUT|deadline exceeded)\b[^"\\\r\n]{0,200}/g],
  ["not_found", /\b(?:No such file or directory|ENOENT|[Ff]ile not found|[Dd]irectory not found|[Cc]ommand not found)\b[^"\\\r\n]{0,200}/g],
  ["permission_denied", /\b(?:[Pp]ermission denied|EACCES|EPERM|[Oo]peration not permitted|[Aa]ccess denied)\b[^"\\\r\n]{0,200}/g],
  ["disk_full", /\b(?:No space left on device|ENOSPC|Disk quota exceeded)\b[^"\\\r\n]{0,200}/g],
];

function insideError(text: string): Hit[] {
  const out: Hit[] = [];
  for (const [label, re] of INSIDE_ERROR)
    for (const m of matchesOf(re, text, 2)) out.push(hit(label, text, m.index, m.index + m[0].length));
  out.push(...rateLimitPhrases(text, "anywhere"), ...httpStatusPhrases(text));
  return out;
}

export function mcpHits(text: string): Hit[] {
  const out: Hit[] = [];
  for (const error of jsonRpcErrors(text)) {
    out.push(...error.hits);
    if (error.message) out.push(...shifted(insideError(text.slice(error.message[0], error.message[1])), error.message[0]));
  }
  IS_ERROR.lastIndex = 0;
  const isError = IS_ERROR.exec(text);
  IS_ERROR.lastIndex = 0;
  if (isError) {
    const texts = [...matchesOf(MCP_ERROR_TEXT, text, 4)];
    for (const m of texts) {
      const message = m[0].slice(m[0].indexOf(":") + 1).trim();
      out.push(hit("rpc_error", text, m.index, m.index + m[0].length, message ? { code: Number(m[1]), message } : { code: Number(m[1]) }));
    }
    if (texts.length === 0) out.push(hit("rpc_error", text, isError.index, isError.index + isError[0].length));
    out.push(...insideError(text));
  }
  out.push(
    ...jsonHttpErrors(text),
    ...jsonValueHttpStatus(text),
    ...rateLimitPhrases(text),
    ...jsonPagination(text),
    ...emptyResults(text),
  );
  return out;
}

export const mcpDetector: DomainDetector = {
  domain: "mcp",
  detect(turn: DetectorTurn) {
    return mcpHits(turn.observation);
  },
};
