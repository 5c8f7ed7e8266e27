import { describeType, isRecord } from "../record-helpers.ts";
import { id, type OtelEvent, type OtelSpan, OtlpFieldError, type RecordWhere, record } from "./otlp.ts";

/*
 * The OpenTelemetry Python SDK's ConsoleSpanExporter output (opentelemetry-python
 * `opentelemetry-sdk/src/opentelemetry/sdk/trace/__init__.py` `ReadableSpan.to_json`, written by
 * `sdk/trace/export` with the default formatter `span.to_json() + os.linesep`: objects pretty-printed
 * with 4 spaces one after another; `to_json(indent=None)` gives one per line):
 *
 *   {"name", "context": {"trace_id": "0x<32 hex>", "span_id": "0x<16 hex>", "trace_state": "[]"},
 *    "kind": "SpanKind.INTERNAL", "parent_id": "0x<16 hex>" | null, "start_time", "end_time"
 *    (ISO 8601 UTC with microseconds, `util.ns_to_iso_str`: "2025-06-01T10:00:00.123456Z"),
 *    "status": {"status_code": "UNSET" | "OK" | "ERROR", "description"?},
 *    "attributes": {key: value}, "events": [{"name", "timestamp", "attributes"}],
 *    "links": [{"context", "attributes"}], "resource": {"attributes": {…}, "schema_url"}}
 *
 * As an OtelSpan: the attributes are the plain values Python held (strings, numbers, booleans, lists),
 * the resource's attributes the resource, `status_code` ERROR an error status with its description.
 */

const CONSOLE_KEYS = new Set([
  "name",
  "context",
  "kind",
  "parent_id",
  "start_time",
  "end_time",
  "status",
  "attributes",
  "events",
  "links",
  "resource",
]);

/** A span as `to_json` writes it, strictly, for detection: its keys only, `0x` hex ids, a `SpanKind.*` kind. */
export function isConsoleSpan(value: unknown): value is Record<string, unknown> {
  if (!isRecord(value) || !Object.keys(value).every((key) => CONSOLE_KEYS.has(key))) return false;
  const context = value.context;
  return (
    typeof value.name === "string" &&
    isRecord(context) &&
    typeof context.trace_id === "string" &&
    /^0x[0-9a-f]{32}$/.test(context.trace_id) &&
    typeof context.span_id === "string" &&
    /^0x[0-9a-f]{16}$/.test(context.span_id) &&
    typeof value.kind === "string" &&
    /^SpanKind\.[A-Z_]+$/.test(value.kind)
  );
}

/** A list of such spans (`[json.loads(span.to_json()) for span in spans]` dumped), for detection. */
export function isConsoleSpanList(value: unknown): boolean {
  return Array.isArray(value) && value.length > 0 && value.slice(0, 8).every(isConsoleSpan);
}

/** The shape the reader reads a record as a console span by (detection is stricter: isConsoleSpan). */
export function looksLikeConsoleSpan(value: unknown): value is Record<string, unknown> {
  return isRecord(value) && isRecord(value.context) && "span_id" in value.context && "trace_id" in value.context;
}

/** One span as `to_json` writes it, as an OtelSpan; `at` its place in field names ("" for a span read as its own record). */
export function consoleSpan(raw: Record<string, unknown>, at: string, where: RecordWhere): OtelSpan {
  const name = (path: string) => (at === "" ? path : `${at}.${path}`);
  const context = record(raw.context, name("context"), "a span context ({trace_id, span_id})");
  const traceId = hexId(context.trace_id, name("context.trace_id"), true) as string;
  const spanId = hexId(context.span_id, name("context.span_id"), true) as string;
  const parentSpanId = hexId(raw.parent_id, name("parent_id"), false);
  const spanName = raw.name ?? "";
  if (typeof spanName !== "string") throw new OtlpFieldError(name("name"), `expected a string, got ${describeType(spanName)}`);
  const attrs = attributes(raw.attributes, name("attributes"));
  const events: OtelEvent[] = list(raw.events, name("events")).map((rawEvent, e) => {
    const event = record(rawEvent, name(`events.${e}`), "an event ({name, timestamp, attributes})");
    const eventName = event.name ?? "";
    if (typeof eventName !== "string")
      throw new OtlpFieldError(name(`events.${e}.name`), `expected a string, got ${describeType(eventName)}`);
    return { name: eventName, attrs: attributes(event.attributes, name(`events.${e}.attributes`)) };
  });
  const status = raw.status === undefined || raw.status === null ? {} : record(raw.status, name("status"), "a status ({status_code})");
  const description = status.description;
  const resource =
    raw.resource === undefined || raw.resource === null
      ? {}
      : attributes(record(raw.resource, name("resource"), "a resource ({attributes})").attributes, name("resource.attributes"));
  return {
    traceId,
    spanId,
    ...(parentSpanId !== undefined && parentSpanId !== spanId ? { parentSpanId } : {}),
    name: spanName,
    start: isoNanos(raw.start_time, name("start_time")),
    end: isoNanos(raw.end_time, name("end_time")),
    attrs,
    events,
    error: status.status_code === "ERROR",
    ...(typeof description === "string" && description !== "" ? { statusMessage: description } : {}),
    resource,
    ...where,
  };
}

/** A `0x`-prefixed hex id (Python's `0x{format_trace_id(…)}`), without its prefix. */
function hexId(value: unknown, at: string, required: boolean): string | undefined {
  if (typeof value === "string" && /^0x[0-9a-fA-F]+$/.test(value)) return id(value.slice(2), at, required);
  if ((value === undefined || value === null) && !required) return undefined;
  throw new OtlpFieldError(
    at,
    `expected a 0x-prefixed hex id, got ${typeof value === "string" ? JSON.stringify(value.slice(0, 40)) : describeType(value)}`,
  );
}

function list(value: unknown, at: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new OtlpFieldError(at, `expected a list, got ${describeType(value)}`);
  return value;
}

/** Python's attributes: an object of plain values (a value that is an object is not one Python's SDK writes). */
function attributes(value: unknown, at: string): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  const attrs = record(value, at, "an object of attributes");
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(attrs)) {
    if (item === null) continue;
    if (isRecord(item)) throw new OtlpFieldError(`${at}.${key}`, `expected a string, number, boolean or list, got ${describeType(item)}`);
    out[key] = item;
  }
  return out;
}

/** `util.ns_to_iso_str`'s text ("2025-06-01T10:00:00.123456Z") as nanoseconds since the epoch; null is 0 (an unended span). */
export function isoNanos(value: unknown, at: string): bigint {
  if (value === undefined || value === null) return 0n;
  const match =
    typeof value === "string" ? /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:Z|\+00:00)$/.exec(value) : null;
  const millis = match
    ? Date.UTC(
        +(match[1] as string),
        +(match[2] as string) - 1,
        +(match[3] as string),
        +(match[4] as string),
        +(match[5] as string),
        +(match[6] as string),
      )
    : Number.NaN;
  if (!match || Number.isNaN(millis) || millis < 0)
    throw new OtlpFieldError(
      at,
      `expected an ISO 8601 UTC time ("2025-06-01T10:00:00.123456Z"), got ${typeof value === "string" ? JSON.stringify(value.slice(0, 40)) : describeType(value)}`,
    );
  return BigInt(millis) * 1_000_000n + BigInt((match[7] ?? "").padEnd(9, "0"));
}
