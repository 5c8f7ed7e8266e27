import { describeZodError, trajectoryInputSchema } from "../core/trajectory-schema.ts";
import {
  excerpt,
  firstLine,
  parseJsonLine,
  parseSniffedJson,
  type Reader,
  type ReaderOptions,
  type ReadItem,
  recordLines,
} from "./reader.ts";
import { isRecord, topLevelIdSource } from "./record-helpers.ts";

const FORMAT = "canonical-jsonl";

/** lwm-data's own format: one canonical `Trajectory` (src/core/trajectory.ts) per JSON line. */
export const canonicalJsonlReader: Reader = {
  name: FORMAT,
  domain: "from each record's domain",
  description: "one canonical Trajectory object per line (id, domain, turns[{action, observation}])",
  splittable: true,

  sniff(head) {
    const line = firstLine(head);
    const parsed = parseSniffedJson(line);
    // A first line longer than the head cannot be parsed; look for the keys instead.
    if (!parsed.ok) return !head.includes("\n") && line.startsWith("{") && /"turns"\s*:\s*\[/.test(line) && /"domain"\s*:/.test(line);
    if (typeof parsed.value !== "object" || parsed.value === null) return false;
    const record = parsed.value as Record<string, unknown>;
    return Array.isArray(record.turns) && "domain" in record;
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    for await (const line of recordLines(path, options, FORMAT)) {
      if (line.kind === "quarantine") {
        yield line;
        continue;
      }
      const { source } = line;
      const parsed = parseJsonLine(line.text);
      if (!parsed.ok) {
        yield { kind: "quarantine", entry: { source, stage: "read", reason: parsed.reason, excerpt: excerpt(line.text) } };
        continue;
      }
      const record = withoutNullOptionals(parsed.value, line.text);
      const withDefaultDomain =
        options.domain && typeof record === "object" && record !== null && !("domain" in record)
          ? { ...record, domain: options.domain }
          : record;
      const result = trajectoryInputSchema.safeParse(withDefaultDomain);
      if (!result.success) {
        const { field, reason } = describeZodError(result.error);
        const rawId = (record as { id?: unknown } | null)?.id;
        yield {
          kind: "quarantine",
          entry: {
            source,
            ...(typeof rawId === "string" || typeof rawId === "number" ? { id: String(rawId) } : {}),
            stage: "read",
            ...(field ? { field } : {}),
            reason,
            excerpt: excerpt(line.text),
          },
        };
        continue;
      }
      const { id, domain, system, task, initialObservation, turns, meta } = result.data;
      yield {
        kind: "trajectory",
        trajectory: {
          id,
          domain,
          source,
          ...(system !== undefined ? { system } : {}),
          ...(task !== undefined ? { task } : {}),
          ...(initialObservation !== undefined ? { initialObservation } : {}),
          turns,
          ...(meta !== undefined ? { meta } : {}),
        },
      };
    }
  },
};

/** Optional fields of a record and of its turns: null there means absent (what Python/pandas exports write). */
const OPTIONAL_FIELDS = ["system", "task", "initialObservation", "meta"] as const;
const OPTIONAL_TURN_FIELDS = ["thinking", "meta"] as const;

/** A turn with a null optional field. */
function nullTurnField(turn: unknown): boolean {
  return isRecord(turn) && OPTIONAL_TURN_FIELDS.some((key) => turn[key] === null);
}

/**
 * The record with its null optional fields (record's and turns') left out, and an integer `id`
 * past 2^53 as the digits written (JSON.parse would round 12345678901234567890 to …000). Anything
 * else is left for the schema to judge.
 */
function withoutNullOptionals(value: unknown, line: string): unknown {
  if (!isRecord(value)) return value;
  // Most records have nothing to change: they are not copied (this runs on every record read).
  const bigId = typeof value.id === "number" && Number.isInteger(value.id) && !Number.isSafeInteger(value.id);
  if (!bigId && !OPTIONAL_FIELDS.some((key) => value[key] === null) && !(Array.isArray(value.turns) && value.turns.some(nullTurnField)))
    return value;
  const out: Record<string, unknown> = { ...value };
  for (const key of OPTIONAL_FIELDS) if (out[key] === null) delete out[key];
  if (Array.isArray(out.turns))
    out.turns = out.turns.map((turn) => {
      if (!nullTurnField(turn)) return turn;
      const kept = { ...(turn as Record<string, unknown>) };
      for (const key of OPTIONAL_TURN_FIELDS) if (kept[key] === null) delete kept[key];
      return kept;
    });
  if (bigId) out.id = idDigits(line) ?? out.id;
  return out;
}

/** The top-level `id`'s digits as written, when its source text is an integer's. */
function idDigits(line: string): string | undefined {
  const digits = topLevelIdSource(line);
  return digits !== undefined && /^-?\d+$/.test(digits) ? digits : undefined;
}
