import { type DuckDBConnection, DuckDBInstance, type DuckDBValue } from "@duckdb/node-api";
import { UserError } from "../core/errors.ts";

/** A SQL string literal: single quotes doubled, so any path is safe inside a query. */
export function sqlString(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/** `['a', 'b']`: a SQL list of string literals (file lists for read_parquet / read_json). */
export function sqlStringList(items: readonly string[]): string {
  return `[${items.map(sqlString).join(", ")}]`;
}

export type Row = Record<string, unknown>;

/**
 * One in-memory DuckDB database for a dashboard: it reads the run's Parquet and JSONL files in
 * place (nothing is loaded or copied), so aggregations over millions of turns stay a scan.
 */
export class DuckSession {
  private readonly instance: DuckDBInstance;
  private readonly connection: DuckDBConnection;
  /** Queries started and not yet settled: closing under one frees what DuckDB's native code still uses. */
  private running = 0;
  private state: "open" | "closing" | "closed" = "open";

  private constructor(instance: DuckDBInstance, connection: DuckDBConnection) {
    this.instance = instance;
    this.connection = connection;
  }

  static async open(): Promise<DuckSession> {
    const instance = await DuckDBInstance.create(":memory:");
    const connection = await instance.connect();
    return new DuckSession(instance, connection);
  }

  /** Rows as plain JSON values (BIGINT sums become numbers, lists become arrays). */
  async rows(sql: string, values?: Record<string, DuckDBValue>): Promise<Row[]> {
    return this.query(async () => (await this.connection.runAndReadAll(sql, values)).getRowObjectsJson() as Row[]);
  }

  async run(sql: string): Promise<void> {
    await this.query(() => this.connection.run(sql));
  }

  /**
   * Closes the database once no query is running (a served dashboard's last request may still be
   * answering); a query asked for after this is refused with a clear error, never run on a closed
   * connection.
   */
  close(): void {
    if (this.state === "open") this.state = "closing";
    if (this.running === 0) this.closeNow();
  }

  private async query<T>(run: () => Promise<T>): Promise<T> {
    if (this.state !== "open") throw new UserError("dashboard query failed: the dashboard's database is closed");
    this.running += 1;
    try {
      return await run();
    } catch (err) {
      throw new UserError(`dashboard query failed: ${(err as Error).message}`);
    } finally {
      this.running -= 1;
      if (this.running === 0) this.closeIfAsked();
    }
  }

  private closeIfAsked(): void {
    if (this.state === "closing") this.closeNow();
  }

  private closeNow(): void {
    if (this.state === "closed") return;
    this.state = "closed";
    this.connection.closeSync();
    this.instance.closeSync();
  }
}

/** A JSON number from DuckDB (BIGINT and HUGEINT sums arrive as strings). */
export function num(value: unknown): number {
  if (typeof value === "number") return value;
  if (typeof value === "string" || typeof value === "bigint") return Number(value);
  return 0;
}
