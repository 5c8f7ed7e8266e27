/**
 * Rule-based counterfactual observations for services (issue 37 item 1): MCP's JSON-RPC responses
 * and search APIs. The error shapes are the protocols' own: a JSON-RPC 2.0 error response
 * (`-32603 Internal error`, the spec's code and message) with the request's id; an MCP tool result
 * with `"isError": true` whose text is the TypeScript SDK's `MCP error <code>: <message>`; an HTTP
 * status line (429 with its Retry-After header, 503) where a fetch reports its failure; a search
 * response with no results.
 */
import type { SynthesisRule, SynthesisTurn } from "./synthesis-rule.ts";

/** The JSON value of an observation (a fenced ```json block allowed), or undefined. */
export function jsonOf(text: string): unknown {
  const fenced = /^```(?:json)?\n([\s\S]*)\n```$/.exec(text.trim());
  try {
    return JSON.parse(fenced ? (fenced[1] as string) : text);
  } catch {
    return undefined;
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** Serialized as the original was: pretty (two spaces) when it had line breaks, compact otherwise. */
function likeOriginal(original: string, value: unknown): string {
  return original.includes("\n") ? JSON.stringify(value, null, 2) : JSON.stringify(value);
}

/** The original response with its `result` member replaced by `member` (the key order kept). */
function replaceResult(response: Record<string, unknown>, key: "result" | "error", value: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(response)) {
    if (k === "result") out[key] = value;
    else out[k] = v;
  }
  return out;
}

/** A successful JSON-RPC response (has `result`, an `id`, `jsonrpc: "2.0"`). */
function successResponse(turn: SynthesisTurn): Record<string, unknown> | undefined {
  const response = jsonOf(turn.observation);
  if (!isObject(response) || response.jsonrpc !== "2.0" || !("id" in response) || !("result" in response)) return undefined;
  return response;
}

const methodOf = (action: string): string | undefined => /"method"\s*:\s*"([^"\\]{1,100})"/.exec(action)?.[1];

/** The request fails: a JSON-RPC error response with the same id (not for `initialize`, which has no error to learn from). */
const rpcError: SynthesisRule = {
  name: "mcp-jsonrpc-error",
  kind: "rpc_error",
  observe(turn) {
    const response = successResponse(turn);
    const method = methodOf(turn.action);
    if (response === undefined || method === undefined || method === "initialize") return undefined;
    return likeOriginal(turn.observation, replaceResult(response, "error", { code: -32603, message: "Internal error" }));
  },
};

/** The tool fails: a successful response whose result is the SDK's error text, marked isError. */
const toolError: SynthesisRule = {
  name: "mcp-tool-is-error",
  kind: "rpc_error",
  observe(turn) {
    const response = successResponse(turn);
    if (response === undefined || methodOf(turn.action) !== "tools/call") return undefined;
    const result = { content: [{ type: "text", text: "MCP error -32603: Internal error" }], isError: true };
    return likeOriginal(turn.observation, replaceResult(response, "result", result));
  },
};

export const MCP_RULES: readonly SynthesisRule[] = [rpcError, toolError];

// ---------------------------------------------------------------------------------------------
// Search

/** The search tool an action calls (`{"name": "web_search", …}`), or undefined. */
function searchTool(action: string): string | undefined {
  const call = jsonOf(action);
  return isObject(call) && typeof call.name === "string" ? call.name : undefined;
}

/** Any search or fetch call: the request is answered by a status line instead of its body. */
function statusRule(name: string, kind: "rate_limit" | "http_error", lines: string): SynthesisRule {
  return {
    name,
    kind,
    observe(turn) {
      return searchTool(turn.action) === undefined ? undefined : lines;
    },
  };
}

/** A search that matches nothing: the same response shape, its result list empty (Brave's `web.results`, or a bare list). */
const emptyResults: SynthesisRule = {
  name: "search-empty-results",
  kind: "empty_result",
  observe(turn) {
    if (!/search/.test(searchTool(turn.action) ?? "")) return undefined;
    const response = jsonOf(turn.observation);
    if (Array.isArray(response)) return response.length > 0 ? "[]" : undefined;
    if (isObject(response) && isObject(response.web) && Array.isArray(response.web.results) && response.web.results.length > 0) {
      // What an empty answer also changes: the mixed ranking's references to results, and "more results".
      const empty: Record<string, unknown> = { ...response, web: { ...response.web, results: [] } };
      if (isObject(response.mixed) && Array.isArray(response.mixed.main)) empty.mixed = { ...response.mixed, main: [] };
      if (isObject(response.query) && response.query.more_results_available === true)
        empty.query = { ...response.query, more_results_available: false };
      return likeOriginal(turn.observation, empty);
    }
    return undefined;
  },
};

export const SEARCH_RULES: readonly SynthesisRule[] = [
  statusRule("search-rate-limit-429", "rate_limit", "HTTP 429 Too Many Requests\nRetry-After: 30"),
  statusRule("search-server-error-503", "http_error", "HTTP 503 Service Unavailable"),
  emptyResults,
];
