import type { SourceRef } from "../core/trajectory.ts";
import { redactLabel } from "../normalize/redact-output.ts";
import type { JobPlan } from "./plan.ts";

/**
 * `file:line` or `file@offset` of a record. Paths relative to the config keep shards identical
 * wherever the data is checked out; inside a byte-range task line numbers are unknown, so the
 * byte offset locates the record.
 */
export function recordSource(displayPath: string, { line, offset, row }: SourceRef): string {
  const at = line !== undefined ? `:${line}` : row !== undefined ? `#row=${row}` : offset !== undefined ? `@${offset}` : "";
  return `${displayPath}${at}`;
}

/** A record's `recordSource` label as outputs show it: secrets redacted when the job redacts them. */
export function shownSource(plan: JobPlan, label: string): string {
  const { redact_secrets, pii } = plan.config.normalize;
  return redactLabel(label, { secrets: redact_secrets, pii });
}
