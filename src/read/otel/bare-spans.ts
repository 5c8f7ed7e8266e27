import { isRecord } from "../record-helpers.ts";
import { field, type OtelSpan, otlpSpan, type RecordWhere } from "./otlp.ts";

/*
 * Bare OTLP/JSON spans: the opentelemetry-proto `Span` message in the protobuf JSON mapping, one per
 * line (or a JSON array of them) without the export's `resourceSpans` / `scopeSpans` envelope, as
 * tools that dump span by span write them (a span processor printing `MessageToDict(span)`, a test
 * harness's captured spans): `{traceId, spanId, parentSpanId, name, kind, startTimeUnixNano,
 * endTimeUnixNano, attributes: [{key, value: AnyValue}], events, links, status}`. Read like a span
 * of an export (src/read/otel/otlp.ts), with no resource (no `service.name`).
 */

/** The fields of the proto Span message, in its JSON names and proto names. */
const SPAN_FIELDS = new Set(
  [
    "traceId",
    "spanId",
    "traceState",
    "parentSpanId",
    "flags",
    "name",
    "kind",
    "startTimeUnixNano",
    "endTimeUnixNano",
    "attributes",
    "droppedAttributesCount",
    "events",
    "droppedEventsCount",
    "links",
    "droppedLinksCount",
    "status",
  ].flatMap((name) => [name, name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)]),
);

/**
 * A bare span, strictly, for detection: nothing but the Span message's fields, a 32-hex trace id,
 * a 16-hex span id (and parent span id, when set), a start time in nanoseconds (a decimal string or
 * a number) and its attributes an OTLP KeyValue list — what no other format's record is (Zipkin's
 * span has an `id`, Langfuse's observation and LangSmith's run their own fields).
 */
export function isBareOtlpSpan(value: unknown): value is Record<string, unknown> {
  if (!isRecord(value) || !Object.keys(value).every((key) => SPAN_FIELDS.has(key))) return false;
  const traceId = field(value, "traceId");
  const spanId = field(value, "spanId");
  const parent = field(value, "parentSpanId");
  const start = field(value, "startTimeUnixNano");
  const attributes = value.attributes;
  return (
    typeof traceId === "string" &&
    /^[0-9a-fA-F]{32}$/.test(traceId) &&
    typeof spanId === "string" &&
    /^[0-9a-fA-F]{16}$/.test(spanId) &&
    (parent === undefined || parent === "" || (typeof parent === "string" && /^[0-9a-fA-F]{16}$/.test(parent))) &&
    ((typeof start === "string" && /^\d+$/.test(start)) || (typeof start === "number" && Number.isInteger(start) && start >= 0)) &&
    (value.name === undefined || typeof value.name === "string") &&
    (attributes === undefined ||
      (Array.isArray(attributes) &&
        attributes
          .slice(0, 8)
          .every(
            (kv) =>
              isRecord(kv) &&
              typeof kv.key === "string" &&
              isRecord(kv.value) &&
              Object.keys(kv).every((k) => k === "key" || k === "value"),
          )))
  );
}

/** A list of bare spans, for detection: its first elements are spans. */
export function isBareOtlpSpanList(value: unknown): boolean {
  return Array.isArray(value) && value.length > 0 && value.slice(0, 8).every(isBareOtlpSpan);
}

/** The shape the reader reads a record as a bare span by (detection is stricter: isBareOtlpSpan). */
export function looksLikeBareOtlpSpan(value: unknown): value is Record<string, unknown> {
  return (
    isRecord(value) &&
    field(value, "traceId") !== undefined &&
    field(value, "spanId") !== undefined &&
    !("resourceSpans" in value) &&
    !("id" in value) &&
    !("context" in value)
  );
}

/** One bare span as an OtelSpan; `at` its place in field names ("" for a span read as its own record). */
export function bareOtlpSpan(raw: Record<string, unknown>, at: string, where: RecordWhere): OtelSpan {
  return otlpSpan(raw, at, {}, where);
}
