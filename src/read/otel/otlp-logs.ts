import { createHash } from "node:crypto";
import { describeType } from "../record-helpers.ts";
import {
  anyValue,
  field,
  keyValues,
  list,
  nanos,
  type OtelEvent,
  type OtelSpan,
  OtlpFieldError,
  otlpId,
  type RecordWhere,
  record,
  resourceAttributes,
} from "./otlp.ts";

/*
 * OTLP/JSON log exports (opentelemetry-proto `ExportLogsServiceRequest` in the protobuf JSON
 * mapping, one per line as the OpenTelemetry Collector's file exporter writes them): `{resourceLogs:
 * [{resource: {attributes}, scopeLogs: [{scope, logRecords: [LogRecord]}]}]}`. A LogRecord has
 * `timeUnixNano` / `observedTimeUnixNano`, `traceId` / `spanId` (hex, empty when unset), `eventName`
 * (proto 1.5+; before it the `event.name` attribute), `body` (an AnyValue) and `attributes`.
 * Pre-1.0 exports (`instrumentationLibraryLogs`, `logs`) and snake_case names are read too.
 *
 * The records read are GenAI events (open-telemetry/semantic-conventions docs/gen-ai/gen-ai-events.md):
 *
 * - v1.36 and before: `gen_ai.system.message`, `gen_ai.user.message`, `gen_ai.assistant.message`
 *   (body `{content, tool_calls: [{id, type, function: {name, arguments}}]}`), `gen_ai.tool.message`
 *   (body `{content, id}`), `gen_ai.choice` (body `{index, finish_reason, message: {content, tool_calls}}`):
 *   one model call's input history and reply, each a record, all carrying the call span's ids.
 * - later: one `gen_ai.client.inference.operation.details` record per call, the call's
 *   `gen_ai.input.messages`, `gen_ai.output.messages`, `gen_ai.system_instructions` as attributes.
 *
 * A model call's records become that call's span events (src/read/otel/messages.ts reads a span's
 * message events as its input and reply): attached to the span with their `spanId` when the file
 * holds it, else gathered into a model-call span of their own (`logRecords` set), by `spanId`, or
 * for records without one, in time order, a call ending at its `gen_ai.choice` records.
 */

/** The event the later GenAI conventions record one model call's messages in, as attributes. */
export const DETAILS_EVENT = "gen_ai.client.inference.operation.details";

/** Events that are a model call's messages (its input or its reply). */
const CALL_EVENTS = new Set([
  "gen_ai.system.message",
  "gen_ai.user.message",
  "gen_ai.assistant.message",
  "gen_ai.tool.message",
  "gen_ai.choice",
  DETAILS_EVENT,
]);

/** One log record of an export, its attributes and body as plain values. */
export interface OtelLogRecord {
  traceId?: string;
  spanId?: string;
  time: bigint;
  /** The event name (`eventName`, else the `event.name` attribute); "" for a plain log line. */
  name: string;
  attrs: Record<string, unknown>;
  body?: unknown;
  resource: Record<string, unknown>;
  where: RecordWhere;
  /** A digest of the record as exported, to read a record exported twice once. */
  digest: string;
}

/** The log records of one export line; a wrong-typed field throws OtlpFieldError naming it. */
export function exportLogRecords(line: Record<string, unknown>, where: RecordWhere): OtelLogRecord[] {
  const records: OtelLogRecord[] = [];
  for (const [r, rawResource] of list(field(line, "resourceLogs"), "resourceLogs", "resource logs").entries()) {
    const rAt = `resourceLogs.${r}`;
    const rl = record(rawResource, rAt, "a ResourceLogs object");
    const resource = resourceAttributes(rl, rAt);
    const scopesKey = field(rl, "scopeLogs") !== undefined ? "scopeLogs" : "instrumentationLibraryLogs";
    for (const [s, rawScope] of list(field(rl, scopesKey), `${rAt}.${scopesKey}`, "scope logs").entries()) {
      const sAt = `${rAt}.${scopesKey}.${s}`;
      const sl = record(rawScope, sAt, "a ScopeLogs object");
      const recordsKey = field(sl, "logRecords") !== undefined ? "logRecords" : "logs";
      for (const [i, raw] of list(field(sl, recordsKey), `${sAt}.${recordsKey}`, "log records").entries()) {
        const at = `${sAt}.${recordsKey}.${i}`;
        records.push(logRecord(record(raw, at, "a LogRecord object"), at, resource, { ...where, order: where.order + records.length }));
      }
    }
  }
  return records;
}

function logRecord(raw: Record<string, unknown>, at: string, resource: Record<string, unknown>, where: RecordWhere): OtelLogRecord {
  const traceId = otlpId(field(raw, "traceId"), `${at}.traceId`, false);
  const spanId = otlpId(field(raw, "spanId"), `${at}.spanId`, false);
  const attrs = keyValues(list(raw.attributes, `${at}.attributes`, "attributes"), `${at}.attributes`);
  const body = anyValue(raw.body, `${at}.body`);
  const eventName = field(raw, "eventName");
  if (eventName !== undefined && eventName !== null && typeof eventName !== "string")
    throw new OtlpFieldError(`${at}.eventName`, `expected a string, got ${describeType(eventName)}`);
  const named = typeof eventName === "string" && eventName !== "" ? eventName : attrs["event.name"];
  const time = nanos(field(raw, "timeUnixNano"), `${at}.timeUnixNano`);
  const observed = nanos(field(raw, "observedTimeUnixNano"), `${at}.observedTimeUnixNano`);
  return {
    ...(traceId !== undefined ? { traceId } : {}),
    ...(spanId !== undefined ? { spanId } : {}),
    time: time > 0n ? time : observed,
    name: typeof named === "string" ? named : "",
    attrs,
    ...(body !== undefined ? { body } : {}),
    resource,
    where,
    digest: createHash("sha1").update(JSON.stringify(raw)).digest("base64"),
  };
}

/** A GenAI event: a `gen_ai.*` event name, or `gen_ai.*` attributes. */
export function isGenAiRecord(record: OtelLogRecord): boolean {
  return record.name.startsWith("gen_ai.") || Object.keys(record.attrs).some((key) => key.startsWith("gen_ai."));
}

/** What a record is, for a refusal: its event name, else the start of its text body. */
function recordLabel(rec: OtelLogRecord): string {
  if (rec.name !== "") return rec.name;
  return typeof rec.body === "string" && rec.body.trim() !== "" ? rec.body.trim().slice(0, 60) : "(no event name)";
}

/** A record as a span event: its attributes and its body (`body`, read as the event's content). */
function asEvent(record: OtelLogRecord): OtelEvent {
  return { name: record.name, attrs: { ...record.attrs, ...(record.body !== undefined ? { body: record.body } : {}) } };
}

/** A span with a details event's attributes (its own attributes first): the messages the later conventions record there. */
export function withDetails(span: OtelSpan): OtelSpan {
  const details = span.events.filter((event) => event.name === DETAILS_EVENT);
  if (details.length === 0) return span;
  return { ...span, attrs: Object.assign({}, ...details.map((event) => event.attrs), span.attrs) };
}

export interface MergedTrace {
  /** The trace's spans, with their log records as events, and the model calls made of the others. */
  spans: OtelSpan[];
  /** Log records read into it, and counts of those left out (`duplicate_log_record`, `non_genai_log_record`). */
  used: number;
  skipped: Record<string, number>;
  /** The event names (else text bodies) of the records that are no GenAI events, for a refusal: at most 5. */
  otherNames: string[];
}

/**
 * A trace's spans and log records as one span list: each GenAI record an event of the span it names
 * when the trace has it, the others gathered into model-call spans (see the header). Records that are
 * no GenAI events are left out, and counted.
 */
export function mergeLogRecords(traceId: string, spans: OtelSpan[], records: OtelLogRecord[]): MergedTrace {
  const skipped: Record<string, number> = {};
  const count = (what: string) => {
    skipped[what] = (skipped[what] ?? 0) + 1;
  };
  const seen = new Set<string>();
  const unique: OtelLogRecord[] = [];
  for (const rec of records) {
    if (seen.has(rec.digest)) count("duplicate_log_record");
    else {
      seen.add(rec.digest);
      unique.push(rec);
    }
  }
  unique.sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : a.where.order - b.where.order));
  const otherNames = new Set<string>();
  const genAi = unique.filter((rec) => {
    if (isGenAiRecord(rec)) return true;
    count("non_genai_log_record");
    if (otherNames.size < 5) otherNames.add(recordLabel(rec));
    return false;
  });
  // The first span of each id (a span exported twice is read once, later).
  const byId = new Map<string, { index: number; events: OtelEvent[] }>();
  for (const [index, span] of spans.entries()) if (!byId.has(span.spanId)) byId.set(span.spanId, { index, events: [] });
  const bySpan = new Map<string, OtelLogRecord[]>();
  const calls: OtelLogRecord[][] = [];
  let current: OtelLogRecord[] | undefined;
  for (const rec of genAi) {
    const own = rec.spanId !== undefined ? byId.get(rec.spanId) : undefined;
    if (own) own.events.push(asEvent(rec));
    else if (rec.spanId !== undefined) {
      const group = bySpan.get(rec.spanId);
      if (group) group.push(rec);
      else bySpan.set(rec.spanId, [rec]);
    } else {
      // Without a span id: a call's history, then its reply; a details record is a call of its own.
      const replied = current?.some((r) => r.name === "gen_ai.choice" || r.name === DETAILS_EVENT) ?? false;
      if (!current || rec.name === DETAILS_EVENT || (replied && rec.name !== "gen_ai.choice")) {
        current = [];
        calls.push(current);
      }
      current.push(rec);
    }
  }
  const merged = spans.map((span, index) => {
    const own = byId.get(span.spanId);
    return own && own.index === index && own.events.length > 0 ? { ...span, events: [...span.events, ...own.events] } : span;
  });
  const made = [
    ...[...bySpan].map(([spanId, group]) => callSpan(traceId, spanId, group)),
    ...calls.map((group, n) => callSpan(traceId, `log-call-${n + 1}`, group)),
  ];
  return { spans: [...merged, ...made].map(withDetails), used: genAi.length, skipped, otherNames: [...otherNames] };
}

/** A model call made of its log records (in time order): their attributes, the records as its events, their time span. */
function callSpan(traceId: string, spanId: string, records: OtelLogRecord[]): OtelSpan {
  const first = records[0] as OtelLogRecord;
  const last = records[records.length - 1] as OtelLogRecord;
  const attrs: Record<string, unknown> = Object.assign({}, ...records.map((rec) => rec.attrs).reverse());
  if (records.some((rec) => CALL_EVENTS.has(rec.name)) && attrs["gen_ai.operation.name"] === undefined)
    attrs["gen_ai.operation.name"] = "chat";
  return {
    traceId,
    spanId,
    name: first.name,
    start: first.time,
    end: last.time,
    attrs,
    events: records.map(asEvent),
    error: false,
    resource: first.resource,
    ...first.where,
    logRecords: records.length,
  };
}
