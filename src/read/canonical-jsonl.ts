import { describeZodError, trajectoryInputSchema } from "../core/trajectory-schema.ts";
import { excerpt, firstLine, parseJsonLine, type Reader, type ReaderOptions, type ReadItem, recordLines } from "./reader.ts";

const FORMAT = "canonical-jsonl";

/** lwm-data's own format: one canonical `Trajectory` (src/core/trajectory.ts) per JSON line. */
export const canonicalJsonlReader: Reader = {
  name: FORMAT,
  domain: "from each record's domain",
  description: "one canonical Trajectory object per line (id, domain, turns[{action, observation}])",
  splittable: true,

  sniff(head) {
    const line = firstLine(head);
    const parsed = parseJsonLine(line);
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
      const withDefaultDomain =
        options.domain && typeof parsed.value === "object" && parsed.value !== null && !("domain" in parsed.value)
          ? { ...parsed.value, domain: options.domain }
          : parsed.value;
      const result = trajectoryInputSchema.safeParse(withDefaultDomain);
      if (!result.success) {
        const { field, reason } = describeZodError(result.error);
        const rawId = (parsed.value as { id?: unknown } | null)?.id;
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
