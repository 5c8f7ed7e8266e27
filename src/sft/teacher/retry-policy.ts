import { createHash } from "node:crypto";

export interface BackoffOptions {
  /** Delay before the first retry; doubles with each further retry. */
  baseMs: number;
  /** Upper bound of any wait, including one a server asks for with Retry-After. */
  maxMs: number;
}

/**
 * Whether an HTTP status is worth another try: 408 (request timeout), 409 (conflict, which some
 * gateways use for "busy"), 429 (rate limited) and every 5xx. Any other 4xx means the request
 * itself is wrong and would fail again, paying again.
 */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * Milliseconds a Retry-After header asks for: delta-seconds (decimals accepted, as some servers
 * send them) or an HTTP date. Undefined when absent or unreadable, so the caller backs off itself.
 */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/**
 * Wait before retry number `retry` (1 = the first retry): exponential, capped, with jitter in
 * [50%, 100%] so many prompts failing together do not return together. The jitter comes from a
 * hash of `seed` (the request key) and the retry number instead of Math.random, so a run's waits
 * are reproducible.
 */
export function backoffDelay(backoff: BackoffOptions, retry: number, seed: string): number {
  const exponential = Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.max(0, retry - 1));
  const digest = createHash("sha256").update(`${seed}:${retry}`).digest();
  const fraction = digest.readUInt32BE(0) / 0xffffffff;
  return Math.round(exponential * (0.5 + fraction / 2));
}

/** The wait before the next attempt: the server's Retry-After when it sent one, else our backoff; never above maxMs. */
export function nextDelay(backoff: BackoffOptions, retry: number, seed: string, retryAfterMs: number | undefined): number {
  if (retryAfterMs !== undefined) return Math.min(backoff.maxMs, retryAfterMs);
  return backoffDelay(backoff, retry, seed);
}
