import { describeType, FieldError, isRecord } from "../record-helpers.ts";

/*
 * OTLP/JSON trace exports (opentelemetry-proto `ExportTraceServiceRequest` in the protobuf JSON
 * mapping, as the OpenTelemetry Collector's file exporter writes one per line): `{resourceSpans:
 * [{resource: {attributes}, scopeSpans: [{scope: {name, version}, spans: [Span]}]}]}`. A Span has
 * `traceId`, `spanId`, `parentSpanId` (hex strings; base64 too: `otlpId`), `name`, `kind`,
 * `startTimeUnixNano` / `endTimeUnixNano` (uint64 as decimal strings, or numbers), `attributes: [{key, value: AnyValue}]`,
 * `events: [{timeUnixNano, name, attributes}]`, `status: {code, message}` (code 2 or
 * `STATUS_CODE_ERROR` is an error). AnyValue is one of `stringValue`, `boolValue`, `intValue`
 * (a decimal string or a number), `doubleValue`, `arrayValue: {values}`, `kvlistValue: {values:
 * [{key, value}]}`, `bytesValue` (base64). Pre-1.0 exports (`instrumentationLibrarySpans`,
 * `instrumentationLibrary`) and snake_case field names (`resource_spans`, `trace_id`, …, as protobuf
 * printers that keep field names write them) are read too.
 */

/** One span of an export, its attributes as plain values. */
export interface OtelSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  start: bigint;
  end: bigint;
  attrs: Record<string, unknown>;
  events: OtelEvent[];
  error: boolean;
  statusMessage?: string;
  resource: Record<string, unknown>;
  /**
   * Where the record that held it is: its 1-based line (JSONL, one document) or 0-based element
   * (a JSON array, a document's `data` rows), its byte offset; `order` is its position in the file.
   */
  line?: number;
  row?: number;
  offset: number;
  order: number;
  /** Set on a model call made from OTLP log records (src/read/otel/otlp-logs.ts): how many. */
  logRecords?: number;
}

/** Where a record is in its file, and the position of its first span there. */
export interface RecordWhere {
  line?: number;
  row?: number;
  offset: number;
  order: number;
}

export interface OtelEvent {
  name: string;
  attrs: Record<string, unknown>;
}

/** A wrong-typed field of an export line (or of a Jaeger or Zipkin record: src/read/otel/jaeger.ts, zipkin.ts). */
export class OtlpFieldError extends FieldError {
  declare readonly field: string;
  /** The message without the field. */
  readonly detail: string;
  constructor(field: string, message: string) {
    super(field, `${field}: ${message}`);
    this.detail = message;
  }
}

/** A field by its protobuf JSON name (lowerCamelCase) or its proto name (snake_case). */
export function field(record: Record<string, unknown>, camel: string): unknown {
  if (camel in record) return record[camel];
  return record[camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)];
}

/** True when a parsed line is an OTLP traces export (its `resourceSpans` a list). */
export function isTracesExport(value: unknown): value is Record<string, unknown> {
  return isRecord(value) && Array.isArray(field(value, "resourceSpans"));
}

/** True when a parsed line is an OTLP logs export (its `resourceLogs` a list): src/read/otel/otlp-logs.ts reads it. */
export function isLogsExport(value: unknown): value is Record<string, unknown> {
  return isRecord(value) && Array.isArray(field(value, "resourceLogs"));
}

/** The OTLP signal the collector may write beside traces and logs (metrics, profiles) a parsed line is, if any. */
export function otherSignal(value: unknown): string | undefined {
  if (!isRecord(value)) return undefined;
  for (const key of ["resourceMetrics", "resourceProfiles"])
    if (Array.isArray(field(value, key))) return key.replace(/^resource/, "").toLowerCase();
  return undefined;
}

export function list(value: unknown, at: string, what: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new OtlpFieldError(at, `expected ${what} (a list), got ${describeType(value)}`);
  return value;
}

export function record(value: unknown, at: string, what: string): Record<string, unknown> {
  if (!isRecord(value)) throw new OtlpFieldError(at, `expected ${what}, got ${describeType(value)}`);
  return value;
}

/** An AnyValue as a plain value: strings, numbers, booleans, lists and objects; `undefined` for an empty one. */
export function anyValue(value: unknown, at: string): unknown {
  if (value === undefined || value === null) return undefined;
  const v = record(value, at, "an AnyValue object ({stringValue}, {intValue}, …)");
  const string = field(v, "stringValue");
  if (string !== undefined) {
    if (typeof string !== "string") throw new OtlpFieldError(`${at}.stringValue`, `expected a string, got ${describeType(string)}`);
    return string;
  }
  const bool = field(v, "boolValue");
  if (bool !== undefined) {
    if (typeof bool !== "boolean") throw new OtlpFieldError(`${at}.boolValue`, `expected a boolean, got ${describeType(bool)}`);
    return bool;
  }
  const int = field(v, "intValue");
  if (int !== undefined) {
    if (typeof int === "number" && Number.isInteger(int)) return int;
    if (typeof int === "string" && /^-?\d+$/.test(int)) return Number.isSafeInteger(Number(int)) ? Number(int) : int;
    throw new OtlpFieldError(`${at}.intValue`, `expected an integer (a number or a decimal string), got ${describeType(int)}`);
  }
  const double = field(v, "doubleValue");
  if (double !== undefined) {
    if (typeof double === "number") return double;
    // The protobuf JSON mapping writes NaN and the infinities as strings.
    if (typeof double === "string" && /^(-?Infinity|NaN|-?\d+(\.\d+)?([eE][-+]?\d+)?)$/.test(double)) return Number(double);
    throw new OtlpFieldError(`${at}.doubleValue`, `expected a number, got ${describeType(double)}`);
  }
  const array = field(v, "arrayValue");
  if (array !== undefined) {
    const values = list(field(record(array, `${at}.arrayValue`, "an object {values}"), "values"), `${at}.arrayValue.values`, "values");
    return values.map((item, i) => anyValue(item, `${at}.arrayValue.values.${i}`));
  }
  const kvlist = field(v, "kvlistValue");
  if (kvlist !== undefined) {
    const values = list(field(record(kvlist, `${at}.kvlistValue`, "an object {values}"), "values"), `${at}.kvlistValue.values`, "values");
    return keyValues(values, `${at}.kvlistValue.values`);
  }
  const bytes = field(v, "bytesValue");
  if (bytes !== undefined) {
    if (typeof bytes !== "string") throw new OtlpFieldError(`${at}.bytesValue`, `expected base64 text, got ${describeType(bytes)}`);
    return `[${Buffer.from(bytes, "base64").length} bytes]`;
  }
  return undefined;
}

/** A list of `{key, value}` as an object (later keys win, as OTLP receivers treat duplicates). */
export function keyValues(items: unknown[], at: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [i, item] of items.entries()) {
    const kv = record(item, `${at}.${i}`, "a {key, value} attribute");
    if (typeof kv.key !== "string") throw new OtlpFieldError(`${at}.${i}.key`, `expected a string, got ${describeType(kv.key)}`);
    const value = anyValue(kv.value, `${at}.${i}.value`);
    if (value !== undefined) out[kv.key] = value;
  }
  return out;
}

export function nanos(value: unknown, at: string): bigint {
  if (value === undefined || value === null) return 0n;
  if (typeof value === "number" && Number.isFinite(value) && value >= 0) return BigInt(Math.trunc(value));
  if (typeof value === "string" && /^\d+$/.test(value)) return BigInt(value);
  throw new OtlpFieldError(at, `expected nanoseconds since the epoch (a decimal string or a number), got ${describeType(value)}`);
}

/** A trace or span id; hex ids (case-insensitive in OTLP/JSON, Jaeger and Zipkin) in lower case, so formats and exporters match. */
export function id(value: unknown, at: string, required: boolean): string | undefined {
  if ((value === undefined || value === null || value === "") && !required) return undefined;
  if (typeof value !== "string" || value === "") throw new OtlpFieldError(at, `expected a non-empty id string, got ${describeType(value)}`);
  return /^[0-9A-Fa-f]+$/.test(value) ? value.toLowerCase() : value;
}

function isErrorCode(code: unknown): boolean {
  return code === 2 || code === "STATUS_CODE_ERROR" || code === "ERROR" || code === "2";
}

/** The attributes of a ResourceSpans' / ResourceLogs' `resource` (at `at`), as plain values. */
export function resourceAttributes(container: Record<string, unknown>, at: string): Record<string, unknown> {
  const resource = field(container, "resource");
  if (resource === undefined || resource === null) return {};
  const attributes = field(record(resource, `${at}.resource`, "a Resource object"), "attributes");
  return keyValues(list(attributes, `${at}.resource.attributes`, "attributes"), `${at}.resource.attributes`);
}

/** The spans of one export line; a wrong-typed field throws OtlpFieldError naming it. */
export function exportSpans(line: Record<string, unknown>, where: RecordWhere): OtelSpan[] {
  return resourceSpansOf(field(line, "resourceSpans"), "resourceSpans", where);
}

/**
 * The spans of a ResourceSpans list (an export's `resourceSpans`, or the same list in another
 * envelope: src/read/otel/envelopes.ts); `at` names the list in errors.
 */
export function resourceSpansOf(value: unknown, at: string, where: RecordWhere): OtelSpan[] {
  const spans: OtelSpan[] = [];
  for (const [r, rawResource] of list(value, at, "resource spans").entries()) {
    const rAt = `${at}.${r}`;
    const rs = record(rawResource, rAt, "a ResourceSpans object");
    const resource = resourceAttributes(rs, rAt);
    const scopesKey = field(rs, "scopeSpans") !== undefined ? "scopeSpans" : "instrumentationLibrarySpans";
    for (const [s, rawScope] of list(field(rs, scopesKey), `${rAt}.${scopesKey}`, "scope spans").entries()) {
      const sAt = `${rAt}.${scopesKey}.${s}`;
      const ss = record(rawScope, sAt, "a ScopeSpans object");
      for (const [i, rawSpan] of list(field(ss, "spans"), `${sAt}.spans`, "spans").entries()) {
        const spanAt = `${sAt}.spans.${i}`;
        spans.push(otlpSpan(record(rawSpan, spanAt, "a Span object"), spanAt, resource, { ...where, order: where.order + spans.length }));
      }
    }
  }
  return spans;
}

/**
 * A trace or span id of an OTLP record: hex as OTLP/JSON writes it, or base64 as protobuf's standard
 * JSON mapping writes bytes (gogo jsonpb in Tempo's `/api/traces` answer, Python's `MessageToDict`):
 * the base64 of exactly 16 or 8 bytes is read as those bytes in hex (hex ids never hold `=`).
 */
export function otlpId(value: unknown, at: string, required: boolean): string | undefined {
  if (typeof value === "string" && /^([A-Za-z0-9+/]{22}==|[A-Za-z0-9+/]{11}=)$/.test(value))
    return Buffer.from(value, "base64").toString("hex");
  return id(value, at, required);
}

/**
 * One OTLP Span object (in an export, or a bare span on a line of its own: src/read/otel/bare-spans.ts)
 * as an OtelSpan; `at` is its place in field names ("" for a span that is its own record).
 */
export function otlpSpan(raw: Record<string, unknown>, at: string, resource: Record<string, unknown>, where: RecordWhere): OtelSpan {
  const name = (path: string) => (at === "" ? path : `${at}.${path}`);
  const traceId = otlpId(field(raw, "traceId"), name("traceId"), true) as string;
  const spanId = otlpId(field(raw, "spanId"), name("spanId"), true) as string;
  const parentSpanId = otlpId(field(raw, "parentSpanId"), name("parentSpanId"), false);
  const spanName = raw.name ?? "";
  if (typeof spanName !== "string") throw new OtlpFieldError(name("name"), `expected a string, got ${describeType(spanName)}`);
  const attrs = keyValues(list(raw.attributes, name("attributes"), "attributes"), name("attributes"));
  const events = list(raw.events, name("events"), "events").map((rawEvent, e) => {
    const event = record(rawEvent, name(`events.${e}`), "an Event object");
    const eventName = event.name ?? "";
    if (typeof eventName !== "string")
      throw new OtlpFieldError(name(`events.${e}.name`), `expected a string, got ${describeType(eventName)}`);
    return {
      name: eventName,
      attrs: keyValues(list(event.attributes, name(`events.${e}.attributes`), "attributes"), name(`events.${e}.attributes`)),
    };
  });
  const status = raw.status === undefined || raw.status === null ? {} : record(raw.status, name("status"), "a Status object");
  const message = typeof status.message === "string" && status.message !== "" ? status.message : undefined;
  return {
    traceId,
    spanId,
    ...(parentSpanId !== undefined ? { parentSpanId } : {}),
    name: spanName,
    start: nanos(field(raw, "startTimeUnixNano"), name("startTimeUnixNano")),
    end: nanos(field(raw, "endTimeUnixNano"), name("endTimeUnixNano")),
    attrs,
    events,
    error: isErrorCode(status.code),
    ...(message !== undefined ? { statusMessage: message } : {}),
    resource,
    ...where,
  };
}
