import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import PQueue from "p-queue";
import { stableStringify } from "../config/load-config.ts";
import type { QuarantineEntry } from "../core/errors.ts";
import { UserError } from "../core/errors.ts";
import { escaperFor, textRuleMetadata } from "../export/special-literals.ts";
import { fileSha256 } from "../io/file-sha256.ts";
import { writeJsonFile } from "../io/json-file.ts";
import { type ManifestHeader, manifestTokenizer, type ShardLayout, shardLayout } from "../output/manifest.ts";
import { splitForTrajectory } from "../output/split-assignment.ts";
import type { OutputFile } from "../output/task-state.ts";
import { addTokens, type DomainTotals, entry, zeroDomain } from "../output/task-totals.ts";
import { type PackingSummary, packingSummary } from "../pack/packing-summary.ts";
import type { JobPlan } from "../pipeline/plan.ts";
import { type StopSignal, stopRequested } from "../pipeline/stop-signal.ts";
import { outputFile } from "../records/task-output.ts";
import { writeDatasetCard } from "../write/dataset-card.ts";
import { ParquetShardWriter, packOption, type ShardInfo } from "../write/parquet-shard-writer.ts";
import { QuarantineWriter } from "../write/quarantine-writer.ts";
import { type CandidateRow, openCandidatesTable } from "./candidates-table.ts";
import { KeepPolicy, type KeepPolicyReport } from "./diversity/keep-policy.ts";
import { type JudgeSummary, JudgeTally, judgeColumns, judgeEndpoint } from "./judge/judge-summary.ts";
import { type SelectionReport, screenPrompts } from "./prompts/screen-prompts.ts";
import { type SftPrompt, teacherMessages } from "./prompts/sft-prompt.ts";
import { applyJudge, type CandidateOutcome, checkCandidate, type JudgeSettings, reasonsText } from "./select-candidate.ts";
import { sftSample } from "./sft-sample.ts";
import { type CandidateFileError, readCandidateFiles } from "./teacher/candidate-files.ts";
import { CauseTally, causesText, type FailureCause, failureFix, failureKind, missingKeyWarning } from "./teacher/endpoint-failures.ts";
import { judgeCandidate } from "./teacher/judge.ts";
import { createTeacherClient, type EndpointGivenUp, type TeacherClient, type TeacherStats } from "./teacher/openai-client.ts";
import type { BackoffOptions } from "./teacher/retry-policy.ts";
import {
  clearRoundsState,
  planRounds,
  readPreviousRounds,
  type SampleRound,
  type SampleRoundCounts,
  sampleOverRounds,
  writeRoundsState,
  zeroRoundCounts,
} from "./teacher/sample-rounds.ts";
import type { TeacherAnswerForm } from "./teacher/teacher-answer.ts";
import { DEFAULT_VERIFY_THRESHOLDS, type VerifyThresholds } from "./verify/index.ts";

export interface SftRunOptions {
  outputDir: string;
  /** Read candidates from these files (JSONL or OpenAI batch output) instead of asking the teacher. */
  candidateFiles?: string[];
  /**
   * `sft sample --resample-rejected`: one more sampling round, seed `sft.seed + round`, for the
   * prompts no earlier round gave a passing candidate (src/sft/teacher/sample-rounds.ts).
   */
  resampleRejected?: boolean;
  /** Replace an output folder that holds something other than an SFT output of ours. */
  overwrite?: boolean;
  /** For tests: the HTTP client and a short rate window / backoff. */
  fetch?: typeof fetch;
  rateIntervalMs?: number;
  backoff?: BackoffOptions;
  onProgress?: (progress: SftCounts) => void;
  /** SIGINT/SIGTERM: stop between prompts, leaving the teacher cache as the resumable state (throws SftStopped). */
  stop?: StopSignal;
  /** Warnings worth a person's eye before the first request (an unset API key variable for a remote endpoint). */
  onWarning?: (message: string) => void;
  /**
   * Stop (SftFailed) once this many HTTP requests from the start all failed with one connection or
   * auth error and none was answered (default 16): the endpoint is down or refuses the key.
   */
  failFastAfter?: number;
}

/** Requests that must all fail alike before a run gives up on its endpoint. */
export const FAIL_FAST_AFTER = 16;

/**
 * Thrown (a UserError: exit 1, the message on stderr) when the run's work failed as a whole: the
 * teacher or the judge endpoint refused or did not answer its first requests (`endpoint`, nothing
 * more was sent), or every prompt failed (`all-failed`). No manifest is written; answers received
 * are in the teacher cache and the rerun resumes.
 */
export class SftFailed extends UserError {
  readonly why: "endpoint" | "all-failed";
  readonly counts: SftCounts;
  /** Failed prompts by cause (all-failed), or failed requests by kind (endpoint). */
  readonly causes: FailureCause[];
  constructor(why: SftFailed["why"], message: string, counts: SftCounts, causes: FailureCause[]) {
    super(message);
    this.name = "SftFailed";
    this.why = why;
    this.counts = { ...counts };
    this.causes = causes;
  }
}

/**
 * Thrown when a stop request ended the run: no manifest is written, the answers received so far
 * are in the teacher cache, and a rerun of the same command resumes (its output equals an
 * uninterrupted run's).
 */
export class SftStopped extends Error {
  readonly counts: SftCounts;
  constructor(counts: SftCounts) {
    super(`stopped on request after ${counts.prompts} prompt(s)`);
    this.name = "SftStopped";
    this.counts = { ...counts };
  }
}

export interface SftCounts {
  records_in: number;
  quarantined: number;
  prompts: number;
  kept: number;
  rejected: number;
  failed: number;
  candidates: number;
}

type DomainCounts = Omit<SftCounts, "records_in" | "quarantined"> & { candidates_passed: number };

export interface SftManifest {
  format: "lwm-data/sft";
  version: 2;
  config_sha256: string;
  tokenizer: ManifestHeader["tokenizer"];
  template: { source: string; sha256: string };
  select: JobPlan["config"]["sft"]["select"];
  hints: boolean;
  /** prompts = kept + rejected + failed; records_in = trajectories read + quarantined. */
  counts: SftCounts;
  /** Selected turns that did not become prompts (no context, conflicting twins): src/sft/prompts/screen-prompts.ts. */
  selection: SelectionReport;
  tokens: { total: number; loss: number };
  /** How rows are laid out (split settings, packing). */
  layout: ShardLayout;
  /** Per split: kept samples, tokens, loss tokens. */
  splits: Record<string, DomainTotals>;
  packing: PackingSummary | null;
  by_domain: Record<string, DomainCounts>;
  /** Per rule: candidates it ran on and how many it failed (a rule that could not run, `skipped`, counts in neither). */
  by_rule: Record<string, { evaluated: number; failed: number }>;
  teacher:
    | { source: "endpoint"; base_url: string; model: string; n: number; stats: TeacherStats }
    | {
        source: "files";
        files: string[];
        errors: CandidateFileError[];
        /** The endpoint the resample rounds asked (round 0 read the files). */
        endpoint?: { base_url: string; model: string; n: number; stats: TeacherStats };
      };
  /**
   * How the teacher returned the thinking, per form (`content`: a `<think>` block in the content;
   * `reasoning_content`, `reasoning`, …: a separate field, src/sft/teacher/teacher-answer.ts;
   * `unknown`: answers cached before forms were recorded): candidates and kept samples.
   */
  teacher_forms: Record<string, { candidates: number; kept: number }>;
  /** Sampling rounds: round 0, then one per `--resample-rejected`; each with its seed and the prompts it asked for. */
  rounds: SampleRoundCounts[];
  /** The LLM judge, when enabled: endpoint, model, rubrics, candidates judged, mean scores per domain. */
  judge: JudgeSummary | null;
  /**
   * Which passing candidates were kept (src/sft/diversity/keep-policy.ts): the preference among
   * equally good ones, truncated candidates, near-duplicate clusters of kept thinking and what
   * their cap passed over (capped prompts are in counts.rejected), quotas and the prompts set
   * aside past them (not in counts.prompts).
   */
  keep_policy: KeepPolicyReport;
  shards: OutputFile[];
  candidates_table: OutputFile | null;
  quarantine: { path: string; entries: number; bytes: number; sha256: string } | null;
  /** The dataset card, README.md. */
  card?: { path: string; bytes: number; sha256: string };
}

/** What an SFT output folder holds; cleared at the start of a run (the teacher cache makes reruns free). */
const OWNED = ["data", "sft", "quarantine", "manifest.json", "README.md"];

async function prepareOutputDir(outputDir: string, overwrite: boolean): Promise<void> {
  const entries = existsSync(outputDir) ? await readdir(outputDir) : [];
  const ours = entries.every((entry) => OWNED.includes(entry));
  if (!ours && !overwrite)
    throw new UserError(
      `${outputDir} holds files an SFT run did not write (${entries.slice(0, 3).join(", ")}); choose another --output or pass --overwrite`,
    );
  for (const entry of OWNED) await rm(join(outputDir, entry), { recursive: true, force: true });
}

function thresholdsOf(plan: JobPlan): VerifyThresholds {
  const verify = plan.config.sft.verify;
  return {
    ...DEFAULT_VERIFY_THRESHOLDS,
    fidelity: verify.fidelity,
    lengths: { ...DEFAULT_VERIFY_THRESHOLDS.lengths, thinkMinChars: verify.min_think_chars, thinkMaxChars: verify.max_think_chars },
  };
}

/** Where a prompt's candidates come from: the teacher endpoint, or files made elsewhere. */
type CandidateSource = (
  prompt: SftPrompt,
  round: SampleRound,
) => Promise<
  { ok: true; texts: string[]; finishReasons?: (string | null)[]; forms: (TeacherAnswerForm | null)[] } | { ok: false; reason: string }
>;

/**
 * The SFT stage: prompts from the job's inputs → candidates (teacher or files) → rules →
 * optional judge → best candidate per prompt. Writes kept samples as tokenized shards (loss on
 * the answer only), every candidate's scores and reasons to `sft/candidates.parquet`, and a
 * manifest whose counts always satisfy prompts = kept + rejected + failed.
 */
export async function runSft(
  plan: JobPlan,
  options: SftRunOptions,
): Promise<{
  manifest: SftManifest;
  manifestPath: string /** Failed prompts by cause, most frequent first. */;
  failureCauses: FailureCause[];
}> {
  const { config } = plan;
  const sft = config.sft;
  const { outputDir } = options;
  const { rounds, state: roundsState } = planRounds(await readPreviousRounds(outputDir), {
    resample: options.resampleRejected ?? false,
    seed: sft.seed,
    candidateFiles: options.candidateFiles,
    outputDir,
  });
  await prepareOutputDir(outputDir, options.overwrite ?? false);
  // Until the manifest is written: an interrupted run is resumed with the same rounds.
  await writeRoundsState(outputDir, roundsState);

  const thresholds = thresholdsOf(plan);
  const judgeSettings: JudgeSettings = { enabled: sft.judge.enabled, mode: sft.judge.mode, minMean: sft.judge.min_mean };
  // One client per endpoint (each its own queue, stats and concurrency), both on the one request cache.
  const failFastAfter = options.failFastAfter ?? FAIL_FAST_AFTER;
  const warned = new Set<string>();
  const clientFor = (endpoint: { baseUrl: string; model: string; apiKeyEnv: string }, who: string) => {
    // Named before the first request: a hosted API refuses a request without a key (HTTP 401).
    const warning = missingKeyWarning(who, endpoint);
    if (warning && !warned.has(`${endpoint.baseUrl} ${endpoint.apiKeyEnv}`)) {
      warned.add(`${endpoint.baseUrl} ${endpoint.apiKeyEnv}`);
      options.onWarning?.(warning);
    }
    return createTeacherClient({
      ...endpoint,
      failFastAfter,
      concurrency: sft.teacher.concurrency,
      ...(sft.teacher.requests_per_minute > 0 ? { requestsPerMinute: sft.teacher.requests_per_minute } : {}),
      ...(options.rateIntervalMs !== undefined ? { rateIntervalMs: options.rateIntervalMs } : {}),
      maxRetries: sft.teacher.max_retries,
      timeoutMs: sft.teacher.timeout_ms,
      backoff: options.backoff ?? { baseMs: 1000, maxMs: 60_000 },
      cacheDir: sft.teacher.cache_dir,
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
  };
  const teacherAt = { baseUrl: sft.teacher.base_url, model: sft.teacher.model, apiKeyEnv: sft.teacher.api_key_env };
  const client: TeacherClient | undefined = rounds.some((round) => round.source === "endpoint")
    ? clientFor(teacherAt, "sft.teacher")
    : undefined;
  // The judge: its own endpoint and model (sft.judge), each the teacher's where unset.
  const judgeAt = judgeEndpoint(sft.judge, sft.teacher);
  const judgeClient: TeacherClient | undefined = judgeSettings.enabled ? clientFor(judgeAt, "sft.judge") : undefined;
  const judgeTally = new JudgeTally();
  const keepPolicy = new KeepPolicy({
    preference: { prefer: sft.prefer, fidelityEpsilon: sft.equal_within.fidelity, judgeEpsilon: sft.equal_within.judge },
    diversity: {
      maxPerCluster: sft.diversity.max_per_cluster,
      similarity: sft.diversity.similarity,
      ngram: sft.diversity.ngram,
      openingWords: sft.diversity.opening_words,
      seed: sft.seed,
    },
    quota: { total: sft.quota.total, perDomain: sft.quota.per_domain },
  });

  let filesSource: CandidateSource | undefined;
  let fileErrors: CandidateFileError[] = [];
  if (options.candidateFiles) {
    const { candidates, errors } = await readCandidateFiles(options.candidateFiles, { maxLineBytes: config.input.max_line_bytes });
    fileErrors = errors;
    filesSource = async (prompt) => {
      const answers = candidates.get(prompt.prompt_id);
      return answers && answers.length > 0
        ? { ok: true, texts: answers.map((answer) => answer.text), forms: answers.map((answer) => answer.form) }
        : { ok: false, reason: "no candidates for this prompt_id in the candidate files" };
    };
  }
  // Rounds before the last are replayed from the cache only: a prompt that got nothing in such a
  // round (the teacher failed) went on to the next round, and is not asked again in this one.
  const teacherSource: CandidateSource = async (prompt, round) => {
    const request = {
      messages: teacherMessages(prompt, { hints: sft.hints, instructions: sft.instructions }),
      n: sft.teacher.n,
      temperature: sft.teacher.temperature,
      max_tokens: sft.teacher.max_tokens,
      seed: round.seed ?? sft.seed,
    };
    const result = await (client as TeacherClient).complete(request, { cacheOnly: round.round < rounds.length - 1 });
    return result.ok
      ? { ok: true, texts: result.texts, finishReasons: result.finishReasons, forms: result.forms }
      : { ok: false, reason: `teacher: ${result.reason}` };
  };
  const source: CandidateSource = (prompt, round) =>
    round.source === "files" && filesSource ? filesSource(prompt, round) : teacherSource(prompt, round);

  /** Candidates, rules and judge for one prompt in one round; the outcomes in candidate order. */
  const evaluateRound = async (
    prompt: SftPrompt,
    round: SampleRound,
  ): Promise<{ ok: true; outcomes: CandidateOutcome[] } | { ok: false; reason: string }> => {
    const got = await source(prompt, round);
    if (!got.ok) return got;
    const context = {
      domain: prompt.domain,
      groundTruth: prompt.ground_truth,
      hintsGiven: sft.hints && round.source === "endpoint",
      // Tags and control strings the prompt holds may be quoted by the answer (candidate-format.ts).
      quotable: prompt.messages.map((message) => message.content),
    };
    let outcomes = got.texts.map(
      (text, index): CandidateOutcome => ({
        ...checkCandidate(index, text, context, thresholds, got.finishReasons?.[index]),
        teacherForm: got.forms[index] ?? null,
      }),
    );
    if (judgeSettings.enabled && judgeClient) {
      // Rules first: the judge only sees candidates that passed them.
      outcomes = await Promise.all(
        outcomes.map(async (outcome) =>
          outcome.passed
            ? applyJudge(
                outcome,
                await judgeCandidate(judgeClient, {
                  domain: prompt.domain,
                  prompt: prompt.messages,
                  candidate: outcome.text,
                  groundTruth: prompt.ground_truth,
                }),
                judgeSettings,
              )
            : outcome,
        ),
      );
    }
    return { ok: true, outcomes };
  };

  /** A prompt's candidates over the sampling rounds: later rounds only while none has passed. */
  const roundCounts = zeroRoundCounts(rounds);
  const evaluate = (prompt: SftPrompt) => sampleOverRounds(rounds, roundCounts, (round) => evaluateRound(prompt, round));

  const shards = new ParquetShardWriter({
    dir: join(outputDir, "data"),
    numBuckets: config.output.num_buckets,
    maxShardBytes: config.output.max_shard_bytes,
    rowGroupRows: config.output.row_group_rows,
    // Packed rows carry no text form; unpacked SFT rows always do (ms-swift reads them).
    includeMessages: !config.pack.enabled,
    ...packOption(config.pack),
    task: 0,
    segment: 0,
    metadata: {
      pipeline: "sft",
      tokenizer: plan.tokenizer.identity.name,
      vocab_sha256: plan.tokenizer.identity.vocabSha256,
      template_sha256: plan.renderer.sha256,
      ...(config.pack.enabled ? {} : textRuleMetadata(escaperFor(plan.tokenizer, plan.renderer.template))),
    },
  });
  const table = await openCandidatesTable(outputDir);
  const quarantine = new QuarantineWriter(join(outputDir, "quarantine"), "prompts");
  await shards.open();
  await quarantine.open();

  const counts: SftCounts = { records_in: 0, quarantined: 0, prompts: 0, kept: 0, rejected: 0, failed: 0, candidates: 0 };
  /** Failed prompts by the kind of their reason (`ECONNREFUSED`, `HTTP 401`, …). */
  const failureCauses = new CauseTally();
  const byDomain: Record<string, DomainCounts> = {};
  const byRule: Record<string, { evaluated: number; failed: number }> = {};
  const teacherForms: Record<string, { candidates: number; kept: number }> = {};
  const tokens = { total: 0, loss: 0 };
  const splits: Record<string, DomainTotals> = {};
  const domainTokens: Record<string, DomainTotals> = {};
  const finished: ShardInfo[] = [];

  const record = async (prompt: SftPrompt, evaluated: Awaited<ReturnType<typeof evaluate>>) => {
    counts.prompts += 1;
    const domain = entry(byDomain, prompt.domain, () => ({
      prompts: 0,
      kept: 0,
      rejected: 0,
      failed: 0,
      candidates: 0,
      candidates_passed: 0,
    }));
    domain.prompts += 1;
    const base = { prompt_id: prompt.prompt_id, trajectory_id: prompt.trajectory_id, domain: prompt.domain, turn_index: prompt.turn_index };
    // A prompt fails when no round gave it candidates, so its row is of the last round.
    const fail = async (reason: string, round = rounds.length - 1) => {
      counts.failed += 1;
      failureCauses.add(failureKind(reason), reason);
      domain.failed += 1;
      const failure: CandidateRow = {
        ...base,
        candidate_index: -1,
        round,
        status: "failed",
        format_score: null,
        fidelity_score: null,
        leakage_score: null,
        ...judgeColumns(undefined),
        teacher_form: null,
        reasons: reason,
      };
      await table.add([failure]);
    };
    if (!evaluated.ok) return await fail(evaluated.reason);
    // The preference's pick among the passing candidates, passing over those whose thinking would overfill a near-duplicate cluster.
    const decision = keepPolicy.choose(evaluated.outcomes);
    const best = decision.kept;
    const sample =
      best?.think !== undefined && best.prediction !== undefined
        ? sftSample(prompt, best.think, best.prediction, plan.renderer, plan.tokenizer)
        : undefined;
    // A packed row cannot hold a sample longer than itself, and cutting an answer would train a wrong one.
    if (sample && config.pack.enabled && sample.inputIds.length > config.pack.seq_len) {
      return await fail(
        `the kept candidate's sample has ${sample.inputIds.length} tokens, longer than pack.seq_len ${config.pack.seq_len}`,
        evaluated.outcomes.find((outcome) => outcome === best)?.round,
      );
    }
    const rows: CandidateRow[] = evaluated.outcomes.map((outcome) => {
      // A rule that could not run (fidelity after a failed format) has no score and is not counted.
      const score = (rule: string) => {
        const result = outcome.results.find((r) => r.rule === rule);
        return result && !result.skipped ? result.score : null;
      };
      for (const result of outcome.results) {
        if (result.skipped) continue;
        const rule = entry(byRule, result.rule, () => ({ evaluated: 0, failed: 0 }));
        rule.evaluated += 1;
        if (!result.passed) rule.failed += 1;
      }
      if (outcome.judge) {
        const rule = entry(byRule, "judge", () => ({ evaluated: 0, failed: 0 }));
        rule.evaluated += 1;
        if (!outcome.passed && outcome.results.every((result) => result.passed)) rule.failed += 1;
      }
      return {
        ...base,
        candidate_index: outcome.index,
        round: outcome.round,
        status: outcome === best ? "kept" : decision.capped.has(outcome.index) ? "capped" : outcome.passed ? "passed" : "rejected",
        format_score: score("format"),
        fidelity_score: score("fidelity"),
        leakage_score: score("leakage"),
        ...judgeColumns(outcome.judge),
        teacher_form: outcome.teacherForm ?? null,
        reasons: [reasonsText(outcome), decision.notes.get(outcome.index)].filter((line) => line !== undefined).join("\n"),
      };
    });
    counts.candidates += rows.length;
    for (const outcome of evaluated.outcomes) {
      const form = entry(teacherForms, outcome.teacherForm ?? "unknown", () => ({ candidates: 0, kept: 0 }));
      form.candidates += 1;
      if (outcome === best && sample) form.kept += 1;
    }
    domain.candidates += rows.length;
    domain.candidates_passed += evaluated.outcomes.filter((outcome) => outcome.passed).length;
    await table.add(rows);
    keepPolicy.record(prompt.prompt_id, prompt.domain, evaluated.outcomes, decision);
    for (const outcome of evaluated.outcomes) judgeTally.add(prompt.domain, outcome.judge);
    if (!sample) {
      counts.rejected += 1;
      domain.rejected += 1;
      return;
    }
    counts.kept += 1;
    domain.kept += 1;
    tokens.total += sample.inputIds.length;
    tokens.loss += sample.numLossTokens;
    const split = splitForTrajectory(prompt.trajectory_id, config.output.validation_fraction, config.output.split_seed);
    for (const into of [entry(splits, split, zeroDomain), entry(domainTokens, prompt.domain, zeroDomain)]) {
      into.samples += 1;
      addTokens(into, sample);
    }
    if (await shards.add(sample, split)) finished.push(...(await shards.cut()));
  };

  // Prompts are evaluated a window at a time (the client keeps its own concurrency limit inside)
  // and recorded in input order, so the output does not depend on response timing.
  const windowSize = Math.max(16, sft.teacher.concurrency * 4);
  let window: SftPrompt[] = [];
  const pendingQuarantine: QuarantineEntry[] = [];
  // Evaluations start at most 2 × concurrency at a time (the client stays busy, a prompt waiting
  // out a backoff holds no request slot), so a stop request sends nothing new: the prompts not
  // started are left for the rerun, those in flight finish into the teacher cache.
  const gate = new PQueue({ concurrency: 2 * sft.teacher.concurrency });
  const flushWindow = async () => {
    const evaluated = await Promise.all(
      // Prompts past a reached quota are not asked (a quota only fills as prompts are recorded, in input order).
      window.map((prompt) =>
        gate.add(() => (stopRequested(options.stop) || keepPolicy.overQuota(prompt.domain) ? undefined : evaluate(prompt))),
      ),
    );
    if (stopRequested(options.stop)) throw new SftStopped(counts);
    // An endpoint that refused or did not answer its first requests: the rest would fail alike.
    for (const [at, which, settings] of [
      [teacherAt, client, "sft.teacher"],
      [judgeAt, judgeClient, "sft.judge"],
    ] as const) {
      const down = which?.givenUp?.();
      if (down) throw endpointDown(settings, at, down, which as TeacherClient, counts, outputDir);
    }
    for (const [i, prompt] of window.entries()) {
      // Checked again in input order: whether a prompt counts never depends on the window it was in.
      if (keepPolicy.overQuota(prompt.domain)) keepPolicy.setAside(prompt.domain);
      else await record(prompt, evaluated[i] as Awaited<ReturnType<typeof evaluate>>);
    }
    window = [];
    for (const entry of pendingQuarantine.splice(0)) await quarantine.write(entry);
    options.onProgress?.(counts);
  };

  const screen = await screenPrompts(plan, new Map(), options.stop);
  try {
    for await (const item of screen.items) {
      if (stopRequested(options.stop)) break;
      counts.records_in += 1;
      if (item.kind === "quarantine") {
        counts.quarantined += 1;
        pendingQuarantine.push(item.entry);
        continue;
      }
      window.push(...item.prompts);
      // With quotas, a window closes once it holds what a quota still needs (no answers paid for past it).
      if (window.length >= windowSize || keepPolicy.enoughToFill(window)) await flushWindow();
    }
    if (screen.stopped || stopRequested(options.stop)) throw new SftStopped(counts);
    await flushWindow();
    finished.push(...(await shards.cut()));
  } catch (err) {
    await shards.abort();
    await table.abort();
    await quarantine.close();
    throw err;
  }
  const candidatesTable = (await table.finish()) ?? null;
  const shardFiles = finished.filter((shard) => shard.rows > 0);
  await quarantine.close();
  // Nothing but failures: no manifest, so no one takes the folder for a finished (if empty) output.
  if (counts.prompts > 0 && counts.failed === counts.prompts)
    throw allFailed(counts, failureCauses.top(), { teacherAt, client, options, outputDir });

  const endpointInfo = client
    ? { base_url: sft.teacher.base_url, model: sft.teacher.model, n: sft.teacher.n, stats: client.stats() }
    : undefined;
  const teacherInfo: SftManifest["teacher"] = options.candidateFiles
    ? { source: "files", files: options.candidateFiles, errors: fileErrors, ...(endpointInfo ? { endpoint: endpointInfo } : {}) }
    : { source: "endpoint", ...(endpointInfo as NonNullable<typeof endpointInfo>) };
  const manifest: SftManifest = {
    format: "lwm-data/sft",
    version: 2,
    config_sha256: createHash("sha256").update(plan.configSha256).update(stableStringify(sft)).digest("hex"),
    tokenizer: manifestTokenizer(plan.tokenizer.identity),
    template: { source: plan.renderer.source, sha256: plan.renderer.sha256 },
    select: sft.select,
    hints: sft.hints,
    counts,
    selection: screen.report(),
    keep_policy: keepPolicy.report(),
    tokens,
    // SFT rows carry no control columns (controls apply to CPT samples).
    layout: shardLayout({ output: config.output, pack: config.pack }, true),
    splits: Object.fromEntries(Object.entries(splits).sort(([a], [b]) => a.localeCompare(b))),
    packing: packingSummary(config.pack, shardFiles) ?? null,
    by_domain: Object.fromEntries(Object.entries(byDomain).sort(([a], [b]) => a.localeCompare(b))),
    by_rule: byRule,
    teacher: teacherInfo,
    teacher_forms: Object.fromEntries(Object.entries(teacherForms).sort(([a], [b]) => a.localeCompare(b))),
    rounds: roundCounts,
    judge: judgeClient ? judgeTally.summary(judgeAt, judgeClient.stats()) : null,
    shards: shardFiles.map(outputFile),
    candidates_table: candidatesTable ? outputFile(candidatesTable) : null,
    quarantine:
      counts.quarantined > 0
        ? {
            path: "quarantine/prompts.jsonl",
            entries: counts.quarantined,
            bytes: quarantine.bytes,
            sha256: await fileSha256(quarantine.path),
          }
        : null,
  };
  manifest.card = await writeDatasetCard(outputDir, {
    kind: "sft",
    layout: manifest.layout,
    tokenizer: manifest.tokenizer,
    template: manifest.template,
    maskPolicy: "answer",
    configSha256: manifest.config_sha256,
    shards: shardFiles,
    splits: manifest.splits,
    domains: Object.fromEntries(Object.entries(domainTokens).sort(([a], [b]) => a.localeCompare(b))),
    packing: manifest.packing,
    extraConfigs: candidatesTable
      ? [{ name: "candidates", path: "sft/candidates.parquet", about: "every teacher candidate: status, scores and reasons" }]
      : [],
  });
  const manifestPath = join(outputDir, "manifest.json");
  await writeJsonFile(manifestPath, manifest, { indent: 2 });
  // The manifest now holds the rounds; the state file was only for resuming an unfinished run.
  await clearRoundsState(outputDir);
  return { manifest, manifestPath, failureCauses: failureCauses.top() };
}

function endpointDown(
  settings: string,
  at: { baseUrl: string; model: string; apiKeyEnv: string },
  down: EndpointGivenUp,
  client: TeacherClient,
  counts: SftCounts,
  outputDir: string,
): SftFailed {
  const kinds = client.failureKinds?.() ?? [{ kind: down.kind, count: down.requests, example: down.reason }];
  return new SftFailed(
    "endpoint",
    [
      `sft sample: stopped: the first ${down.requests} request(s) to ${at.baseUrl} (${settings}) all failed with ${down.kind} and none was answered; nothing more was sent`,
      `  cause    ${causesText(kinds)}, e.g. ${down.reason}`,
      `  fix      ${failureFix(down.kind, { ...at, settings })}`,
      `  then     rerun the same command: answers received so far are kept in the teacher cache; ${outputDir} has no manifest (${counts.prompts} prompt(s) recorded so far)`,
    ].join("\n"),
    counts,
    kinds,
  );
}

function allFailed(
  counts: SftCounts,
  causes: FailureCause[],
  run: {
    teacherAt: { baseUrl: string; model: string; apiKeyEnv: string };
    client: TeacherClient | undefined;
    options: SftRunOptions;
    outputDir: string;
  },
): SftFailed {
  const top = causes[0] as FailureCause;
  const requests = run.client?.failureKinds?.() ?? [];
  const stats = run.client?.stats();
  return new SftFailed(
    "all-failed",
    [
      `sft sample: all ${counts.prompts} prompt(s) failed: none got a candidate${run.options.candidateFiles ? " (candidate files)" : ""}`,
      `  causes   ${causesText(causes)} (prompts)${
        requests.length > 0 && stats ? `; ${stats.requests} teacher request(s) sent: ${causesText(requests)}` : ""
      }`,
      `  e.g.     ${top.example}`,
      `  fix      ${failureFix(top.kind, { ...run.teacherAt, settings: "sft.teacher" })}`,
      `  output   no manifest was written; every prompt's reason: ${join(run.outputDir, "sft/candidates.parquet")}`,
    ].join("\n"),
    counts,
    causes,
  );
}
