import { createHash } from "node:crypto";
import { once } from "node:events";
import { createWriteStream, type WriteStream } from "node:fs";
import { mkdir, readdir, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import type * as Arrow from "apache-arrow";
import * as parquet from "parquet-wasm";
import type { Domain } from "../core/trajectory.ts";
import { arrow } from "../io/arrow.ts";
import type { VerifyThresholds } from "../sft/verify/index.ts";
import { OpenShard } from "../write/parquet-shard-writer.ts";
import { type LiteralEscaper, withLiterals } from "./special-literals.ts";
import { type LiteralsMode, literalVerdict, readWorldModelTurns, type TurnSelection, type WorldModelTurn } from "./world-model-turns.ts";

/**
 * `lwm-data export rl`: world-model prompts with their real observation as the ground truth, for
 * RL trainers that score the policy's answers with a rule (python/lwm_reward/reward.py: the SFT
 * verifier's format and per-domain fidelity rules, so a reward is exactly the decision `sft
 * sample` would make on the same answer).
 *
 * - `verl`: `<split>.parquet`, verl's RL dataset layout (RLHFDataset): `data_source`
 *   (`lwm-data/<domain>`), `prompt` (chat messages), `ability` (`world_model`), `reward_model`
 *   (`{style: "rule", ground_truth}`), `extra_info` (the turn and the rule's settings).
 * - `openrlhf`: `<split>.jsonl`, OpenRLHF's prompt dataset: `input` (chat messages, for
 *   `--input_key input --apply_chat_template`), `label` (a JSON string with the ground truth and
 *   extra_info, for `--label_key label` and the reward file's `reward_func`) and `datasource`.
 */
export type RlFormat = "verl" | "openrlhf";

/**
 * Text OpenRLHF reads as structure in any message: `preprocess_data` splits string contents on
 * `<image>` into image and text parts, which a text-only chat template (Qwen3's) cannot render, and
 * a multimodal one would fill with image tokens. Refused or neutralized like a special token.
 */
export const OPENRLHF_LITERALS = ["<image>"];

export const RL_DATA_SOURCE_PREFIX = "lwm-data/";
export const RL_ABILITY = "world_model";

/** The fidelity measure per domain, by name (python/lwm_reward/reward.py FIDELITY_RULES). */
export const FIDELITY_RULES: Record<Domain, string> = {
  terminal: "line_similarity",
  swe: "line_similarity",
  mcp: "json_structure",
  search: "search_overlap",
  android: "tree_similarity",
  web: "tree_similarity",
  os: "tree_similarity",
};

/**
 * Tags and chat control strings as the format rule finds them (src/sft/verify/candidate-format.ts
 * TOKEN): an answer may quote one inside its blocks when the prompt holds it. The reward gets the
 * prompt's as `quotable_tags` (it never sees the prompt; the ground truth it checks itself).
 */
const TOKEN = /<\/?(?:think|predicted_observation)>|<\|[^|<>\n]{0,64}\|>|<｜[^｜<>\n]{0,64}｜>/gi;

export function quotableTags(texts: readonly string[]): string[] {
  const found = new Set<string>();
  for (const text of texts) for (const match of text.matchAll(TOKEN)) found.add(match[0]);
  return [...found];
}

/** extra_info of one prompt: which turn it is, and the settings the reward decides with. */
export interface RlExtraInfo {
  index: number;
  split: string;
  prompt_id: string;
  trajectory_id: string;
  domain: Domain;
  turn_index: number;
  source: string;
  fidelity_rule: string;
  fidelity_threshold: number;
  think_min_chars: number;
  think_max_chars: number;
  prediction_min_chars: number;
  prediction_max_chars: number;
  quotable_tags: string[];
  /** The prompt's texts were neutralized (`--literals escape`). */
  literals_escaped: boolean;
}

export interface RlRow {
  data_source: string;
  prompt: { role: string; content: string }[];
  ability: string;
  reward_model: { style: "rule"; ground_truth: string };
  extra_info: RlExtraInfo;
}

export interface RlExportOptions {
  format: RlFormat;
  thresholds: VerifyThresholds;
  /** Output folder source: which turns (default `trained`, the turns the masking kept). */
  turns?: TurnSelection;
  literals?: LiteralsMode;
  /** Prompts file source: the validation draw and the tokenizer's literals. */
  validationFraction?: number;
  splitSeed?: number;
  escaper?: () => LiteralEscaper;
  /** Rows per Parquet row group (verl). */
  rowGroupRows?: number;
}

export interface RlExportResult {
  dir: string;
  format: RlFormat;
  files: { split: string; path: string; rows: number }[];
  byDomain: Record<string, number>;
  refused: number;
  /** Of `refused`: prompts identical to another whose observation differs (see conflictingPrompts). */
  conflicts: number;
  refusedPath: string;
  skipped: Record<string, number>;
}

/** The row for one turn; undefined with a reason when its texts may not go out. */
export function rlRow(
  turn: WorldModelTurn,
  index: number,
  thresholds: VerifyThresholds,
  escaper: LiteralEscaper,
  literals: LiteralsMode,
): { row: RlRow } | { reason: string } {
  // The prompt is rendered and tokenized by the trainer; the ground truth is only compared as text.
  const verdict = literalVerdict(
    turn.messages.map((message, k) => ({ where: `message ${k} (${message.role})`, text: message.content })),
    escaper,
    literals,
  );
  if (!verdict.ok) return { reason: verdict.reason };
  const prompt = turn.messages.map(({ role, content }) => ({ role, content: verdict.escape ? escaper.escape(content) : content }));
  return {
    row: {
      data_source: `${RL_DATA_SOURCE_PREFIX}${turn.domain}`,
      prompt,
      ability: RL_ABILITY,
      reward_model: { style: "rule", ground_truth: turn.ground_truth },
      extra_info: {
        index,
        split: turn.split,
        prompt_id: turn.prompt_id,
        trajectory_id: turn.trajectory_id,
        domain: turn.domain,
        turn_index: turn.turn_index,
        source: turn.source,
        fidelity_rule: FIDELITY_RULES[turn.domain],
        fidelity_threshold: thresholds.fidelity[turn.domain],
        think_min_chars: thresholds.lengths.thinkMinChars,
        think_max_chars: thresholds.lengths.thinkMaxChars,
        prediction_min_chars: thresholds.lengths.predictionMinChars,
        prediction_max_chars: thresholds.lengths.predictionMaxChars,
        quotable_tags: quotableTags(turn.messages.map((message) => message.content)),
        literals_escaped: verdict.escape,
      },
    },
  };
}

const utf8 = () => new arrow.Utf8();
const field = (name: string, type: Arrow.DataType) => new arrow.Field(name, type, false);
const messageType = new arrow.Struct([field("role", utf8()), field("content", utf8())]);
const extraInfoType = new arrow.Struct([
  field("index", new arrow.Int64()),
  field("split", utf8()),
  field("prompt_id", utf8()),
  field("trajectory_id", utf8()),
  field("domain", utf8()),
  field("turn_index", new arrow.Int32()),
  field("source", utf8()),
  field("fidelity_rule", utf8()),
  field("fidelity_threshold", new arrow.Float64()),
  field("think_min_chars", new arrow.Int32()),
  field("think_max_chars", new arrow.Int32()),
  field("prediction_min_chars", new arrow.Int32()),
  field("prediction_max_chars", new arrow.Int32()),
  field("quotable_tags", new arrow.List(field("item", utf8()))),
  field("literals_escaped", new arrow.Bool()),
]);

/** verl's RL dataset schema (what its RLHFDataset and reward manager read). */
export function verlSchema(): Arrow.Schema {
  return new arrow.Schema([
    field("data_source", utf8()),
    field("prompt", new arrow.List(field("item", messageType))),
    field("ability", utf8()),
    field("reward_model", new arrow.Struct([field("style", utf8()), field("ground_truth", utf8())])),
    field("extra_info", extraInfoType),
  ]);
}

function column<T extends Arrow.DataType>(type: T, values: readonly unknown[]): Arrow.Data<T> {
  const builder = arrow.makeBuilder({ type, nullValues: [] });
  for (const value of values) builder.append(value as T["TValue"]);
  return builder.finish().flush() as Arrow.Data<T>;
}

function verlTable(rows: readonly RlRow[]): Arrow.Table {
  const schema = verlSchema();
  const data = schema.fields.map((f) =>
    column(
      f.type,
      rows.map((row) => {
        const value = row[f.name as keyof RlRow];
        // Int64 takes bigints.
        return f.name === "extra_info" ? { ...(value as RlExtraInfo), index: BigInt((value as RlExtraInfo).index) } : value;
      }),
    ),
  );
  const struct = arrow.makeData({ type: new arrow.Struct(schema.fields), length: rows.length, nullCount: 0, children: data });
  return new arrow.Table(schema, new arrow.RecordBatch(schema, struct));
}

/** One output file per split: Parquet in row groups bounded by rows and bytes, or JSONL; temp name, then renamed. */
interface SplitWriter {
  add(row: RlRow): Promise<void>;
  finish(): Promise<number>;
  abort(): Promise<void>;
}

function parquetWriter(path: string, rowGroupRows: number): SplitWriter {
  const properties = () =>
    new parquet.WriterPropertiesBuilder()
      .setCompression(parquet.Compression.ZSTD)
      .setMaxRowGroupSize(rowGroupRows)
      .setCreatedBy("lwm-data")
      .build();
  const file = new OpenShard(path, path, properties);
  let buffer: RlRow[] = [];
  let bytes = 0;
  let rows = 0;
  const flush = async () => {
    if (buffer.length === 0) return;
    const batch = buffer;
    buffer = [];
    bytes = 0;
    await file.writeRowGroup(verlTable(batch));
  };
  return {
    async add(row) {
      buffer.push(row);
      rows += 1;
      // Prompts carry whole histories: a row group is cut by size too, so memory stays bounded.
      bytes += row.reward_model.ground_truth.length + row.prompt.reduce((sum, m) => sum + m.content.length, 0);
      if (buffer.length >= rowGroupRows || bytes >= 64 * 2 ** 20) await flush();
    },
    async finish() {
      await flush();
      if (rows === 0) {
        await file.abort();
        return 0;
      }
      await file.finish();
      return rows;
    },
    abort: () => file.abort(),
  };
}

async function writeLine(stream: WriteStream, line: string): Promise<void> {
  if (!stream.write(line)) await once(stream, "drain");
}

/** OpenRLHF's row: `input` (messages), `label` (JSON: ground truth, data source, extra_info), `datasource`. */
export function openRlhfRow(row: RlRow): { input: RlRow["prompt"]; label: string; datasource: string } {
  return {
    input: row.prompt,
    label: JSON.stringify({ ground_truth: row.reward_model.ground_truth, data_source: row.data_source, extra_info: row.extra_info }),
    datasource: row.data_source,
  };
}

function jsonlWriter(path: string): SplitWriter {
  const stream = createWriteStream(`${path}.tmp`);
  let rows = 0;
  const close = async () => {
    stream.end();
    await once(stream, "finish");
  };
  return {
    async add(row) {
      rows += 1;
      await writeLine(stream, `${JSON.stringify(openRlhfRow(row))}\n`);
    },
    async finish() {
      await close();
      if (rows === 0) await rm(`${path}.tmp`, { force: true });
      else await rename(`${path}.tmp`, path);
      return rows;
    },
    async abort() {
      await close();
      await rm(`${path}.tmp`, { force: true });
    },
  };
}

const digest = (text: string): string => createHash("sha256").update(text).digest().subarray(0, 16).toString("base64");

/**
 * Prompts that are identical but whose real observations differ (the same command in two agent
 * layouts that wrap its output differently): one answer cannot earn the reward on both, so RL would
 * pull the policy both ways. Keyed by a 128-bit digest of the messages; the value names the first
 * prompt that had them. `sft prompts` skips such groups the same way (src/sft/prompts/screen-prompts.ts).
 */
async function conflictingPrompts(source: string, readOptions: Parameters<typeof readWorldModelTurns>[1]): Promise<Map<string, string>> {
  const first = new Map<string, { truth: string; promptId: string }>();
  const conflicts = new Map<string, string>();
  for await (const item of readWorldModelTurns(source, readOptions)) {
    if (item.kind === "skip") continue;
    const key = digest(JSON.stringify(item.turn.messages));
    const truth = digest(item.turn.ground_truth);
    const seen = first.get(key);
    if (!seen) first.set(key, { truth, promptId: item.turn.prompt_id });
    else if (seen.truth !== truth) conflicts.set(key, seen.promptId);
  }
  return conflicts;
}

/** Writes the RL dataset of a prompts file or an output folder into `dir` (see `RlFormat`). */
export async function exportRl(source: string, dir: string, options: RlExportOptions): Promise<RlExportResult> {
  const literals = options.literals ?? "refuse";
  const readOptions = {
    turns: options.turns ?? "trained",
    ...(options.validationFraction !== undefined ? { validationFraction: options.validationFraction } : {}),
    ...(options.splitSeed !== undefined ? { splitSeed: options.splitSeed } : {}),
  };
  const conflicts = await conflictingPrompts(source, readOptions);
  await mkdir(dir, { recursive: true });
  // A split file of an earlier export that this one does not write would be trained on too.
  for (const name of await readdir(dir)) if (/^(?:train|validation)\.(?:parquet|jsonl)$/.test(name)) await rm(join(dir, name));
  const extension = options.format === "verl" ? "parquet" : "jsonl";
  const writers = new Map<string, { writer: SplitWriter; path: string; index: number }>();
  const refusedPath = join(dir, "refused.jsonl");
  const refusedStream = createWriteStream(`${refusedPath}.tmp`);
  const result: RlExportResult = {
    dir,
    format: options.format,
    files: [],
    byDomain: {},
    refused: 0,
    conflicts: 0,
    refusedPath,
    skipped: {},
  };
  try {
    for await (const item of readWorldModelTurns(source, readOptions)) {
      if (item.kind === "skip") {
        result.skipped[item.reason] = (result.skipped[item.reason] ?? 0) + 1;
        continue;
      }
      const { turn } = item;
      const tokenizerEscaper = item.escaper ?? options.escaper?.();
      if (!tokenizerEscaper) throw new Error("export rl: no special-token rule for a prompts file (options.escaper)");
      const escaper = options.format === "openrlhf" ? withLiterals(tokenizerEscaper, OPENRLHF_LITERALS) : tokenizerEscaper;
      let split = writers.get(turn.split);
      if (!split) {
        const path = join(dir, `${turn.split}.${extension}`);
        split = {
          writer: options.format === "verl" ? parquetWriter(path, options.rowGroupRows ?? 512) : jsonlWriter(path),
          path,
          index: 0,
        };
        writers.set(turn.split, split);
      }
      const twin = conflicts.get(digest(JSON.stringify(turn.messages)));
      const made: ReturnType<typeof rlRow> =
        twin !== undefined
          ? {
              reason: `conflict: the same prompt as ${twin === turn.prompt_id ? "a later one" : twin} with a different observation; one answer cannot earn the reward on both`,
            }
          : rlRow(turn, split.index, options.thresholds, escaper, literals);
      if ("reason" in made) {
        result.refused += 1;
        if (twin !== undefined) result.conflicts += 1;
        await writeLine(
          refusedStream,
          `${JSON.stringify({ split: turn.split, prompt_id: turn.prompt_id, origin: turn.origin, reason: made.reason })}\n`,
        );
        continue;
      }
      split.index += 1;
      result.byDomain[turn.domain] = (result.byDomain[turn.domain] ?? 0) + 1;
      await split.writer.add(made.row);
    }
    for (const [name, split] of [...writers].sort(([a], [b]) => a.localeCompare(b))) {
      const rows = await split.writer.finish();
      if (rows > 0) result.files.push({ split: name, path: split.path, rows });
    }
  } catch (err) {
    for (const split of writers.values()) await split.writer.abort();
    refusedStream.destroy();
    await rm(`${refusedPath}.tmp`, { force: true });
    throw err;
  }
  refusedStream.end();
  await once(refusedStream, "finish");
  await rename(`${refusedPath}.tmp`, refusedPath);
  return result;
}
