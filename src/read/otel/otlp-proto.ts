import { createRequire } from "node:module";
import { zstdDecompressSync } from "node:zlib";
import type protobuf from "protobufjs";
import { openDecompressed } from "../../io/open-input.ts";
import { readHeadBytes } from "../head-bytes.ts";
import type { ReaderOptions } from "../reader.ts";
import { type RecordLine, valueLine } from "../record-line.ts";

/*
 * OTLP in protobuf: trace and log data as the OpenTelemetry Collector's file exporter writes them
 * with `format: proto` (each message a `TracesData` / `LogsData` — wire-identical to the
 * `ExportTraceServiceRequest` / `ExportLogsServiceRequest` an OTLP/HTTP client posts — preceded by
 * its length, a 4-byte big-endian unsigned integer), the same framing with `compression: zstd`
 * (each message zstd-compressed; with `format: json`, each a compressed OTLP/JSON document), or one
 * message alone (a saved OTLP/HTTP request body). Each message is decoded into the OTLP/JSON
 * mapping the JSON exports use (camelCase fields, trace and span ids in hex, 64-bit integers as
 * decimal strings, enums as numbers, bytes values in base64), so ../otel-traces.ts reads it as it
 * reads a JSON export.
 *
 * The message types below are the opentelemetry-proto ones the reader needs (common/v1,
 * resource/v1, trace/v1, logs/v1 of opentelemetry-proto 1.x), written out with their field numbers
 * and types: `instrumentationLibrarySpans`/`Logs` (field 1000) is where exporters of the 0.15–0.19
 * protos put the scope lists. Unknown fields are skipped, as protobuf requires; a known field sent
 * with another wire type makes the message not that type (that is how trace data, log data and
 * anything else — a metrics export — are told apart).
 */

/** A message that is not OTLP trace or log data, or a framing that does not hold (the reason, in words). */
export class OtlpProtoError extends Error {}

const repeated = (type: string, id: number) => ({ rule: "repeated", type, id });
const field = (type: string, id: number) => ({ type, id });

const SCHEMA = {
  nested: {
    otlp: {
      nested: {
        AnyValue: {
          oneofs: { value: { oneof: ["stringValue", "boolValue", "intValue", "doubleValue", "arrayValue", "kvlistValue", "bytesValue"] } },
          fields: {
            stringValue: field("string", 1),
            boolValue: field("bool", 2),
            intValue: field("int64", 3),
            doubleValue: field("double", 4),
            arrayValue: field("ArrayValue", 5),
            kvlistValue: field("KeyValueList", 6),
            bytesValue: field("bytes", 7),
          },
        },
        ArrayValue: { fields: { values: repeated("AnyValue", 1) } },
        KeyValueList: { fields: { values: repeated("KeyValue", 1) } },
        KeyValue: { fields: { key: field("string", 1), value: field("AnyValue", 2) } },
        InstrumentationScope: {
          fields: {
            name: field("string", 1),
            version: field("string", 2),
            attributes: repeated("KeyValue", 3),
            droppedAttributesCount: field("uint32", 4),
          },
        },
        Resource: { fields: { attributes: repeated("KeyValue", 1), droppedAttributesCount: field("uint32", 2) } },
        TracesData: { fields: { resourceSpans: repeated("ResourceSpans", 1) } },
        ResourceSpans: {
          fields: {
            resource: field("Resource", 1),
            scopeSpans: repeated("ScopeSpans", 2),
            schemaUrl: field("string", 3),
            instrumentationLibrarySpans: repeated("ScopeSpans", 1000),
          },
        },
        ScopeSpans: { fields: { scope: field("InstrumentationScope", 1), spans: repeated("Span", 2), schemaUrl: field("string", 3) } },
        Span: {
          fields: {
            traceId: field("bytes", 1),
            spanId: field("bytes", 2),
            traceState: field("string", 3),
            parentSpanId: field("bytes", 4),
            name: field("string", 5),
            kind: field("int32", 6),
            startTimeUnixNano: field("fixed64", 7),
            endTimeUnixNano: field("fixed64", 8),
            attributes: repeated("KeyValue", 9),
            droppedAttributesCount: field("uint32", 10),
            events: repeated("Event", 11),
            droppedEventsCount: field("uint32", 12),
            links: repeated("Link", 13),
            droppedLinksCount: field("uint32", 14),
            status: field("Status", 15),
            flags: field("fixed32", 16),
          },
        },
        Event: {
          fields: {
            timeUnixNano: field("fixed64", 1),
            name: field("string", 2),
            attributes: repeated("KeyValue", 3),
            droppedAttributesCount: field("uint32", 4),
          },
        },
        Link: {
          fields: {
            traceId: field("bytes", 1),
            spanId: field("bytes", 2),
            traceState: field("string", 3),
            attributes: repeated("KeyValue", 4),
            droppedAttributesCount: field("uint32", 5),
            flags: field("fixed32", 6),
          },
        },
        Status: { fields: { message: field("string", 2), code: field("int32", 3) } },
        LogsData: { fields: { resourceLogs: repeated("ResourceLogs", 1) } },
        ResourceLogs: {
          fields: {
            resource: field("Resource", 1),
            scopeLogs: repeated("ScopeLogs", 2),
            schemaUrl: field("string", 3),
            instrumentationLibraryLogs: repeated("ScopeLogs", 1000),
          },
        },
        ScopeLogs: {
          fields: { scope: field("InstrumentationScope", 1), logRecords: repeated("LogRecord", 2), schemaUrl: field("string", 3) },
        },
        LogRecord: {
          fields: {
            timeUnixNano: field("fixed64", 1),
            severityNumber: field("int32", 2),
            severityText: field("string", 3),
            body: field("AnyValue", 5),
            attributes: repeated("KeyValue", 6),
            droppedAttributesCount: field("uint32", 7),
            flags: field("fixed32", 8),
            traceId: field("bytes", 9),
            spanId: field("bytes", 10),
            observedTimeUnixNano: field("fixed64", 11),
            eventName: field("string", 12),
          },
        },
      },
    },
  },
};

let lib: { pb: typeof protobuf; root: protobuf.Root } | undefined;

/** protobufjs and the message types, on first use (required then: most runs read no protobuf). */
function types(): { pb: typeof protobuf; root: protobuf.Root } {
  if (!lib) {
    const pb = createRequire(import.meta.url)("protobufjs") as typeof protobuf;
    lib = { pb, root: pb.Root.fromJSON(SCHEMA) };
  }
  return lib;
}

function otlpType(name: "TracesData" | "LogsData"): protobuf.Type {
  return types().root.lookupType(`otlp.${name}`);
}

// ---------- wire-level check ----------

const WIRE_OF: Record<string, number> = {
  int32: 0,
  int64: 0,
  uint32: 0,
  bool: 0,
  fixed64: 1,
  double: 1,
  string: 2,
  bytes: 2,
  fixed32: 5,
};

/** Running out of bytes: the end of a message, or (checking a file's start) of what was read of it. */
class PastTheEnd extends OtlpProtoError {}

/** A cursor over protobuf bytes that refuses to read past `end`. */
class Wire {
  pos: number;
  readonly bytes: Uint8Array;
  constructor(bytes: Uint8Array, pos = 0) {
    this.bytes = bytes;
    this.pos = pos;
  }
  varint(end: number): number {
    let value = 0;
    for (let shift = 0; shift < 70; shift += 7) {
      if (this.pos >= end) throw new PastTheEnd("a number runs past the end");
      const byte = this.bytes[this.pos++] as number;
      if (shift < 49) value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
    }
    throw new OtlpProtoError("a number longer than 10 bytes");
  }
  skip(n: number, end: number): void {
    if (this.pos + n > end) throw new PastTheEnd("a field runs past the end");
    this.pos += n;
  }
}

/**
 * Whether `bytes[pos, end)` is a message of `type` at the wire level: every known field with the
 * wire type its declaration gives (a message field's bytes a message of its type, recursively),
 * unknown fields skipped by their wire type, nothing cut short. Throws OtlpProtoError otherwise
 * (PastTheEnd for a field that runs past `end`). `cut`: the bytes stop at `end` inside the
 * message (a file's start): a nested message running past it is checked as far as it goes.
 */
function checkWire(type: protobuf.Type, wire: Wire, end: number, cut: boolean, depth = 0): void {
  if (depth > 64) throw new OtlpProtoError("messages nested deeper than 64 levels");
  const { pb } = types();
  while (wire.pos < end) {
    const key = wire.varint(end);
    const id = Math.floor(key / 8);
    const wireType = key % 8;
    if (id === 0) throw new OtlpProtoError("a field key with field number 0");
    const declared = type.fieldsById[id];
    if (declared) {
      declared.resolve();
      const nested = declared.resolvedType instanceof pb.Type ? declared.resolvedType : undefined;
      const expected = nested ? 2 : (WIRE_OF[declared.type] ?? -1);
      if (wireType !== expected)
        throw new OtlpProtoError(`${type.name}.${declared.name} (field ${id}) has wire type ${wireType}, not ${expected}`);
      if (nested) {
        const length = wire.varint(end);
        const inner = wire.pos + length;
        if (inner > end && !cut) throw new PastTheEnd(`${type.name}.${declared.name} runs past the end`);
        checkWire(nested, wire, Math.min(inner, end), cut, depth + 1);
        continue;
      }
    }
    if (wireType === 0) wire.varint(end);
    else if (wireType === 1) wire.skip(8, end);
    else if (wireType === 2) wire.skip(wire.varint(end), end);
    else if (wireType === 5) wire.skip(4, end);
    else throw new OtlpProtoError(`wire type ${wireType} (groups or no type) in ${type.name}`);
  }
}

// ---------- decoding ----------

type Json = Record<string, unknown>;

/** Decodes a message of `type` into OTLP/JSON's shape, or undefined when it is not one (the reason in `why`). */
function decodeAs(name: "TracesData" | "LogsData", bytes: Uint8Array, why: string[]): Json | undefined {
  const type = otlpType(name);
  let message: protobuf.Message;
  try {
    checkWire(type, new Wire(bytes), bytes.length, false);
    message = type.decode(bytes);
  } catch (err) {
    if (isNotUtf8(err)) {
      why.push(`as ${name}: a string field is not UTF-8 text`);
      return undefined;
    }
    if (!(err instanceof OtlpProtoError) && !isProtobufDecodeError(err)) throw err;
    why.push(`as ${name}: ${err.message}`);
    return undefined;
  }
  return otlpJson(type.toObject(message, { longs: String, bytes: Array, enums: Number }), "") as Json;
}

/** protobufjs reads proto3 strings strictly (a fatal TextDecoder): a string field that is not UTF-8. */
function isNotUtf8(err: unknown): boolean {
  return err instanceof TypeError && (err as NodeJS.ErrnoException).code === "ERR_ENCODING_INVALID_ENCODED_DATA";
}

/**
 * An error protobufjs's decoder throws for bytes it cannot read (its reader's and generated
 * decoder's own messages); anything else is a bug, thrown on.
 */
function isProtobufDecodeError(err: unknown): err is Error {
  if (err instanceof RangeError) return /^index out of range/.test(err.message);
  if (err instanceof types().pb.util.ProtocolError) return true;
  // protobufjs throws plain Errors: "invalid varint encoding", "invalid wire type 7 at offset 3",
  // "illegal tag: field number 0", "max depth exceeded", "missing end group", …
  return err instanceof Error && err.constructor === Error && /^(invalid |illegal |max depth exceeded|missing end group)/.test(err.message);
}

const ID_FIELDS = new Set(["traceId", "spanId", "parentSpanId"]);

/** protobufjs's object as OTLP/JSON: ids in hex, other bytes in base64 (`key` is the field holding `value`). */
function otlpJson(value: unknown, key: string): unknown {
  if (Array.isArray(value)) {
    if (ID_FIELDS.has(key)) return Buffer.from(value as number[]).toString("hex");
    if (key === "bytesValue") return Buffer.from(value as number[]).toString("base64");
    return value.map((element) => otlpJson(element, ""));
  }
  if (value !== null && typeof value === "object") {
    const out: Json = {};
    for (const [name, inner] of Object.entries(value)) out[name] = otlpJson(inner, name);
    return out;
  }
  return value;
}

/** Whether every span holds the ids OTLP requires of one (16- and 8-byte trace and span ids). */
function spansHaveIds(data: Json): boolean {
  for (const resource of (data.resourceSpans as Json[] | undefined) ?? [])
    for (const scope of [
      ...((resource.scopeSpans as Json[] | undefined) ?? []),
      ...((resource.instrumentationLibrarySpans as Json[] | undefined) ?? []),
    ])
      for (const span of (scope.spans as Json[] | undefined) ?? [])
        if (String(span.traceId ?? "").length !== 32 || String(span.spanId ?? "").length !== 16) return false;
  return true;
}

const ZSTD = [0x28, 0xb5, 0x2f, 0xfd];

/**
 * One message of an OTLP protobuf file as an OTLP/JSON export value: trace data, else log data; a
 * zstd-compressed message decompressed first (what it holds: protobuf, or an OTLP/JSON document).
 * `maxBytes` bounds a decompressed message. Throws OtlpProtoError saying what it is not.
 */
export function decodeOtlpMessage(bytes: Uint8Array, maxBytes: number): unknown {
  if (ZSTD.every((b, i) => bytes[i] === b)) {
    let inflated: Buffer;
    try {
      inflated = zstdDecompressSync(bytes, { maxOutputLength: maxBytes });
    } catch (err) {
      throw new OtlpProtoError(`a zstd-compressed message that does not decompress within ${maxBytes} bytes: ${(err as Error).message}`);
    }
    if (inflated[0] === 0x7b) {
      try {
        return JSON.parse(inflated.toString("utf8"));
      } catch (err) {
        throw new OtlpProtoError(`a zstd-compressed JSON message that does not parse: ${(err as Error).message}`);
      }
    }
    return decodeOtlpMessage(inflated, maxBytes);
  }
  const why: string[] = [];
  const traces = decodeAs("TracesData", bytes, why);
  if (traces && spansHaveIds(traces)) return traces;
  if (traces) why.push("as TracesData: a span without a 16-byte trace id and an 8-byte span id");
  const logs = decodeAs("LogsData", bytes, why);
  if (logs) return logs;
  throw new OtlpProtoError(`not OTLP trace or log data (metrics and profiles are not read): ${why.join("; ")}`);
}

// ---------- framing ----------

/** How a file holds its messages: length-prefixed (the Collector's file exporter), or one message. */
export type OtlpFraming = "length-prefixed" | "single";

/**
 * How the start of a file holds OTLP protobuf messages, or undefined when it does not look like
 * one: a binary start (OTLP ids are raw bytes) that is a whole first message, or as much of it as
 * `head` holds, that checks at the wire level as trace or log data. `whole`: `head` is the file.
 */
export function otlpFramingOf(head: Uint8Array, whole: boolean): OtlpFraming | undefined {
  if (head.length < 6) return undefined;
  // Length-prefixed: under 16 MiB (a zero first byte), then a message (field 1, a list) or a zstd frame.
  const length = ((head[0] as number) * 2 ** 24 + ((head[1] as number) << 16) + ((head[2] as number) << 8) + (head[3] as number)) >>> 0;
  if (head[0] === 0 && length > 0) {
    const first = head.subarray(4, Math.min(head.length, 4 + length));
    const complete = first.length === length;
    if (ZSTD.every((b, i) => first[i] === b)) return complete || !whole ? "length-prefixed" : undefined;
    if (first[0] === 0x0a && (complete || !whole) && startChecks(first, complete)) return "length-prefixed";
  }
  if (head[0] === 0x0a && startChecks(head, whole)) return "single";
  return undefined;
}

/** Whether `bytes` (a message, or its start when not `complete`) checks as trace or log data at the wire level. */
function startChecks(bytes: Uint8Array, complete: boolean): boolean {
  // Text is never taken for protobuf: OTLP's raw ids and fixed-width times put bytes below 0x09 in every message.
  if (!bytes.subarray(0, 4096).some((b) => b < 0x09)) return false;
  for (const name of ["TracesData", "LogsData"] as const) {
    const wire = new Wire(bytes);
    try {
      checkWire(otlpType(name), wire, bytes.length, !complete);
      return true;
    } catch (err) {
      if (!(err instanceof OtlpProtoError)) throw err;
      // A start cut inside a field checks as far as it goes: enough of it to tell.
      if (!complete && err instanceof PastTheEnd && wire.pos > 64) return true;
    }
  }
  return false;
}

// ---------- files ----------

/** How much of a file's start (decompressed) tells whether it holds OTLP protobuf. */
const SNIFF_BYTES = 64 * 1024;

/**
 * The OTLP protobuf framing of a file, by its first 64 KiB (decompressed), or undefined when it
 * holds none. `reading`: the file is read as OTLP already (told so, or detected), so a binary start
 * framed as the file exporter frames messages is taken as such even when its first message is not
 * trace or log data (a metrics export first): each message is then quarantined or read on its own.
 */
export async function otlpFramingOfFile(path: string, reading = false): Promise<OtlpFraming | undefined> {
  try {
    // One read of the head: every OTLP protobuf start is a length prefix's zero byte or a message's
    // first key (0x0a), so other files (OTLP/JSON above all) are told by that byte before any parsing.
    const { bytes, whole } = await readHeadBytes(path, SNIFF_BYTES);
    if (bytes[0] !== 0 && bytes[0] !== 0x0a) return undefined;
    const framing = otlpFramingOf(bytes, whole);
    if (framing || !reading) return framing;
    return bytes.length > 5 && bytes[0] === 0 && (bytes[4] === 0x0a || ZSTD.every((b, i) => bytes[4 + i] === b))
      ? "length-prefixed"
      : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a file's decoded text head could be OTLP protobuf: a length prefix's zero byte, or a message's first key. */
export function isOtlpProtoHead(head: string): boolean {
  return head.startsWith("\u0000") || head.startsWith("\n");
}

/** Bytes taken from a stream's chunks in exact amounts. */
class ChunkQueue {
  private chunks: Buffer[] = [];
  length = 0;
  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.length += chunk.length;
  }
  /** The next `n` bytes (n ≤ length), removed. */
  take(n: number): Buffer {
    const all = this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks);
    const rest = all.subarray(n);
    this.chunks = rest.length > 0 ? [rest] : [];
    this.length -= n;
    return all.subarray(0, n);
  }
  /** The big-endian 32-bit number the next 4 bytes make (length ≥ 4); only those bytes are joined when split. */
  peekUInt32(): number {
    while ((this.chunks[0] as Buffer).length < 4) {
      const [a, b, ...rest] = this.chunks as [Buffer, Buffer, ...Buffer[]];
      this.chunks = [Buffer.concat([a, b]), ...rest];
    }
    return (this.chunks[0] as Buffer).readUInt32BE(0);
  }
}

/**
 * Each message of an OTLP protobuf file as a record line (its OTLP/JSON, `source.row` its number
 * from 0, `offset` its frame's byte offset), or its quarantine entry: a message that is not trace
 * or log data, one announced longer than `input.max_line_bytes`, one the file ends inside.
 */
export async function* otlpProtoRecordLines(
  path: string,
  options: ReaderOptions,
  format: string,
  framing: OtlpFraming,
): AsyncGenerator<RecordLine> {
  const { maxLineBytes } = options;
  const { stream } = await openDecompressed(path);
  const queue = new ChunkQueue();
  let index = 0;
  let offset = 0;
  const message = (bytes: Uint8Array, at: number): RecordLine => {
    const source = { uri: path, row: index++, offset: at, format };
    try {
      return valueLine(source, decodeOtlpMessage(bytes, maxLineBytes), maxLineBytes, `message ${source.row}`);
    } catch (err) {
      if (!(err instanceof OtlpProtoError)) throw err;
      return { kind: "quarantine", entry: { source, stage: "read", reason: `message ${source.row} (byte ${at}): ${err.message}` } };
    }
  };
  const tooLong = (announced: number, at: number): RecordLine => ({
    kind: "quarantine",
    entry: {
      source: { uri: path, row: index++, offset: at, format },
      stage: "read",
      reason: `message ${index - 1} (byte ${at}) is ${announced} bytes, over the ${maxLineBytes}-byte limit (input.max_line_bytes)`,
    },
  });
  if (framing === "single") {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      queue.push(chunk);
      if (queue.length > maxLineBytes) {
        stream.destroy();
        yield tooLong(queue.length, 0);
        return;
      }
    }
    yield message(queue.take(queue.length), 0);
    return;
  }
  // Length-prefixed frames; `skip` counts down the bytes of a frame too long to hold.
  let skip = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    queue.push(chunk);
    for (;;) {
      if (skip > 0) {
        const n = Math.min(skip, queue.length);
        queue.take(n);
        skip -= n;
        offset += n;
        if (skip > 0) break;
      }
      if (queue.length < 4) break;
      const length = queue.peekUInt32();
      if (length > maxLineBytes) {
        yield tooLong(length, offset);
        queue.take(4);
        offset += 4;
        skip = length;
        continue;
      }
      if (queue.length < 4 + length) break;
      const frame = queue.take(4 + length);
      yield message(frame.subarray(4), offset);
      offset += 4 + length;
    }
  }
  // A message over the limit that the file ends inside was quarantined already; anything else left is cut short.
  if (skip === 0 && queue.length > 0) {
    const reason =
      queue.length < 4
        ? `the file ends inside message ${index}'s 4-byte length (byte ${offset}): ${queue.length} byte(s) of it`
        : `the file ends inside message ${index} (byte ${offset}): ${queue.length - 4} of the ${queue.peekUInt32()} bytes its length announces`;
    yield { kind: "quarantine", entry: { source: { uri: path, row: index, offset, format }, stage: "read", reason } };
  }
}
