import { createWriteStream } from "node:fs";
import { mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { loadConfig } from "../config/load-config.ts";
import { UserError } from "../core/errors.ts";
import { type PiiFinding, type PiiScanResult, scanPii } from "../inspect/pii-scan.ts";
import { PII_KINDS } from "../normalize/pii/types.ts";
import { planJob } from "../pipeline/plan.ts";
import { type InputOptions, inputOverrides } from "./input-overrides.ts";
import { shownPath } from "./shown-path.ts";

interface ScanOptions extends Omit<InputOptions, "benchmark"> {
  limit: string;
  maxRecords?: string;
  json?: string;
}

function count(value: string, option: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new UserError(`${option}: expected a whole number ≥ 0, got "${value}"`);
  return n;
}

const line = (f: PiiFinding) => `  ${f.source}  ${f.field}  ${f.kind}  …${f.before}[${f.value}]${f.after}…`;

/** The per-domain × kind table of what a scan found. */
function summaryLines(result: PiiScanResult): string[] {
  const domains = Object.keys(result.counts).sort();
  const kinds = PII_KINDS.filter((k) => domains.some((d) => result.counts[d]?.[k]));
  const found = domains.reduce((s, d) => s + (result.recordsWithPii[d] ?? 0), 0);
  const head = `${result.records} record(s) scanned, ${result.quarantined} quarantined (not scanned), ${found} with personal data`;
  const reasons = result.quarantineReasons.map((reason) => `  quarantined: ${reason}`);
  if (domains.length === 0) return [head, ...reasons];
  const width = Math.max(6, ...domains.map((d) => d.length));
  const col = (k: string) => Math.max(7, k.length);
  return [
    head,
    `  ${"domain".padEnd(width)}  records  ${kinds.map((k) => k.padStart(col(k))).join("  ")}`,
    ...domains.map(
      (d) =>
        `  ${d.padEnd(width)}  ${String(result.recordsWithPii[d] ?? 0).padStart(7)}  ${kinds
          .map((k) => String(result.counts[d]?.[k] ?? 0).padStart(col(k)))
          .join("  ")}`,
    ),
    ...reasons,
  ];
}

/**
 * `lwm-data pii scan <config>`: what normalize.pii would replace in the job's inputs, with the
 * text around each value, so false positives and misses can be reviewed before a run.
 */
export async function piiScanCommand(configPath: string, options: ScanOptions): Promise<void> {
  const limit = count(options.limit, "--limit");
  const maxRecords = options.maxRecords !== undefined ? count(options.maxRecords, "--max-records") : undefined;
  const plan = await planJob(loadConfig(configPath, inputOverrides({ ...options, benchmark: [] })));
  if (options.json !== undefined) await mkdir(dirname(options.json), { recursive: true });
  const json = options.json !== undefined ? createWriteStream(options.json) : undefined;
  // The first --limit findings of each kind, printed grouped by kind at the end.
  const examples = new Map<string, PiiFinding[]>();
  const perKind = new Map<string, number>();
  const scan = scanPii(plan, maxRecords !== undefined ? { maxRecords } : {});
  let next = await scan.next();
  while (!next.done) {
    const finding = next.value;
    json?.write(`${JSON.stringify(finding)}\n`);
    const seen = perKind.get(finding.kind) ?? 0;
    if (seen < limit) examples.set(finding.kind, [...(examples.get(finding.kind) ?? []), finding]);
    perKind.set(finding.kind, seen + 1);
    next = await scan.next();
  }
  for (const kind of PII_KINDS) {
    const list = examples.get(kind);
    if (!list) continue;
    console.log(`${kind}:`);
    for (const finding of list) console.log(line(finding));
  }
  if (json) await new Promise<void>((resolve, reject) => json.end((err?: Error | null) => (err ? reject(err) : resolve())));
  const cut = [...perKind].filter(([, n]) => n > limit);
  if (cut.length > 0)
    console.log(
      `(${cut.map(([k, n]) => `${k}: ${limit} of ${n}`).join(", ")} shown; --limit raises it${json ? "" : ", --json lists all"})`,
    );
  for (const text of summaryLines(next.value)) console.log(text);
  if (json) console.log(`every finding: ${shownPath(options.json as string)} (JSONL)`);
}
