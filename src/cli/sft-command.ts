import { createWriteStream } from "node:fs";
import { mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { loadConfig } from "../config/load-config.ts";
import { UserError } from "../core/errors.ts";
import { planJob } from "../pipeline/plan.ts";
import { readPrompts } from "../sft/prompts/read-prompts.ts";
import { type SftPrompt, type TeacherSettings, teacherMessages } from "../sft/prompts/sft-prompt.ts";
import { runSft, type SftCounts } from "../sft/run-sft.ts";
import { shownPath } from "./shown-path.ts";

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
  for await (const item of readPrompts(plan, new Map())) {
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
  ];
  console.log(lines.join("\n"));
}

interface SampleOptions {
  input: string[];
  output?: string;
  candidates: string[];
  overwrite?: boolean;
  progress: "auto" | "json" | "none";
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
  const { manifest, manifestPath } = await runSft(plan, {
    outputDir,
    ...(options.candidates.length > 0 ? { candidateFiles: options.candidates } : {}),
    ...(options.overwrite ? { overwrite: true } : {}),
    onProgress,
  });
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
    `  failed        ${counts.failed} (${pct(counts.failed)})`,
    `  quarantined   ${counts.quarantined} record(s)`,
    `  candidates    ${counts.candidates}`,
    "  by domain     " +
      Object.entries(manifest.by_domain)
        .map(([domain, d]) => `${domain} ${d.kept}/${d.prompts}`)
        .join(", "),
    "  rule failures " +
      Object.entries(manifest.by_rule)
        .map(([rule, r]) => `${rule} ${r.failed}/${r.evaluated}`)
        .join(", "),
  ];
  if (manifest.teacher.source === "endpoint") {
    const s = manifest.teacher.stats;
    lines.push(`  teacher       ${s.requests} request(s), ${s.cacheHits} from cache, ${s.retries} retried, ${s.failures} failed`);
  } else if (manifest.teacher.errors.length > 0) {
    lines.push(
      `  file errors   ${manifest.teacher.errors.length}, e.g. ${manifest.teacher.errors[0]?.file}:${manifest.teacher.errors[0]?.line}: ${manifest.teacher.errors[0]?.reason}`,
    );
  }
  lines.push(`  tokens        ${manifest.tokens.total} (${manifest.tokens.loss} with loss)`);
  lines.push(
    `  shards        ${manifest.shards.length} in ${where(outputDir)}/data; every candidate's scores: ${where(outputDir)}/sft/candidates.parquet`,
  );
  lines.push(`  manifest      ${where(manifestPath)}`);
  console.log(lines.join("\n"));
}
