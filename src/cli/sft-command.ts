import { createWriteStream } from "node:fs";
import { mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { loadConfig } from "../config/load-config.ts";
import { UserError } from "../core/errors.ts";
import { planJob } from "../pipeline/plan.ts";
import { screenPrompts, selectionLines } from "../sft/prompts/screen-prompts.ts";
import { type SftPrompt, type TeacherSettings, teacherMessages } from "../sft/prompts/sft-prompt.ts";
import { runSft, type SftCounts, SftStopped } from "../sft/run-sft.ts";
import { causesText } from "../sft/teacher/endpoint-failures.ts";
import { shownPath } from "./shown-path.ts";
import { stopOnSignals } from "./stop-on-signals.ts";

interface PromptsOptions {
  input: string[];
  out: string;
  format: "chat" | "openai-batch";
}

const where = shownPath;

/** One JSONL line: our prompt record, or an OpenAI Batch API request (custom_id = prompt_id). */
function promptLine(
  prompt: SftPrompt,
  format: PromptsOptions["format"],
  teacher: { model: string; n: number; temperature: number; max_tokens: number },
  settings: TeacherSettings,
): string {
  if (format === "chat") return JSON.stringify(prompt);
  return JSON.stringify({
    custom_id: prompt.prompt_id,
    method: "POST",
    url: "/v1/chat/completions",
    body: {
      model: teacher.model,
      messages: teacherMessages(prompt, settings),
      n: teacher.n,
      temperature: teacher.temperature,
      max_tokens: teacher.max_tokens,
    },
  });
}

export async function sftPromptsCommand(configPath: string, options: PromptsOptions): Promise<void> {
  const loaded = loadConfig(configPath, { inputs: options.input });
  const plan = await planJob(loaded);
  const { sft } = plan.config;
  await mkdir(dirname(options.out), { recursive: true });
  const out = createWriteStream(options.out);
  let records = 0;
  let quarantined = 0;
  let prompts = 0;
  const reasons: string[] = [];
  const screen = await screenPrompts(plan);
  for await (const item of screen.items) {
    records += 1;
    if (item.kind === "quarantine") {
      quarantined += 1;
      if (reasons.length < 5)
        reasons.push(`${item.entry.source.uri}${item.entry.source.line ? `:${item.entry.source.line}` : ""}: ${item.entry.reason}`);
      continue;
    }
    for (const prompt of item.prompts) {
      prompts += 1;
      if (!out.write(`${promptLine(prompt, options.format, sft.teacher, { hints: sft.hints, instructions: sft.instructions })}\n`))
        await new Promise<void>((resolve) => out.once("drain", () => resolve()));
    }
  }
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  const lines = [
    `lwm-data sft prompts: ${records} record(s) → ${prompts} prompt(s) (select: ${sft.select}) in ${where(options.out)} (${options.format})`,
    `  quarantined ${quarantined}${reasons.length > 0 ? `:\n    ${reasons.join("\n    ")}` : ""}`,
    ...selectionLines(screen.report()),
  ];
  console.log(lines.join("\n"));
}

interface SampleOptions {
  input: string[];
  output?: string;
  candidates: string[];
  overwrite?: boolean;
  progress: "auto" | "json" | "none";
  /** Another sampling round for the prompts no round so far gave a passing candidate. */
  resampleRejected?: boolean;
}

export async function sftSampleCommand(configPath: string, options: SampleOptions): Promise<void> {
  const loaded = loadConfig(configPath, { inputs: options.input });
  const plan = await planJob(loaded);
  const outputDir = options.output ?? `${plan.config.output.dir}-sft`;
  const started = Date.now();
  const showProgress = options.progress === "json" || (options.progress === "auto" && process.stderr.isTTY);
  let lastShown = 0;
  const onProgress = (counts: SftCounts) => {
    if (!showProgress || Date.now() - lastShown < 2000) return;
    lastShown = Date.now();
    const elapsed = (Date.now() - started) / 1000;
    if (options.progress === "json")
      process.stderr.write(`${JSON.stringify({ event: "progress", elapsed_s: Math.round(elapsed), ...counts })}\n`);
    else
      process.stderr.write(
        `  ${counts.prompts} prompts: ${counts.kept} kept, ${counts.rejected} rejected, ${counts.failed} failed (${elapsed.toFixed(0)} s)\n`,
      );
  };
  if (options.candidates.length === 0 && !plan.config.sft.teacher.base_url)
    throw new UserError("sft.teacher.base_url is not set and no --candidates given");
  // Between prompts, as `run` stops between records: nothing new is sent, the requests in flight
  // finish into the teacher cache, and the rerun pays only for what was never answered.
  const stop = stopOnSignals("sft sample", "stopping once the requests in flight are answered");
  let result: Awaited<ReturnType<typeof runSft>>;
  try {
    result = await runSft(plan, {
      outputDir,
      ...(options.candidates.length > 0 ? { candidateFiles: options.candidates } : {}),
      ...(options.overwrite ? { overwrite: true } : {}),
      ...(options.resampleRejected ? { resampleRejected: true } : {}),
      onProgress,
      onWarning: (message) => process.stderr.write(`lwm-data: warning: ${message}\n`),
      stop: stop.signal,
    });
  } catch (err) {
    if (!(err instanceof SftStopped)) throw err;
    const { counts } = err;
    const kept =
      options.candidates.length > 0
        ? "the candidates are read again from the files"
        : `the teacher's answers so far are kept in its cache (${where(plan.config.sft.teacher.cache_dir)})`;
    console.log(
      `lwm-data sft sample: ${counts.prompts} prompt(s) recorded (${counts.kept} kept, ${counts.rejected} rejected, ${counts.failed} failed) in ${((Date.now() - started) / 1000).toFixed(1)} s\n` +
        `  stopped by ${stop.received()}: ${kept}, the unfinished output in ${where(outputDir)} has no manifest; rerun the same command to resume (the output will equal an uninterrupted run's)`,
    );
    process.exitCode = stop.received() === "SIGINT" ? 130 : 143;
    return;
  } finally {
    stop.dispose();
  }
  // A run whose every prompt failed, or whose endpoint refused its first requests, throws SftFailed
  // (exit 1, cause and fix on stderr) before here; a partial failure is summarised by its top causes.
  const { manifest, manifestPath, failureCauses } = result;
  const { counts } = manifest;
  const pct = (n: number) => (counts.prompts > 0 ? `${((100 * n) / counts.prompts).toFixed(1)}%` : "0%");
  const lines = [
    `lwm-data sft sample: ${counts.prompts} prompt(s) from ${counts.records_in} record(s), candidates from ${
      manifest.teacher.source === "files"
        ? `${manifest.teacher.files.length} file(s)`
        : `${manifest.teacher.base_url} (${manifest.teacher.model})`
    }; ${((Date.now() - started) / 1000).toFixed(1)} s`,
    `  kept          ${counts.kept} (${pct(counts.kept)})`,
    `  rejected      ${counts.rejected} (${pct(counts.rejected)})`,
    `  failed        ${counts.failed} (${pct(counts.failed)})${failureCauses.length > 0 ? `: ${causesText(failureCauses)}` : ""}`,
    `  quarantined   ${counts.quarantined} record(s)`,
    `  candidates    ${counts.candidates}`,
    ...selectionLines(manifest.selection),
    "  by domain     " +
      Object.entries(manifest.by_domain)
        .map(([domain, d]) => `${domain} ${d.kept}/${d.prompts}`)
        .join(", "),
    "  rule failures " +
      Object.entries(manifest.by_rule)
        .map(([rule, r]) => `${rule} ${r.failed}/${r.evaluated}`)
        .join(", "),
    // Where the thinking was: a reasoning-parser teacher shows `reasoning_content`; `none` means no thinking at all.
    "  thinking in   " +
      Object.entries(manifest.teacher_forms)
        .map(([form, f]) => `${form} ${f.kept}/${f.candidates}`)
        .join(", "),
  ];
  {
    const { diversity, quota, ...keep } = manifest.keep_policy;
    const cap =
      diversity.max_per_cluster > 0
        ? `, cap ${diversity.max_per_cluster}: ${diversity.capped_candidates} capped, ${diversity.switched} switched, ${diversity.capped_prompts} prompt(s) rejected`
        : "";
    const quotas =
      quota.total !== null || Object.keys(quota.per_domain).length > 0 ? `; ${quota.over_quota} prompt(s) past a quota set aside` : "";
    lines.push(
      `  keep policy   ${keep.prefer} (${keep.preference_changed} changed); ${keep.truncated} truncated; ${diversity.clusters} near-duplicate cluster(s), largest ${diversity.largest} of ${diversity.traces}${cap}${quotas}`,
    );
  }
  if (manifest.teacher.source === "endpoint") {
    const s = manifest.teacher.stats;
    lines.push(`  teacher       ${s.requests} request(s), ${s.cacheHits} from cache, ${s.retries} retried, ${s.failures} failed`);
  } else if (manifest.teacher.errors.length > 0) {
    lines.push(
      `  file errors   ${manifest.teacher.errors.length}, e.g. ${manifest.teacher.errors[0]?.file}:${manifest.teacher.errors[0]?.line}: ${manifest.teacher.errors[0]?.reason}`,
    );
  }
  if (manifest.teacher.source === "files" && manifest.teacher.endpoint) {
    const s = manifest.teacher.endpoint.stats;
    lines.push(`  teacher       ${s.requests} request(s), ${s.cacheHits} from cache, ${s.retries} retried, ${s.failures} failed`);
  }
  if (manifest.rounds.length > 1)
    lines.push(
      "  rounds        " +
        manifest.rounds
          .map(
            (r) => `${r.round} (${r.seed === null ? "files" : `seed ${r.seed}`}): ${r.prompts} asked, ${r.passed} with a passing candidate`,
          )
          .join("; "),
    );
  if (manifest.judge) {
    const j = manifest.judge;
    lines.push(
      `  judge         ${j.model} at ${j.base_url}: ${j.judged} candidate(s) judged, ${j.errors} unreadable or failed; ${j.stats.requests} request(s), ${j.stats.cacheHits} from cache` +
        (j.self_judging ? " (the teacher's own model: it favours its own answers, prefer another via sft.judge.model)" : ""),
    );
  }
  lines.push(`  tokens        ${manifest.tokens.total} (${manifest.tokens.loss} with loss)`);
  lines.push(
    `  shards        ${manifest.shards.length} in ${where(outputDir)}/data; every candidate's scores: ${where(outputDir)}/sft/candidates.parquet`,
  );
  lines.push(`  manifest      ${where(manifestPath)}`);
  console.log(lines.join("\n"));
}
