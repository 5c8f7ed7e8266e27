/**
 * How the controls' teacher stages (`rephrase`, `synthesis-teacher`) reach their teacher, and what
 * a failed request means for them (docs/controls.md "Teacher failures").
 *
 * A request is answered (and cached), refused for good (an HTTP 4xx other than 401/403/404 and
 * 408/409/429: the request itself is wrong and would be refused again), or failed for a transient reason (timeout,
 * 5xx, 429, a dropped or refused connection, a malformed body) after its retries. A transient
 * failure must not end up in the output: a rerun from the same cache could get an answer and write
 * other bytes. So a unit with any transient failure writes nothing and fails, naming the causes;
 * a rerun resends only what failed (the answers are cached). Only answers and final refusals are
 * written, and both are the same on every run from the same cache and teacher.
 */
import type { z } from "zod";
import type { controlsTeacherEndpoint } from "../config/schema.ts";
import { UserError } from "../core/errors.ts";
import { CauseTally, causesText, failureFix, failureKind, UNREACHABLE_KINDS } from "../sft/teacher/endpoint-failures.ts";
import { createTeacherClient, type TeacherClient } from "../sft/teacher/openai-client.ts";
import { isRetryableStatus } from "../sft/teacher/retry-policy.ts";

/** The endpoint settings both stages share (src/config/schema.ts `controlsTeacherEndpoint`). */
export type ControlsTeacherEndpoint = z.infer<typeof controlsTeacherEndpoint>;

/** The endpoint a run uses: `base_url_env`'s value when set, else `base_url`. */
export function endpointUrl(endpoint: Pick<ControlsTeacherEndpoint, "base_url" | "base_url_env">, env = process.env): string {
  return env[endpoint.base_url_env] || endpoint.base_url;
}

/** A client for one stage: gives up once its first attempts all fail alike (nothing listens, the key is refused). */
export function createControlsTeacherClient(
  endpoint: ControlsTeacherEndpoint,
  options: { fetch?: typeof fetch; backoffMs?: number } = {},
): TeacherClient {
  return createTeacherClient({
    baseUrl: endpointUrl(endpoint),
    model: endpoint.model,
    apiKeyEnv: endpoint.api_key_env,
    concurrency: endpoint.concurrency,
    maxRetries: endpoint.max_retries,
    timeoutMs: endpoint.timeout_ms,
    backoff: { baseMs: options.backoffMs ?? 1000, maxMs: 60_000 },
    cacheDir: endpoint.cache_dir,
    failFastAfter: 8,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}

/** One client per thread and stage of a job (its concurrency holds across the units it runs), by the stage's endpoint settings. */
const stageClients = new WeakMap<ControlsTeacherEndpoint, TeacherClient>();

/** The client of a stage whose endpoint settings are `endpoint`; `given` (a test's) is used as it is. */
export function stageTeacherClient(endpoint: ControlsTeacherEndpoint, given?: TeacherClient): TeacherClient {
  if (given) return given;
  let client = stageClients.get(endpoint);
  if (!client) {
    client = createControlsTeacherClient(endpoint);
    stageClients.set(endpoint, client);
  }
  return client;
}

/**
 * What an output line records of a failed request: only the failure's kind (a reason can hold a
 * port or a server's message, and the file is output); `failed` keeps the reason for the unit's
 * error and is not written.
 */
export function failedRequest(result: { reason: string; status?: number }): {
  problems: string[];
  failed: { reason: string; status?: number };
} {
  return {
    problems: [failureKind(result.reason, result.status)],
    failed: { reason: result.reason, ...(result.status === undefined ? {} : { status: result.status }) },
  };
}

/**
 * Whether a failed request was refused for good: a 4xx the client does not retry (400, 413, 422:
 * the request itself is wrong), but not 401/403/404, which say the key, model or path is wrong for
 * every request and are fixed by the user, not by the request.
 */
export function isFinalRefusal(status: number | undefined): boolean {
  return status !== undefined && status >= 400 && status < 500 && !isRetryableStatus(status) && !UNREACHABLE_KINDS.has(`HTTP ${status}`);
}

/** A stage that cannot use its teacher: no marker is written for the unit, so a rerun tries again. */
export class ControlsTeacherError extends UserError {
  constructor(message: string) {
    super(message);
    this.name = "ControlsTeacherError";
  }
}

/** Where the settings live and how to turn the stage off, for the messages. */
export interface StageSettings {
  /** `controls.rephrase`, `controls.synthesis.teacher`. */
  key: string;
  /** How to turn the stage off, e.g. `controls.rephrase.share: 0`. */
  off: string;
}

/** The error when the client gave up on the endpoint (every attempt so far failed alike), or every request of the unit failed. */
export function endpointDownError(
  endpoint: ControlsTeacherEndpoint,
  stage: StageSettings,
  down: { kind: string; reason: string; requests: number },
  env = process.env,
): ControlsTeacherError {
  const baseUrl = endpointUrl(endpoint, env);
  const fix = failureFix(down.kind, { baseUrl, apiKeyEnv: endpoint.api_key_env, model: endpoint.model, settings: stage.key }, env);
  return new ControlsTeacherError(
    `${stage.key}: the teacher at ${baseUrl} cannot be used: all ${down.requests} requests failed with ${down.kind} (${down.reason}); ${fix}. ` +
      `Nothing was written for this unit; set ${endpoint.base_url_env} or ${stage.key}.base_url, or ${stage.off}.`,
  );
}

/** The transient failures of one unit, tallied by kind. */
export class TransientFailures {
  private readonly tally = new CauseTally();
  count = 0;

  /** Records a failed request; returns whether it was a transient failure (final refusals are the caller's to write). */
  add(reason: string, status: number | undefined): boolean {
    if (isFinalRefusal(status)) return false;
    this.count += 1;
    this.tally.add(failureKind(reason, status), reason);
    return true;
  }

  /** The error that stops the unit, or undefined when every request was answered or refused for good. */
  error(endpoint: ControlsTeacherEndpoint, stage: StageSettings, asked: number, env = process.env): ControlsTeacherError | undefined {
    if (this.count === 0) return undefined;
    return new ControlsTeacherError(
      `${stage.key}: ${this.count} of ${asked} requests to the teacher at ${endpointUrl(endpoint, env)} still failed after ${endpoint.max_retries} retries ` +
        `(${causesText(this.tally.top())}). Nothing was written for this unit, so the output never depends on which requests happened to fail; ` +
        `rerun to ask again (answers received are cached and not paid for twice), or raise ${stage.key}.max_retries or timeout_ms.`,
    );
  }
}
