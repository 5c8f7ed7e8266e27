import { isAbsolute, posix } from "node:path";
import { MANIFEST_FORMAT } from "../output/manifest.ts";
import { MANIFEST_FILE, type VerifyProblem } from "./problems.ts";

export const SFT_MANIFEST_FORMAT = "lwm-data/sft";

export type ListedKind = "shard" | "stats" | "quarantine" | "filtered" | "candidates" | "card";

/**
 * One file a manifest lists, with what it claims about it. The two formats spell fields
 * the same way (`loss_tokens`, …) and are read into this.
 */
export interface ListedFile {
  path: string;
  kind: ListedKind;
  bytes?: number;
  sha256?: string;
  /** Parquet rows; for a quarantine or filtered file, its entries (JSONL lines). */
  rows?: number;
  /** Samples inside a shard: more than its rows when packed (manifest v3). */
  documents?: number;
  tokens?: number;
  lossTokens?: number;
}

/** A manifest read into what verification needs; `json` keeps the rest for format-specific checks. */
export interface OutputManifest {
  format: string;
  json: Record<string, unknown>;
  files: ListedFile[];
  /** Whether shards carry `messages`, when the manifest says so (`layout.include_messages`; SFT before v3: always). */
  includeMessages?: boolean;
  /** Whether rows are packed sequences (`layout.pack`), so rows and samples differ. */
  packed: boolean;
  /** Whether shards carry the controls columns (`layout.controls`). */
  controls?: boolean;
  /** Whether shards carry the outcome and provenance columns (`layout.provenance`). */
  provenance?: boolean;
  /** Scorer names whose `score_<name>` columns shards carry (`layout.scores`); empty without scorers. */
  scores: string[];
  /** Whether shards carry `loss_weight` (`layout.loss_weight`). */
  lossWeight?: boolean;
  /** What each shard's `lwm_data` key-value metadata must say, key by key. */
  shardMetadata: Record<string, string>;
  /** Folders this kind of output owns: a file in them that the manifest does not list is unlisted. */
  ownedFolders: string[];
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);
const isCount = (value: unknown): value is number => typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
const SHA256 = /^[0-9a-f]{64}$/;

/** The value at a dotted path (`counts.samples_out`), or undefined. */
export function valueAt(json: unknown, dotted: string): unknown {
  let value = json;
  for (const key of dotted.split(".")) value = isObject(value) ? value[key] : undefined;
  return value;
}

const manifestProblem = (message: string): VerifyProblem => ({ path: MANIFEST_FILE, check: "manifest", message });

/** Which fields an entry must have: the verifier cannot check what the manifest does not claim. */
interface EntryShape {
  kind: ListedKind;
  where: string;
  required: ("bytes" | "sha256" | "rows" | "documents" | "tokens" | "lossTokens")[];
}

/** A listed path must stay inside the output folder: a manifest must not make us read /etc. */
function safePath(path: unknown): path is string {
  if (typeof path !== "string" || path === "" || isAbsolute(path) || path.includes("\\")) return false;
  const normal = posix.normalize(path);
  return normal === path && !normal.startsWith("../") && normal !== "..";
}

function readEntry(entry: unknown, shape: EntryShape, problems: VerifyProblem[]): ListedFile | undefined {
  if (!isObject(entry) || !safePath(entry.path)) {
    problems.push(manifestProblem(`${shape.where}: an entry without a relative path inside the output folder: ${JSON.stringify(entry)}`));
    return undefined;
  }
  const file: ListedFile = { path: entry.path, kind: shape.kind };
  const counts = {
    bytes: entry.bytes,
    rows: entry.rows ?? entry.entries,
    documents: entry.documents,
    tokens: entry.tokens,
    lossTokens: entry.loss_tokens,
  };
  for (const [key, value] of Object.entries(counts) as [keyof typeof counts, unknown][]) {
    if (isCount(value)) file[key] = value;
    else if (value !== undefined || shape.required.includes(key))
      problems.push(manifestProblem(`${shape.where} ${entry.path}: ${key} is ${JSON.stringify(value)}, not a count`));
  }
  if (typeof entry.sha256 === "string" && SHA256.test(entry.sha256)) file.sha256 = entry.sha256;
  else if (entry.sha256 !== undefined || shape.required.includes("sha256"))
    problems.push(manifestProblem(`${shape.where} ${entry.path}: sha256 is ${JSON.stringify(entry.sha256)}, not a sha256 digest`));
  return file;
}

function readList(value: unknown, shape: EntryShape, problems: VerifyProblem[]): ListedFile[] {
  if (value === undefined || value === null) return [];
  const entries = Array.isArray(value) ? value : [value];
  return entries.flatMap((entry) => readEntry(entry, shape, problems) ?? []);
}

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

/** A scorer name as the config allows it (src/score/score-schema.ts SCORER_NAME). */
const SCORER_NAME = /^[a-z][a-z0-9]*(?:[_-][a-z0-9]+)*$/;

/** `layout.scores`: scorer names, or a manifest problem (verify cannot tell which score columns to expect). */
function layoutScores(json: Json, problems: VerifyProblem[]): string[] {
  const scores = valueAt(json, "layout.scores");
  if (scores === undefined) return [];
  if (Array.isArray(scores) && scores.every((name) => typeof name === "string" && SCORER_NAME.test(name))) return scores as string[];
  problems.push(manifestProblem(`layout.scores is ${JSON.stringify(scores)}, not a list of scorer names`));
  return [];
}

/** `layout` (manifest v3): whether shards carry messages and whether rows are packed, and which optional column groups they have. */
function layoutOf(
  json: Json,
  problems: VerifyProblem[],
): { includeMessages?: boolean; packed: boolean; controls: boolean; provenance: boolean; scores: string[]; lossWeight: boolean } {
  const include = valueAt(json, "layout.include_messages");
  const pack = valueAt(json, "layout.pack");
  return {
    ...(typeof include === "boolean" ? { includeMessages: include } : {}),
    packed: isObject(pack),
    controls: valueAt(json, "layout.controls") === true,
    provenance: valueAt(json, "layout.provenance") === true,
    scores: layoutScores(json, problems),
    lossWeight: valueAt(json, "layout.loss_weight") === true,
  };
}

/** Drops the keys whose value the manifest does not give. */
function defined(record: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(record).filter((pair): pair is [string, string] => pair[1] !== undefined));
}

const SHARD = ["bytes", "sha256", "rows", "tokens", "lossTokens"] as const;
const TABLE = ["bytes", "sha256", "rows"] as const;

function cptManifest(json: Json, problems: VerifyProblem[]): OutputManifest {
  return {
    format: MANIFEST_FORMAT,
    json,
    files: [
      ...readList(json.shards, { kind: "shard", where: "shards", required: [...SHARD] }, problems),
      ...readList(valueAt(json, "masking.stats_files"), { kind: "stats", where: "masking.stats_files", required: [...TABLE] }, problems),
      ...readList(json.quarantine, { kind: "quarantine", where: "quarantine", required: [...TABLE] }, problems),
      // Records filtered out (read filters, curation): `filtered_files`, or in older manifests `curation.files`.
      ...(json.filtered_files !== undefined
        ? readList(json.filtered_files, { kind: "filtered", where: "filtered_files", required: [...TABLE] }, problems)
        : readList(valueAt(json, "curation.files"), { kind: "filtered", where: "curation.files", required: [...TABLE] }, problems)),
      ...readList(json.card, { kind: "card", where: "card", required: ["bytes", "sha256"] }, problems),
    ],
    // `run` writes the same keys into every shard (src/records/task-output.ts).
    shardMetadata: defined({
      pipeline: str(valueAt(json, "pipeline.name")),
      tokenizer: str(valueAt(json, "tokenizer.name")),
      vocab_sha256: str(valueAt(json, "tokenizer.vocab_sha256")),
      template_sha256: str(valueAt(json, "template.sha256")),
      config_sha256: str(json.config_sha256),
    }),
    ownedFolders: ["data", "stats", "quarantine", "filtered"],
    ...layoutOf(json, problems),
  };
}

function sftManifest(json: Json, problems: VerifyProblem[]): OutputManifest {
  return {
    format: SFT_MANIFEST_FORMAT,
    json,
    files: [
      ...readList(json.shards, { kind: "shard", where: "shards", required: [...SHARD] }, problems),
      ...readList(json.candidates_table, { kind: "candidates", where: "candidates_table", required: [...TABLE] }, problems),
      ...readList(json.quarantine, { kind: "quarantine", where: "quarantine", required: [...TABLE] }, problems),
      ...readList(json.card, { kind: "card", where: "card", required: ["bytes", "sha256"] }, problems),
    ],
    // Unpacked SFT rows are always written with their messages (src/sft/run-sft.ts); v1 has no `layout`.
    includeMessages: true,
    // The SFT manifest's config_sha256 also hashes the sft: section, so shards do not carry it.
    shardMetadata: defined({
      pipeline: "sft",
      tokenizer: str(valueAt(json, "tokenizer.name")),
      vocab_sha256: str(valueAt(json, "tokenizer.vocab_sha256")),
      template_sha256: str(valueAt(json, "template.sha256")),
    }),
    ownedFolders: ["data", "sft", "quarantine"],
    ...layoutOf(json, problems),
  };
}

function duplicatePaths(files: readonly ListedFile[]): VerifyProblem[] {
  const seen = new Set<string>();
  const problems: VerifyProblem[] = [];
  for (const file of files) {
    if (seen.has(file.path)) problems.push(manifestProblem(`${file.path} is listed more than once`));
    seen.add(file.path);
  }
  return problems;
}

/** Reads a parsed `manifest.json` of either format; every malformed part becomes a "manifest" problem. */
export function readOutputManifest(json: unknown): { manifest?: OutputManifest; problems: VerifyProblem[] } {
  if (!isObject(json)) return { problems: [manifestProblem("not a JSON object")] };
  const problems: VerifyProblem[] = [];
  let manifest: OutputManifest;
  if (json.format === MANIFEST_FORMAT) manifest = cptManifest(json, problems);
  else if (json.format === SFT_MANIFEST_FORMAT) manifest = sftManifest(json, problems);
  else {
    const problem = manifestProblem(`unknown manifest format ${JSON.stringify(json.format)}`);
    return { problems: [{ ...problem, expected: `${MANIFEST_FORMAT} or ${SFT_MANIFEST_FORMAT}`, actual: String(json.format) }] };
  }
  problems.push(...duplicatePaths(manifest.files));
  return { manifest, problems };
}
