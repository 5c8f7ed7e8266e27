import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { mkdir, rename } from "node:fs/promises";
import { join } from "node:path";
import { UserError } from "../core/errors.ts";
import { readJsonFile, writeJsonFile } from "../io/json-file.ts";
import { openParquetTable } from "../io/parquet-table.ts";

/** One exported conversation, as ms-swift reads it: `loss` on assistant messages only. */
export interface SwiftMessage {
  role: string;
  content: string;
  loss?: boolean;
}

export interface SwiftExportResult {
  dir: string;
  /** Per split: the JSONL file and how many conversations it holds. */
  files: { split: string; path: string; rows: number }[];
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
export function swiftMessages(messages: readonly ShardMessage[]): SwiftMessage[] {
  return messages.map(({ role, content, loss }) => (role === "assistant" ? { role, content, loss } : { role, content }));
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
export async function exportSwift(outputDir: string, dir: string): Promise<SwiftExportResult> {
  const manifest = await readJsonFile<{ shards?: { path: string; split?: string }[] }>(join(outputDir, "manifest.json"));
  if (!manifest?.shards) throw new UserError(`${outputDir} has no manifest.json with shards: export needs a finished lwm-data output`);
  const bySplit = Map.groupBy(manifest.shards, (shard) => shard.split ?? "train");
  await mkdir(dir, { recursive: true });
  const files: SwiftExportResult["files"] = [];
  for (const [split, shards] of [...bySplit].sort(([a], [b]) => a.localeCompare(b))) {
    const path = join(dir, `${split}.jsonl`);
    const stream = createWriteStream(`${path}.tmp`);
    let rows = 0;
    for (const shard of shards) rows += await exportShard(join(outputDir, shard.path), stream);
    stream.end();
    await once(stream, "finish");
    await rename(`${path}.tmp`, path);
    files.push({ split, path, rows });
  }
  await writeJsonFile(join(dir, "dataset_info.json"), llamaFactoryInfo(files), { indent: 2 });
  return { dir, files };
}

async function exportShard(path: string, stream: ReturnType<typeof createWriteStream>): Promise<number> {
  const table = await openParquetTable(path).catch((err: Error) => {
    throw new UserError(`${path} is not a readable Parquet file (${err.message}); check the output with \`lwm-data verify\``);
  });
  try {
    if (!table.schema.fields.some((field) => field.name === "messages")) {
      const packed = table.schema.fields.some((field) => field.name === "cu_seqlens");
      throw new UserError(
        `${path} has no messages column: ${packed ? "packed rows carry no text form; run the job with pack.enabled: false" : "run the job with output.include_messages: true"} to export for ms-swift`,
      );
    }
    let rows = 0;
    for (let group = 0; group < table.rowGroupRows.length; group++) {
      const batch = await table.readRowGroup(group);
      const messages = batch.getChild("messages");
      for (let i = 0; i < batch.numRows; i++) {
        const cell = messages?.get(i) as { toArray(): { toJSON(): ShardMessage }[] } | null;
        const list = (cell?.toArray() ?? []).map((message) => message.toJSON());
        await writeLine(stream, `${JSON.stringify({ messages: swiftMessages(list) })}\n`);
        rows += 1;
      }
    }
    return rows;
  } finally {
    table.close();
  }
}
