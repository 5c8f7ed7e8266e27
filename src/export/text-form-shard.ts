import { UserError } from "../core/errors.ts";
import { openParquetTable, type ParquetTable } from "../io/parquet-table.ts";
import { SHARD_METADATA_KEY } from "../write/parquet-shard-writer.ts";
import { escaperFromMetadata, type LiteralEscaper } from "./special-literals.ts";

/**
 * A shard opened for its text form (the `messages` column), with the special-token rule its
 * metadata names: what every export that reads messages needs. A shard without messages, or
 * written before the rule existed, is a UserError saying how to rerun the job `to <purpose>`.
 * The caller closes the table.
 */
export async function openTextFormShard(path: string, purpose: string): Promise<{ table: ParquetTable; escaper: LiteralEscaper }> {
  const table = await openParquetTable(path).catch((err: Error) => {
    throw new UserError(`${path} is not a readable Parquet file (${err.message}); check the output with \`lwm-data verify\``);
  });
  try {
    if (!table.schema.fields.some((field) => field.name === "messages")) {
      const packed = table.schema.fields.some((field) => field.name === "cu_seqlens");
      throw new UserError(
        `${path} has no messages column: ${packed ? "packed rows carry no text form; run the job with pack.enabled: false" : "run the job with output.include_messages: true"} ${purpose}`,
      );
    }
    const metadata = JSON.parse(table.keyValue.get(SHARD_METADATA_KEY) ?? "{}") as Record<string, unknown>;
    const escaper = escaperFromMetadata(metadata, path);
    if (!escaper)
      throw new UserError(
        `${path} was written by an lwm-data without the text form's special-token rule: rerun the job (lwm-data run <config> --overwrite) to export it`,
      );
    return { table, escaper };
  } catch (err) {
    table.close();
    throw err;
  }
}
