import { openDecompressed } from "../../io/open-input.ts";
import type { LineSource, ReaderOptions } from "../reader.ts";
import { compact, lineWithinLimit, type RecordLine } from "../record-line.ts";

/*
 * JSON values written one after another, pretty-printed or not, newline between them or not: the
 * OpenTelemetry Python SDK's ConsoleSpanExporter (`span.to_json()` with 4-space indent, then a line
 * end: src/read/otel/python-console.ts), Jaeger api_v3's chunked stream of `{"result": …}` messages
 * (src/read/otel/envelopes.ts), `jq .` over a JSONL file. The file is scanned byte by byte (strings
 * and nesting tracked) and each top-level value becomes a record line: its source the line it starts
 * on (and that line's byte offset), its text compact JSON bounded by `input.max_line_bytes` like a line's.
 */

/**
 * One top-level value of a scan: the line it starts on (its number, the byte offset of the line's
 * start), its text (undefined past the scan's limit), whether it closed.
 */
export interface ScannedValue {
  line: number;
  offset: number;
  text?: string;
  bytes: number;
  /** The value's first byte: `{`, `[`, or another (stray text, which runs to its line's end). */
  opener: number;
  closed: boolean;
}

const WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);

/** Splits bytes into top-level JSON values, chunk by chunk; holds at most `limit` bytes of one value. */
export class JsonValueScanner {
  private line = 1;
  private offset = 0;
  /** The byte offset the current line starts at. */
  private lineStart = 0;
  private depth = 0;
  private inString = false;
  private escaped = false;
  private current: { line: number; offset: number; opener: number; parts: Buffer[]; bytes: number; over: boolean } | undefined;
  private started = false;

  private readonly limit: number;

  constructor(limit: number) {
    this.limit = limit;
  }

  feed(chunk: Buffer): ScannedValue[] {
    const out: ScannedValue[] = [];
    let i = 0;
    // A UTF-8 byte order mark before the first value.
    if (!this.started && chunk.length >= 3 && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) i = 3;
    this.started = true;
    let segment = this.current ? 0 : -1;
    for (; i < chunk.length; i++) {
      const c = chunk[i] as number;
      const cur = this.current;
      if (c === 0x0a) this.lineStart = this.offset + i + 1;
      if (!cur) {
        if (c === 0x0a) this.line += 1;
        if (WHITESPACE.has(c)) continue;
        // Located by its line, as a JSONL record is (two values on one line share it).
        this.current = { line: this.line, offset: this.lineStart, opener: c, parts: [], bytes: 0, over: false };
        segment = i;
        if (c === 0x7b || c === 0x5b) this.depth = 1;
        continue;
      }
      if (cur.opener !== 0x7b && cur.opener !== 0x5b) {
        // Stray text: to its line's end.
        if (c === 0x0a) {
          this.keep(chunk.subarray(segment, i));
          out.push(this.close(true));
          this.line += 1;
          segment = -1;
        }
        continue;
      }
      if (c === 0x0a) this.line += 1;
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === 0x5c) this.escaped = true;
        else if (c === 0x22) this.inString = false;
        continue;
      }
      if (c === 0x22) this.inString = true;
      else if (c === 0x7b || c === 0x5b) this.depth += 1;
      else if (c === 0x7d || c === 0x5d) {
        this.depth -= 1;
        if (this.depth === 0) {
          this.keep(chunk.subarray(segment, i + 1));
          out.push(this.close(true));
          segment = -1;
        }
      }
    }
    if (this.current && segment >= 0) this.keep(chunk.subarray(segment));
    this.offset += chunk.length;
    return out;
  }

  /** The value the input ended inside, if any (cut off: `closed` false). */
  end(): ScannedValue[] {
    return this.current ? [this.close(false)] : [];
  }

  private keep(part: Buffer): void {
    const cur = this.current;
    if (!cur) return;
    cur.bytes += part.length;
    if (cur.over || cur.bytes > this.limit) {
      cur.over = true;
      cur.parts = [];
    } else cur.parts.push(Buffer.from(part));
  }

  private close(closed: boolean): ScannedValue {
    const cur = this.current as NonNullable<JsonValueScanner["current"]>;
    this.current = undefined;
    this.depth = 0;
    this.inString = false;
    this.escaped = false;
    return {
      line: cur.line,
      offset: cur.offset,
      ...(cur.over ? {} : { text: Buffer.concat(cur.parts).toString("utf8") }),
      bytes: cur.bytes,
      opener: cur.opener,
      closed,
    };
  }
}

/** The top-level values of a text (a line, a head), with their texts. */
export function jsonValuesOf(text: string): ScannedValue[] {
  const bytes = Buffer.from(text);
  const scanner = new JsonValueScanner(bytes.length);
  return [...scanner.feed(bytes), ...scanner.end()];
}

/** The text of the first value of a head when it is an object that closes inside the head. */
export function firstObjectText(head: string): string | undefined {
  const scanner = new JsonValueScanner(Number.POSITIVE_INFINITY);
  const [first] = scanner.feed(Buffer.from(head));
  return first?.closed && first.opener === 0x7b ? first.text : undefined;
}

/** Whether a file holds two or more JSON values one after another (the second an object or array, not stray text). */
export async function holdsSeveralValues(path: string): Promise<boolean> {
  const { stream } = await openDecompressed(path);
  const scanner = new JsonValueScanner(0);
  let values = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      for (const value of scanner.feed(chunk)) {
        values += 1;
        if (values >= 2) return value.opener === 0x7b || value.opener === 0x5b;
      }
    }
    const [last] = scanner.end();
    return values === 1 && last !== undefined && (last.opener === 0x7b || last.opener === 0x5b);
  } finally {
    stream.destroy();
  }
}

/**
 * The values of a file of JSON values one after another, as record lines: each written back as
 * compact JSON; one that does not parse is its text (the reader quarantines it as invalid JSON);
 * one over `input.max_line_bytes` is quarantined (its pretty-printed text is held up to 8 times that).
 */
export async function* concatenatedRecordLines(path: string, options: ReaderOptions, format: string): AsyncGenerator<RecordLine> {
  const { stream } = await openDecompressed(path);
  const scanner = new JsonValueScanner(options.maxLineBytes * 8);
  const lines = (values: ScannedValue[]) =>
    values.map((value): RecordLine => {
      const source: LineSource = { uri: path, line: value.line, offset: value.offset, format };
      const what = `the JSON value at line ${value.line}`;
      if (value.text === undefined) {
        const reason = `${what} is over ${options.maxLineBytes * 8} bytes pretty-printed, over the ${options.maxLineBytes}-byte limit (input.max_line_bytes)`;
        return { kind: "quarantine", entry: { source, stage: "read", reason } };
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(value.text);
      } catch {
        return lineWithinLimit(source, value.text, options.maxLineBytes, what);
      }
      const text = compact(parsed);
      if (text === undefined)
        return { kind: "quarantine", entry: { source, stage: "read", reason: `${what} nests too deep to write back as one JSON line` } };
      return lineWithinLimit(source, text, options.maxLineBytes, what);
    });
  for await (const chunk of stream as AsyncIterable<Buffer>) yield* lines(scanner.feed(chunk));
  yield* lines(scanner.end());
}
