import { describeType, isRecord } from "../record-helpers.ts";
import { id, list, type OtelEvent, type OtelSpan, OtlpFieldError, type RecordWhere, record } from "./otlp.ts";

/*
 * Jaeger's JSON trace model (jaegertracing/jaeger `model/json`, what its query service's HTTP API
 * `/api/traces/{id}` and `/api/traces?service=…` answer, and what jaeger-ui's "Download Results"
 * saves: `{"data": [Trace, …]}`, the API adding `total`, `limit`, `offset`, `errors`):
 *
 * - Trace `{traceID, spans: [Span], processes: {p1: {serviceName, tags}}, warnings}`;
 * - Span `{traceID, spanID, flags, operationName, references: [{refType: CHILD_OF | FOLLOWS_FROM,
 *   traceID, spanID}], startTime, duration (µs since the epoch, µs), tags: [KeyValue], logs:
 *   [{timestamp, fields: [KeyValue]}], processID, warnings}` (older ones a `parentSpanID`, some an
 *   embedded `process`);
 * - KeyValue `{key, type: string | bool | int64 | float64 | binary, value}`.
 *
 * As OTLP spans (the OpenTelemetry → Jaeger mapping, read back): tags are the attributes; the
 * process is the resource (`service.name` its serviceName, its tags the rest); a CHILD_OF reference
 * (else the first FOLLOWS_FROM) the parent; a log is an event named by its `event` field, its other
 * fields the event's attributes; `error: true` or `otel.status_code: ERROR` an error status, whose
 * message is `otel.status_description`.
 */

/** A Jaeger trace: `traceID` and a `spans` list. */
export function isJaegerTrace(value: unknown): value is Record<string, unknown> {
  return isRecord(value) && typeof value.traceID === "string" && Array.isArray(value.spans);
}

/** A Jaeger API answer or jaeger-ui download: a `data` list whose elements are traces (none, too). */
export function isJaegerDocument(value: unknown): value is Record<string, unknown> {
  return isRecord(value) && Array.isArray(value.data) && value.data.every(isJaegerTrace) && !("resourceSpans" in value);
}

/** The spans of a Jaeger API answer (`{"data": [trace, …]}`); `at` names the fields of a wrong-typed value. */
export function jaegerDocumentSpans(document: Record<string, unknown>, where: RecordWhere): OtelSpan[] {
  const spans: OtelSpan[] = [];
  for (const [t, trace] of list(document.data, "data", "traces").entries())
    spans.push(
      ...jaegerTraceSpans(record(trace, `data.${t}`, "a Jaeger trace"), `data.${t}.`, { ...where, order: where.order + spans.length }),
    );
  return spans;
}

/** The spans of one Jaeger trace; field names in errors start with `prefix` ("" for a trace read as its own record). */
export function jaegerTraceSpans(trace: Record<string, unknown>, prefix: string, where: RecordWhere): OtelSpan[] {
  const processes =
    trace.processes === undefined || trace.processes === null
      ? {}
      : record(trace.processes, `${prefix}processes`, "an object of processes");
  const resources = new Map<string, Record<string, unknown>>();
  const resourceOf = (raw: unknown, at: string) => {
    const known = resources.get(at);
    if (known) return known;
    const process = record(raw, at, "a Jaeger process ({serviceName, tags})");
    const serviceName = process.serviceName;
    if (serviceName !== undefined && serviceName !== null && typeof serviceName !== "string")
      throw new OtlpFieldError(`${at}.serviceName`, `expected a string, got ${describeType(serviceName)}`);
    const resource = { ...keyValues(process.tags, `${at}.tags`), ...(serviceName ? { "service.name": serviceName } : {}) };
    resources.set(at, resource);
    return resource;
  };
  const traceId = trace.traceID;
  return list(trace.spans, `${prefix}spans`, "spans").map((raw, i) => {
    const at = `${prefix}spans.${i}`;
    const span = record(raw, at, "a Jaeger span");
    const processId = span.processID;
    let resource: Record<string, unknown> = {};
    if (span.process !== undefined && span.process !== null) resource = resourceOf(span.process, `${at}.process`);
    else if (processId !== undefined && processId !== null && processId !== "") {
      if (typeof processId !== "string") throw new OtlpFieldError(`${at}.processID`, `expected a string, got ${describeType(processId)}`);
      // A process the trace does not list: a span without a resource, as an OTLP span without one.
      if (Object.hasOwn(processes, processId)) resource = resourceOf(processes[processId], `${prefix}processes.${processId}`);
    }
    return jaegerSpan(span, at, traceId, resource, { ...where, order: where.order + i });
  });
}

function jaegerSpan(
  raw: Record<string, unknown>,
  at: string,
  traceTraceId: unknown,
  resource: Record<string, unknown>,
  where: RecordWhere,
): OtelSpan {
  const traceId = id(raw.traceID ?? traceTraceId, `${at}.traceID`, true) as string;
  const spanId = id(raw.spanID, `${at}.spanID`, true) as string;
  const name = raw.operationName ?? "";
  if (typeof name !== "string") throw new OtlpFieldError(`${at}.operationName`, `expected a string, got ${describeType(name)}`);
  const references = list(raw.references, `${at}.references`, "references").map((ref, r) =>
    record(ref, `${at}.references.${r}`, "a reference ({refType, traceID, spanID})"),
  );
  const parentRef = references.find((ref) => ref.refType === "CHILD_OF") ?? references.find((ref) => ref.refType === "FOLLOWS_FROM");
  const parentAt = parentRef ? `${at}.references.${references.indexOf(parentRef)}.spanID` : `${at}.parentSpanID`;
  const parentSpanId = id(parentRef ? parentRef.spanID : raw.parentSpanID, parentAt, parentRef !== undefined);
  const start = micros(raw.startTime, `${at}.startTime`);
  const attrs = keyValues(raw.tags, `${at}.tags`);
  const events: OtelEvent[] = list(raw.logs, `${at}.logs`, "logs").map((rawLog, l) => {
    const log = record(rawLog, `${at}.logs.${l}`, "a log ({timestamp, fields})");
    const fields = keyValues(log.fields, `${at}.logs.${l}.fields`);
    const { event, ...rest } = fields;
    return { name: typeof event === "string" ? event : "", attrs: rest };
  });
  const status = attrs["otel.status_code"];
  const error = attrs.error === true || attrs.error === "true" || status === "ERROR" || status === "STATUS_CODE_ERROR";
  const message = attrs["otel.status_description"];
  return {
    traceId,
    spanId,
    ...(parentSpanId !== undefined && parentSpanId !== spanId ? { parentSpanId } : {}),
    name,
    start,
    end: start + micros(raw.duration, `${at}.duration`),
    attrs,
    events,
    error,
    ...(typeof message === "string" && message !== "" ? { statusMessage: message } : {}),
    resource,
    ...where,
  };
}

/** Microseconds (a whole number, or a decimal string) as nanoseconds. */
export function micros(value: unknown, at: string): bigint {
  if (value === undefined || value === null) return 0n;
  if (typeof value === "number" && Number.isFinite(value) && value >= 0) return BigInt(Math.trunc(value)) * 1000n;
  if (typeof value === "string" && /^\d+$/.test(value)) return BigInt(value) * 1000n;
  throw new OtlpFieldError(at, `expected microseconds since the epoch (a number), got ${describeType(value)}`);
}

/** Jaeger KeyValues (`[{key, type, value}]`) as plain values, later keys winning. */
function keyValues(value: unknown, at: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [i, raw] of list(value, at, "tags").entries()) {
    const kv = record(raw, `${at}.${i}`, "a {key, type, value} tag");
    if (typeof kv.key !== "string") throw new OtlpFieldError(`${at}.${i}.key`, `expected a string, got ${describeType(kv.key)}`);
    const typed = typedValue(kv.type, kv.value, `${at}.${i}`);
    if (typed !== undefined) out[kv.key] = typed;
  }
  return out;
}

function typedValue(type: unknown, value: unknown, at: string): unknown {
  if (value === undefined || value === null) return undefined;
  const wrong = (what: string) =>
    new OtlpFieldError(`${at}.value`, `expected ${what} for type ${JSON.stringify(type)}, got ${describeType(value)}`);
  switch (type) {
    case "string":
      if (typeof value !== "string") throw wrong("a string");
      return value;
    case "bool":
      if (typeof value === "boolean") return value;
      if (value === "true" || value === "false") return value === "true";
      throw wrong("a boolean");
    case "int64":
      if (typeof value === "number" && Number.isInteger(value)) return value;
      if (typeof value === "string" && /^-?\d+$/.test(value)) return Number.isSafeInteger(Number(value)) ? Number(value) : value;
      throw wrong("an integer");
    case "float64":
      if (typeof value === "number") return value;
      if (typeof value === "string" && value.trim() !== "" && !Number.isNaN(Number(value))) return Number(value);
      throw wrong("a number");
    case "binary":
      if (typeof value !== "string") throw wrong("base64 text");
      return `[${Buffer.from(value, "base64").length} bytes]`;
    case undefined:
    case null:
      if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return value;
      throw new OtlpFieldError(`${at}.value`, `expected a string, number or boolean, got ${describeType(value)}`);
    default:
      throw new OtlpFieldError(`${at}.type`, `expected string, bool, int64, float64 or binary, got ${JSON.stringify(type)}`);
  }
}
