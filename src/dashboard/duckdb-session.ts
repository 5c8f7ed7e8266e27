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
    try {
      const reader = await this.connection.runAndReadAll(sql, values);
      return reader.getRowObjectsJson() as Row[];
    } catch (err) {
      throw new UserError(`dashboard query failed: ${(err as Error).message}`);
    }
  }

  async run(sql: string): Promise<void> {
    try {
      await this.connection.run(sql);
    } catch (err) {
      throw new UserError(`dashboard query failed: ${(err as Error).message}`);
    }
  }

  close(): void {
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
