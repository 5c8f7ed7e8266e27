import { setTimeout as sleep } from "node:timers/promises";
import { scrubSecrets } from "../../hub/scrub-secrets.ts";

/**
 * HTTP to the Hugging Face Hub for `hf://` inputs: the endpoint and token from the environment
 * (as `huggingface_hub` reads them), retries with backoff, and redirects followed by hand so the
 * token goes to the Hub only, never to the storage a file redirects to (the CDN's URLs are signed).
 */

export const DEFAULT_HUB_ENDPOINT = "https://huggingface.co";

/** `HF_ENDPOINT` (a mirror, a local server) without a trailing slash, else the public Hub. */
export function hubEndpoint(): string {
  return (process.env.HF_ENDPOINT || DEFAULT_HUB_ENDPOINT).replace(/\/+$/, "");
}

/** `HF_TOKEN`, else `HUGGING_FACE_HUB_TOKEN`; never written anywhere by lwm-data. */
export function hubToken(): string | undefined {
  return process.env.HF_TOKEN || process.env.HUGGING_FACE_HUB_TOKEN || undefined;
}

/** Attempts per request (the first included) before a 429, 5xx or network failure is final. */
export const MAX_ATTEMPTS = 8;
const BASE_DELAY_MS = 400;
const MAX_DELAY_MS = 20_000;
/** A server's `Retry-After` is obeyed up to this. */
const MAX_RETRY_AFTER_MS = 60_000;
const MAX_REDIRECTS = 10;

/** Wait before attempt `attempt + 1`: exponential with jitter, or the server's Retry-After. */
export function backoffMs(attempt: number, retryAfter?: string | null): number {
  const seconds = retryAfter ? Number(retryAfter) : Number.NaN;
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, MAX_RETRY_AFTER_MS);
  const ceiling = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** (attempt - 1));
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

export function retryableStatus(status: number): boolean {
  return status === 429 || status === 408 || (status >= 500 && status !== 501 && status !== 505);
}

/** A request that could not get an answer at all (DNS, refused, reset), after every retry. */
export class HubUnreachableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "HubUnreachableError";
  }
}

/** What the last answer of a request said about itself (the Hub names its errors in `X-Error-Code`). */
export interface ResponseNote {
  status?: number;
  errorCode?: string;
}

/**
 * `fetch` for the Hub: the token added for the Hub's own origin only, redirects followed (the
 * token dropped when one leaves that origin), 429 / 5xx / network failures retried with backoff.
 * The final answer is returned whatever its status; `note` records its status and error code.
 */
export async function hubFetch(
  url: string | URL,
  init: { headers?: Record<string, string> } = {},
  note: ResponseNote = {},
): Promise<Response> {
  const origin = new URL(hubEndpoint()).origin;
  const token = hubToken();
  for (let attempt = 1; ; attempt++) {
    let response: Response;
    try {
      response = await fetchFollowing(new URL(url), init.headers ?? {}, origin, token);
    } catch (err) {
      if (attempt >= MAX_ATTEMPTS) throw new HubUnreachableError(`cannot reach ${new URL(url).origin}: ${describeNetworkError(err)}`);
      await sleep(backoffMs(attempt));
      continue;
    }
    note.status = response.status;
    const code = response.headers.get("x-error-code");
    if (code) note.errorCode = code;
    else delete note.errorCode;
    if (retryableStatus(response.status) && attempt < MAX_ATTEMPTS) {
      await response.body?.cancel().catch(() => {});
      await sleep(backoffMs(attempt, response.headers.get("retry-after")));
      continue;
    }
    return response;
  }
}

async function fetchFollowing(start: URL, headers: Record<string, string>, origin: string, token: string | undefined): Promise<Response> {
  let url = start;
  for (let hop = 0; ; hop++) {
    const auth = token && url.origin === origin ? { Authorization: `Bearer ${token}` } : {};
    const response = await fetch(url, { headers: { ...headers, ...auth }, redirect: "manual" });
    const location = response.headers.get("location");
    if (response.status < 300 || response.status >= 400 || !location || hop >= MAX_REDIRECTS) return response;
    await response.body?.cancel().catch(() => {});
    url = new URL(location, url);
  }
}

/** fetch() reports network failures as "fetch failed", the real reason (ECONNRESET…) in `cause`. */
export function describeNetworkError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? ` (${(err.cause as NodeJS.ErrnoException).code ?? err.cause.message})` : "";
  return scrub(`${err.message}${cause}`);
}

/** The server's own words about a failed answer (its JSON `error`, else the text), scrubbed and capped. */
export async function serverMessage(response: Response): Promise<string> {
  const text = await response.text().catch(() => "");
  let message = text;
  try {
    const json = JSON.parse(text) as { error?: unknown; message?: unknown };
    if (typeof json.error === "string") message = json.error;
    else if (typeof json.message === "string") message = json.message;
  } catch {
    // not JSON: the text as it is
  }
  message = message.replace(/\s+/g, " ").trim();
  return scrub(message.length > 300 ? `${message.slice(0, 300)}…` : message);
}

/** Text meant for people, with the token (and anything shaped like a Hub token) removed. */
export function scrub(text: string): string {
  return scrubSecrets(text, hubToken());
}
