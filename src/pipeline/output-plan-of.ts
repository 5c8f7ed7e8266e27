import { controlsIdentity } from "../controls/rephrase/rephrase-settings.ts";
import { curationEnabled } from "../curate/curation-settings.ts";
import { piiActive } from "../normalize/pii/pii-settings.ts";
import { manifestTokenizer, maskRules, shardLayout } from "../output/manifest.ts";
import { describeTasks, OUTPUT_PLAN_FORMAT, type OutputPlan } from "../output/output-plan.ts";
import { filteringPlanOf } from "../output/selection-summary.ts";
import { selectionActive } from "../select/selection-active.ts";
import type { JobPlan } from "./plan.ts";

/**
 * tasks/plan.json of a job: what the job is (config hash, inputs, header of every shard, task
 * cut, curation, mixture, controls, personal data and filtering settings). Written once by the
 * job's first process (prepareOutput in run-job.ts), so kept apart from the runner: the later
 * processes of a job never load what it needs (the manifest's shard layout, the tokenizer).
 */
export function outputPlanOf(plan: JobPlan): OutputPlan {
  const filtering = filteringPlanOf({ filters: plan.filters, scorers: plan.scorers, selectActive: selectionActive(plan.config.select) });
  return {
    format: OUTPUT_PLAN_FORMAT,
    config_sha256: plan.configSha256,
    plan_sha256: plan.taskPlanSha256,
    header: {
      pipeline: { name: plan.pipeline.name, stages: ["read", ...plan.pipeline.recordStages, "write"] },
      config_sha256: plan.configSha256,
      tokenizer: manifestTokenizer(plan.tokenizer.identity),
      template: { source: plan.renderer.source, sha256: plan.renderer.sha256 },
      mask_policy: plan.lossPolicy.name,
      mask_rules: maskRules(plan.config),
      inputs: plan.files.map((f) => ({
        path: f.displayPath,
        format: f.reader.name,
        detected: f.detected,
        bytes: f.bytes,
        ...(f.spec.source ? { source: f.spec.source } : {}),
      })),
      layout: shardLayout(plan.config, plan.config.output.include_messages, true),
    },
    tasks: describeTasks(
      plan.tasks,
      plan.files.map((f) => f.displayPath),
    ),
    ...(curationEnabled(plan.config) ? { curation: curationSettings(plan) } : {}),
    mixture: plan.config.mixture,
    // As the config hash sees them: the teacher blocks only when on, and never where a teacher is
    // served or its cache lies (a path would make the plan depend on the checkout's location).
    ...(plan.config.controls.enabled ? { controls: controlsIdentity(plan.config.controls) } : {}),
    ...(piiActive(plan.config.normalize.pii) ? { pii: plan.config.normalize.pii } : {}),
    ...(filtering ? { filtering } : {}),
  };
}

function curationSettings(plan: JobPlan): NonNullable<OutputPlan["curation"]> {
  const { dedup, decontaminate } = plan.config;
  return {
    exact: dedup.exact,
    near: dedup.near,
    ngram: dedup.ngram,
    bands: dedup.bands,
    rows: dedup.rows,
    min_similarity: dedup.min_similarity,
    decontaminate: {
      ngram: decontaminate.ngram,
      min_overlap: decontaminate.min_overlap,
      min_turns: decontaminate.min_turns,
      max_episode_frequency: decontaminate.max_episode_frequency,
      action: decontaminate.action,
      benchmarks: plan.benchmarks.map((f) => ({ path: f.displayPath, format: f.reader.name })),
    },
  };
}
