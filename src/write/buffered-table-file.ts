import type { Table } from "apache-arrow";
import * as parquet from "parquet-wasm";
import { OpenShard, type ShardInfo } from "./parquet-shard-writer.ts";

/**
 * One zstd Parquet table file written in row groups as rows arrive (temp + rename via
 * OpenShard): the stats table and the SFT candidates table. The file is created with its first
 * row group, so a writer that never gets a row leaves no file.
 */
export class BufferedTableFile<Row> {
  private buffer: Row[] = [];
  private file: OpenShard | undefined;
  private readonly finalPath: string;
  private readonly relativePath: string;
  private readonly rowGroupRows: number;
  private readonly toTable: (rows: readonly Row[]) => Table;

  constructor(finalPath: string, relativePath: string, rowGroupRows: number, toTable: (rows: readonly Row[]) => Table) {
    this.finalPath = finalPath;
    this.relativePath = relativePath;
    this.rowGroupRows = rowGroupRows;
    this.toTable = toTable;
  }

  get tempPath(): string {
    return `${this.finalPath}.tmp`;
  }

  async add(rows: readonly Row[]): Promise<void> {
    this.buffer.push(...rows);
    if (this.buffer.length >= this.rowGroupRows) await this.flush();
  }

  private async flush(): Promise<void> {
    if (this.buffer.length === 0) return;
    if (!this.file) {
      const properties = () =>
        new parquet.WriterPropertiesBuilder()
          .setCompression(parquet.Compression.ZSTD)
          .setMaxRowGroupSize(this.rowGroupRows)
          .setCreatedBy("lwm-data")
          .build();
      this.file = new OpenShard(this.finalPath, this.relativePath, properties);
    }
    const rows = this.buffer;
    this.buffer = [];
    this.file.rows += rows.length;
    this.file.documents += rows.length;
    await this.file.writeRowGroup(this.toTable(rows));
  }

  /** Finishes the file; undefined when it never got a row. */
  async finish(): Promise<ShardInfo | undefined> {
    await this.flush();
    return this.file ? await this.file.finish() : undefined;
  }

  async abort(): Promise<void> {
    await this.file?.abort();
  }
}
