import type { Table } from "apache-arrow";
import * as parquet from "parquet-wasm";
import { arrow } from "../io/arrow.ts";
import { OpenShard, type ShardInfo } from "./parquet-shard-writer.ts";
import type { RowGroupCounts, SegmentJournal } from "./segment-journal.ts";

/** Where a table file's row groups are also appended, and the name they go under (segment-journal.ts). */
export interface TableJournal {
  journal: SegmentJournal;
  file: string;
}

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
  private readonly journal: TableJournal | undefined;

  constructor(
    finalPath: string,
    relativePath: string,
    rowGroupRows: number,
    toTable: (rows: readonly Row[]) => Table,
    journal?: TableJournal,
  ) {
    this.finalPath = finalPath;
    this.relativePath = relativePath;
    this.rowGroupRows = rowGroupRows;
    this.toTable = toTable;
    this.journal = journal;
  }

  get tempPath(): string {
    return `${this.finalPath}.tmp`;
  }

  async add(rows: readonly Row[]): Promise<void> {
    this.buffer.push(...rows);
    if (this.buffer.length >= this.rowGroupRows) await this.flush();
  }

  private openFile(): OpenShard {
    if (!this.file) {
      const properties = () =>
        new parquet.WriterPropertiesBuilder()
          .setCompression(parquet.Compression.ZSTD)
          .setMaxRowGroupSize(this.rowGroupRows)
          .setCreatedBy("lwm-data")
          .build();
      this.file = new OpenShard(this.finalPath, this.relativePath, properties);
    }
    return this.file;
  }

  private async flush(): Promise<void> {
    if (this.buffer.length === 0) return;
    const file = this.openFile();
    const rows = this.buffer;
    this.buffer = [];
    const counts: RowGroupCounts = { rows: rows.length, documents: rows.length, tokens: 0, lossTokens: 0, estimatedBytes: 0 };
    file.count(counts);
    const ipc = arrow.tableToIPC(this.toTable(rows), "stream");
    await this.journal?.journal.appendRows(this.journal.file, counts, ipc);
    await file.writeIpc(ipc);
  }

  /** A row group from the journal, written as it was first (not journaled again). */
  async replayRowGroup(counts: RowGroupCounts, ipc: Uint8Array): Promise<void> {
    const file = this.openFile();
    file.count(counts);
    await file.writeIpc(ipc);
  }

  /** Rows not yet in a row group (a mid-segment checkpoint). */
  get pending(): readonly Row[] {
    return this.buffer;
  }

  set pending(rows: readonly Row[]) {
    this.buffer = [...rows];
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
