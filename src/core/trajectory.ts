/**
 * The canonical record every reader produces and every later stage consumes (docs/input-formats.md "Input formats").
 * A new source format is one reader that yields these; nothing downstream changes.
 */
export const DOMAINS = ["mcp", "search", "terminal", "swe", "android", "web", "os"] as const;
export type Domain = (typeof DOMAINS)[number];

export function isDomain(value: unknown): value is Domain {
  return typeof value === "string" && (DOMAINS as readonly string[]).includes(value);
}

export interface SourceRef {
  /** Path or URI of the file the record came from. */
  uri: string;
  /** 1-based line number of the record's first line, for line-oriented formats. */
  line?: number;
  /** Byte offset of the record in the (decompressed) stream; for a Parquet row, its row group's. */
  offset?: number;
  /** 0-based row of the record in a columnar file (Parquet): what names it, rather than the offset. */
  row?: number;
  /** Reader that produced the record, e.g. `canonical-jsonl`. */
  format: string;
}

export interface Turn {
  /** What the agent did: a command, a tool call, a click. */
  action: string;
  /** What the environment returned. This is what a world model learns to predict. */
  observation: string;
  thinking?: string;
  meta?: Record<string, unknown>;
}

export interface Trajectory {
  /** Stable id: from the source, or a content hash. Decides the shard a sample lands in. */
  id: string;
  domain: Domain;
  source: SourceRef;
  /** Environment description / tool list / world-model system prompt. */
  system?: string;
  /** The agent's instruction, when known. */
  task?: string;
  initialObservation?: string;
  turns: Turn[];
  meta?: Record<string, unknown>;
}
