import { controlRows } from "../controls/describe-controls.ts";
import { isS3Uri } from "../io/s3/s3-uri.ts";
import { mixtureReportLines } from "../mixture/describe-mixture.ts";
import { piiHeadline } from "../normalize/pii/pii-summary.ts";
import type { Manifest } from "../output/manifest.ts";
import { addScoreSummaries, scoringReportLines } from "../output/selection-summary.ts";
import type { JobPlan } from "../pipeline/plan.ts";
import type { RunResult } from "../pipeline/run-job.ts";
import type { ScoreSummary } from "../score/score-records.ts";
import { readScoreMarker } from "../score/score-stage.ts";
import { quarantineCauses } from "./quarantine-causes.ts";
import { shownPath } from "./shown-path.ts";

/**
 * What `lwm-data run` prints once the job's manifest is written: counts, curation, mixture,
 * controls, tokens, shards, scoring, and why records were quarantined; a run that quarantined
 * every record it read fails (exit 1). Its own module: a process that runs one stage of a
 * cluster's array never loads it.
 */
export async function reportFinishedRun(
  plan: JobPlan,
  result: RunResult & { manifest: Manifest; manifestPath: string },
  header: string,
): Promise<void> {
  const where = shownPath;
  const { manifest, manifestPath } = result;
  const { counts, tokens, shards, splits, packing } = manifest;
  const quarantineFiles = manifest.quarantine.map((q) => where(`${result.outputDir}/${q.path}`));
  const lines = [
    header,
    `  records in    ${counts.records_in}`,
    `  samples out   ${counts.samples_out}${counts.samples_untrained ? ` (${counts.samples_untrained} train no token)` : ""}`,
    `  quarantined   ${counts.quarantined}${
      counts.quarantined > 0
        ? `  (${Object.entries(counts.quarantined_by_stage)
            .map(([s, n]) => `${s}: ${n}`)
            .join(", ")}) → ${quarantineFiles.slice(0, 3).join(", ")}${quarantineFiles.length > 3 ? ", …" : ""}`
        : ""
    }`,
    ...(manifest.curation
      ? [
          `  filtered      ${counts.filtered}${
            counts.filtered > 0
              ? `  (${Object.entries(counts.filtered_by_stage)
                  .map(([s, n]) => `${s}: ${n}`)
                  .join(", ")}) → ${where(`${result.outputDir}/filtered`)}`
              : ""
          }${manifest.curation.masked.records > 0 ? `; ${manifest.curation.masked.records} record(s) kept with ${manifest.curation.masked.turns} benchmark-matching turn(s) masked` : ""}`,
        ]
      : []),
    ...(manifest.curation?.settings.decontaminate.benchmarks
      .filter((b) => b.episodes === 0)
      .map((b) => `  warning       benchmark ${b.path} held no episode lwm-data could read: nothing was decontaminated against it`) ?? []),
    ...inputNotes(plan, manifest.counts.quarantined_by_stage.detect ?? 0, where),
    ...(manifest.duplicate_ids && manifest.duplicate_ids.repeated_across_tasks > 0
      ? [
          `  duplicate ids ${manifest.duplicate_ids.repeated_across_tasks} id(s) also occur in another task and were kept there (only repeats within a task are quarantined; see manifest duplicate_ids)`,
        ]
      : []),
    `  tokens        ${tokens.total} (${tokens.loss} with loss, ${tokens.total > 0 ? ((100 * tokens.loss) / tokens.total).toFixed(1) : "0.0"}%)`,
    ...(manifest.mixture && Object.keys(manifest.mixture.settings.sources).length > 0
      ? ["  mixture", ...mixtureReportLines(manifest.mixture, "    ")]
      : []),
    ...(manifest.controls
      ? [
          `  controls      ${manifest.controls.labelled} trajectories with edge cases, ${manifest.controls.instructed} instructed, ${manifest.controls.counterfactual} counterfactual sample(s); labels: ${
            controlRows(manifest.controls)
              .map(({ label, total }) => `${label} ${total}`)
              .join(", ") || "none"
          }`,
        ]
      : []),
    ...(manifest.pii ? [`  personal data ${piiHeadline(manifest.pii)}`] : []),
    ...(Object.keys(splits).length > 1
      ? [
          `  splits        ${Object.entries(splits)
            .map(([split, t]) => `${split} ${t.samples}`)
            .join(", ")}`,
        ]
      : []),
    ...(packing
      ? [
          `  packed        ${packing.documents} documents in ${packing.rows} rows of ≤ ${packing.seq_len} tokens, ${(100 * packing.efficiency).toFixed(1)}% full` +
            (packing.fit.split_records + packing.fit.truncated_records > 0
              ? ` (${packing.fit.split_records} record(s) split${packing.fit.untrained_pieces_dropped ? `, ${packing.fit.untrained_pieces_dropped} piece(s) that train no token left out` : ""}, ${packing.fit.truncated_records} truncated by ${packing.fit.truncated_tokens} tokens)`
              : ""),
        ]
      : []),
    `  shards        ${shards.length} in ${where(result.outputDir)}/data`,
    `  dataset card  ${where(`${result.outputDir}/README.md`)} (${loadDatasetHint(where(result.outputDir))})`,
    `  manifest      ${where(manifestPath)}`,
  ];
  // What scoring asked for (each task's marker holds what its unit sent, when it ran).
  if (plan.scorers.length > 0) {
    const scoring: Record<string, ScoreSummary> = {};
    for (const task of plan.tasks) {
      const marker = await readScoreMarker(plan, task.index);
      if (marker) addScoreSummaries(scoring, marker.data.scorers);
    }
    lines.push(...scoringReportLines(scoring));
  }
  // Why records were quarantined, by kind; a run that quarantined every record it read wrote
  // nothing at all, so it fails (exit 1) with the top reasons and what to check.
  const allQuarantined = counts.records_in > 0 && counts.quarantined === counts.records_in && counts.samples_out === 0;
  const quarantined = counts.quarantined > 0 ? await quarantineCauses(result.outputDir, manifest.quarantine) : { causes: [], read: 0 };
  const top = quarantined.causes
    .slice(0, 3)
    .map((cause) => `${cause.kind} ×${cause.count}${cause.example ? ` (e.g. ${where(cause.example.replace(/:\d+$/, ""))})` : ""}`);
  if (top.length > 0) {
    const sampled = quarantined.read < counts.quarantined ? ` (of the first ${quarantined.read} entries)` : "";
    lines.splice(lines.findIndex((line) => line.startsWith("  quarantined ")) + 1, 0, `  top reasons   ${top.join("; ")}${sampled}`);
  }
  console.log(lines.join("\n"));
  if (allQuarantined) {
    const first = quarantined.causes[0]?.kind ?? "";
    const fix = first.startsWith("detect:")
      ? "no reader recognized the files: set inputs[].format (or --format) to the format they hold; `lwm-data validate` shows what each file is read as"
      : first.startsWith("read:")
        ? "the files do not hold what their format reads: check inputs[].format (or --format) and the files themselves"
        : "see each entry's stage and reason in the quarantine files";
    console.error(
      [
        `lwm-data: run: every one of the ${counts.records_in} record(s) read was quarantined: no sample was written`,
        `  causes   ${
          top.length > 0
            ? top.join("; ")
            : Object.entries(counts.quarantined_by_stage)
                .map(([stage, n]) => `${stage} ×${n}`)
                .join(", ")
        }`,
        `  fix      ${fix}`,
        `  details  ${quarantineFiles.slice(0, 3).join(", ")}${quarantineFiles.length > 3 ? ", …" : ""} (one JSON entry per record: stage, reason, excerpt)`,
      ].join("\n"),
    );
    process.exitCode = 1;
  }
}

/**
 * Inputs that gave no records of their own: files no reader recognized (each quarantined whole,
 * stage `detect`: a warning), empty files and files read with another input's record (notes).
 */
function inputNotes(plan: JobPlan, quarantinedFiles: number, where: (path: string) => string): string[] {
  const unrecognized = plan.files.filter((f) => f.unrecognized).map((f) => where(f.path));
  const empty = plan.files.filter((f) => f.empty).map((f) => where(f.path));
  const list = (paths: string[]) => `${paths.slice(0, 3).join(", ")}${paths.length > 3 ? ", …" : ""}`;
  return [
    ...(quarantinedFiles > 0
      ? [
          `  warning       ${quarantinedFiles} input file(s) no reader recognized were quarantined whole, one entry each (stage detect; set --format or inputs[].format to read them): ${list(unrecognized)}`,
        ]
      : []),
    ...(empty.length > 0 ? [`  empty files   ${empty.length} (0 records): ${list(empty)}`] : []),
    ...(plan.covered.length > 0
      ? [
          `  covered       ${plan.covered.length} file(s) read with another input's record, not on their own (\`lwm-data validate\` lists them)`,
        ]
      : []),
  ];
}

/** How `datasets` opens the output: a folder by its card; a bucket by its shards (through fsspec's s3fs). */
function loadDatasetHint(output: string): string {
  return isS3Uri(output) ? `datasets.load_dataset("parquet", data_files="${output}/data/*.parquet")` : `datasets.load_dataset("${output}")`;
}
