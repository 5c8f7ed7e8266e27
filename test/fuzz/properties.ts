import { isDeepStrictEqual } from "node:util";
import { z } from "zod";
import { RecordError } from "../../src/core/errors.ts";
import type { Trajectory } from "../../src/core/trajectory.ts";
import { describeZodError, trajectoryInputSchema, turnSchema } from "../../src/core/trajectory-schema.ts";
import { DOMAIN_NORMALIZERS, normalizeTrajectory } from "../../src/normalize/normalize-trajectory.ts";
import type { NormalizeSettings } from "../../src/normalize/normalizer.ts";
import { redactSecrets } from "../../src/normalize/secrets.ts";
import { csvDialectOf } from "../../src/read/csv-rows.ts";
import { LAYOUT_HEAD_BYTES, layoutOfHead } from "../../src/read/json-array.ts";
import { readFilterOf } from "../../src/read/read-filter.ts";
import { itemSource, type ReaderOptions, type ReadItem } from "../../src/read/reader.ts";
import { detectFormat, READERS, readerByName, readHead } from "../../src/read/registry.ts";

/**
 * The properties every reader and normalizer must keep, checked inside the fuzz worker (so the
 * items never cross threads and a hang can be cut off). Each check returns undefined or the
 * first violation, in words.
 */

export interface ReadJob {
  kind: "read";
  reader: string;
  path: string;
  options: ReaderOptions;
  /** The decompressed content, when known (not after damage to a compressed file). */
  plain: Uint8Array | null;
  compressed: boolean;
  /** Byte positions splitting the file into ranges (splittable readers, uncompressed files). */
  cuts: number[];
  /** Also normalize every trajectory read, with the default settings. */
  normalize: boolean;
  settings: NormalizeSettings;
  recordLimitMs: number;
}

export interface NormalizeJob {
  kind: "normalize";
  trajectory: Trajectory;
  settings: NormalizeSettings;
  /** The domain normalizer, applied to its own output, must give that output again (mcp, swe). */
  idempotent: boolean;
  recordLimitMs: number;
}

export type Job = ReadJob | NormalizeJob;

export interface JobResult {
  failure?: string;
  ms: number;
}

/** The per-record time limit: reading one record, or normalizing one trajectory (set per job). */
let recordLimitMs = 5_000;

export function runJob(job: Job): Promise<string | undefined> {
  recordLimitMs = job.recordLimitMs;
  return job.kind === "read" ? checkRead(job) : checkNormalize(job.trajectory, job.settings, { repeat: true, idempotent: job.idempotent });
}

const slow = (what: string, ms: number) => `slow: ${what} took ${Math.round(ms)} ms, over the ${recordLimitMs} ms per-record limit`;

// Formats whose every record names its line and byte offset (openhands and search-api: unless the file is a JSON array).
const LINE_SOURCES = new Set([
  "text-jsonl",
  "canonical-jsonl",
  "agentworldbench-jsonl",
  "os-a11y",
  "swe-smith",
  "asciicast",
  "tmux-log",
  "mcp-jsonrpc",
]);
const LINE_SOURCES_UNLESS_ARRAY = new Set(["openhands", "search-api"]);
// One item per non-blank line: the reader's own contract ("exactly one item per source record").
const ONE_PER_LINE = new Set(["text-jsonl", "canonical-jsonl", "os-a11y", "swe-smith"]);
// A file is one record: exactly one item, whatever the content.
const ONE_PER_FILE = new Set([
  "asciicast",
  "terminal-bench",
  "tmux-log",
  "swe-agent-traj",
  "mini-swe-agent",
  "browsergym",
  "uiautomator-xml",
  "droidbot",
  "mcp-jsonrpc",
]);

const DECODER = new TextDecoder("utf-8", { fatal: false });

/**
 * What the task runner makes of a reader (src/pipeline/task-items.ts, `readSafely`): the items, and
 * the error that ended the file early, if any. The runner turns ANY such error into one quarantine
 * entry ("file unreadable after line N"), so a reader bug would pass as a damaged file; here only
 * a damaged archive (a zlib / zstd error on a compressed file) may end a read early.
 */
async function readSafely(
  reader: string,
  path: string,
  options: ReaderOptions,
): Promise<{ items: ReadItem[]; error?: unknown; slowest: { item: number; ms: number } }> {
  const items: ReadItem[] = [];
  // The longest wait for one item (or for the end): the time one record took to read.
  let slowest = { item: 0, ms: 0 };
  let last = performance.now();
  const tick = () => {
    const now = performance.now();
    if (now - last > slowest.ms) slowest = { item: items.length, ms: now - last };
    last = now;
  };
  try {
    for await (const item of readerByName(reader).read(path, options)) {
      tick();
      items.push(item);
    }
  } catch (error) {
    tick();
    return { items, error, slowest };
  }
  tick();
  return { items, slowest };
}

function isDecompressionError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return err instanceof Error && err.constructor === Error && typeof code === "string" && /^(Z_|ZSTD_)/.test(code);
}

function describeError(err: unknown): string {
  if (!(err instanceof Error)) return `a non-Error value ${String(err)}`;
  const frames = (err.stack ?? "").split("\n").slice(1, 5).join("\n");
  return `${err.name}: ${err.message}\n${frames}`;
}

async function checkRead(job: ReadJob): Promise<string | undefined> {
  // `format: auto` calls every reader's sniff on every file's head: none may throw.
  const head = await readHead(job.path);
  for (const reader of READERS) {
    try {
      reader.sniff(head, job.path);
    } catch (err) {
      return `${reader.name}.sniff threw ${describeError(err)}`;
    }
  }
  // …and `detectFormat` goes on from the sniffs to the whole of a pretty-printed document or the
  // first elements of a JSON array, writing them back as lines for the sniffs: no throw either
  // (a damaged archive aside).
  try {
    await detectFormat(job.path);
  } catch (err) {
    if (!(job.compressed && isDecompressionError(err))) return `detectFormat threw ${describeError(err)}`;
  }

  const { items, error, slowest } = await readSafely(job.reader, job.path, job.options);
  if (error !== undefined && !(job.compressed && isDecompressionError(error))) return `read threw ${describeError(error)}`;
  if (slowest.ms > recordLimitMs) return slow(`reading item ${slowest.item}`, slowest.ms);
  const plainText = job.plain ? DECODER.decode(job.plain) : undefined;
  const lineSourced =
    LINE_SOURCES.has(job.reader) ||
    (LINE_SOURCES_UNLESS_ARRAY.has(job.reader) && plainText !== undefined && /[^\s\uFEFF]/.exec(plainText)?.[0] !== "[");
  const lines = job.plain ? newlinePositions(job.plain) : undefined;
  for (const [i, item] of items.entries()) {
    const problem = checkItem(item, job, lineSourced, lines);
    if (problem) return `item ${i}: ${problem}`;
  }

  if (error === undefined && job.plain) {
    if (ONE_PER_FILE.has(job.reader) && items.length !== 1) return `a file is one record, but the reader yielded ${items.length} items`;
    // A file of JSON lines gives one item per line; a pretty-printed document or a file with no
    // JSON line is one record (or one quarantine entry); an array gives one per element.
    const layout = layoutOfHead(plainText?.slice(0, LAYOUT_HEAD_BYTES) ?? "").kind;
    if (ONE_PER_LINE.has(job.reader) && layout === "lines") {
      const expected = recordLineCount(job.plain, job.options.maxLineBytes);
      if (items.length !== expected) return `expected one item per non-blank line (${expected}), got ${items.length}`;
    }
    // A CSV / TSV file of rows (src/read/csv-rows.ts) has no JSON line, yet its records are its
    // data rows: one item each, numbered 0, 1, 2, … (none dropped), at most one per non-blank line;
    // none for a header alone (after Excel's `sep=` line, if any).
    const csv = layout === "text" ? await csvDialectOf(job.path).catch(() => undefined) : undefined;
    const nonBlankLines = (plainText ?? "").split(/\r\n|\r|\n/).filter((line) => line.replace(/^\uFEFF/, "").trim() !== "").length;
    if (csv && ONE_PER_LINE.has(job.reader)) {
      const rows = items.map((item) => itemSource(item).row);
      if (rows.some((row, i) => row !== i))
        return `a CSV file's items are its rows 0, 1, 2, …, but they are rows ${rows.slice(0, 12).join(", ")}`;
      if (items.length > nonBlankLines) return `a CSV file of ${nonBlankLines} non-blank line(s) yielded ${items.length} items`;
    }
    if (ONE_PER_LINE.has(job.reader) && !csv && (layout === "document" || layout === "text") && items.length !== 1)
      return `a ${layout === "text" ? "file with no JSON line" : "pretty-printed document"} is one item, but the reader yielded ${items.length}`;
    // A file with content holds at least one record, unless it is an empty list of them (`[]`) or a CSV header alone.
    const headerOnly = csv !== undefined && nonBlankLines <= (csv.sepLine ? 2 : 1);
    if (items.length === 0 && !headerOnly && !/^[\s\uFEFF]*(\[\s*\])?\s*$/.test(plainText ?? ""))
      return "a non-blank file yielded nothing: neither records nor a quarantine entry";
  }
  if (error !== undefined && ONE_PER_FILE.has(job.reader) && items.length > 1)
    return `a one-record file yielded ${items.length} items before failing`;

  // The planner cuts only files of lines by byte range (never an array or a pretty-printed document).
  const cuttable = layoutOfHead(plainText?.slice(0, LAYOUT_HEAD_BYTES) ?? "").kind === "lines";
  if (error === undefined && job.cuts.length > 0 && cuttable) {
    const problem = await checkRanges(job, items);
    if (problem) return problem;
  }

  if (job.normalize) {
    for (const item of items) {
      if (item.kind !== "trajectory" || readFilterOf(item)) continue;
      const problem = await checkNormalize(item.trajectory, job.settings, { repeat: false, idempotent: false });
      if (problem) return `normalizing ${JSON.stringify(item.trajectory.id)}: ${problem}`;
    }
  }
  return undefined;
}

function checkItem(item: ReadItem, job: ReadJob, lineSourced: boolean, lines: number[] | undefined): string | undefined {
  if (item.kind === "trajectory") {
    const t = item.trajectory;
    // A record its reader filtered (docs/curation.md "`filtered/task-TTTTT.jsonl`") may have no turns: it is never trained on.
    const filtered = readFilterOf(item) !== undefined;
    const parsed = (filtered ? trajectoryInputSchema.extend({ turns: z.array(turnSchema) }) : trajectoryInputSchema).safeParse(t);
    if (!parsed.success) return `trajectory ${JSON.stringify(t.id)} fails the canonical schema: ${describeZodError(parsed.error).reason}`;
    // A blank id passes the schema; the validate stage quarantines it.
    if (typeof t.id !== "string") return `trajectory id ${String(t.id)} is not a string`;
    return checkSource(t.source, job, lineSourced, lines);
  }
  if (item.kind === "document") {
    const d = item.document;
    if (typeof d.id !== "string" || d.id.trim() === "") return `document id ${JSON.stringify(d.id)} is not a non-blank string`;
    if (typeof d.text !== "string") return `document ${JSON.stringify(d.id)} has no string text`;
    if (job.reader === "text-parquet" && !(Number.isSafeInteger(d.source.row) && (d.source.row as number) >= 0))
      return `a Parquet document without its row: ${JSON.stringify(d.source)}`;
    return checkSource(d.source, job, lineSourced, lines);
  }
  if (item.kind === "quarantine") {
    const e = item.entry;
    if (e.stage !== "read") return `quarantine entry at stage ${JSON.stringify(e.stage)}, not "read"`;
    if (typeof e.reason !== "string" || e.reason.trim() === "") return "quarantine entry without a reason";
    if (e.field !== undefined && (typeof e.field !== "string" || e.field === "")) return `quarantine field ${JSON.stringify(e.field)}`;
    if (e.id !== undefined && typeof e.id !== "string") return `quarantine id ${JSON.stringify(e.id)} is not a string`;
    if (e.excerpt !== undefined && typeof e.excerpt !== "string") return "quarantine excerpt is not a string";
    return checkSource(e.source, job, lineSourced, lines);
  }
  return `unknown item kind ${JSON.stringify((item as { kind: unknown }).kind)}`;
}

/** The source names the file and the reader; a line-oriented one also where the record starts, consistently. */
function checkSource(source: Trajectory["source"], job: ReadJob, lineSourced: boolean, lines: number[] | undefined): string | undefined {
  if (source?.uri !== job.path) return `source.uri ${JSON.stringify(source?.uri)} is not the file read`;
  if (source.format !== job.reader) return `source.format ${JSON.stringify(source.format)} is not ${job.reader}`;
  const { line, offset } = source;
  // A JSON array's element is located by its index (`row`), as a line is by its number.
  const located = line !== undefined || source.row !== undefined || (job.options.range !== undefined && job.options.range.start > 0);
  if (lineSourced && (offset === undefined || !located))
    return `no line/offset in the source of a line-oriented record: ${JSON.stringify(source)}`;
  if (offset !== undefined && (!Number.isSafeInteger(offset) || offset < 0)) return `source.offset ${offset}`;
  if (line !== undefined && (!Number.isSafeInteger(line) || line < 1)) return `source.line ${line}`;
  // A Parquet row is named by its row; its offset is its row group's, not a line's.
  if (offset === undefined || !job.plain || !lines || source.row !== undefined) return undefined;
  if (offset > job.plain.length || (offset > 0 && job.plain[offset - 1] !== 0x0a))
    return `source.offset ${offset} is not the start of a line`;
  if (line !== undefined && line !== 1 + countBelow(lines, offset))
    return `source.line ${line} does not match offset ${offset} (line ${1 + countBelow(lines, offset)})`;
  return undefined;
}

function newlinePositions(bytes: Uint8Array): number[] {
  const positions: number[] = [];
  for (let i = bytes.indexOf(0x0a); i !== -1; i = bytes.indexOf(0x0a, i + 1)) positions.push(i);
  return positions;
}

/** How many of the sorted positions are below `n`. */
function countBelow(sorted: number[], n: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((sorted[mid] as number) < n) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Lines that are records: over the size limit, or not blank once decoded (as src/io/read-lines.ts does). */
function recordLineCount(plain: Uint8Array, maxLineBytes: number, from = 0, to = Number.POSITIVE_INFINITY): number {
  let n = 0;
  let start = 0;
  const decoder = new TextDecoder("utf-8", { fatal: false });
  while (start < plain.length) {
    const nl = plain.indexOf(0x0a, start);
    const end = nl === -1 ? plain.length : nl;
    if (start >= from && start < to) {
      const bytes = plain.subarray(start, end);
      const text = decoder.decode(bytes[bytes.length - 1] === 0x0d ? bytes.subarray(0, -1) : bytes);
      if (bytes.length > maxLineBytes || text.trim() !== "") n += 1;
    }
    if (nl === -1) break;
    start = nl + 1;
  }
  return n;
}

/** Reading a file as byte-range tasks gives the same items as reading it whole (line numbers aside). */
async function checkRanges(job: ReadJob, whole: ReadItem[]): Promise<string | undefined> {
  const size = (job.plain as Uint8Array).length;
  const cuts = [...new Set(job.cuts.map((c) => c % (size + 1)).filter((c) => c > 0 && c < size))].sort((a, b) => a - b);
  const bounds = [0, ...cuts, size];
  const pieces: ReadItem[] = [];
  for (let i = 0; i + 1 < bounds.length; i++) {
    const range = { start: bounds[i] as number, end: bounds[i + 1] as number };
    const { items, error } = await readSafely(job.reader, job.path, { ...job.options, range });
    if (error !== undefined) return `read of bytes [${range.start}, ${range.end}) threw ${describeError(error)}`;
    for (const item of items) {
      const { offset, line, row } = itemSource(item);
      // An entry about the whole file (a Parquet file that does not open) comes from the first range only.
      if (offset === undefined && line === undefined && row === undefined && range.start === 0) continue;
      if (offset === undefined || offset < range.start || offset >= range.end)
        return `read of bytes [${range.start}, ${range.end}) yielded a record at offset ${offset}`;
    }
    pieces.push(...items);
  }
  const withoutLine = (items: ReadItem[]) =>
    items.map((item) => {
      const strip = <T extends { source: { line?: number } }>(x: T) => ({ ...x, source: { ...x.source, line: undefined } });
      if (item.kind === "trajectory") return { ...item, trajectory: strip(item.trajectory) };
      return item.kind === "document" ? { ...item, document: strip(item.document) } : { ...item, entry: strip(item.entry) };
    });
  if (sameValue(withoutLine(pieces), withoutLine(whole)) === false)
    return `reading the file as ranges ${JSON.stringify(bounds)} gives ${pieces.length} items, not the ${whole.length} of reading it whole`;
  return undefined;
}

// Meta may nest deeper than structuredClone / isDeepStrictEqual can recurse (legal: nothing
// downstream copies meta); such inputs skip the checks that need a copy.
function tryClone<T>(value: T): T | undefined {
  try {
    return structuredClone(value);
  } catch {
    return undefined;
  }
}

function sameValue(a: unknown, b: unknown): boolean | undefined {
  try {
    return isDeepStrictEqual(a, b);
  } catch {
    return undefined;
  }
}

type Attempt = ({ ok: true; output: Trajectory; counters: Map<string, number> } | { ok: false; error: unknown }) & { ms: number };

async function attempt(trajectory: Trajectory, settings: NormalizeSettings): Promise<Attempt> {
  const counters = new Map<string, number>();
  const start = performance.now();
  try {
    const output = await normalizeTrajectory(trajectory, settings, counters);
    return { ok: true, output, counters, ms: performance.now() - start };
  } catch (error) {
    return { ok: false, error, ms: performance.now() - start };
  }
}

const TEXT_FIELDS = ["system", "task", "initialObservation"] as const;
const TURN_TEXT_FIELDS = ["action", "observation", "thinking"] as const;
// The elision marker needs ~40 characters; below this a cap cannot hold (src/normalize/truncate.ts).
const SMALLEST_HONOURED_CAP = 64;

/**
 * normalize either returns a valid trajectory or throws RecordError (the record's quarantine path);
 * it leaves its input alone, gives the same result twice, and where asked, is idempotent.
 */
export async function checkNormalize(
  trajectory: Trajectory,
  settings: NormalizeSettings,
  check: { repeat: boolean; idempotent: boolean },
): Promise<string | undefined> {
  const input = tryClone(trajectory);
  const first = await attempt(trajectory, settings);
  if (!first.ok) {
    if (!(first.error instanceof RecordError)) return `normalize threw ${describeError(first.error)}`;
    if (first.error.message.trim() === "") return "RecordError without a reason";
  }
  if (first.ms > recordLimitMs) return slow("normalize", first.ms);
  if (input && sameValue(trajectory, input) === false) return "normalize changed its input";
  if (first.ok) {
    const problem = checkOutput(input ?? trajectory, first.output, settings);
    if (problem) return problem;
  }
  const again = input && check.repeat ? tryClone(input) : undefined;
  if (again) {
    const second = await attempt(again, settings);
    const same = first.ok
      ? second.ok && sameValue(first.output, second.output) !== false && sameValue(first.counters, second.counters) !== false
      : !second.ok && (second.error as Error).message === (first.error as Error).message;
    if (!same) return "not deterministic: normalizing the same input twice gave different results";
  }
  if (check.idempotent && input) {
    const problem = await checkIdempotent(input, settings);
    if (problem) return problem;
  }
  if (settings.redact_secrets && input) {
    // secrets.ts: "Redaction is idempotent: a placeholder is never matched again."
    for (const [field, text] of textFields(input)) {
      const once = redactSecrets(text.toWellFormed(), new Map());
      if (redactSecrets(once, new Map()) !== once) return `redaction is not idempotent on ${field}`;
    }
  }
  return undefined;
}

/** The domain normalizer alone (canonical JSON and the like), applied to its own output, changes nothing. */
async function checkIdempotent(input: Trajectory, settings: NormalizeSettings): Promise<string | undefined> {
  const normalizer = DOMAIN_NORMALIZERS[input.domain];
  const copy = tryClone(input);
  if (!normalizer || !copy) return undefined;
  let once: Trajectory;
  try {
    once = await normalizer.normalize(copy, settings, new Map());
  } catch {
    return undefined; // a RecordError, already judged above
  }
  const again = tryClone(once);
  if (!again) return undefined;
  try {
    const twice = await normalizer.normalize(again, settings, new Map());
    return sameValue(twice, once) === false ? `${input.domain} normalizer is not idempotent: ${firstDifference(once, twice)}` : undefined;
  } catch (err) {
    return `${input.domain} normalizer is not idempotent: on its own output it threw ${describeError(err)}`;
  }
}

function textFields(t: Trajectory): [string, string][] {
  const fields: [string, string | undefined][] = [
    ...TEXT_FIELDS.map((f): [string, string | undefined] => [f, t[f]]),
    ...t.turns.flatMap((turn, i) => TURN_TEXT_FIELDS.map((f): [string, string | undefined] => [`turns.${i}.${f}`, turn[f]])),
  ];
  return fields.filter((entry): entry is [string, string] => typeof entry[1] === "string");
}

function checkOutput(input: Trajectory, output: Trajectory, settings: NormalizeSettings): string | undefined {
  const parsed = trajectoryInputSchema.safeParse(output);
  if (!parsed.success) return `output fails the canonical schema: ${describeZodError(parsed.error).reason}`;
  if (output.id !== input.id || output.domain !== input.domain || !isDeepStrictEqual(output.source, input.source))
    return "output changed id, domain or source";
  if (output.turns.length !== input.turns.length) return `output has ${output.turns.length} turns, input ${input.turns.length}`;
  for (const [field, text] of textFields(output)) {
    if (!text.isWellFormed()) return `${field} holds a lone surrogate after normalization`;
    if (settings.invalid_utf8 === "quarantine" && text.includes("\uFFFD")) return `${field} holds U+FFFD, kept in quarantine mode`;
  }
  const cap = settings.max_observation_chars[output.domain];
  if (Number.isFinite(cap) && cap >= SMALLEST_HONOURED_CAP) {
    const over = [output.initialObservation, ...output.turns.map((turn) => turn.observation)].find(
      (o) => o !== undefined && o.length > cap,
    );
    if (over !== undefined) return `an observation of ${over.length} characters is over the ${cap}-character cap`;
  }
  return undefined;
}

function firstDifference(a: Trajectory, b: Trajectory): string {
  for (const field of TEXT_FIELDS) if (a[field] !== b[field]) return `${field} changed on the second pass`;
  for (const [i, turn] of a.turns.entries()) {
    for (const field of TURN_TEXT_FIELDS) {
      const before = turn[field];
      const after = b.turns[i]?.[field];
      if (before !== after)
        return `turns.${i}.${field} changed on the second pass: ${JSON.stringify(before)?.slice(0, 120)} → ${JSON.stringify(after)?.slice(0, 120)}`;
    }
  }
  return "meta changed on the second pass";
}
