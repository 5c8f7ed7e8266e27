import { createReadStream } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { blankCounts } from "../core/count-blanking.ts";
import { isS3Uri } from "../io/s3/s3-uri.ts";
import { CauseTally, type FailureCause } from "../sft/teacher/endpoint-failures.ts";

/** Entries read at most, over all quarantine files: enough for the top reasons of any run. */
const MAX_ENTRIES = 10_000;

/**
 * A quarantine reason's kind: its stage and first clause, numbers blanked, so the same cause
 * in many files counts once (`detect: no reader recognizes the content`, `read: invalid JSON`).
 */
export function quarantineKind(entry: { stage?: unknown; reason?: unknown }): string {
  const reason = typeof entry.reason === "string" ? entry.reason : "no reason given";
  const clause =
    blankCounts(reason.split(/[:;([]/)[0] ?? reason)
      .trim()
      .slice(0, 70) || reason.slice(0, 70);
  return `${typeof entry.stage === "string" ? entry.stage : "?"}: ${clause}`;
}

/**
 * Quarantine entries by kind, most frequent first, each with one place it happened (file, line):
 * from the job's quarantine files (relative to `outputDir`), the first MAX_ENTRIES entries. A
 * bucket output or an unreadable file gives what could be read (possibly nothing).
 */
export async function quarantineCauses(
  outputDir: string,
  files: readonly { path: string }[],
): Promise<{ causes: FailureCause[]; read: number }> {
  const tally = new CauseTally();
  let read = 0;
  if (isS3Uri(outputDir)) return { causes: [], read };
  for (const file of files) {
    if (read >= MAX_ENTRIES) break;
    try {
      const lines = createInterface({ input: createReadStream(join(outputDir, file.path)), crlfDelay: Number.POSITIVE_INFINITY });
      for await (const line of lines) {
        if (line.trim() === "") continue;
        read += 1;
        try {
          const entry = JSON.parse(line) as { stage?: unknown; reason?: unknown; source?: { uri?: unknown; line?: unknown } };
          const where =
            typeof entry.source?.uri === "string" ? `${entry.source.uri}${entry.source.line ? `:${entry.source.line}` : ""}` : "";
          tally.add(quarantineKind(entry), where);
        } catch {
          tally.add("unreadable quarantine entry", file.path);
        }
        if (read >= MAX_ENTRIES) {
          lines.close();
          break;
        }
      }
    } catch {
      // A quarantine file that cannot be read leaves its reasons out; the counts still stand.
    }
  }
  return { causes: tally.top(), read };
}
