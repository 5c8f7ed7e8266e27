import { createHash } from "node:crypto";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { glob, isDynamicPattern } from "tinyglobby";
import { planTasks, type Task, taskPlanSha256 as taskPlanSha256Of } from "../../sharding/task-plan.ts";
import { type LoadedConfig, stableStringify } from "../config/load-config.ts";
import type { InputSpec, JobConfig } from "../config/schema.ts";
import { controlsIdentity, rephraseOn } from "../controls/rephrase/rephrase-settings.ts";
import { UserError } from "../core/errors.ts";
import { TEXT_RULE_ID } from "../export/special-literals.ts";
import { checkScoreFields } from "../filter/check-score-fields.ts";
import { type CompiledFilter, compileFilters } from "../filter/filters.ts";
import { listHf } from "../io/hf/hf-files.ts";
import { isHfUri } from "../io/hf/hf-uri.ts";
import { inputSize } from "../io/input-bytes.ts";
import { globFiles } from "../io/input-glob.ts";
import { detectCompression, setDecompressionLimits } from "../io/open-input.ts";
import { isRemoteUri } from "../io/remote-uri.ts";
import { listS3 } from "../io/s3/s3-objects.ts";
import { isS3Uri } from "../io/s3/s3-uri.ts";
import { allObservationsPolicy, type LossPolicy, turnStatsPolicy } from "../mask/loss-policy.ts";
import { usesShares } from "../mixture/resolve-factors.ts";
import { piiActive } from "../normalize/pii/pii-settings.ts";
import { type RemoteOutput, remoteOutputOf } from "../output/remote-output.ts";
import type { JobShas } from "../output/task-state.ts";
import { csvDialectOf } from "../read/csv-rows.ts";
import { emptyFileReader, unrecognizedFileReader } from "../read/file-stubs.ts";
import { recordLayout } from "../read/json-array.ts";
import { isParquetFile } from "../read/parquet-rows.ts";
import type { Reader } from "../read/reader.ts";
import { detectFormat, type ProbedLine, readerByName } from "../read/registry.ts";
import { ChatTemplateRenderer } from "../render/chat-template.ts";
import { loadSystemPrompts, type SystemPrompts } from "../render/system-prompts.ts";
import { loadScorers, type Scorer } from "../score/score-schema.ts";
import { locatedScorer, scoringIdentity } from "../score/scoring-identity.ts";
import { selectionActive } from "../select/selection-active.ts";
import { bundledQwen3Dir, loadTokenizer, type TokenizerSpec, templateBeside } from "../tokenize/load-tokenizer.ts";
import type { Tokenizer } from "../tokenize/tokenizer.ts";
import { decidedReader, decisionKey, type InputDecision, type InputDecisions, nameable } from "./input-decisions.ts";
import { loadPipelineGraph, type PipelineGraph } from "./pipeline-graph.ts";

export interface InputFile {
  path: string;
  /** Path relative to the config's folder, as recorded in the manifest. */
  displayPath: string;
  bytes: number;
  reader: Reader;
  /** How the reader was chosen: named in the config, or detected from content. */
  detected: boolean;
  /** Uncompressed and read by a line-per-record reader: may be cut into byte-range tasks. */
  splittable: boolean;
  spec: InputSpec;
  /**
   * `format: auto` only: lines probed before the first line of the detected format that looked
   * like no format (or another): the reader quarantines them when it reads them.
   */
  skippedLines?: ProbedLine[];
  /** `format: auto` found no reader: why (the file is quarantined whole, stage `detect`). */
  unrecognized?: string;
  /** With `unrecognized`: the excerpt its quarantine entry shows. */
  excerpt?: string;
  /** `format: auto` found no content: 0 records. */
  empty?: boolean;
  /** With `empty`: why, when the file is not simply blank (a CSV header and no data row). */
  emptyNote?: string;
  /**
   * `format: auto` chose the reader by the elements of a JSON array (read element by element), or
   * by the rows of a Parquet, Arrow IPC or CSV file (read row by row).
   */
  layout?: "json-array" | "wrapped-rows" | "parquet-rows" | "arrow-rows" | "csv-rows";
}

/**
 * An input file not read on its own: it belongs to another input's record (a terminal-bench
 * trial's recording), or stands for other files that are read instead (a run's results.json).
 */
export interface CoveredInput {
  path: string;
  displayPath: string;
  /** The input that reads it (absolute path), or the first file it stands for. */
  by: string;
  label: string;
  kind: "companion" | "stands-for";
}

/** Everything a job needs, resolved and checked before any data is processed. */
export interface JobPlan {
  configPath: string;
  /** How the config was loaded, so a worker thread can load the same plan. */
  loaded: LoadedConfig;
  config: JobConfig;
  pipeline: PipelineGraph;
  files: InputFile[];
  /** Files the inputs matched that another input's record reads (skipped, with a note). */
  covered: CoveredInput[];
  /** `decontaminate.benchmarks`, expanded like the inputs. */
  benchmarks: InputFile[];
  tokenizer: Tokenizer;
  renderer: ChatTemplateRenderer;
  systemPrompts: SystemPrompts;
  lossPolicy: LossPolicy;
  /** `filters`, compiled once (regexes, sets): what the records stage drops by, in order. */
  filters: CompiledFilter[];
  /** `scorers`, their rubrics read (files relative to the config). */
  scorers: Scorer[];
  /** sha256 of the processing settings, with files hashed by content rather than located by path. */
  configSha256: string;
  /** The inputs cut into tasks (`input.task_bytes`): the unit of parallelism, ranks and resume. */
  tasks: Task[];
  /** sha256 of the input list and the task cut. */
  taskPlanSha256: string;
  /** What planning decided about each file it sniffed, for worker threads to plan from (input-decisions.ts). */
  inputDecisions: InputDecisions;
  /**
   * Set when `output.dir` is an `s3://` URI: `config.output.dir` is then the local staging
   * folder every stage writes to, and this moves its files to and from the bucket.
   */
  remote?: RemoteOutput;
}

/** Sizes of the S3 objects and Hub files listed while expanding inputs (a listing gives them; no request per file). */
type ListedSizes = Map<string, number>;

async function expandInput(spec: InputSpec, key: string, sizes: ListedSizes): Promise<string[]> {
  if (isS3Uri(spec.path)) {
    const objects = await listS3(spec.path);
    if (objects.length === 0) throw new UserError(`${key}.path: ${spec.path} matched no objects`);
    for (const object of objects) sizes.set(object.uri, object.bytes);
    return objects.map((object) => object.uri);
  }
  if (isHfUri(spec.path)) {
    // The revision is resolved here, once: every file's URI carries the commit sha, so the manifest
    // pins it and every task reads that commit, wherever the branch moves meanwhile.
    const { files, sha } = await listHf(spec.path);
    if (files.length === 0) throw new UserError(`${key}.path: ${spec.path} matched no files (at commit ${sha})`);
    for (const file of files) sizes.set(file.uri, file.bytes);
    return files.map((file) => file.uri);
  }
  if (!isDynamicPattern(spec.path)) {
    if (!existsSync(spec.path)) throw new UserError(`${key}.path: ${spec.path} does not exist`);
    if (!statSync(spec.path).isDirectory()) return [spec.path];
    // A folder is every file under it (a terminal-bench run directory, a dump of trajectories).
    const files = await glob("**/*", { cwd: spec.path, absolute: true, onlyFiles: true, expandDirectories: false });
    if (files.length === 0) throw new UserError(`${key}.path: folder ${spec.path} holds no files`);
    return files.sort();
  }
  const files = await globFiles(spec.path);
  if (files.length === 0) throw new UserError(`${key}.path: pattern ${spec.path} matched no files`);
  // Input order decides row order inside shards: sort so it never depends on the file system.
  return files.sort();
}

function omitPii(normalize: JobConfig["normalize"]): Omit<JobConfig["normalize"], "pii"> {
  const { pii: _pii, ...rest } = normalize;
  return rest;
}

function loadTemplate(config: JobConfig, tokenizer: Tokenizer): ChatTemplateRenderer {
  const setting = config.render.template;
  if (setting === "tokenizer") {
    if (tokenizer.chatTemplate)
      return new ChatTemplateRenderer(
        tokenizer.chatTemplate,
        `${tokenizer.identity.name} tokenizer_config.json`,
        tokenizer.templateVariables,
      );
    // tiktoken encodings ship no template: use Qwen3's ChatML template, as documented. A
    // tokenizer.json without one gets it only if its vocabulary has the ChatML markers.
    if (
      !tokenizer.identity.name.startsWith("tiktoken:") &&
      !(tokenizer.addedTokens.has("<|im_start|>") && tokenizer.addedTokens.has("<|im_end|>"))
    )
      throw new UserError(
        `render.template: ${tokenizer.identity.name} ships no chat template (no chat_template in tokenizer_config.json, no chat_template.jinja beside it) and has no <|im_start|>/<|im_end|> tokens for the default ChatML template; set render.template to the model's chat template (.jinja or tokenizer_config.json)`,
      );
    const qwen = JSON.parse(readFileSync(join(bundledQwen3Dir(), "tokenizer_config.json"), "utf8")) as { chat_template: string };
    return new ChatTemplateRenderer(qwen.chat_template, "qwen3 tokenizer_config.json");
  }
  if (!existsSync(setting)) throw new UserError(`render.template: ${setting} does not exist`);
  const text = readFileSync(setting, "utf8");
  if (setting.endsWith(".json")) {
    const parsed = JSON.parse(text) as { chat_template?: unknown };
    if (typeof parsed.chat_template !== "string") throw new UserError(`render.template: ${setting} has no string "chat_template" field`);
    return new ChatTemplateRenderer(parsed.chat_template, setting, tokenizer.templateVariables);
  }
  return new ChatTemplateRenderer(text, setting, tokenizer.templateVariables);
}

/** `make()` on the first call, its result on every later one. */
function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => {
    made ??= { value: make() };
    return made.value;
  };
}

/** What the config hash names of the tokenizer and chat template. */
interface PlanIdentity {
  vocabSha256: string;
  templateSha256: string;
}

/** The tokenizer.json a tokenizer setting loads; undefined for a tiktoken encoding. */
function tokenizerJsonPath(spec: TokenizerSpec): string | undefined {
  if (spec.name.startsWith("tiktoken:")) return undefined;
  return spec.name === "qwen3" ? join(bundledQwen3Dir(), "tokenizer.json") : spec.name;
}

const sha256Of = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");

/**
 * The tokenizer's vocabulary sha and the chat template's sha, as `loadTokenizer` and
 * `loadTemplate` would give them, without building either where that is plain: a tokenizer.json's
 * sha is that of its bytes (hf-byte-level-bpe.ts), a template's that of its text
 * (chat-template.ts), and the template is the one beside the tokenizer.json or a file's. Anything
 * else (a tiktoken encoding, the ChatML fallback, a missing or malformed file, whose error the
 * loaders word) builds them; test/plan-identity.test.ts holds the two ways equal.
 */
function planIdentity(config: JobConfig, tokenizer: () => Tokenizer, renderer: () => ChatTemplateRenderer): PlanIdentity {
  const json = tokenizerJsonPath(config.tokenizer);
  const vocabSha256 = json !== undefined && existsSync(json) ? sha256Of(readFileSync(json)) : tokenizer().identity.vocabSha256;
  const text = templateText(config.render.template, json);
  return { vocabSha256, templateSha256: text !== undefined ? sha256Of(text) : renderer().sha256 };
}

/** The chat template's text where it is told without the tokenizer (see planIdentity); undefined otherwise. */
function templateText(setting: string, tokenizerJson: string | undefined): string | undefined {
  if (setting === "tokenizer")
    return tokenizerJson !== undefined && existsSync(tokenizerJson) ? templateBeside(tokenizerJson).chatTemplate : undefined;
  if (!existsSync(setting)) return undefined;
  const text = readFileSync(setting, "utf8");
  if (!setting.endsWith(".json")) return text;
  try {
    const parsed = JSON.parse(text) as { chat_template?: unknown };
    return typeof parsed.chat_template === "string" ? parsed.chat_template : undefined;
  } catch {
    return undefined;
  }
}

/** The hashes that identify this job's output, as task states and the output plan record them. */
export function jobShas(plan: JobPlan): JobShas {
  return { config_sha256: plan.configSha256, plan_sha256: plan.taskPlanSha256 };
}

export async function planJob(loaded: LoadedConfig, options: PlanOptions = {}): Promise<JobPlan> {
  const { path: configPath } = loaded;
  // An output in object storage is written through a local staging folder (src/output/remote-output.ts).
  const remote = remoteOutputOf(loaded.config.output.dir);
  const config = remote ? { ...loaded.config, output: { ...loaded.config.output, dir: remote.local } } : loaded.config;
  const configDir = join(configPath, "..");
  const pipeline = loadPipelineGraph(config.pipeline);
  if (config.controls.enabled && config.pack.enabled)
    throw new UserError(
      `${configPath}: controls.enabled with pack.enabled is not supported yet: packed rows have no per-document controls columns; turn one off`,
    );
  if (rephraseOn(config.controls) && usesShares(config.mixture))
    throw new UserError(
      `${configPath}: controls.rephrase with mixture target shares is not supported yet: the count stage renders records before the teacher's rewordings are read; set controls.rephrase.share to 0 or use mixture factors`,
    );
  // Every reader of this process (and of each worker thread, which plans for itself) obeys them.
  setDecompressionLimits({ maxBytes: config.input.max_decompressed_bytes, maxRatio: config.input.max_expansion_ratio });

  const covered: CoveredInput[] = [];
  // Inputs are labelled relative to `input.root` when set; benchmarks always relative to the config.
  const inputRoot = config.input.root ?? configDir;
  const { onSniff, sniffConcurrency = SNIFF_CONCURRENCY } = options;
  const decisions = { known: options.decisions, made: new Map() as InputDecisions };
  const files = await expandAll(config.inputs, "inputs", inputRoot, "lenient", covered, decisions, onSniff, sniffConcurrency);
  const benchmarks = await expandAll(
    config.decontaminate.benchmarks,
    "decontaminate.benchmarks",
    configDir,
    "strict",
    [],
    decisions,
    onSniff,
    sniffConcurrency,
  );
  covered.push(...(await dropCovered(files, inputRoot, sniffConcurrency)));
  await dropCovered(benchmarks, configDir, sniffConcurrency);

  // The tokenizer, chat template and loss policy are built on first use (the records stage, the
  // output plan a job's first process writes): a process that runs curation's clusters or select
  // never needs them. The config hash needs only what identifies them (planIdentity).
  const tokenizer = once(() => loadTokenizer(config.tokenizer));
  const renderer = once(() => loadTemplate(config, tokenizer()));
  const lossPolicy = once(() => (config.mask.policy === "turn-stats" ? turnStatsPolicy(config.mask, tokenizer()) : allObservationsPolicy));
  const identity = planIdentity(config, tokenizer, renderer);
  const systemPrompts = loadSystemPrompts(config.render.system_prompts_dir);

  const filters = compileFilters(config.filters);
  const scorers = loadScorers(config.scorers, dirname(configPath)).map((scorer) => locatedScorer(scorer));
  checkScoreFields(config, scorers);

  // SFT settings do not change CPT shards, so editing them does not make the CPT output another job.
  const {
    inputs: _inputs,
    output,
    render: _render,
    tokenizer: tokenizerSettings,
    sft: _sft,
    controls,
    filters: filterSettings,
    select,
    scorers: _scorers,
    ...rest
  } = config;
  // Nor where checkpoints fall: a rerun with other checkpoint settings still resumes the same job.
  const { dir: _dir, checkpoint: _checkpoint, ...outputSettings } = output;
  // Where the inputs and output are (a folder, a bucket) is not how they are processed.
  const { root: _root, ...inputSettings } = config.input;
  const configSha256 = createHash("sha256")
    .update(
      stableStringify({
        ...rest,
        // PII off (top level and every domain) changes nothing: the output of before it existed.
        normalize: piiActive(rest.normalize.pii) ? rest.normalize : omitPii(rest.normalize),
        input: inputSettings,
        // Loss weights off change nothing: the output of before they existed.
        mask: maskIdentity(rest.mask),
        // Controls off change nothing, so turning them off is the output of before they existed.
        // The teacher rewording counts by what decides it (share, model, sampling), not where it is served.
        ...(controls.enabled ? { controls: controlsIdentity(controls) } : {}),
        // Nor do no filters, selection off or no scorers; a scorer counts by what decides its scores.
        ...(filterSettings.length > 0 ? { filters: filterSettings } : {}),
        ...(selectionActive(select) ? { select } : {}),
        ...(scorers.length > 0 ? { scorers: scorers.map(scoringIdentity) } : {}),
        // Benchmark files count by content, in the task plan's hash, not by where they sit.
        decontaminate: { ...config.decontaminate, benchmarks: config.decontaminate.benchmarks.length },
        output: outputSettings,
        tokenizer: { special_tokens: tokenizerSettings.special_tokens, vocab_sha256: identity.vocabSha256 },
        render: { template_sha256: identity.templateSha256, system_prompts: systemPrompts },
        pipeline_stages: pipeline.recordStages,
        // The messages column's rule for special-token literals: another rule is another output.
        ...(config.output.include_messages ? { text_rule: TEXT_RULE_ID } : {}),
      }),
    )
    .digest("hex");

  const tasks = planTasks(files, config.input.task_bytes);
  // The benchmark files are inputs of the job too: another benchmark set is another output.
  // The readers chosen (a config's or --format's, or detected) and the benchmark files are part of
  // the job: reading the same files another way, or against other benchmarks, is another output.
  const taskPlanSha256 = createHash("sha256")
    .update(taskPlanSha256Of(files, tasks))
    .update(JSON.stringify(files.map((f) => [f.reader.name, f.spec.domain ?? null, f.spec.source ?? null])))
    .update(JSON.stringify(benchmarks.map((f) => [f.displayPath, f.bytes, f.reader.name])))
    .digest("hex");
  return {
    configPath,
    loaded,
    config,
    pipeline,
    files,
    covered,
    benchmarks,
    // The config hash named the vocabulary and template before they were built: a file changed
    // meanwhile, or the two ways of telling them apart disagree (a bug). Either way, not this job.
    get tokenizer() {
      const built = tokenizer();
      if (built.identity.vocabSha256 !== identity.vocabSha256)
        throw new UserError(
          `tokenizer ${built.identity.name}: its vocabulary is not the one the job was planned with (did the file change?); rerun`,
        );
      return built;
    },
    get renderer() {
      const built = renderer();
      if (built.sha256 !== identity.templateSha256)
        throw new UserError(
          `render.template: the chat template ${built.source} is not the one the job was planned with (did the file change?); rerun`,
        );
      return built;
    },
    systemPrompts,
    get lossPolicy() {
      return lossPolicy();
    },
    filters,
    scorers,
    configSha256,
    tasks,
    taskPlanSha256,
    inputDecisions: decisions.made,
    ...(remote ? { remote } : {}),
  };
}

/**
 * An input as records' `source` labels and the manifest name it: relative to the label root
 * (`input.root`, else the config's folder) — so the same files under another root, a folder or a
 * bucket, give the same labels and byte-identical shards — or, outside a remote root, in full.
 */
export function labelPath(path: string, root: string): string {
  if (isRemoteUri(root)) {
    const prefix = root.endsWith("/") ? root : `${root}/`;
    return path.startsWith(prefix) ? path.slice(prefix.length) : path;
  }
  return isRemoteUri(path) ? path : relative(root, path);
}

/**
 * Every file of the specs, each with its reader. `lenient` (inputs): a file `format: auto` cannot
 * place still gets a task — an empty one reads as 0 records, an unrecognized one as its single
 * quarantine entry — so one stray file never stops a job. `strict` (benchmarks, where a file left
 * out would let leaks through): such a file stops the job, naming it.
 */
async function expandAll(
  specs: readonly InputSpec[],
  key: string,
  /** What the files' labels are relative to. */
  labelRoot: string,
  mode: "lenient" | "strict",
  covered: CoveredInput[],
  /** Decisions given (a worker thread's plan) and those made here. */
  decisions: { known: InputDecisions | undefined; made: InputDecisions },
  onSniff?: (progress: SniffProgress) => void,
  concurrency = SNIFF_CONCURRENCY,
): Promise<InputFile[]> {
  const files: InputFile[] = [];
  const seen = new Set<string>();
  const sizes: ListedSizes = new Map();
  // Every spec's files first (globs, listings), so progress has a total from the start.
  const expanded: string[][] = [];
  for (const [index, spec] of specs.entries()) expanded.push(await expandInput(spec, `${key}.${index}`, sizes));
  const progress: SniffProgress = { key, sniffed: 0, total: expanded.reduce((sum, paths) => sum + paths.length, 0) };
  if (progress.total > 0) onSniff?.({ ...progress });
  for (const [index, spec] of specs.entries()) {
    const paths = expanded[index] as string[];
    for (const path of paths) seen.add(path);
    const specFiles: InputFile[] = [];
    const queue = [...paths];
    // Files are sniffed `concurrency` at a time ahead of this loop, which takes them in queue
    // order: the plan (and which error stops it) is the one a file-by-file loop gives.
    const sniff = orderedAhead(queue, concurrency, async (path) => {
      const decision = decisionKey(key, index, path);
      const known = decisions.known?.get(decision);
      const file = known ? knownInputFile(path, spec, labelRoot, known) : await inputFile(path, spec, labelRoot, mode, sizes.get(path));
      const made = decisionOf(file);
      if (made) decisions.made.set(decision, made);
      // A file that stands for others (a terminal-bench run's results.json): read those instead.
      return { file, standsFor: await file.reader.expand?.(path) };
    });
    for (let at = 0; at < queue.length; at++) {
      const path = queue[at] as string;
      const { file, standsFor } = await sniff(at);
      progress.sniffed++;
      onSniff?.({ ...progress });
      if (standsFor) {
        const label = `stands for ${standsFor.length} file(s) read instead (${file.reader.name})`;
        covered.push({ path, displayPath: file.displayPath, by: standsFor[0] as string, label, kind: "stands-for" });
        for (const other of standsFor) {
          if (seen.has(other)) continue;
          seen.add(other);
          queue.push(other);
          progress.total++;
        }
        continue;
      }
      specFiles.push(file);
    }
    // Input order decides row order inside shards: sorted, so it never depends on the file system.
    files.push(...specFiles.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)));
  }
  return files;
}

/** An input file as a decision made before says, without reading it. */
function knownInputFile(path: string, spec: InputSpec, labelRoot: string, decision: InputDecision): InputFile {
  const { format: _format, unrecognized, ...rest } = decision;
  return {
    path,
    displayPath: labelPath(path, labelRoot),
    spec,
    reader: decidedReader(decision),
    ...rest,
    ...(unrecognized ? { unrecognized: unrecognized.reason, excerpt: unrecognized.excerpt } : {}),
  };
}

/** What was decided about `file` as plain data; undefined when its reader cannot be named again. */
function decisionOf(file: InputFile): InputDecision | undefined {
  const stub = file.empty === true || file.unrecognized !== undefined;
  if (!stub && !nameable(file.reader)) return undefined;
  return {
    bytes: file.bytes,
    format: file.reader.name,
    detected: file.detected,
    splittable: file.splittable,
    ...(file.skippedLines ? { skippedLines: file.skippedLines } : {}),
    ...(file.unrecognized !== undefined ? { unrecognized: { reason: file.unrecognized, excerpt: file.excerpt ?? "" } } : {}),
    ...(file.empty ? { empty: true } : {}),
    ...(file.emptyNote ? { emptyNote: file.emptyNote } : {}),
    ...(file.layout ? { layout: file.layout } : {}),
  };
}

/** Files whose format is sniffed at once while planning (reads of their heads in flight). */
export const SNIFF_CONCURRENCY = 32;

/** Where format detection stands: `sniffed` of `total` files of `key` (`inputs`, `decontaminate.benchmarks`). */
export interface SniffProgress {
  key: string;
  sniffed: number;
  /** Grows when a file stands for others (a run's results.json), which are sniffed too. */
  total: number;
}

/** What `planJob` takes besides the config. */
export interface PlanOptions {
  /** Called as each file's format is told (in input order), and once with 0 sniffed before the first. */
  onSniff?: (progress: SniffProgress) => void;
  /** Files sniffed at once (default SNIFF_CONCURRENCY); 1 sniffs them one after another. */
  sniffConcurrency?: number;
  /** Decisions of an earlier plan of the same job (the main thread's, for a worker thread): those files are not sniffed again. */
  decisions?: InputDecisions;
}

/**
 * `work` for the items of a list that may grow at its end, at most `limit` at a time, started ahead
 * of the caller: `get(i)` is item i's result, and asking for it starts the items up to i + limit − 1
 * that the list holds. Results are taken in order; one that failed throws when taken (and only
 * then: a failure ahead of the caller is never an unhandled rejection).
 */
function orderedAhead<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): (index: number) => Promise<R> {
  const started = new Map<number, Promise<R>>();
  let next = 0;
  return (index) => {
    while (next < items.length && next < index + Math.max(1, limit)) {
      const promise = work(items[next] as T);
      promise.catch(() => {});
      started.set(next, promise);
      next++;
    }
    const result = started.get(index) as Promise<R>;
    started.delete(index);
    return result;
  };
}

async function inputFile(
  path: string,
  spec: InputSpec,
  /** What `displayPath` is relative to: `input.root`, else the config's folder. */
  labelRoot: string,
  mode: "lenient" | "strict",
  listedBytes?: number,
): Promise<InputFile> {
  // An object or a Hub file keeps its full URI as its name: where it lives is not relative to the config.
  const displayPath = labelPath(path, labelRoot);
  const base = { path, displayPath, bytes: listedBytes ?? (await inputSize(path)), spec };
  if (spec.format !== "auto") {
    const reader = readerByName(spec.format);
    const splittable = reader.splittable === true && (await detectCompression(path)) === "none" && (await cuttableByLines(path));
    return { ...base, reader, detected: false, splittable };
  }
  const detection = await detectFormat(path);
  if (detection.kind === "format") {
    const { reader, skipped } = detection;
    // The head detection read already tells the layout: no second read of it.
    const splittable =
      reader.splittable === true && (await detectCompression(path)) === "none" && (detection.cuttable ?? (await cuttableByLines(path)));
    return {
      ...base,
      reader,
      detected: true,
      splittable,
      ...(skipped.length > 0 ? { skippedLines: skipped } : {}),
      ...(detection.layout ? { layout: detection.layout } : {}),
    };
  }
  if (mode === "strict") {
    throw new UserError(
      detection.kind === "empty"
        ? `${path}: cannot detect the input format: the file is empty${detection.note ? ` (${detection.note})` : ""}`
        : `${path}: cannot detect the input format: ${detection.reason}`,
    );
  }
  if (detection.kind === "empty")
    return {
      ...base,
      reader: emptyFileReader,
      detected: true,
      splittable: false,
      empty: true,
      ...(detection.note ? { emptyNote: detection.note } : {}),
    };
  const reader = unrecognizedFileReader(detection.reason, detection.excerpt);
  return { ...base, reader, detected: true, splittable: false, unrecognized: detection.reason, excerpt: detection.excerpt };
}

/**
 * A JSON array or one pretty-printed document is read whole by one task, never cut by byte range;
 * so is a CSV file (a quoted field may hold line breaks). A Parquet file is cut by row group (told
 * by its 4-byte magic: no head read as text).
 */
async function cuttableByLines(path: string): Promise<boolean> {
  if (await isParquetFile(path)) return true;
  const layout = await recordLayout(path);
  if (layout.kind === "text") return (await csvDialectOf(path)) === undefined;
  return layout.kind !== "array" && layout.kind !== "document" && layout.kind !== "wrapped";
}

/**
 * Removes from `files` (in place) those another file's record reads — a terminal-bench trial's
 * `agent.cast`, panes and logs when its `results.json` is an input too — and returns them. A file
 * that reads companions is sized by all it reads, so the task cut stays balanced.
 */
async function dropCovered(files: InputFile[], labelRoot: string, concurrency: number): Promise<CoveredInput[]> {
  // Who covers a folder or a file: the index of the claiming input, and what it is.
  const byPath = new Map<string, { index: number; label: string }>();
  // Looked up `concurrency` at a time ahead, taken in input order.
  const companionsOf = orderedAhead(files, concurrency, async (file) => file.reader.companions?.(file.path));
  for (const [index, file] of files.entries()) {
    const companions = await companionsOf(index);
    if (!companions) continue;
    file.bytes = companions.bytes;
    for (const path of [...companions.dirs, ...companions.files])
      if (!byPath.has(path)) byPath.set(path, { index, label: companions.label });
  }
  if (byPath.size === 0) return [];
  const covered: CoveredInput[] = [];
  const kept = files.filter((file, index) => {
    // The file itself, or any folder above it.
    let claim: { index: number; label: string } | undefined;
    for (let at = file.path; claim === undefined; at = dirname(at)) {
      const found = byPath.get(at);
      if (found && found.index !== index && (files[found.index] as InputFile).path !== file.path) claim = found;
      if (dirname(at) === at) break;
    }
    if (!claim) return true;
    covered.push({
      path: file.path,
      displayPath: labelPath(file.path, labelRoot),
      by: (files[claim.index] as InputFile).path,
      label: claim.label,
      kind: "companion",
    });
    return false;
  });
  files.splice(0, files.length, ...kept);
  return covered;
}

/** The mask settings as the config hash sees them: without `weights` or `corpus_novelty` while they are off. */
function maskIdentity(mask: JobConfig["mask"]): Partial<JobConfig["mask"]> {
  const { weights, corpus_novelty, ...rules } = mask;
  return { ...rules, ...(weights.enabled ? { weights } : {}), ...(corpus_novelty.enabled ? { corpus_novelty } : {}) };
}
