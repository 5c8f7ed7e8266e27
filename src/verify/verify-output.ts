import { readdir, readFile, stat } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import type { Schema } from "apache-arrow";
import { MANIFEST_FORMAT } from "../output/manifest.ts";
import { SHARD_METADATA_KEY } from "../write/parquet-shard-writer.ts";
import { type FileDigest, fileDigest } from "./file-digest.ts";
import { addTally, emptyTally, FILTER_STAGES, type FilteredTally, readFilteredFile } from "./filtered-entries.ts";
import { totalsProblems } from "./manifest-totals.ts";
import { type ListedFile, type OutputManifest, readOutputManifest, valueAt } from "./output-manifest.ts";
import { type ParquetInspection, ParquetReader } from "./parquet-reader.ts";
import { errorText, MANIFEST_FILE, type VerifyCheck, type VerifyProblem } from "./problems.ts";
import type { ShardContent } from "./shard-content.ts";
import { compareSchemas, expectedShardSchema } from "./shard-schema.ts";

export type { ListedFile, OutputManifest } from "./output-manifest.ts";
export type { VerifyCheck, VerifyProblem } from "./problems.ts";
export { expectedShardSchema } from "./shard-schema.ts";

export interface VerifyReport {
  /** The manifest's `format` (`lwm-data/shards`, `lwm-data/sft`), or "" when it could not be read. */
  manifestFormat: string;
  /** Files the manifest lists that were found and checked. */
  filesChecked: number;
  /** Shards among them whose rows were read. */
  shardsChecked: number;
  /** Tokens in those shards, counted from their `input_ids`. */
  tokens: number;
  problems: VerifyProblem[];
}

export interface VerifyOptions {
  /** Called before each listed file is checked (progress). */
  onFile?: (path: string) => void;
  /** The schema every shard must have; default `expectedShardSchema`. `firstShard`: the first readable shard's schema. */
  expectedSchema?: (manifest: OutputManifest, firstShard: Schema) => Schema;
}

/** What one output's verification carries from file to file. */
interface Run {
  outputDir: string;
  manifest: OutputManifest;
  schemaFor: NonNullable<VerifyOptions["expectedSchema"]>;
  /** Fixed by the first shard read, then the same for every shard. */
  expectedSchema?: Schema;
  report: VerifyReport;
  reader: ParquetReader;
  /** Filtered entries per stage and domain over every filtered file; `sound` until a file is missing or has a bad line. */
  filtered: { tally: FilteredTally; sound: boolean };
}

/** `<output>/manifest.json`, parsed; anything wrong with it is a "manifest" problem, never a throw. */
async function loadManifest(outputDir: string): Promise<{ manifest?: OutputManifest; format: string; problems: VerifyProblem[] }> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(join(outputDir, MANIFEST_FILE), "utf8"));
  } catch (err) {
    const problem: VerifyProblem = { path: MANIFEST_FILE, check: "manifest", message: `cannot read the manifest: ${errorText(err)}` };
    return { format: "", problems: [problem] };
  }
  const { manifest, problems } = readOutputManifest(json);
  const format = typeof json === "object" && json !== null && "format" in json ? String(json.format) : "";
  return { ...(manifest ? { manifest } : {}), format, problems };
}

function problem(
  file: { path: string },
  check: VerifyCheck,
  message: string,
  values: { expected?: string | number; actual?: string | number } = {},
): VerifyProblem {
  return { path: file.path, check, ...values, message };
}

/** A count the manifest states against the one found; nothing when the manifest states none. */
function compareCount(file: ListedFile, check: VerifyCheck, what: string, stated: number | undefined, found: number): VerifyProblem[] {
  if (stated === undefined || stated === found) return [];
  return [problem(file, check, `the manifest says ${stated} ${what}, the file has ${found}`, { expected: stated, actual: found })];
}

function digestProblems(file: ListedFile, digest: FileDigest): VerifyProblem[] {
  const problems = compareCount(file, "bytes", "bytes", file.bytes, digest.bytes);
  if (file.sha256 !== undefined && file.sha256 !== digest.sha256)
    problems.push(
      problem(file, "sha256", "content differs from the manifest's checksum", { expected: file.sha256, actual: digest.sha256 }),
    );
  return problems;
}

/** A quarantine file has one JSON line per entry; a cut file loses its last newline. */
function quarantineProblems(file: ListedFile, digest: FileDigest): VerifyProblem[] {
  const cut = digest.endsWithNewline ? "" : " and a cut-off last line";
  if (file.rows !== undefined && file.rows !== digest.lines)
    return [
      problem(file, "rows", `the manifest says ${file.rows} entries, the file has ${digest.lines} complete lines${cut}`, {
        expected: file.rows,
        actual: digest.lines,
      }),
    ];
  return cut ? [problem(file, "rows", "the last line is cut off (no final newline)")] : [];
}

/** Every line of a filtered file an entry that says what removed the record and why; counted for the manifest's curation block. */
async function filteredProblems(run: Run, file: ListedFile, path: string): Promise<VerifyProblem[]> {
  let content: Awaited<ReturnType<typeof readFilteredFile>>;
  try {
    content = await readFilteredFile(path);
  } catch (err) {
    run.filtered.sound = false;
    return [problem(file, "entries", `cannot be read: ${errorText(err)}`)];
  }
  addTally(run.filtered.tally, content.tally);
  if (content.mismatches.length > 0) run.filtered.sound = false;
  return content.mismatches.map((mismatch) => {
    const lines = mismatch.count === 1 ? "1 line" : `${mismatch.count} lines`;
    const id = mismatch.first.id !== undefined ? ` (id ${JSON.stringify(mismatch.first.id)})` : "";
    return problem(file, "entries", `${lines} where ${mismatch.what}; first: line ${mismatch.first.line}${id}`);
  });
}

/**
 * What the manifest says about filtered records against the entries the filtered files hold:
 * `counts.filtered_by_stage` (every output that has it), the curation block per stage and domain,
 * the filters block per filter and the selection block per rule; only when every filtered file
 * was read whole (a bad line is already its file's problem).
 */
function filteredTallyProblems(run: Run): VerifyProblem[] {
  if (!run.filtered.sound) return [];
  const { json } = run.manifest;
  // SFT manifests have blocks of their own (their `selection` is another thing).
  const cpt = valueAt(json, "format") === MANIFEST_FORMAT;
  const { tally } = run.filtered;
  const problems: VerifyProblem[] = [];
  const compare = (field: string, found: number) => {
    const value = valueAt(json, field) ?? 0;
    if (value === found) return;
    problems.push({
      path: MANIFEST_FILE,
      check: "totals",
      expected: found,
      actual: typeof value === "number" ? value : String(value),
      message: `${field} is ${JSON.stringify(value)}, but the filtered files hold ${found} such entries`,
    });
  };
  const keys = (record: unknown) => (typeof record === "object" && record !== null ? Object.keys(record) : []);
  const isBlock = (field: string) => typeof valueAt(json, field) === "object" && valueAt(json, field) !== null;
  // Manifests from before filtered records were counted have no counts.filtered_by_stage; with no
  // filtered file listed, counts.filtered's own check (the files' entries) already names the gap.
  const listsFiltered = run.manifest.files.some((file) => file.kind === "filtered");
  if (cpt && listsFiltered && isBlock("counts.filtered_by_stage") && !isBlock("curation"))
    for (const stage of new Set([...FILTER_STAGES, ...keys(valueAt(json, "counts.filtered_by_stage"))]))
      compare(`counts.filtered_by_stage.${stage}`, tally.byStage[stage] ?? 0);
  if (isBlock("curation")) {
    for (const stage of new Set([...FILTER_STAGES, ...keys(valueAt(json, "curation.by_stage"))]))
      compare(`curation.by_stage.${stage}`, tally.byStage[stage] ?? 0);
    for (const domain of new Set([...keys(valueAt(json, "curation.by_domain")), ...Object.keys(tally.byDomain)])) {
      const found = tally.byDomain[domain] ?? {};
      for (const stage of new Set([...FILTER_STAGES, ...keys(valueAt(json, `curation.by_domain.${domain}`))]))
        compare(`curation.by_domain.${domain}.${stage}`, found[stage] ?? 0);
    }
  }
  // Rule names are config names (kebab or snake case) or selection's rules: no dots, so a dotted path reaches them.
  if (cpt && isBlock("filters")) {
    compare("filters.filtered", tally.byStage.filter ?? 0);
    const found = tally.byRule.filter ?? {};
    for (const rule of new Set([...keys(valueAt(json, "filters.by_rule")), ...Object.keys(found)]))
      compare(`filters.by_rule.${rule}`, found[rule] ?? 0);
  }
  if (cpt && isBlock("selection")) {
    const found = tally.byRule.selection ?? {};
    for (const rule of new Set([...keys(valueAt(json, "selection.dropped")), ...Object.keys(found)]))
      compare(`selection.dropped.${rule}`, found[rule] ?? 0);
  }
  return problems;
}

/** The selection block adds up (records = kept + dropped), and each scorer's records are its statuses' sum. */
function filteringBlockProblems(run: Run): VerifyProblem[] {
  const { json } = run.manifest;
  if (valueAt(json, "format") !== MANIFEST_FORMAT) return [];
  const problems: VerifyProblem[] = [];
  const num = (field: string): number => {
    const value = valueAt(json, field);
    return typeof value === "number" ? value : Number.NaN;
  };
  const claim = (field: string, computed: number, from: string) => {
    const value = valueAt(json, field);
    if (value === computed) return;
    problems.push({
      path: MANIFEST_FILE,
      check: "totals",
      expected: computed,
      actual: typeof value === "number" ? value : String(value),
      message: `${field} is ${JSON.stringify(value)}, but ${from} make ${computed}`,
    });
  };
  const selection = valueAt(json, "selection");
  if (typeof selection === "object" && selection !== null) {
    const dropped = valueAt(selection, "dropped");
    const rules = typeof dropped === "object" && dropped !== null ? Object.keys(dropped) : [];
    claim(
      "selection.records",
      num("selection.kept") + rules.reduce((sum, rule) => sum + num(`selection.dropped.${rule}`), 0),
      "selection.kept + selection.dropped",
    );
  }
  const scoring = valueAt(json, "scoring");
  if (typeof scoring === "object" && scoring !== null)
    for (const name of Object.keys(scoring))
      claim(
        `scoring.${name}.records`,
        ["ok", "malformed", "failed", "skipped"].reduce((sum, status) => sum + num(`scoring.${name}.${status}`), 0),
        `scoring.${name}'s ok + malformed + failed + skipped`,
      );
  return problems;
}

function metadataProblems(file: ListedFile, keyValue: Map<string, string>, expected: Record<string, string>): VerifyProblem[] {
  const text = keyValue.get(SHARD_METADATA_KEY);
  let metadata: Record<string, unknown>;
  try {
    metadata = JSON.parse(text ?? "") as Record<string, unknown>;
  } catch {
    return [problem(file, "metadata", `no readable "${SHARD_METADATA_KEY}" key-value metadata`)];
  }
  return Object.entries(expected).flatMap(([key, value]) =>
    metadata[key] === value
      ? []
      : [
          problem(file, "metadata", `${SHARD_METADATA_KEY}.${key} differs from the manifest`, {
            expected: value,
            actual: metadata[key] === undefined ? "(absent)" : String(metadata[key]),
          }),
        ],
  );
}

function schemaProblems(file: ListedFile, expected: Schema, actual: Schema): VerifyProblem[] {
  return compareSchemas(expected, actual).map((difference) =>
    problem(file, "schema", difference.message, {
      ...(difference.expected !== undefined ? { expected: difference.expected } : {}),
      ...(difference.actual !== undefined ? { actual: difference.actual } : {}),
    }),
  );
}

/** Rows, tokens and loss tokens of a shard, stated against recomputed, and every per-row invariant. */
function shardContentProblems(run: Run, file: ListedFile, content: ShardContent): VerifyProblem[] {
  run.report.shardsChecked += 1;
  run.report.tokens += content.listTokens;
  const problems = content.unreadable.map((group) =>
    problem(file, "rows", `row group ${group.rowGroup} cannot be decoded: ${group.error}`),
  );
  if (content.unreadable.length > 0) return problems; // the sums below would only repeat it
  problems.push(
    ...compareCount(file, "rows", "rows", file.rows, content.rows),
    ...compareCount(file, "rows", "documents", file.documents, content.documents),
    ...compareCount(file, "tokens", "tokens (sum of num_tokens)", file.tokens, content.tokens),
    ...compareCount(file, "loss_tokens", "loss tokens (sum of num_loss_tokens)", file.lossTokens, content.lossTokens),
  );
  for (const mismatch of content.mismatches) {
    const { row, id, expected, actual } = mismatch.first;
    const rows = mismatch.count === 1 ? "1 row" : `${mismatch.count} rows`;
    problems.push(
      problem(file, mismatch.check, `${rows} where ${mismatch.what}; first: row ${row} (id ${JSON.stringify(id)})`, { expected, actual }),
    );
  }
  return problems;
}

/** A reader that died in a row group is a decoding failure of the rows; one that could not open the file, of its format. */
function failureProblem(file: ListedFile, failure: NonNullable<ParquetInspection["failure"]>): VerifyProblem {
  return failure.rowGroup === undefined
    ? problem(file, "schema", `not a readable Parquet file: ${failure.error}`)
    : problem(file, "rows", `row group ${failure.rowGroup} cannot be decoded: ${failure.error}`);
}

async function parquetProblems(run: Run, file: ListedFile, path: string): Promise<VerifyProblem[]> {
  const isShard = file.kind === "shard";
  const { opened, content, failure } = await run.reader.read(path, isShard);
  const problems: VerifyProblem[] = [];
  if (opened && !isShard) problems.push(...compareCount(file, "rows", "rows", file.rows, opened.rows));
  if (opened && isShard) {
    run.expectedSchema ??= run.schemaFor(run.manifest, opened.schema);
    problems.push(
      ...schemaProblems(file, run.expectedSchema, opened.schema),
      ...metadataProblems(file, opened.keyValue, run.manifest.shardMetadata),
    );
  }
  if (content) problems.push(...shardContentProblems(run, file, content));
  if (failure) problems.push(failureProblem(file, failure));
  return problems;
}

async function listedFileProblems(run: Run, file: ListedFile): Promise<VerifyProblem[]> {
  const path = join(run.outputDir, file.path);
  const info = await stat(path).catch(() => undefined);
  if (!info?.isFile() && file.kind === "filtered") run.filtered.sound = false;
  if (!info?.isFile()) return [problem(file, "missing", `listed in the manifest (${file.kind}) but not in the output folder`)];
  let digest: FileDigest;
  try {
    digest = await fileDigest(path);
  } catch (err) {
    if (file.kind === "filtered") run.filtered.sound = false;
    return [problem(file, "missing", `listed in the manifest but cannot be read: ${errorText(err)}`)];
  }
  run.report.filesChecked += 1;
  const problems = digestProblems(file, digest);
  if (file.kind === "quarantine") problems.push(...quarantineProblems(file, digest));
  else if (file.kind === "filtered") problems.push(...quarantineProblems(file, digest), ...(await filteredProblems(run, file, path)));
  else if (file.kind === "card")
    return problems; // text: size and checksum are all there is to check
  else problems.push(...(await parquetProblems(run, file, path)));
  return problems;
}

/** `data` for `data/x.parquet`; nothing for a file at the top of the output folder. */
function topFolder(path: string): string[] {
  const slash = path.indexOf("/");
  return slash > 0 ? [path.slice(0, slash)] : [];
}

/** Files in the folders an output owns (data/, stats/, …) that its manifest does not list. */
async function unlistedProblems(outputDir: string, manifest: OutputManifest): Promise<VerifyProblem[]> {
  const listed = new Set(manifest.files.map((file) => file.path));
  const folders = new Set([...manifest.ownedFolders, ...manifest.files.flatMap((file) => topFolder(file.path))]);
  const found: string[] = [];
  for (const folder of folders) {
    const entries = await readdir(join(outputDir, folder), { recursive: true, withFileTypes: true }).catch(() => []);
    for (const entry of entries)
      if (entry.isFile()) found.push(relative(outputDir, join(entry.parentPath, entry.name)).split(sep).join("/"));
  }
  return found
    .filter((path) => !listed.has(path))
    .sort()
    .map((path) =>
      problem(
        { path },
        "unlisted",
        path.endsWith(".tmp") ? "a temporary file of an unfinished write, not in the manifest" : "not listed in the manifest",
      ),
    );
}

/**
 * Checks an output folder (`lwm-data run` or `lwm-data sft sample`) against its manifest: every
 * listed file is there with its size and sha256; shards have the rows, tokens and loss tokens the
 * manifest states, consistent row by row with their list columns, the expected schema and the
 * manifest's tokenizer/template/config in their metadata; quarantine and filtered files have the
 * entries stated (a filtered entry names its stage, reason and match, and they add up to the
 * curation block's counts); nothing unlisted lies beside them; the manifest's totals add up. Every mismatch is a problem in the report: a damaged or incomplete
 * output never makes it throw.
 */
export async function verifyOutput(outputDir: string, options: VerifyOptions = {}): Promise<VerifyReport> {
  const loaded = await loadManifest(outputDir);
  const report: VerifyReport = {
    manifestFormat: loaded.format,
    filesChecked: 0,
    shardsChecked: 0,
    tokens: 0,
    problems: [...loaded.problems],
  };
  const { manifest } = loaded;
  if (!manifest) return report;
  report.problems.push(...totalsProblems(manifest));
  const reader = new ParquetReader();
  const run: Run = {
    outputDir,
    manifest,
    schemaFor: options.expectedSchema ?? expectedShardSchema,
    report,
    reader,
    filtered: { tally: emptyTally(), sound: true },
  };
  try {
    for (const file of manifest.files) {
      options.onFile?.(file.path);
      report.problems.push(...(await listedFileProblems(run, file)));
    }
  } finally {
    await reader.close();
  }
  report.problems.push(...filteredTallyProblems(run), ...filteringBlockProblems(run));
  report.problems.push(...(await unlistedProblems(outputDir, manifest)));
  return report;
}
