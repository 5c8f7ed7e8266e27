import { isIP } from "node:net";
import { blankCounts } from "../../core/count-blanking.ts";

/**
 * Why requests to an OpenAI-compatible endpoint failed, counted by kind, and what to do about it:
 * so a run whose every request failed says so (cause and fix) instead of looking like a run that
 * merely rejected its candidates.
 */

/** One kind of failure, how often it happened and one reason as the client gave it. */
export interface FailureCause {
  kind: string;
  count: number;
  example: string;
}

/**
 * A failure's kind, for counting: `HTTP 401`, `ECONNREFUSED`, `timeout`, `malformed body`, … A
 * reason as the teacher client writes it (`HTTP 401: …`, `network error: fetch failed
 * (ECONNREFUSED)`, `timeout after 5000 ms`), optionally prefixed `teacher: `.
 */
export function failureKind(reason: string, status?: number): string {
  if (status !== undefined) return `HTTP ${status}`;
  const text = reason.replace(/^(teacher|judge): /, "");
  const http = /^HTTP (\d{3})\b/.exec(text);
  if (http) return `HTTP ${http[1]}`;
  const code = /\(([A-Z][A-Z0-9_]+)\)\s*$/.exec(text)?.[1];
  if (code) return code;
  if (text.startsWith("timeout")) return "timeout";
  if (text.startsWith("malformed body")) return "malformed body";
  if (text.startsWith("not sent")) return "not sent";
  if (text.startsWith("not in the cache")) return "not in the cache";
  if (text.startsWith("no candidates for this prompt_id")) return "no candidates in the files";
  if (text.includes("longer than pack.seq_len")) return "longer than pack.seq_len";
  // fetch's own refusals, e.g. `(bad port)` for a port browsers block (6000, 9, …).
  const refused = /^network error: .*\(([a-z][a-z ]{2,30})\)\s*$/.exec(text)?.[1];
  if (refused) return refused;
  if (text.startsWith("network error")) return "network error";
  // Anything else: its first clause, numbers blanked so one cause counts once.
  return (
    blankCounts(text.split(/[:;(]/)[0] ?? "")
      .trim()
      .slice(0, 60) || "unknown"
  );
}

/**
 * Failure kinds no retry or later request cures: nothing listens, the host is unknown or
 * unreachable, the key or the path is refused. Timeouts, 429s and 5xx are left out: a busy or
 * starting server answers them and then recovers.
 */
export const UNREACHABLE_KINDS: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "bad port",
  "HTTP 401",
  "HTTP 403",
  "HTTP 404",
]);

/** Counts of failures by kind, most frequent first. */
export class CauseTally {
  private readonly byKind = new Map<string, FailureCause>();

  add(kind: string, example: string, count = 1): void {
    const cause = this.byKind.get(kind);
    if (cause) cause.count += count;
    else this.byKind.set(kind, { kind, count, example });
  }

  get size(): number {
    return this.byKind.size;
  }

  /** The `n` most frequent (ties: first seen first). */
  top(n = Number.POSITIVE_INFINITY): FailureCause[] {
    return [...this.byKind.values()].sort((a, b) => b.count - a.count).slice(0, n);
  }
}

/** `ECONNREFUSED ×540, HTTP 401 ×3` (and `, … N more kind(s)` past `n`). */
export function causesText(causes: readonly FailureCause[], n = 3): string {
  const shown = causes
    .slice(0, n)
    .map((cause) => `${cause.kind} ×${cause.count}`)
    .join(", ");
  return causes.length > n ? `${shown}, and ${causes.length - n} more kind(s)` : shown;
}

/** 10/8, 172.16/12, 192.168/16, 127/8, 169.254/16, 100.64/10 (CGNAT), 0.0.0.0. */
function privateIpv4(address: string): boolean {
  const [a, b] = address.split(".").map(Number) as [number, number];
  return (
    a === 10 ||
    a === 127 ||
    a === 0 ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 169 && b === 254) ||
    (a === 100 && b >= 64 && b <= 127)
  );
}

/**
 * Whether a base URL points at this machine or a private network: loopback and private IP
 * addresses, `localhost`, and names that only resolve inside a network (one label, like a
 * Docker or Kubernetes service name, or `.local` / `.internal` / `.lan` / `.localhost`). A
 * local vLLM or SGLang server needs no API key; a hosted API does.
 */
export function isLocalEndpoint(baseUrl: string): boolean {
  let host: string;
  try {
    host = new URL(baseUrl).hostname.toLowerCase();
  } catch {
    return false;
  }
  const bare = host.replace(/^\[|\]$/g, "");
  const ip = isIP(bare);
  if (ip === 4) return privateIpv4(bare);
  if (ip === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(bare)?.[1];
    if (mapped) return privateIpv4(mapped);
    return bare === "::1" || bare === "::" || /^f[cd][0-9a-f]{2}:/.test(bare) || /^fe[89ab][0-9a-f]:/.test(bare);
  }
  if (!host.includes(".")) return true;
  return /\.(localhost|local|internal|lan|home\.arpa)$/.test(host);
}

/** The warning to print before the first request when `apiKeyEnv` is unset and the endpoint is not local; else undefined. */
export function missingKeyWarning(
  who: string,
  endpoint: { baseUrl: string; apiKeyEnv: string },
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (env[endpoint.apiKeyEnv] || isLocalEndpoint(endpoint.baseUrl)) return undefined;
  return `${who}: the API key variable ${endpoint.apiKeyEnv} is not set, so requests to ${endpoint.baseUrl} go without an Authorization header (a hosted API will refuse them with HTTP 401); export ${endpoint.apiKeyEnv}=<key>, or set api_key_env to the variable that holds it`;
}

/** What to check for a failure kind: `settings` is the config block (`sft.teacher`, `sft.judge`). */
export function failureFix(
  kind: string,
  endpoint: { baseUrl: string; apiKeyEnv: string; model: string; settings: string },
  env: NodeJS.ProcessEnv = process.env,
): string {
  const { baseUrl, apiKeyEnv, model, settings } = endpoint;
  const key = `${apiKeyEnv} is ${env[apiKeyEnv] ? "set" : "not set"}`;
  if (kind === "HTTP 401" || kind === "HTTP 403")
    return `the server at ${baseUrl} refused the request: is ${apiKeyEnv} set to a key it accepts? (${key}; ${settings}.api_key_env names the variable)`;
  if (kind === "HTTP 404")
    return `nothing answers at ${baseUrl.replace(/\/+$/, "")}/chat/completions: check ${settings}.base_url (most servers want it to end in /v1) and the model name ${JSON.stringify(model)}`;
  if (kind === "ENOTFOUND" || kind === "EAI_AGAIN") return `the host in ${baseUrl} is not known: check ${settings}.base_url`;
  if (["ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH", "ECONNRESET", "network error"].includes(kind))
    return `is the server running at ${baseUrl}? start it (e.g. \`vllm serve <model>\`) or fix ${settings}.base_url (${key})`;
  if (kind === "bad port")
    return `fetch never connects to the port in ${baseUrl} (one of the ports browsers block): serve the model on another port and set ${settings}.base_url`;
  if (kind === "timeout")
    return `the server at ${baseUrl} did not answer within ${settings}.timeout_ms: is it still loading the model, or overloaded? raise timeout_ms or lower concurrency`;
  if (kind === "HTTP 429") return `the server at ${baseUrl} is rate limiting: lower ${settings}.requests_per_minute or concurrency`;
  if (/^HTTP 5\d\d$/.test(kind)) return `the server at ${baseUrl} failed the requests: see its log`;
  if (/^HTTP 4\d\d$/.test(kind))
    return `the server at ${baseUrl} refused the requests as sent: see the example reason (model name ${JSON.stringify(model)}, max_tokens)`;
  if (kind === "malformed body")
    return `the answers from ${baseUrl} are not OpenAI chat completions: is ${settings}.base_url an OpenAI-compatible API root?`;
  if (kind === "no candidates in the files")
    return "the candidate files hold no answers for these prompts' prompt_id: were they made from `lwm-data sft prompts` with this config?";
  if (kind === "not in the cache")
    return "an earlier sampling round is replayed from the teacher cache only: check sft.teacher.cache_dir is the one that round used";
  if (kind === "longer than pack.seq_len") return "raise pack.seq_len, or lower sft.teacher.max_tokens";
  return "see the reasons in sft/candidates.parquet";
}
