/**
 * Search edge cases: search-API JSON (Brave, Google CSE, SerpAPI-style), agent search/extract
 * traces (a result list, an extracted page, or the fetch's error line).
 *
 * An extracted page is prose about anything — an article on HTTP can show `HTTP/1.1 429 Too Many
 * Requests` as an example — so status lines, client messages and timeouts count only in the first
 * lines of an observation, where a failed fetch reports itself (`HTTP 404 Not Found`). Elsewhere
 * only JSON shapes count: error members (`"status": 429`, `"error": {"code": 403}`, `"message":
 * "Rate limit exceeded"`), JSON-RPC errors, pagination members (`more_results_available: true`,
 * `nextPage`, cursors) and empty collections (`"results": []`, a bare `[]`). A result's title or
 * description that mentions rate limits or 404s is a topic, never a label.
 */
import type { DetectorTurn, DomainDetector } from "../control-label.ts";
import { httpStatusLines, httpStatusPhrases, jsonHttpErrors, jsonValueHttpStatus, rateLimitPhrases } from "./rules/http.ts";
import { jsonRpcErrors } from "./rules/json.ts";
import { timeouts } from "./rules/os-errors.ts";
import { emptyResults, jsonPagination, textPagination } from "./rules/pagination.ts";
import { type Hit, headOf } from "./rules/spans.ts";

/** Lines of an observation's head in which a fetch or API failure reports itself. */
const HEAD_LINES = 4;

export const searchDetector: DomainDetector = {
  domain: "search",
  detect(turn: DetectorTurn) {
    const text = turn.observation;
    const head = headOf(text, HEAD_LINES);
    const out: Hit[] = [
      ...httpStatusLines(head),
      ...httpStatusPhrases(head),
      ...timeouts(head),
      ...rateLimitPhrases(head),
      ...rateLimitPhrases(text, "json-error"),
      ...jsonHttpErrors(text),
      ...jsonValueHttpStatus(text),
      ...jsonPagination(text),
      ...textPagination(text),
      ...emptyResults(text),
    ];
    if (text.includes('"jsonrpc"')) for (const error of jsonRpcErrors(text)) out.push(...error.hits);
    return out;
  },
};
