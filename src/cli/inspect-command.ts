import { UserError } from "../core/errors.ts";
import { renderMaskView, renderTokenTable } from "../inspect/mask-view.ts";
import { findRowById, openShard, packedDocuments, type ShardRow, shardRow } from "../inspect/read-shard.ts";
import { readSampleTurnStats } from "../inspect/read-turn-stats.ts";
import { turnNote, turnNotesByPosition } from "../inspect/turn-notes.ts";
import { loadTokenizer } from "../tokenize/load-tokenizer.ts";
import type { Tokenizer } from "../tokenize/tokenizer.ts";

interface InspectOptions {
  row: string;
  id?: string;
  tokens?: boolean;
  maxChars: string;
  /** false: `--no-color`, the common spelling of `--color never`. */
  color: "auto" | "always" | "never" | false;
}

function parseCount(flag: string, value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new UserError(`${flag} must be a non-negative integer, got ${JSON.stringify(value)}`);
  return n;
}

export async function inspectCommand(shardPath: string, options: InspectOptions): Promise<void> {
  const shard = await openShard(shardPath);
  const index = options.id !== undefined ? findRowById(shard, options.id) : parseCount("--row", options.row);

  const tokenizerName = shard.metadata.tokenizer;
  if (!tokenizerName) throw new UserError(`${shardPath}: no lwm_data tokenizer metadata; cannot decode tokens`);
  const tokenizer = loadTokenizer({ name: tokenizerName });
  const expected = shard.metadata.vocab_sha256;
  if (expected && expected !== tokenizer.identity.vocabSha256) {
    throw new UserError(
      `${shardPath}: written with a different ${tokenizerName} vocabulary (sha256 ${expected.slice(0, 16)}…) than the one installed here`,
    );
  }

  const color = options.color === "always" || (options.color === "auto" && process.stdout.isTTY && !process.env.NO_COLOR);
  const view = { color, maxChars: parseCount("--max-chars", options.maxChars), tokens: options.tokens === true };
  if (!shard.packed) {
    console.log(`${shardPath} row ${index} of ${shard.numRows}`);
    await showSample(shardPath, shardRow(shard, index), tokenizer, view);
    return;
  }
  const documents = packedDocuments(shard, index);
  console.log(`${shardPath} packed row ${index} of ${shard.numRows}: ${documents.length} document(s), positions restart at each`);
  for (const [d, document] of documents.entries()) {
    if (options.id !== undefined && document.id !== options.id) continue;
    console.log(
      `\n━━ document ${d + 1}/${documents.length}${document.part > 0 ? ` (part ${document.part} of a record split to fit)` : ""}`,
    );
    await showSample(shardPath, document, tokenizer, view);
  }
}

/** One sample (or packed document): header, turn decisions, the mask view. */
async function showSample(
  shardPath: string,
  row: ShardRow,
  tokenizer: Tokenizer,
  options: { color: boolean; maxChars: number; tokens: boolean },
): Promise<void> {
  const { color, maxChars } = options;
  const tokenizerName = tokenizer.identity.name;
  const lossShare = row.numTokens > 0 ? ((100 * row.numLossTokens) / row.numTokens).toFixed(1) : "0.0";
  console.log(`id ${row.id}  domain ${row.domain}${row.source ? `  source ${row.source}` : ""}`);
  console.log(`${row.numTokens} tokens, ${row.numLossTokens} with loss (${lossShare}%)  tokenizer ${tokenizerName}`);
  console.log(color ? "legend: trained tokens bright, masked tokens dim" : "legend: ⟦trained⟧, everything else masked");

  // Each turn's class and keep/mask decision, from the stats table the run wrote beside the shards.
  const turnStats = await readSampleTurnStats(shardPath, row.id);
  let notes: Map<number, string> | undefined;
  if (!turnStats) {
    console.log(
      "turns: no stats table beside this shard (<output>/stats/*.parquet): the run made no per-turn decisions (mask policy all-observations)",
    );
  } else if (turnStats.rows.length === 0) {
    console.log(`turns: the stats table (${turnStats.files.join(", ")}) has no rows for id ${row.id}`);
  } else {
    const kept = turnStats.rows.filter((r) => r.kept).length;
    console.log(`turns: ${turnStats.rows.length}, ${kept} kept, ${turnStats.rows.length - kept} masked (${turnStats.files.join(", ")})`);
    notes = turnNotesByPosition(tokenizer, row.inputIds, turnStats.rows);
    // A template whose messages cannot be located from the ids: list the turns up front instead.
    if (!notes) for (const r of turnStats.rows) console.log(turnNote(r));
  }
  console.log("");
  console.log(renderMaskView(tokenizer, row.inputIds, row.lossMask, { color, maxChars, ...(notes ? { notes } : {}) }));
  if (options.tokens) {
    console.log("");
    console.log(renderTokenTable(tokenizer, row.inputIds, row.lossMask));
  }
}
