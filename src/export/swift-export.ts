import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { mkdir, rename } from "node:fs/promises";
import { join } from "node:path";
import { UserError } from "../core/errors.ts";
import { readJsonFile, writeJsonFile } from "../io/json-file.ts";
import type { LiteralEscaper } from "./special-literals.ts";
import { openTextFormShard } from "./text-form-shard.ts";

/** One exported conversation, as ms-swift reads it: `loss` on assistant messages only. */
export interface SwiftMessage {
  role: string;
  content: string;
  loss?: boolean;
  /** mask.weights: the trained message's loss weight (ms-swift reads it with `--is_binary_loss_scale false`). */
  loss_scale?: number;
}

/**
 * What to do with a sample whose text form had special-token literals neutralized (see
 * special-literals.ts): `refuse` leaves it out (listed in `refused.jsonl`), so every exported
 * conversation re-tokenizes to exactly the shard's ids; `escape` exports it neutralized: safe
 * (no literal becomes a control token) but its ids differ from the shard's at each literal.
 */
export type LiteralsMode = "refuse" | "escape";

export interface SwiftExportOptions {
  literals?: LiteralsMode;
}

export interface SwiftExportResult {
  dir: string;
  literals: LiteralsMode;
  /** Per split: the JSONL file, how many conversations it holds, and how many rows were refused / exported neutralized. */
  files: { split: string; path: string; rows: number; refused: number; escaped: number }[];
  /** One JSON line per refused row: split, shard, row, id, reason. Always written (empty when none). */
  refusedPath: string;
}

/** A shard row left out of the export, and why. */
export interface RefusedRow {
  split: string;
  /** The shard, relative to the output folder. */
  shard: string;
  /** Row within the shard (0-based). */
  row: number;
  id: string;
  reason: string;
}

interface ShardMessage {
  role: string;
  content: string;
  loss: boolean;
}

/**
 * ms-swift trains the assistant turns whose `loss` is true (absent = its default), never user
 * or system turns, so the flag is written on assistant messages: exactly our observation
 * decisions. System and user messages never carry the loss in lwm-data, so nothing is lost.
 */
export function swiftMessages(messages: readonly ShardMessage[], weights?: readonly number[]): SwiftMessage[] {
  let trained = 0;
  return messages.map(({ role, content, loss }) => {
    if (role !== "assistant") return { role, content };
    // The k-th trained message's weight is the k-th run of the row's loss_weight (trainedRunWeights).
    const scale = loss && weights ? weights[trained++] : undefined;
    return scale === undefined ? { role, content, loss } : { role, content, loss, loss_scale: scale };
  });
}

/**
 * A row's loss_weight as one weight per trained message: each trained message owns one run of
 * positive weights (its content and end token; an untrained message between two trained ones
 * always separates them), constant within the run. Throws when a run is not constant: such a
 * row could not be carried as per-message `loss_scale`.
 */
export function trainedRunWeights(weights: ArrayLike<number>): number[] {
  const runs: number[] = [];
  for (let i = 0; i < weights.length; i++) {
    const weight = weights[i] as number;
    const previous = i > 0 ? (weights[i - 1] as number) : 0;
    if (weight > 0 && previous <= 0) runs.push(weight);
    else if (weight > 0 && weight !== previous) throw new UserError(`loss_weight changes inside a trained message (token ${i})`);
  }
  return runs;
}

/**
 * Python's `\s` (str.isspace), which ms-swift's loss-scale regexes use: JavaScript's `\s` lacks
 * U+001C–U+001F and U+0085 and has U+FEFF, which Python's does not.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: Python's \s includes the separators U+001C–U+001F.
const PYTHON_SPACE_START = /^[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/u;

/**
 * The assistant message ms-swift would encode as other tokens than the shard, or undefined.
 * For a hybrid-thinking template (Qwen3; the shard's rule lists `</think>` as a literal), ms-swift
 * writes the empty thinking block `<think>\n\n</think>\n\n` before each assistant content after
 * the last user message, and on a trained one (`loss` true) its `+ignore_empty_think` loss scale
 * (which it appends itself) cuts the content at the regex `^<think>\s*</think>\s*`: the `\s*`
 * also takes the whitespace a content begins with, and the two parts are tokenized apart. So a
 * trained final observation that begins with whitespace (`wc -l`'s right-aligned counts) gets
 * other ids (`"  4"` as `"  "` + `"4"`, not `" "` `" "` `"4"`) and its leading whitespace untrained.
 */
export function swiftSplitTurn(messages: readonly ShardMessage[], hybridThinking: boolean): number | undefined {
  if (!hybridThinking) return undefined;
  const lastUser = messages.findLastIndex((message) => message.role === "user");
  const index = messages.findIndex(
    (message, i) => i > lastUser && message.role === "assistant" && message.loss && PYTHON_SPACE_START.test(message.content),
  );
  return index < 0 ? undefined : index;
}

/**
 * LLaMA-Factory's `dataset_info.json` for the exported files (sharegpt layout with OpenAI-style
 * role/content tags). LLaMA-Factory does not read per-message loss flags: it trains every
 * assistant turn (or only the last, with `mask_history`), so the README says to prefer ms-swift.
 */
function llamaFactoryInfo(files: SwiftExportResult["files"]): Record<string, unknown> {
  return Object.fromEntries(
    files.map((file) => [
      `lwm_${file.split}`,
      {
        file_name: `${file.split}.jsonl`,
        formatting: "sharegpt",
        columns: { messages: "messages" },
        tags: { role_tag: "role", content_tag: "content", user_tag: "user", assistant_tag: "assistant", system_tag: "system" },
      },
    ]),
  );
}

async function writeLine(stream: ReturnType<typeof createWriteStream>, line: string): Promise<void> {
  if (!stream.write(line)) await once(stream, "drain");
}

/**
 * Writes `<dir>/<split>.jsonl` ({"messages": [...]} per line, ms-swift's standard format) from
 * an output folder's shards, a row group at a time, plus `dataset_info.json` for LLaMA-Factory.
 * Needs the text form: shards written with `output.include_messages` (SFT shards always are).
 */
export async function exportSwift(outputDir: string, dir: string, options: SwiftExportOptions = {}): Promise<SwiftExportResult> {
  const literals = options.literals ?? "refuse";
  const manifest = await readJsonFile<{ shards?: { path: string; split?: string; rows?: number }[] }>(join(outputDir, "manifest.json"));
  if (!manifest?.shards) throw new UserError(`${outputDir} has no manifest.json with shards: export needs a finished lwm-data output`);
  const bySplit = Map.groupBy(manifest.shards, (shard) => shard.split ?? "train");
  await mkdir(dir, { recursive: true });
  const files: SwiftExportResult["files"] = [];
  const refusedPath = join(dir, "refused.jsonl");
  const refusedStream = createWriteStream(`${refusedPath}.tmp`);
  for (const [split, shards] of [...bySplit].sort(([a], [b]) => a.localeCompare(b))) {
    const path = join(dir, `${split}.jsonl`);
    const stream = createWriteStream(`${path}.tmp`);
    const counts = { rows: 0, refused: 0, escaped: 0, read: 0 };
    for (const shard of shards) {
      const refuse = async (row: number, id: string, reason: string) => {
        const entry: RefusedRow = { split, shard: shard.path, row, id, reason };
        await writeLine(refusedStream, `${JSON.stringify(entry)}\n`);
      };
      await exportShard(join(outputDir, shard.path), stream, literals, refuse, counts);
    }
    stream.end();
    await once(stream, "finish");
    // Nothing lost: every row the manifest lists is exported or refused.
    const listed = shards.reduce((sum, shard) => sum + (shard.rows ?? 0), 0);
    if (shards.every((shard) => shard.rows !== undefined) && counts.read !== listed)
      throw new UserError(
        `${split}: read ${counts.read} rows but manifest.json lists ${listed}; check the output with \`lwm-data verify\``,
      );
    await rename(`${path}.tmp`, path);
    files.push({ split, path, rows: counts.rows, refused: counts.refused, escaped: counts.escaped });
  }
  refusedStream.end();
  await once(refusedStream, "finish");
  await rename(`${refusedPath}.tmp`, refusedPath);
  await writeJsonFile(join(dir, "dataset_info.json"), llamaFactoryInfo(files), { indent: 2 });
  return { dir, literals, files, refusedPath };
}

/**
 * What goes out for a row (its messages column holds the rule's neutralized text). A row whose
 * contents held no special-token literal goes out with its original text (un-escaped), which
 * re-tokenizes to exactly the shard's ids. A row that held one: `refuse` leaves it out (no text
 * re-tokenizes to its ids), `escape` exports the neutralized text. Always refused: a literal the
 * rule cannot neutralize.
 */
function judgeRow(
  messages: readonly ShardMessage[],
  escaper: LiteralEscaper,
  literals: LiteralsMode,
): { reason: string } | { messages: ShardMessage[]; escaped: boolean } {
  const quoted = (list: string[]) => list.map((literal) => JSON.stringify(literal)).join(", ");
  // A mixture's text document is trained as plain text between document tokens: no chat
  // conversation re-renders to its ids, so it is left out, named, rather than exported as one.
  if (messages.some((message) => message.role === "text"))
    return {
      reason:
        "a text document (CPT world-knowledge text, trained without a chat template): export swift writes chat conversations; train it from the shards",
    };
  for (const [index, message] of messages.entries()) {
    const where = `message ${index} (${message.role})`;
    const raw = escaper.unescapableIn(message.content);
    if (raw.length > 0)
      return {
        reason: `${where} holds ${quoted(raw)}, a special token the text rule cannot neutralize: a trainer's tokenizer would read it as the control token`,
      };
    const found = escaper.neutralizedIn(message.content);
    if (found.length > 0 && literals === "refuse")
      return {
        reason: `${where} holds the special-token literal ${quoted(found)} as text: a trainer's tokenizer would read it as the control token, and no text re-tokenizes to the shard's ids (--literals escape exports it neutralized)`,
      };
  }
  const split = swiftSplitTurn(messages, escaper.literals.escaped.includes("</think>"));
  if (split !== undefined)
    return {
      reason: `message ${split} (assistant) is trained and begins with whitespace: ms-swift writes the empty thinking block before it and its ignore_empty_think loss scale cuts that whitespace off with the block, untrained and tokenized apart, so its ids differ from the shard's (docs/exports.md "Training with ms-swift"); train it from the shards`,
    };
  if (messages.some((message) => escaper.neutralizedIn(message.content).length > 0)) return { messages: [...messages], escaped: true };
  return { messages: messages.map((message) => ({ ...message, content: escaper.unescape(message.content) })), escaped: false };
}

async function exportShard(
  path: string,
  stream: ReturnType<typeof createWriteStream>,
  literals: LiteralsMode,
  refuse: (row: number, id: string, reason: string) => Promise<void>,
  counts: { rows: number; refused: number; escaped: number; read: number },
): Promise<void> {
  const { table, escaper } = await openTextFormShard(path, "to export for ms-swift");
  try {
    let row = 0;
    for (let group = 0; group < table.rowGroupRows.length; group++) {
      const batch = await table.readRowGroup(group);
      const messages = batch.getChild("messages");
      const ids = batch.getChild("id");
      // mask.weights: each trained message's weight goes out as its ms-swift loss_scale.
      const lossWeights = batch.getChild("loss_weight");
      for (let i = 0; i < batch.numRows; i++, row++) {
        counts.read += 1;
        const cell = messages?.get(i) as { toArray(): { toJSON(): ShardMessage }[] } | null;
        const list = (cell?.toArray() ?? []).map((message) => message.toJSON());
        const verdict = judgeRow(list, escaper, literals);
        if ("reason" in verdict) {
          await refuse(row, String(ids?.get(i) ?? ""), verdict.reason);
          counts.refused += 1;
          continue;
        }
        const weightCell = lossWeights?.get(i) as { toArray(): Float32Array } | null | undefined;
        const weights = weightCell ? trainedRunWeights(weightCell.toArray()) : undefined;
        if (weights && weights.length !== verdict.messages.filter((m) => m.role === "assistant" && m.loss).length)
          throw new UserError(`${path}: row ${row}: loss_weight has ${weights.length} trained runs, not one per trained message`);
        await writeLine(stream, `${JSON.stringify({ messages: swiftMessages(verdict.messages, weights) })}\n`);
        counts.rows += 1;
        if (verdict.escaped) counts.escaped += 1;
      }
    }
  } finally {
    table.close();
  }
}
