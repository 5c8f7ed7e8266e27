import { readFile } from "node:fs/promises";
import type { Table } from "apache-arrow";
import * as parquet from "parquet-wasm";
import { UserError } from "../core/errors.ts";
import { arrow } from "../io/arrow.ts";
import { SHARD_METADATA_KEY } from "../write/parquet-shard-writer.ts";

export interface ShardRow {
  id: string;
  domain: string;
  source: string;
  inputIds: Int32Array;
  lossMask: Uint8Array;
  numTokens: number;
  numLossTokens: number;
  messages?: { role: string; content: string; loss: boolean }[];
}

export interface ShardFile {
  path: string;
  numRows: number;
  /** The shard's `lwm_data` metadata: tokenizer, vocab_sha256, template_sha256, … */
  metadata: Record<string, string>;
  table: Table;
  /** Packed rows (pack.enabled): several documents per row, see `packedDocuments`. */
  packed: boolean;
}

export async function openShard(path: string): Promise<ShardFile> {
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await readFile(path));
  } catch (err) {
    throw new UserError(`cannot read shard ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  let table: Table;
  try {
    table = arrow.tableFromIPC(parquet.readParquet(bytes).intoIPCStream());
  } catch (err) {
    throw new UserError(`${path} is not a readable Parquet file: ${(err as Error).message}`);
  }
  const packed = table.getChild("cu_seqlens") !== null;
  for (const column of packed ? ["document_ids", "input_ids", "loss_mask"] : ["id", "input_ids", "loss_mask"]) {
    if (!table.getChild(column)) throw new UserError(`${path}: column "${column}" is missing; is this an lwm-data shard?`);
  }
  const metadata = table.schema.metadata.get(SHARD_METADATA_KEY);
  return { path, numRows: table.numRows, metadata: metadata ? (JSON.parse(metadata) as Record<string, string>) : {}, table, packed };
}

function checkRow(shard: ShardFile, index: number): void {
  if (!Number.isInteger(index) || index < 0 || index >= shard.numRows)
    throw new UserError(`--row ${index} is out of range: ${shard.path} has ${shard.numRows} rows (0…${shard.numRows - 1})`);
}

export function shardRow(shard: ShardFile, index: number): ShardRow {
  checkRow(shard, index);
  const row = shard.table.get(index);
  if (!row) throw new UserError(`${shard.path}: cannot read row ${index}`);
  const value = row.toJSON() as Record<string, unknown>;
  const list = (name: string): ArrayLike<number> => {
    const cell = shard.table.getChild(name)?.get(index) as { toArray(): ArrayLike<number> } | null | undefined;
    if (!cell) throw new UserError(`${shard.path}: row ${index} has no ${name}`);
    return cell.toArray();
  };
  const messages = value.messages as { toArray(): { toJSON(): { role: string; content: string; loss: boolean } }[] } | undefined;
  return {
    id: String(value.id),
    domain: String(value.domain),
    source: String(value.source ?? ""),
    inputIds: Int32Array.from(list("input_ids")),
    lossMask: Uint8Array.from(list("loss_mask")),
    numTokens: Number(value.num_tokens),
    numLossTokens: Number(value.num_loss_tokens),
    ...(messages ? { messages: messages.toArray().map((m) => m.toJSON()) } : {}),
  };
}

export function findRowById(shard: ShardFile, id: string): number {
  if (shard.packed) {
    const documents = shard.table.getChild("document_ids");
    for (let i = 0; i < shard.numRows; i++) {
      const cell = documents?.get(i) as { toArray(): string[] } | null;
      if (cell?.toArray().includes(id)) return i;
    }
    throw new UserError(`${shard.path}: no packed row holds document ${JSON.stringify(id)}`);
  }
  const ids = shard.table.getChild("id");
  for (let i = 0; i < shard.numRows; i++) if (ids?.get(i) === id) return i;
  throw new UserError(`${shard.path}: no row has id ${JSON.stringify(id)}`);
}

/** The documents of a packed row, each as a row of its own (cut at `cu_seqlens`). */
export function packedDocuments(shard: ShardFile, index: number): (ShardRow & { part: number })[] {
  checkRow(shard, index);
  const cell = <T>(name: string) => (shard.table.getChild(name)?.get(index) as { toArray(): ArrayLike<T> } | null)?.toArray() ?? [];
  const ids = Int32Array.from(cell<number>("input_ids"));
  const mask = Uint8Array.from(cell<number>("loss_mask"));
  const bounds = Array.from(cell<number>("cu_seqlens"));
  const documentIds = Array.from(cell<string>("document_ids"));
  const parts = Array.from(cell<number>("document_parts"));
  const domains = Array.from(cell<string>("document_domains"));
  return documentIds.map((id, d) => {
    const [start, end] = [bounds[d] as number, bounds[d + 1] as number];
    const lossMask = mask.slice(start, end);
    return {
      id,
      part: parts[d] ?? 0,
      domain: domains[d] ?? "",
      source: "",
      inputIds: ids.slice(start, end),
      lossMask,
      numTokens: end - start,
      numLossTokens: lossMask.reduce((a, b) => a + b, 0),
    };
  });
}
