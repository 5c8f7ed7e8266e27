import { UserError } from "../core/errors.ts";
import { renderMaskView, renderTokenTable } from "../inspect/mask-view.ts";
import { findRowById, openShard, shardRow } from "../inspect/read-shard.ts";
import { loadTokenizer } from "../tokenize/load-tokenizer.ts";

interface InspectOptions {
  row: string;
  id?: string;
  tokens?: boolean;
  maxChars: string;
  color: "auto" | "always" | "never";
}

function parseCount(flag: string, value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new UserError(`${flag} must be a non-negative integer, got ${JSON.stringify(value)}`);
  return n;
}

export async function inspectCommand(shardPath: string, options: InspectOptions): Promise<void> {
  const shard = await openShard(shardPath);
  const index = options.id !== undefined ? findRowById(shard, options.id) : parseCount("--row", options.row);
  const row = shardRow(shard, index);

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
  const lossShare = row.numTokens > 0 ? ((100 * row.numLossTokens) / row.numTokens).toFixed(1) : "0.0";
  console.log(`${shardPath} row ${index} of ${shard.numRows}`);
  console.log(`id ${row.id}  domain ${row.domain}  source ${row.source}`);
  console.log(`${row.numTokens} tokens, ${row.numLossTokens} with loss (${lossShare}%)  tokenizer ${tokenizerName}`);
  console.log(color ? "legend: trained tokens bright, masked tokens dim" : "legend: ⟦trained⟧, everything else masked");
  console.log("");
  console.log(renderMaskView(tokenizer, row.inputIds, row.lossMask, { color, maxChars: parseCount("--max-chars", options.maxChars) }));
  if (options.tokens) {
    console.log("");
    console.log(renderTokenTable(tokenizer, row.inputIds, row.lossMask));
  }
}
