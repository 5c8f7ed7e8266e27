import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
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
import { outputFile } from "../pipeline/run-task.ts";
import { writeDatasetCard } from "../write/dataset-card.ts";
import { ParquetShardWriter, packOption, type ShardInfo } from "../write/parquet-shard-writer.ts";
import { QuarantineWriter } from "../write/quarantine-writer.ts";
import { type CandidateRow, openCandidatesTable } from "./candidates-table.ts";
import { readPrompts } from "./prompts/read-prompts.ts";
import { type SftPrompt, teacherMessages } from "./prompts/sft-prompt.ts";
import { applyJudge, bestCandidate, type CandidateOutcome, checkCandidate, type JudgeSettings, reasonsText } from "./select-candidate.ts";
import { sftSample } from "./sft-sample.ts";
import { type CandidateFileError, readCandidateFiles } from "./teacher/candidate-files.ts";
import { judgeCandidate } from "./teacher/judge.ts";
import { createTeacherClient, type TeacherClient, type TeacherStats } from "./teacher/openai-client.ts";
import type { BackoffOptions } from "./teacher/retry-policy.ts";
import { DEFAULT_VERIFY_THRESHOLDS, type VerifyThresholds } from "./verify/index.ts";

export interface SftRunOptions {
  outputDir: string;
  /** Read candidates from these files (JSONL or OpenAI batch output) instead of asking the teacher. */
  candidateFiles?: string[];
  /** Replace an output folder that holds something other than an SFT output of ours. */
  overwrite?: boolean;
  /** For tests: the HTTP client and a short rate window / backoff. */
  fetch?: typeof fetch;
  rateIntervalMs?: number;
  backoff?: BackoffOptions;
  onProgress?: (progress: SftCounts) => void;
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
  tokens: { total: number; loss: number };
  /** How rows are laid out (split settings, packing). */
  layout: ShardLayout;
  /** Per split: kept samples, tokens, loss tokens. */
  splits: Record<string, DomainTotals>;
  packing: PackingSummary | null;
  by_domain: Record<string, DomainCounts>;
  /** Per rule: candidates it was evaluated on and how many it failed. */
  by_rule: Record<string, { evaluated: number; failed: number }>;
  teacher:
    | { source: "endpoint"; base_url: string; model: string; n: number; stats: TeacherStats }
    | { source: "files"; files: string[]; errors: CandidateFileError[] };
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
type CandidateSource = (prompt: SftPrompt) => Promise<{ ok: true; texts: string[] } | { ok: false; reason: string }>;

/**
 * The SFT stage: prompts from the job's inputs → candidates (teacher or files) → rules →
 * optional judge → best candidate per prompt. Writes kept samples as tokenized shards (loss on
 * the answer only), every candidate's scores and reasons to `sft/candidates.parquet`, and a
 * manifest whose counts always satisfy prompts = kept + rejected + failed.
 */
export async function runSft(plan: JobPlan, options: SftRunOptions): Promise<{ manifest: SftManifest; manifestPath: string }> {
  const { config } = plan;
  const sft = config.sft;
  const { outputDir } = options;
  await prepareOutputDir(outputDir, options.overwrite ?? false);

  const thresholds = thresholdsOf(plan);
  const judgeSettings: JudgeSettings = { enabled: sft.judge.enabled, mode: sft.judge.mode, minMean: sft.judge.min_mean };
  const needsClient = !options.candidateFiles || judgeSettings.enabled;
  const client: TeacherClient | undefined = needsClient
    ? createTeacherClient({
        baseUrl: sft.teacher.base_url,
        model: sft.teacher.model,
        apiKeyEnv: sft.teacher.api_key_env,
        concurrency: sft.teacher.concurrency,
        ...(sft.teacher.requests_per_minute > 0 ? { requestsPerMinute: sft.teacher.requests_per_minute } : {}),
        ...(options.rateIntervalMs !== undefined ? { rateIntervalMs: options.rateIntervalMs } : {}),
        maxRetries: sft.teacher.max_retries,
        timeoutMs: sft.teacher.timeout_ms,
        backoff: options.backoff ?? { baseMs: 1000, maxMs: 60_000 },
        cacheDir: sft.teacher.cache_dir,
        ...(options.fetch ? { fetch: options.fetch } : {}),
      })
    : undefined;

  let source: CandidateSource;
  let fileErrors: CandidateFileError[] = [];
  if (options.candidateFiles) {
    const { candidates, errors } = await readCandidateFiles(options.candidateFiles, { maxLineBytes: config.input.max_line_bytes });
    fileErrors = errors;
    source = async (prompt) => {
      const texts = candidates.get(prompt.prompt_id);
      return texts && texts.length > 0
        ? { ok: true, texts }
        : { ok: false, reason: "no candidates for this prompt_id in the candidate files" };
    };
  } else {
    const teacher = client as TeacherClient;
    source = async (prompt) => {
      const result = await teacher.complete({
        messages: teacherMessages(prompt, { hints: sft.hints, instructions: sft.instructions }),
        n: sft.teacher.n,
        temperature: sft.teacher.temperature,
        max_tokens: sft.teacher.max_tokens,
        seed: sft.seed,
      });
      return result.ok ? { ok: true, texts: result.texts } : { ok: false, reason: `teacher: ${result.reason}` };
    };
  }

  /** Candidates, rules and judge for one prompt; the outcomes in candidate order. */
  const evaluate = async (prompt: SftPrompt): Promise<{ ok: true; outcomes: CandidateOutcome[] } | { ok: false; reason: string }> => {
    const got = await source(prompt);
    if (!got.ok) return got;
    const context = { domain: prompt.domain, groundTruth: prompt.ground_truth, hintsGiven: sft.hints && !options.candidateFiles };
    let outcomes = got.texts.map((text, index) => checkCandidate(index, text, context, thresholds));
    if (judgeSettings.enabled && client) {
      // Rules first: the judge only sees candidates that passed them.
      outcomes = await Promise.all(
        outcomes.map(async (outcome) =>
          outcome.passed
            ? applyJudge(
                outcome,
                await judgeCandidate(client, { prompt: prompt.messages, candidate: outcome.text, groundTruth: prompt.ground_truth }),
                judgeSettings,
              )
            : outcome,
        ),
      );
    }
    return { ok: true, outcomes };
  };

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
  const byDomain: Record<string, DomainCounts> = {};
  const byRule: Record<string, { evaluated: number; failed: number }> = {};
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
    const fail = async (reason: string) => {
      counts.failed += 1;
      domain.failed += 1;
      const failure: CandidateRow = {
        ...base,
        candidate_index: -1,
        status: "failed",
        format_score: null,
        fidelity_score: null,
        leakage_score: null,
        judge_mean: null,
        reasons: reason,
      };
      await table.add([failure]);
    };
    if (!evaluated.ok) return await fail(evaluated.reason);
    const best = bestCandidate(evaluated.outcomes);
    const sample =
      best?.think !== undefined && best.prediction !== undefined
        ? sftSample(prompt, best.think, best.prediction, plan.renderer, plan.tokenizer)
        : undefined;
    // A packed row cannot hold a sample longer than itself, and cutting an answer would train a wrong one.
    if (sample && config.pack.enabled && sample.inputIds.length > config.pack.seq_len) {
      return await fail(
        `the kept candidate's sample has ${sample.inputIds.length} tokens, longer than pack.seq_len ${config.pack.seq_len}`,
      );
    }
    const rows: CandidateRow[] = evaluated.outcomes.map((outcome) => {
      const score = (rule: string) => outcome.results.find((result) => result.rule === rule)?.score ?? null;
      for (const result of outcome.results) {
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
        status: outcome === best ? "kept" : outcome.passed ? "passed" : "rejected",
        format_score: score("format"),
        fidelity_score: score("fidelity"),
        leakage_score: score("leakage"),
        judge_mean: outcome.judge?.ok ? outcome.judge.mean : null,
        reasons: reasonsText(outcome),
      };
    });
    counts.candidates += rows.length;
    domain.candidates += rows.length;
    domain.candidates_passed += evaluated.outcomes.filter((outcome) => outcome.passed).length;
    await table.add(rows);
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
  const flushWindow = async () => {
    const evaluated = await Promise.all(window.map(evaluate));
    for (const [i, prompt] of window.entries()) await record(prompt, evaluated[i] as Awaited<ReturnType<typeof evaluate>>);
    window = [];
    for (const entry of pendingQuarantine.splice(0)) await quarantine.write(entry);
    options.onProgress?.(counts);
  };

  try {
    for await (const item of readPrompts(plan, new Map())) {
      counts.records_in += 1;
      if (item.kind === "quarantine") {
        counts.quarantined += 1;
        pendingQuarantine.push(item.entry);
        continue;
      }
      window.push(...item.prompts);
      if (window.length >= windowSize) await flushWindow();
    }
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

  const teacherInfo: SftManifest["teacher"] = options.candidateFiles
    ? { source: "files", files: options.candidateFiles, errors: fileErrors }
    : {
        source: "endpoint",
        base_url: sft.teacher.base_url,
        model: sft.teacher.model,
        n: sft.teacher.n,
        stats: (client as TeacherClient).stats(),
      };
  const manifest: SftManifest = {
    format: "lwm-data/sft",
    version: 2,
    config_sha256: createHash("sha256").update(plan.configSha256).update(stableStringify(sft)).digest("hex"),
    tokenizer: manifestTokenizer(plan.tokenizer.identity),
    template: { source: plan.renderer.source, sha256: plan.renderer.sha256 },
    select: sft.select,
    hints: sft.hints,
    counts,
    tokens,
    // SFT rows carry no control columns (controls apply to CPT samples).
    layout: shardLayout({ output: config.output, pack: config.pack }, true),
    splits: Object.fromEntries(Object.entries(splits).sort(([a], [b]) => a.localeCompare(b))),
    packing: packingSummary(config.pack, shardFiles) ?? null,
    by_domain: Object.fromEntries(Object.entries(byDomain).sort(([a], [b]) => a.localeCompare(b))),
    by_rule: byRule,
    teacher: teacherInfo,
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
  return { manifest, manifestPath };
}
