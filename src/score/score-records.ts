import { UserError } from "../core/errors.ts";
import type { Trajectory } from "../core/trajectory.ts";
import type { ChatMessage, CompletionResult } from "../sft/teacher/chat-types.ts";
import { createTeacherClient, type TeacherClient } from "../sft/teacher/openai-client.ts";
import type { BackoffOptions } from "../sft/teacher/retry-policy.ts";
import { observationTurns, parseScoreReply, renderTrajectory, trajectoryMessages, turnMessages } from "./score-prompt.ts";
import type { Scorer } from "./score-schema.ts";

/** One record of a unit to score; `key` is the caller's (its item number in the unit), returned as given. */
export interface ScoreInput {
  key: number;
  trajectory: Trajectory;
}

/** ok: scored. malformed: the answer held no usable score. failed: no answer (after retries). skipped: nothing to score. */
export type ScoreStatus = "ok" | "malformed" | "failed" | "skipped";

export interface TurnScore {
  /** 1-based, as in the prompt. */
  turn: number;
  score: number | null;
  reason: string;
  status: Exclude<ScoreStatus, "skipped">;
}

export interface ScoredRecord {
  key: number;
  /** null unless status is ok. */
  score: number | null;
  /** The model's reason; `malformed: …`, `failed: …` or `skipped: …` when there is no score. */
  reason: string;
  status: ScoreStatus;
  /** Prompts this record needed (1 for a trajectory scorer, one per observation turn for a turns scorer). */
  requests: number;
  /** Of those, answered from the cache (or an identical request in flight): nothing paid. */
  cached: number;
  /** HTTP attempts sent for this record, retries included (0 on a rerun). */
  http_requests: number;
  /** From the answers' usage, cached or not; 0 when the server reports none. */
  prompt_tokens: number;
  completion_tokens: number;
  /** Per scored turn, for a turns scorer. */
  turns?: TurnScore[];
}

/** A unit's totals, for the manifest and the run report. */
export interface ScoreSummary {
  records: number;
  ok: number;
  malformed: number;
  failed: number;
  skipped: number;
  requests: number;
  cached: number;
  http_requests: number;
  /** Attempts that repeated a failed one. */
  retries: number;
  prompt_tokens: number;
  completion_tokens: number;
  /** Tokens of answers paid in this run (not from the cache). */
  paid_prompt_tokens: number;
  paid_completion_tokens: number;
}

export interface ScoreOptions {
  /** A client to share across units (one queue, rate limit and cache per scorer in a process); else one is made. */
  client?: TeacherClient;
  /** For tests, when no client is given: the HTTP function, a short backoff and rate window. */
  fetch?: typeof fetch;
  backoff?: BackoffOptions;
  rateIntervalMs?: number;
  /** Records in flight at once; results still come out in input order. Default: twice the scorer's concurrency. */
  window?: number;
  /**
   * Give up on the unit after this many failed requests in a row from its start, all with one
   * connection or auth error and no answer yet (default 16): the endpoint is down or refuses the
   * key, and every further request would fail the same way after its retries.
   */
  failFastAfter?: number;
}

/** What a scorer's client needs; the backoff is the SFT run's. */
export function createScorerClient(
  scorer: Scorer,
  options: Pick<ScoreOptions, "fetch" | "backoff" | "rateIntervalMs"> = {},
): TeacherClient {
  return createTeacherClient({
    baseUrl: scorer.base_url,
    model: scorer.model,
    apiKeyEnv: scorer.api_key_env,
    concurrency: scorer.concurrency,
    ...(scorer.requests_per_minute > 0 ? { requestsPerMinute: scorer.requests_per_minute } : {}),
    ...(options.rateIntervalMs === undefined ? {} : { rateIntervalMs: options.rateIntervalMs }),
    maxRetries: scorer.max_retries,
    timeoutMs: scorer.timeout_ms,
    backoff: options.backoff ?? { baseMs: 1000, maxMs: 60_000 },
    cacheDir: scorer.cache_dir,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}

/**
 * Thrown when every request of a unit failed with one connection or auth error: writing all-null
 * scores would hide a down endpoint or a missing key behind a column of nulls.
 */
export class ScoringEndpointError extends UserError {
  readonly scorer: string;
  /** The failure every request ended with: `HTTP 401`, `ECONNREFUSED`, … */
  readonly signature: string;
  constructor(scorer: string, signature: string, message: string) {
    super(message);
    this.name = "ScoringEndpointError";
    this.scorer = scorer;
    this.signature = signature;
  }
}

/** A failed request's kind: the HTTP status, else the network error code, else the reason. */
function failureSignature(result: Extract<CompletionResult, { ok: false }>): string {
  if (result.status !== undefined) return `HTTP ${result.status}`;
  const code = /\(([A-Z][A-Z0-9_]+)\)\s*$/.exec(result.reason)?.[1];
  if (code) return code;
  if (result.reason.startsWith("timeout")) return "timeout";
  return result.reason;
}

/** Errors no retry or later request will cure: nothing listens, the host is unknown, the key or the path is refused. */
const FATAL = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "HTTP 401", "HTTP 403", "HTTP 404"]);

function endpointError(scorer: Scorer, signature: string, reason: string, failed: number): ScoringEndpointError {
  const keySet = process.env[scorer.api_key_env] ? "is set" : "is not set";
  const hint = /^HTTP 40[13]$/.test(signature)
    ? `the server refused the API key: check ${scorer.api_key_env} (it ${keySet})`
    : signature === "HTTP 404"
      ? `check base_url (requests go to <base_url>/chat/completions) and the model name ${JSON.stringify(scorer.model)}`
      : `is a server listening at base_url? (${scorer.api_key_env} ${keySet})`;
  return new ScoringEndpointError(
    scorer.name,
    signature,
    `scorer ${scorer.name}: all ${failed} requests to ${scorer.base_url} failed with ${signature} (${reason}); ${hint}. Nothing was written for this unit.`,
  );
}

interface Asked {
  score: number | null;
  reason: string;
  status: Exclude<ScoreStatus, "skipped">;
  cached: boolean;
  http: number;
  retries: number;
  promptTokens: number;
  completionTokens: number;
  /** For a failure: its kind and reason, for the unit's connection check. */
  failure?: { signature: string; reason: string };
}

async function ask(client: TeacherClient, scorer: Scorer, messages: ChatMessage[]): Promise<Asked> {
  const result = await client.complete({ messages, n: 1, temperature: scorer.temperature, max_tokens: scorer.max_tokens });
  if (!result.ok) {
    const retries = Math.max(0, result.attempts - 1);
    const failure = { signature: failureSignature(result), reason: result.reason };
    return {
      score: null,
      reason: `failed: ${result.reason}`,
      status: "failed",
      cached: false,
      http: result.attempts,
      retries,
      promptTokens: 0,
      completionTokens: 0,
      failure,
    };
  }
  const usage = { promptTokens: result.usage?.prompt_tokens ?? 0, completionTokens: result.usage?.completion_tokens ?? 0 };
  const common = { cached: result.cached, http: result.attempts, retries: Math.max(0, result.attempts - 1), ...usage };
  const parsed = parseScoreReply(result.texts[0] ?? "", scorer.scale);
  if (parsed.ok) return { score: parsed.score, reason: parsed.reason, status: "ok", ...common };
  const cutShort = result.finishReasons[0] === "length" ? ` (the answer was cut at max_tokens ${scorer.max_tokens})` : "";
  return { score: null, reason: `malformed: ${parsed.reason}${cutShort}`, status: "malformed", ...common };
}

function aggregate(how: Scorer["aggregate"], scores: number[]): number {
  if (how === "min") return Math.min(...scores);
  if (how === "max") return Math.max(...scores);
  return scores.reduce((sum, score) => sum + score, 0) / scores.length;
}

interface Scored {
  record: ScoredRecord;
  answered: number;
  retries: number;
  paidPromptTokens: number;
  paidCompletionTokens: number;
  failures: { signature: string; reason: string }[];
}

function tally(key: number, asked: Asked[]): Omit<ScoredRecord, "score" | "reason" | "status"> & Omit<Scored, "record"> {
  const paid = asked.filter((a) => !a.cached);
  return {
    key,
    requests: asked.length,
    cached: asked.filter((a) => a.cached).length,
    http_requests: asked.reduce((sum, a) => sum + a.http, 0),
    prompt_tokens: asked.reduce((sum, a) => sum + a.promptTokens, 0),
    completion_tokens: asked.reduce((sum, a) => sum + a.completionTokens, 0),
    answered: asked.filter((a) => a.status !== "failed").length,
    retries: asked.reduce((sum, a) => sum + a.retries, 0),
    paidPromptTokens: paid.reduce((sum, a) => sum + a.promptTokens, 0),
    paidCompletionTokens: paid.reduce((sum, a) => sum + a.completionTokens, 0),
    failures: asked.flatMap((a) => (a.failure ? [a.failure] : [])),
  };
}

async function scoreOne(client: TeacherClient, scorer: Scorer, input: ScoreInput): Promise<Scored> {
  const { trajectory } = input;
  if (scorer.scope === "trajectory") {
    const asked = await ask(client, scorer, trajectoryMessages(trajectory, scorer.rubric, scorer.scale, scorer.max_chars));
    const { answered, retries, paidPromptTokens, paidCompletionTokens, failures, ...counts } = tally(input.key, [asked]);
    const record = { ...counts, score: asked.score, reason: asked.reason, status: asked.status };
    return { record, answered, retries, paidPromptTokens, paidCompletionTokens, failures };
  }
  const indices = observationTurns(trajectory);
  const asked = await Promise.all(
    indices.map((index) => ask(client, scorer, turnMessages(trajectory, index, scorer.rubric, scorer.scale, scorer.max_chars))),
  );
  const { answered, retries, paidPromptTokens, paidCompletionTokens, failures, ...counts } = tally(input.key, asked);
  const turns: TurnScore[] = asked.map((a, i) => ({
    turn: (indices[i] as number) + 1,
    score: a.score,
    reason: a.reason,
    status: a.status,
  }));
  let record: ScoredRecord;
  if (turns.length === 0) {
    record = { ...counts, score: null, reason: "skipped: no turn with an observation to score", status: "skipped", turns };
  } else {
    // A failed turn outranks a malformed one: a rerun may fix it. Either leaves no record score,
    // since an aggregate over the turns that happened to answer would misstate a min or a mean.
    const bad = turns.find((t) => t.status === "failed") ?? turns.find((t) => t.status === "malformed");
    if (bad) {
      const [kind, ...rest] = bad.reason.split(": ");
      record = { ...counts, score: null, reason: `${kind}: turn ${bad.turn}: ${rest.join(": ")}`, status: bad.status, turns };
    } else {
      const scores = turns.map((t) => t.score as number);
      const pick = scorer.aggregate === "max" ? Math.max(...scores) : Math.min(...scores);
      const shown = turns.find((t) => t.score === pick) as TurnScore;
      const which = scorer.aggregate === "max" ? "highest" : "lowest";
      record = {
        ...counts,
        score: aggregate(scorer.aggregate, scores),
        reason: `${scorer.aggregate} of ${turns.length} turns; ${which}: turn ${shown.turn} (${shown.score}): ${shown.reason}`,
        status: "ok",
        turns,
      };
    }
  }
  return { record, answered, retries, paidPromptTokens, paidCompletionTokens, failures };
}

export interface ScoreRun {
  /** The scored records, in input order; iterate once. Throws ScoringEndpointError when the endpoint is unusable. */
  results: AsyncIterable<ScoredRecord>;
  /** Totals so far; final once `results` is exhausted. */
  summary(): ScoreSummary;
}

/**
 * Scores one unit's records with one scorer. Records are scored `window` at a time and come out
 * in input order; every record comes out, with a null score and its reason when it has none
 * (records in = records out). Faults are retried by the client; a rerun with the same cache
 * folder sends nothing for what was answered, malformed answers included (they are answers).
 */
export function scoreRecords(
  records: AsyncIterable<ScoreInput> | Iterable<ScoreInput>,
  scorer: Scorer,
  options: ScoreOptions = {},
): ScoreRun {
  const client = options.client ?? createScorerClient(scorer, options);
  const window = options.window ?? scorer.concurrency * 2;
  const failFastAfter = options.failFastAfter ?? 16;
  if (!(Number.isInteger(window) && window > 0))
    throw new UserError(`scorer ${scorer.name}: window must be a positive integer, got ${window}`);
  const totals: ScoreSummary = {
    records: 0,
    ok: 0,
    malformed: 0,
    failed: 0,
    skipped: 0,
    requests: 0,
    cached: 0,
    http_requests: 0,
    retries: 0,
    prompt_tokens: 0,
    completion_tokens: 0,
    paid_prompt_tokens: 0,
    paid_completion_tokens: 0,
  };
  // The unit's connection check: answers seen, and the kinds of failure while there are none.
  let answered = 0;
  let failedRequests = 0;
  const signatures = new Map<string, string>();

  function account(scored: Scored): void {
    const { record } = scored;
    totals.records += 1;
    totals[record.status] += 1;
    totals.requests += record.requests;
    totals.cached += record.cached;
    totals.http_requests += record.http_requests;
    totals.retries += scored.retries;
    totals.prompt_tokens += record.prompt_tokens;
    totals.completion_tokens += record.completion_tokens;
    totals.paid_prompt_tokens += scored.paidPromptTokens;
    totals.paid_completion_tokens += scored.paidCompletionTokens;
    answered += scored.answered;
    failedRequests += scored.failures.length;
    for (const failure of scored.failures) if (!signatures.has(failure.signature)) signatures.set(failure.signature, failure.reason);
  }

  /** The one fatal failure kind every request so far ended with, if so. */
  function allFailedAlike(): [string, string] | undefined {
    if (answered > 0 || failedRequests === 0 || signatures.size !== 1) return undefined;
    const only = [...signatures][0] as [string, string];
    return FATAL.has(only[0]) ? only : undefined;
  }

  async function* run(): AsyncGenerator<ScoredRecord> {
    const pending: Promise<Scored>[] = [];
    const emit = async () => {
      const scored = await (pending.shift() as Promise<Scored>);
      account(scored);
      const fatal = failedRequests >= failFastAfter ? allFailedAlike() : undefined;
      if (fatal) throw endpointError(scorer, fatal[0], fatal[1], failedRequests);
      return scored.record;
    };
    for await (const input of records) {
      pending.push(scoreOne(client, scorer, input));
      if (pending.length >= window) {
        yield await emit();
      }
    }
    while (pending.length > 0) yield await emit();
  }

  /**
   * Results held back while every request so far failed alike: once the unit ends that way it
   * throws instead, so no all-null unit is ever handed out; the first answer releases them.
   */
  async function* guarded(): AsyncGenerator<ScoredRecord> {
    const held: ScoredRecord[] = [];
    for await (const record of run()) {
      if (allFailedAlike()) {
        held.push(record);
        continue;
      }
      yield* held.splice(0);
      yield record;
    }
    const fatal = allFailedAlike();
    if (fatal) throw endpointError(scorer, fatal[0], fatal[1], failedRequests);
    yield* held;
  }

  return { results: guarded(), summary: () => ({ ...totals }) };
}

/** Characters a prompt holds besides the trajectory text: the instructions around the rubric and the text. */
const PROMPT_OVERHEAD_CHARS = 600;
/** A rough English/code average; the estimate is for planning, not billing. */
export const CHARS_PER_TOKEN = 4;
/** A JSON score and a sentence or two of reason (models that think answer longer, up to max_tokens). */
const ANSWER_TOKENS = 80;

export interface ScoringEstimate {
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
}

/**
 * What a scorer will ask for `records` records whose rendered text (`renderTrajectory`) averages
 * `meanChars` characters and, for a turns scorer, `meanTurns` observation turns: requests, and
 * tokens at ~4 characters a token. A turn's prompt holds the trajectory up to that turn, on
 * average (n + 1) / 2n of it. Before the cache: a rerun pays for none of it.
 */
export function estimateScoring(scorer: Scorer, input: { records: number; meanChars: number; meanTurns?: number }): ScoringEstimate {
  const perPrompt = (textChars: number) =>
    Math.ceil((PROMPT_OVERHEAD_CHARS + scorer.rubric.length + Math.min(textChars, scorer.max_chars)) / CHARS_PER_TOKEN);
  const answer = Math.min(ANSWER_TOKENS, scorer.max_tokens);
  if (scorer.scope === "trajectory") {
    return {
      requests: input.records,
      prompt_tokens: input.records * perPrompt(input.meanChars),
      completion_tokens: input.records * answer,
    };
  }
  const turns = Math.max(0, input.meanTurns ?? 0);
  const requests = Math.round(input.records * turns);
  const share = turns > 0 ? (turns + 1) / (2 * turns) : 0;
  return { requests, prompt_tokens: requests * perPrompt(input.meanChars * share), completion_tokens: requests * answer };
}

/** The text `estimateScoring` measures, for a planner that samples records: characters and observation turns. */
export function scoringSize(trajectory: Trajectory): { chars: number; turns: number } {
  return { chars: renderTrajectory(trajectory).length, turns: observationTurns(trajectory).length };
}
