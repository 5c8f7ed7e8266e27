import type { SourceRef } from "../core/trajectory.ts";
import { inputPrefix } from "../io/input-bytes.ts";
import type { ZipEntry, ZipFile, zipBudget } from "../io/zip-archive.ts";
import { quarantine } from "./chat-rows/row-item.ts";
import type { ReaderOptions, ReadItem } from "./reader.ts";
import { describeType, isRecord } from "./record-helpers.ts";

/*
 * Inspect AI's `.eval` log (its default format since 0.3.46): a zip archive written by
 * UKGovernmentBEIS/inspect_ai `src/inspect_ai/log/_recorders/eval.py` — `_journal/start.json`
 * (LogStart `{version, eval, plan}`, written first), `samples/<id>_epoch_<n>.json` (one EvalSample
 * each, written as they finish), `_journal/summaries/<n>.json`, `summaries.json`, `reductions.json`
 * and, when the eval finished, `header.json` (the EvalLog without its samples). Inspect reads the
 * eval spec from `header.json`, else from `_journal/start.json` (a log still running or cut); so
 * does this. Each sample is the same record the JSON log's `samples[i]` gives (src/read/inspect-log.ts).
 */

const HEADER = "header.json";
const START = "_journal/start.json";

/**
 * The zip module (and yauzl under it), loaded by the first archive opened: the reader registry
 * imports this file in every stage process, and almost none of them open a zip.
 */
const zipArchive = () => import("../io/zip-archive.ts");

/** A sample entry, as Inspect's own reader tells them. */
export function isSampleEntry(name: string): boolean {
  return name.startsWith("samples/") && name.endsWith(".json");
}

/** Whether an input starts with a zip local-file header (or is an empty zip). */
export async function isZipInput(path: string): Promise<boolean> {
  const head = Buffer.from(await inputPrefix(path, 4));
  return head.equals(Buffer.from("PK\u0003\u0004", "latin1")) || head.equals(Buffer.from("PK\u0005\u0006", "latin1"));
}

/** Central-directory entries looked at before a zip that shows no Inspect entry is taken for another archive. */
const DETECT_ENTRIES = 100_000;

/**
 * Whether a zip archive is an Inspect `.eval` log, told from the names in its central directory
 * (not the file name): `_journal/start.json`, or `header.json` beside `samples/` entries. An archive
 * whose central directory cannot be read is not one (detection then refuses it as a zip archive).
 */
export async function isInspectEvalArchive(path: string): Promise<boolean> {
  let zip: ZipFile;
  try {
    zip = await (await zipArchive()).openZip(path);
  } catch {
    return false;
  }
  let header = false;
  let samples = false;
  let seen = 0;
  try {
    for await (const entry of zip.eachEntry()) {
      if (entry.fileName === START) return true;
      if (entry.fileName === HEADER) header = true;
      else if (entry.fileName.startsWith("samples/")) samples = true;
      if (header && samples) return true;
      if (++seen >= DETECT_ENTRIES) return false;
    }
    return false;
  } catch {
    return false;
  } finally {
    zip.close();
  }
}

type SampleItem = (raw: unknown, evalSpec: Record<string, unknown>, source: SourceRef, options: ReaderOptions, where: string) => ReadItem;

/**
 * The samples of an `.eval` archive, one entry at a time: each decompressed, CRC-checked and parsed
 * alone, so memory holds one sample at most. Two passes over the central directory: the first finds
 * the eval spec (`header.json`, else `_journal/start.json`), the second reads the samples in the
 * archive's order (Inspect's write order: the JSON log's order), source `row` = the sample's index
 * among them. A damaged sample entry (bad JSON, CRC error, corrupt data, over `input.max_line_bytes`)
 * is that sample's quarantine entry, naming it; an archive without an eval spec, or whose header
 * entry is damaged with no start entry to fall back on, is one for the file.
 */
export async function* readEvalArchive(
  path: string,
  options: ReaderOptions,
  format: string,
  sampleItem: SampleItem,
): AsyncGenerator<ReadItem> {
  const source: SourceRef = { uri: path, format };
  const { openZip, zipBudget } = await zipArchive();
  const budget = zipBudget();
  const maxEntryBytes = options.maxLineBytes;
  const specs: Partial<Record<typeof HEADER | typeof START, unknown>> = {};
  const damaged: Partial<Record<typeof HEADER | typeof START, string>> = {};
  let sampleCount = 0;
  try {
    const zip = await openZip(path);
    try {
      for await (const entry of zip.eachEntry()) {
        const name = entry.fileName;
        if (name === HEADER || name === START) {
          const parsed = await parseEntry(zip, entry, budget, maxEntryBytes);
          if (parsed.ok) specs[name] = parsed.value;
          else damaged[name] = parsed.reason;
        } else if (isSampleEntry(name)) sampleCount += 1;
      }
    } finally {
      zip.close();
    }
  } catch (err) {
    // ZipArchiveError, or yauzl's own for a damaged central directory or an I/O error.
    yield quarantine(source, { reason: `not a readable Inspect AI .eval log: ${(err as Error).message}` });
    return;
  }
  const chosen = HEADER in specs ? HEADER : START in specs ? START : undefined;
  if (chosen === undefined) {
    const why = damaged[HEADER] ?? damaged[START];
    yield quarantine(source, {
      field: HEADER,
      reason: why
        ? `the .eval log's ${damaged[HEADER] ? HEADER : START} cannot be read: ${why}`
        : `the zip archive holds neither ${HEADER} nor ${START}: not an Inspect AI .eval log (or one cut before its eval began)`,
    });
    return;
  }
  const spec = specs[chosen];
  if (!isRecord(spec) || !isRecord(spec.eval)) {
    yield quarantine(source, {
      field: `${chosen}: eval`,
      reason: `${chosen}: expected an object with an "eval" object, got ${isRecord(spec) ? describeType(spec.eval) : describeType(spec)}`,
    });
    return;
  }
  const evalSpec = spec.eval;
  if (sampleCount === 0) {
    yield quarantine(source, {
      field: "samples",
      reason: "the eval log holds no samples (a log written with --no-log-samples, or a header only): nothing to read",
    });
    return;
  }
  let row = 0;
  try {
    const zip = await openZip(path);
    try {
      for await (const entry of zip.eachEntry()) {
        const name = entry.fileName;
        if (!isSampleEntry(name)) continue;
        const sampleSource: SourceRef = { ...source, offset: 0, row };
        const parsed = await parseEntry(zip, entry, budget, maxEntryBytes);
        row += 1;
        yield parsed.ok
          ? sampleItem(parsed.value, evalSpec, sampleSource, options, name)
          : quarantine(sampleSource, { field: name, reason: `${name}: ${parsed.reason}` });
      }
    } finally {
      zip.close();
    }
  } catch (err) {
    yield quarantine(source, { reason: `file unreadable after ${row} sample(s): ${(err as Error).message}` });
  }
}

/** An entry parsed as JSON, or why it cannot be (a ZipArchiveError passes through: the archive stops). */
async function parseEntry(
  zip: ZipFile,
  entry: ZipEntry,
  budget: ReturnType<typeof zipBudget>,
  maxEntryBytes: number,
): Promise<{ ok: true; value: unknown } | { ok: false; reason: string }> {
  let bytes: Buffer;
  try {
    bytes = await (await zipArchive()).readZipEntry(zip, entry, budget, maxEntryBytes);
  } catch (err) {
    if (err instanceof (await zipArchive()).ZipEntryError) return { ok: false, reason: err.message };
    throw err;
  }
  try {
    return { ok: true, value: JSON.parse(bytes.toString("utf8")) };
  } catch (err) {
    return { ok: false, reason: `invalid JSON: ${(err as Error).message}` };
  }
}
