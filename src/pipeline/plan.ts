import { createHash } from "node:crypto";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { glob, isDynamicPattern } from "tinyglobby";
import { planTasks, type Task, taskPlanSha256 as taskPlanSha256Of } from "../../sharding/task-plan.ts";
import { type LoadedConfig, stableStringify } from "../config/load-config.ts";
import type { InputSpec, JobConfig } from "../config/schema.ts";
import { UserError } from "../core/errors.ts";
import { detectCompression, setDecompressionLimits } from "../io/open-input.ts";
import { allObservationsPolicy, type LossPolicy, turnStatsPolicy } from "../mask/loss-policy.ts";
import type { JobShas } from "../output/task-state.ts";
import type { Reader } from "../read/reader.ts";
import { detectReader, readerByName } from "../read/registry.ts";
import { ChatTemplateRenderer } from "../render/chat-template.ts";
import { loadSystemPrompts, type SystemPrompts } from "../render/system-prompts.ts";
import { bundledQwen3Dir, loadTokenizer } from "../tokenize/load-tokenizer.ts";
import type { Tokenizer } from "../tokenize/tokenizer.ts";
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
}

/** Everything a job needs, resolved and checked before any data is processed. */
export interface JobPlan {
  configPath: string;
  /** How the config was loaded, so a worker thread can load the same plan. */
  loaded: LoadedConfig;
  config: JobConfig;
  pipeline: PipelineGraph;
  files: InputFile[];
  /** `decontaminate.benchmarks`, expanded like the inputs. */
  benchmarks: InputFile[];
  tokenizer: Tokenizer;
  renderer: ChatTemplateRenderer;
  systemPrompts: SystemPrompts;
  lossPolicy: LossPolicy;
  /** sha256 of the processing settings, with files hashed by content rather than located by path. */
  configSha256: string;
  /** The inputs cut into tasks (`input.task_bytes`): the unit of parallelism, ranks and resume. */
  tasks: Task[];
  /** sha256 of the input list and the task cut. */
  taskPlanSha256: string;
}

async function expandInput(spec: InputSpec, key: string): Promise<string[]> {
  if (!isDynamicPattern(spec.path)) {
    if (!existsSync(spec.path)) throw new UserError(`${key}.path: ${spec.path} does not exist`);
    return [spec.path];
  }
  const files = await glob(spec.path, { absolute: true, onlyFiles: true, expandDirectories: false });
  if (files.length === 0) throw new UserError(`${key}.path: pattern ${spec.path} matched no files`);
  // Input order decides row order inside shards: sort so it never depends on the file system.
  return files.sort();
}

function loadTemplate(config: JobConfig, tokenizer: Tokenizer): ChatTemplateRenderer {
  const setting = config.render.template;
  if (setting === "tokenizer") {
    if (tokenizer.chatTemplate) return new ChatTemplateRenderer(tokenizer.chatTemplate, `${tokenizer.identity.name} tokenizer_config.json`);
    // tiktoken encodings ship no template: use Qwen3's ChatML template, as documented.
    const qwen = JSON.parse(readFileSync(join(bundledQwen3Dir(), "tokenizer_config.json"), "utf8")) as { chat_template: string };
    return new ChatTemplateRenderer(qwen.chat_template, "qwen3 tokenizer_config.json");
  }
  if (!existsSync(setting)) throw new UserError(`render.template: ${setting} does not exist`);
  const text = readFileSync(setting, "utf8");
  if (setting.endsWith(".json")) {
    const parsed = JSON.parse(text) as { chat_template?: unknown };
    if (typeof parsed.chat_template !== "string") throw new UserError(`render.template: ${setting} has no string "chat_template" field`);
    return new ChatTemplateRenderer(parsed.chat_template, setting);
  }
  return new ChatTemplateRenderer(text, setting);
}

/** The hashes that identify this job's output, as task states and the output plan record them. */
export function jobShas(plan: JobPlan): JobShas {
  return { config_sha256: plan.configSha256, plan_sha256: plan.taskPlanSha256 };
}

export async function planJob(loaded: LoadedConfig): Promise<JobPlan> {
  const { config, path: configPath } = loaded;
  const configDir = join(configPath, "..");
  const pipeline = loadPipelineGraph(config.pipeline);
  // Every reader of this process (and of each worker thread, which plans for itself) obeys them.
  setDecompressionLimits({ maxBytes: config.input.max_decompressed_bytes, maxRatio: config.input.max_expansion_ratio });

  const expandAll = async (specs: readonly InputSpec[], key: string): Promise<InputFile[]> => {
    const files: InputFile[] = [];
    for (const [index, spec] of specs.entries()) {
      for (const path of await expandInput(spec, `${key}.${index}`)) {
        const detected = spec.format === "auto";
        const reader = detected ? await detectReader(path) : readerByName(spec.format);
        const splittable = reader.splittable === true && (await detectCompression(path)) === "none";
        files.push({ path, displayPath: relative(configDir, path), bytes: statSync(path).size, reader, detected, splittable, spec });
      }
    }
    return files;
  };
  const files = await expandAll(config.inputs, "inputs");
  const benchmarks = await expandAll(config.decontaminate.benchmarks, "decontaminate.benchmarks");

  const tokenizer = loadTokenizer(config.tokenizer);
  const lossPolicy = config.mask.policy === "turn-stats" ? turnStatsPolicy(config.mask, tokenizer) : allObservationsPolicy;
  const renderer = loadTemplate(config, tokenizer);
  const systemPrompts = loadSystemPrompts(config.render.system_prompts_dir);

  // SFT settings do not change CPT shards, so editing them does not make the CPT output another job.
  const { inputs: _inputs, output, render: _render, tokenizer: tokenizerSettings, sft: _sft, ...rest } = config;
  const { dir: _dir, ...outputSettings } = output;
  const configSha256 = createHash("sha256")
    .update(
      stableStringify({
        ...rest,
        // Benchmark files count by content, in the task plan's hash, not by where they sit.
        decontaminate: { ...config.decontaminate, benchmarks: config.decontaminate.benchmarks.length },
        output: outputSettings,
        tokenizer: { special_tokens: tokenizerSettings.special_tokens, vocab_sha256: tokenizer.identity.vocabSha256 },
        render: { template_sha256: renderer.sha256, system_prompts: systemPrompts },
        pipeline_stages: pipeline.recordStages,
      }),
    )
    .digest("hex");

  const tasks = planTasks(files, config.input.task_bytes);
  // The benchmark files are inputs of the job too: another benchmark set is another output.
  const taskPlanSha256 =
    benchmarks.length === 0
      ? taskPlanSha256Of(files, tasks)
      : createHash("sha256")
          .update(taskPlanSha256Of(files, tasks))
          .update(JSON.stringify(benchmarks.map((f) => [f.displayPath, f.bytes, f.reader.name])))
          .digest("hex");
  return {
    configPath,
    loaded,
    config,
    pipeline,
    files,
    benchmarks,
    tokenizer,
    renderer,
    systemPrompts,
    lossPolicy,
    configSha256,
    tasks,
    taskPlanSha256,
  };
}
