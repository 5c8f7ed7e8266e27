import { setTimeout as sleep } from "node:timers/promises";
import PQueue from "p-queue";
import { UserError } from "../../core/errors.ts";
import { type ChatRequest, type CompletionResult, chatCompletionBody, choicesInOrder, type Usage, zodReason } from "./chat-types.ts";
import { CauseTally, type FailureCause, failureKind, UNREACHABLE_KINDS } from "./endpoint-failures.ts";
import { type CachedCompletion, createRequestCache, legacyRequestCacheKey, type RequestCache, requestCacheKey } from "./request-cache.ts";
import { type BackoffOptions, isRetryableStatus, nextDelay, parseRetryAfter } from "./retry-policy.ts";
import type { TeacherAnswerForm } from "./teacher-answer.ts";

export interface TeacherClientOptions {
  /** OpenAI-compatible API root, e.g. `http://host:8000/v1`; requests go to `/chat/completions` under it. */
  baseUrl: string;
  model: string;
  /** Name of the environment variable holding the API key (default OPENAI_API_KEY). Unset: no Authorization header. */
  apiKeyEnv?: string;
  /** Most HTTP requests in flight at once. */
  concurrency: number;
  /** Most requests started per `rateIntervalMs` (a sliding window). Unset: no rate limit. */
  requestsPerMinute?: number;
  /** The window `requestsPerMinute` is counted over; 60 000 unless a test shortens it. */
  rateIntervalMs?: number;
  /** Further attempts after the first; each retry waits (backoff or Retry-After). */
  maxRetries: number;
  /** Per attempt, from sending the request to the end of the response body. */
  timeoutMs: number;
  backoff: BackoffOptions;
  /** Folder of answered requests; a rerun finds them here and pays nothing. */
  cacheDir?: string;
  /** For tests; the global fetch by default. */
  fetch?: typeof fetch;
  /**
   * Give up on the endpoint once this many HTTP attempts from the start have all failed with one
   * connection or auth error (ECONNREFUSED, HTTP 401, …: endpoint-failures.ts UNREACHABLE_KINDS)
   * and none was answered: nothing more is sent, every later or retried request ends at once with
   * a `not sent: …` reason, and `givenUp()` says why. Unset: never (every request is tried).
   */
  failFastAfter?: number;
}

/** Why a client stopped sending (`failFastAfter`). */
export interface EndpointGivenUp {
  /** The one failure kind every attempt ended with: `ECONNREFUSED`, `HTTP 401`, … */
  kind: string;
  /** One such attempt's reason, as the client gave it. */
  reason: string;
  /** HTTP attempts sent, all failed. */
  requests: number;
}

export interface TeacherStats {
  /** HTTP requests sent (every attempt counts). */
  requests: number;
  /** Results served from the cache or from an identical request already in flight. */
  cacheHits: number;
  /** Attempts that followed a failed one. */
  retries: number;
  /** Results that ended with ok: false. */
  failures: number;
  /** Highest number of HTTP requests in flight at once. */
  maxInFlight: number;
  /** Answers that could not be written to the cache (the result is still returned, but a rerun pays again). */
  cacheWriteErrors: number;
  /** Cache-only requests (replays of an earlier round) the cache did not hold: nothing was sent for them. */
  notCached: number;
}

export interface TeacherClient {
  /**
   * The answer to a request: from the cache, else over HTTP. `cacheOnly`: never sent, a miss ends
   * with ok: false (how a run replays an earlier sampling round: what it did not get then, it does
   * not get now, so a replay keeps that round as it was).
   */
  complete(request: ChatRequest, options?: { cacheOnly?: boolean }): Promise<CompletionResult>;
  stats(): TeacherStats;
  /** Failed HTTP attempts by kind (`HTTP 401`, `ECONNREFUSED`, `timeout`, …), most frequent first. */
  failureKinds?(): FailureCause[];
  /** Set once `failFastAfter` stopped the client sending. */
  givenUp?(): EndpointGivenUp | undefined;
}

/** A cached answer as a result; answers cached before forms were recorded have none (null). */
function fromCache(cached: CachedCompletion): CompletionResult {
  const { forms, ...answer } = cached;
  return { ok: true, ...answer, forms: forms ?? cached.texts.map(() => null), cached: true, attempts: 0 };
}

/** One HTTP attempt's end: an answer, a failure worth retrying, or a final one. */
type Attempt =
  | { kind: "ok"; texts: string[]; finishReasons: (string | null)[]; forms: TeacherAnswerForm[]; usage?: Usage }
  | { kind: "retry" | "fail"; reason: string; status?: number; retryAfterMs?: number; notSent?: true };

const EXCERPT_CHARS = 300;

function checkOptions(options: TeacherClientOptions): void {
  const positiveInt = (name: string, value: number | undefined) => {
    if (value !== undefined && !(Number.isInteger(value) && value > 0))
      throw new UserError(`teacher: ${name} must be a positive integer, got ${value}`);
  };
  positiveInt("concurrency", options.concurrency);
  positiveInt("requestsPerMinute", options.requestsPerMinute);
  positiveInt("rateIntervalMs", options.rateIntervalMs);
  positiveInt("timeoutMs", options.timeoutMs);
  positiveInt("failFastAfter", options.failFastAfter);
  if (!(Number.isInteger(options.maxRetries) && options.maxRetries >= 0))
    throw new UserError(`teacher: maxRetries must be an integer >= 0`);
  if (!(options.backoff.baseMs >= 0 && options.backoff.maxMs >= options.backoff.baseMs)) {
    throw new UserError("teacher: backoff needs 0 <= baseMs <= maxMs");
  }
  let url: URL;
  try {
    url = new URL(options.baseUrl);
  } catch {
    throw new UserError(`teacher: baseUrl is not a URL: ${options.baseUrl}`);
  }
  // fetch refuses such URLs, and a key in a URL ends up in logs: it belongs in the environment.
  if (url.username !== "" || url.password !== "")
    throw new UserError("teacher: baseUrl must not hold credentials; put the key in an environment variable (apiKeyEnv)");
}

/** Text with the API key blanked: a server may echo the Authorization header in an error body. */
function redactor(apiKey: string | undefined): (text: string) => string {
  return apiKey ? (text) => text.replaceAll(apiKey, "<redacted>") : (text) => text;
}

/** The readable part of an error body: OpenAI's `error.message` when present, else the start of the text. */
function errorExcerpt(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown };
    const message = typeof parsed.error === "string" ? parsed.error : (parsed.error?.message ?? parsed.message);
    if (typeof message === "string") return message.slice(0, EXCERPT_CHARS);
  } catch {
    // Not JSON: show the text itself.
  }
  return body.slice(0, EXCERPT_CHARS).trim();
}

/** Why fetch threw, as a reason; timeouts and dropped connections are both retried. */
function describeFetchError(err: unknown, timeoutMs: number): string {
  const error = err as Error & { cause?: { code?: string; message?: string } };
  if (error?.name === "TimeoutError" || error?.name === "AbortError") return `timeout after ${timeoutMs} ms`;
  const cause = error?.cause?.code ?? error?.cause?.message;
  return `network error: ${error?.message ?? String(err)}${cause ? ` (${cause})` : ""}`;
}

/**
 * A client for an OpenAI-compatible chat endpoint (vLLM, SGLang, a hosted API) that asks for
 * `n` candidates per prompt. Concurrency and the rate limit are one p-queue that every HTTP
 * attempt passes through (retries included, since the server counts them too); backoff waits
 * happen outside it so a waiting prompt holds no slot. Answers are cached on disk by a hash of what
 * decides them (`requestCacheKey`: model, messages, sampling; not the endpoint, so a server moved
 * to another port pays nothing again), and identical requests in flight at once share one HTTP call.
 */
export function createTeacherClient(options: TeacherClientOptions): TeacherClient {
  checkOptions(options);
  const fetchImpl = options.fetch ?? globalThis.fetch;
  // Read once; kept only in this closure, never in results, reasons, stats or the cache.
  const apiKey = process.env[options.apiKeyEnv ?? "OPENAI_API_KEY"] || undefined;
  const redact = redactor(apiKey);
  const url = `${options.baseUrl.replace(/\/+$/, "")}/chat/completions`;
  const cache: RequestCache | undefined = options.cacheDir === undefined ? undefined : createRequestCache(options.cacheDir);
  const queue = new PQueue({
    concurrency: options.concurrency,
    ...(options.requestsPerMinute === undefined
      ? {}
      : { interval: options.rateIntervalMs ?? 60_000, intervalCap: options.requestsPerMinute, strict: true }),
  });
  const inFlightByKey = new Map<string, Promise<CompletionResult>>();
  const counters: TeacherStats = {
    requests: 0,
    cacheHits: 0,
    retries: 0,
    failures: 0,
    maxInFlight: 0,
    cacheWriteErrors: 0,
    notCached: 0,
  };
  let inFlight = 0;
  // The fail-fast check: attempts answered, failed attempts by kind, and why sending stopped.
  let answeredAttempts = 0;
  const attemptFailures = new CauseTally();
  let givenUp: EndpointGivenUp | undefined;
  const notSent = (): Attempt => ({
    kind: "fail",
    reason: `not sent: the first ${givenUp?.requests} request(s) to ${options.baseUrl} all failed with ${givenUp?.kind} (${givenUp?.reason})`,
    notSent: true,
  });
  /** Counts an attempt's end; gives up when every attempt so far failed alike with an unreachable kind. */
  function account(outcome: Attempt): void {
    if (outcome.kind === "ok") {
      answeredAttempts += 1;
      return;
    }
    if (outcome.notSent) return;
    const reason = redact(outcome.reason);
    attemptFailures.add(failureKind(reason, outcome.status), reason);
    if (givenUp || options.failFastAfter === undefined || answeredAttempts > 0 || attemptFailures.size !== 1) return;
    const [only] = attemptFailures.top(1) as [FailureCause];
    if (only.count >= options.failFastAfter && UNREACHABLE_KINDS.has(only.kind))
      givenUp = { kind: only.kind, reason: only.example, requests: only.count };
  }

  const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;

  async function attemptOnce(body: string): Promise<Attempt> {
    counters.requests += 1;
    inFlight += 1;
    counters.maxInFlight = Math.max(counters.maxInFlight, inFlight);
    try {
      let status: number;
      let text: string;
      let retryAfter: string | null;
      try {
        // One signal for the whole exchange: a server that stalls mid-body times out too.
        const response = await fetchImpl(url, { method: "POST", headers, body, signal: AbortSignal.timeout(options.timeoutMs) });
        status = response.status;
        retryAfter = response.headers.get("retry-after");
        text = await response.text();
      } catch (err) {
        return { kind: "retry", reason: describeFetchError(err, options.timeoutMs) };
      }
      if (status < 200 || status >= 300) {
        const reason = `HTTP ${status}: ${errorExcerpt(text) || "(empty body)"}`;
        if (!isRetryableStatus(status)) return { kind: "fail", reason, status };
        return { kind: "retry", reason, status, retryAfterMs: parseRetryAfter(retryAfter) };
      }
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        return { kind: "retry", reason: `malformed body: not JSON: ${JSON.stringify(text.slice(0, 80))}`, status };
      }
      const parsed = chatCompletionBody.safeParse(json);
      if (!parsed.success) return { kind: "retry", reason: `malformed body: ${zodReason(parsed.error)}`, status };
      const usage = parsed.data.usage ?? undefined;
      return { kind: "ok", ...choicesInOrder(parsed.data), ...(usage ? { usage } : {}) };
    } finally {
      inFlight -= 1;
    }
  }

  /** The cached answer: under the key, else under the v1 key (which hashed the endpoint), then copied to the key. */
  async function cachedAnswer(key: string, request: ChatRequest): Promise<CachedCompletion | undefined> {
    if (!cache) return undefined;
    const hit = await cache.get(key);
    if (hit) return hit;
    const legacy = await cache.get(legacyRequestCacheKey(options.baseUrl, options.model, request));
    if (legacy)
      await cache.put(key, legacy).catch(() => {
        counters.cacheWriteErrors += 1;
      });
    return legacy;
  }

  async function run(key: string, request: ChatRequest): Promise<CompletionResult> {
    const cached = await cachedAnswer(key, request);
    if (cached) {
      counters.cacheHits += 1;
      return fromCache(cached);
    }
    const body = JSON.stringify({
      model: options.model,
      messages: request.messages,
      n: request.n,
      temperature: request.temperature,
      top_p: request.top_p,
      max_tokens: request.max_tokens,
      seed: request.seed,
    });
    let attempts = 0;
    for (;;) {
      // Once given up, nothing is sent: neither a new request, a queued attempt nor a retry after its backoff.
      const outcome = givenUp ? notSent() : ((await queue.add(() => (givenUp ? notSent() : attemptOnce(body)))) as Attempt);
      if (!(outcome.kind !== "ok" && outcome.notSent)) {
        attempts += 1;
        if (attempts > 1) counters.retries += 1;
      }
      account(outcome);
      if (outcome.kind === "ok") {
        const answer = {
          texts: outcome.texts,
          finishReasons: outcome.finishReasons,
          forms: outcome.forms,
          ...(outcome.usage ? { usage: outcome.usage } : {}),
        };
        // A paid answer is never thrown away for want of a cache file; the stat makes the loss visible.
        await cache?.put(key, answer).catch(() => {
          counters.cacheWriteErrors += 1;
        });
        return { ok: true, ...answer, cached: false, attempts };
      }
      if (outcome.kind === "fail" || attempts > options.maxRetries) {
        counters.failures += 1;
        return { ok: false, reason: redact(outcome.reason), attempts, ...(outcome.status === undefined ? {} : { status: outcome.status }) };
      }
      await sleep(nextDelay(options.backoff, attempts, key, outcome.retryAfterMs));
    }
  }

  return {
    complete(request, how = {}) {
      const key = requestCacheKey(options.model, request);
      const pending = inFlightByKey.get(key);
      if (how.cacheOnly && !pending) {
        return cachedAnswer(key, request).then(
          (cached): CompletionResult => {
            if (cached) {
              counters.cacheHits += 1;
              return fromCache(cached);
            }
            counters.notCached += 1;
            return { ok: false, reason: "not in the cache (cache only: nothing sent)", attempts: 0 };
          },
          (err: unknown): CompletionResult => ({
            ok: false,
            reason: redact(`internal error: ${(err as Error)?.message ?? String(err)}`),
            attempts: 0,
          }),
        );
      }
      if (pending) {
        counters.cacheHits += 1;
        return pending.then((result) => {
          if (result.ok) return { ...result, cached: true, attempts: 0 };
          counters.failures += 1;
          return result;
        });
      }
      const promise = run(key, request)
        .catch((err: unknown): CompletionResult => {
          // Only a cache read (permissions, I/O) can throw here; the prompt still gets a result.
          counters.failures += 1;
          return { ok: false, reason: redact(`internal error: ${(err as Error)?.message ?? String(err)}`), attempts: 0 };
        })
        .finally(() => inFlightByKey.delete(key));
      inFlightByKey.set(key, promise);
      return promise;
    },
    stats: () => ({ ...counters }),
    failureKinds: () => attemptFailures.top(),
    givenUp: () => (givenUp ? { ...givenUp } : undefined),
  };
}
