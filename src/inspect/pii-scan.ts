import { RecordError } from "../core/errors.ts";
import { TEXT_DOMAIN } from "../core/text-document.ts";
import type { Trajectory } from "../core/trajectory.ts";
import { normalizeDocument } from "../normalize/normalize-document.ts";
import { normalizeTrajectory } from "../normalize/normalize-trajectory.ts";
import type { Counters, NormalizeSettings } from "../normalize/normalizer.ts";
import { findPii, type PiiSettings, resolvePii } from "../normalize/pii/pii.ts";
import type { PiiKind } from "../normalize/pii/types.ts";
import type { JobPlan } from "../pipeline/plan.ts";
import { recordSource } from "../pipeline/record-labels.ts";
import { taskItems } from "../pipeline/task-items.ts";

/** One value the PII stage would replace, where it is, and the text around it. */
export interface PiiFinding {
  /** `file:line` (or `file@offset`, `file#row=N`) of the record. */
  source: string;
  id: string;
  domain: string;
  /** `system`, `task`, `initialObservation`, `turns.3.observation`, `id`, `text`… */
  field: string;
  kind: PiiKind;
  value: string;
  /** Up to CONTEXT characters each side, line breaks shown as ⏎. */
  before: string;
  after: string;
}

export interface PiiScanResult {
  records: number;
  /** Records the pipeline would quarantine (read or normalize errors): not scanned. */
  quarantined: number;
  /** The first few of them, `source: field: reason`, as `run` would quarantine them. */
  quarantineReasons: string[];
  /** Records with at least one finding, per domain. */
  recordsWithPii: Record<string, number>;
  /** Findings per domain and kind. */
  counts: Record<string, Partial<Record<PiiKind, number>>>;
}

const CONTEXT = 32;
const QUARANTINE_REASONS_SHOWN = 5;

const shown = (text: string) => text.replace(/\r?\n/g, "⏎").replace(/\t/g, " ");

/**
 * The settings a scan uses: the config's kinds, phone countries, IP policy and per-domain
 * overrides, with the top-level switch on (a scan is how one decides to turn it on).
 */
export function scanSettings(settings: PiiSettings): PiiSettings {
  return { ...settings, enabled: true };
}

/** The record's text fields as the pipeline writes them, before PII redaction (secrets already gone). */
function fieldsOf(trajectory: Trajectory): [string, string][] {
  const fields: [string, string][] = [["id", trajectory.id]];
  if (trajectory.system !== undefined) fields.push(["system", trajectory.system]);
  if (trajectory.task !== undefined) fields.push(["task", trajectory.task]);
  if (trajectory.initialObservation !== undefined) fields.push(["initialObservation", trajectory.initialObservation]);
  trajectory.turns.forEach((turn, i) => {
    if (turn.thinking !== undefined) fields.push([`turns.${i}.thinking`, turn.thinking]);
    fields.push([`turns.${i}.action`, turn.action], [`turns.${i}.observation`, turn.observation]);
  });
  return fields;
}

/**
 * Reads a job's inputs as `run` would and normalizes every record with PII redaction off, then
 * reports what the PII detectors find in each field: for reviewing false positives and misses
 * before a run, on the job's own data. Nothing is written.
 */
export async function* scanPii(plan: JobPlan, options: { maxRecords?: number } = {}): AsyncGenerator<PiiFinding, PiiScanResult> {
  const pii = scanSettings(plan.config.normalize.pii);
  const settings: NormalizeSettings = { ...plan.config.normalize, pii: undefined };
  const counters: Counters = new Map();
  const result: PiiScanResult = { records: 0, quarantined: 0, quarantineReasons: [], recordsWithPii: {}, counts: {} };
  const quarantine = (source: string, field: string | undefined, reason: string) => {
    result.quarantined += 1;
    if (result.quarantineReasons.length < QUARANTINE_REASONS_SHOWN)
      result.quarantineReasons.push(`${source}: ${field && !reason.startsWith(field) ? `${field}: ` : ""}${reason}`);
  };
  for (const task of plan.tasks) {
    for await (const { item, file } of taskItems(plan, task)) {
      if (options.maxRecords !== undefined && result.records >= options.maxRecords) return result;
      result.records += 1;
      if (item.kind === "quarantine") {
        quarantine(recordSource(file.displayPath, item.entry.source), item.entry.field, item.entry.reason);
        continue;
      }
      let domain: string;
      let fields: [string, string][];
      let source: string;
      try {
        if (item.kind === "document") {
          const document = await normalizeDocument(item.document, settings, counters);
          domain = TEXT_DOMAIN;
          fields = [
            ["id", document.id],
            ["text", document.text],
          ];
          source = recordSource(file.displayPath, item.document.source);
        } else {
          const trajectory = await normalizeTrajectory(item.trajectory, settings, counters);
          domain = trajectory.domain;
          fields = fieldsOf(trajectory);
          source = recordSource(file.displayPath, item.trajectory.source);
        }
      } catch (err) {
        // The run would quarantine it with its reason; `run` reports those.
        if (!(err instanceof RecordError)) throw err;
        const ref = item.kind === "document" ? item.document.source : item.trajectory.source;
        quarantine(recordSource(file.displayPath, ref), err.field, err.message);
        continue;
      }
      const resolved = domain === TEXT_DOMAIN ? resolvePii(pii) : resolvePii(pii, domain as Trajectory["domain"]);
      if (!resolved) continue;
      const id = fields[0]?.[1] ?? "";
      let found = false;
      for (const [field, text] of fields) {
        for (const span of findPii(text, resolved)) {
          found = true;
          const counts = result.counts[domain] ?? {};
          counts[span.kind] = (counts[span.kind] ?? 0) + 1;
          result.counts[domain] = counts;
          yield {
            source,
            id,
            domain,
            field,
            kind: span.kind,
            value: text.slice(span.start, span.end),
            before: shown(text.slice(Math.max(0, span.start - CONTEXT), span.start)),
            after: shown(text.slice(span.end, span.end + CONTEXT)),
          };
        }
      }
      if (found) result.recordsWithPii[domain] = (result.recordsWithPii[domain] ?? 0) + 1;
    }
  }
  return result;
}
