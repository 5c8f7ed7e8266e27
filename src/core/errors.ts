import type { SourceRef } from "./trajectory.ts";

/**
 * A record that cannot become a sample. It is written to quarantine with its reason and
 * location, never dropped: records in = samples out + records quarantined.
 */
export interface QuarantineEntry {
  source: SourceRef;
  /** Trajectory id when it could be read, so a person can find the record. */
  id?: string;
  /** Pipeline stage that rejected it: read, validate, render, tokenize. */
  stage: string;
  /** Dotted path of the offending field, e.g. `turns.3.observation`, when one is to blame. */
  field?: string;
  reason: string;
  /** The start of the raw record (capped), to help a person fix the source. */
  excerpt?: string;
}

/** Thrown by stages for a record-level problem; the runner turns it into a quarantine entry. */
export class RecordError extends Error {
  readonly field: string | undefined;
  constructor(message: string, field?: string) {
    super(message);
    this.name = "RecordError";
    this.field = field;
  }
}

/** A job-level problem (bad config, missing input): stops the run with a clear message. */
export class UserError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UserError";
  }
}

export function describeLocation(source: SourceRef): string {
  const parts = [source.uri];
  if (source.line !== undefined) parts.push(`line ${source.line}`);
  if (source.offset !== undefined) parts.push(`byte ${source.offset}`);
  return parts.join(":");
}
