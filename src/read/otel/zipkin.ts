import { parseJsonLine } from "../reader.ts";
import { describeType, isRecord } from "../record-helpers.ts";
import { micros } from "./jaeger.ts";
import { id, list, type OtelEvent, type OtelSpan, OtlpFieldError, type RecordWhere, record } from "./otlp.ts";

/*
 * Zipkin's JSON spans (openzipkin/zipkin-api `zipkin2-api.yaml`: what `POST /api/v2/spans` takes,
 * `GET /api/v2/trace/{id}` answers and the Zipkin UI downloads — a JSON array of spans; `GET
 * /api/v2/traces` answers an array of such arrays):
 *
 * - v2 Span `{traceId (16 or 32 hex), parentId, id (16 hex), kind (CLIENT | SERVER | PRODUCER |
 *   CONSUMER), name, timestamp, duration (µs since the epoch, µs), localEndpoint: {serviceName, ipv4,
 *   ipv6, port}, remoteEndpoint, annotations: [{timestamp, value}], tags: {key: "string"}, debug, shared}`;
 * - v1 (the older API, still written by some tracers): `annotations` with an `endpoint` each, and
 *   `binaryAnnotations: [{key, value, endpoint}]` instead of tags and localEndpoint.
 *
 * As OTLP spans (the OpenTelemetry → Zipkin mapping, opentelemetry-specification
 * `trace/sdk_exporters/zipkin.md`, read back): tags are the attributes — every value a string, a
 * JSON text for a list or map (messages.ts parses the JSON texts it reads); `localEndpoint.serviceName`
 * is the resource's `service.name`; an `error` tag (any value but "false"; Zipkin treats any as a
 * failure) or `otel.status_code: ERROR` is an error status, the `error` tag's text its message; an
 * annotation is an event, its value `name`, `name|{attributes JSON}|dropped` (the Collector's
 * exporter) or `"name": {attributes JSON}` (the specification's form).
 */

/** Every field a v2 or v1 Zipkin span has. */
const ZIPKIN_KEYS = new Set([
  "traceId",
  "traceIdHigh",
  "parentId",
  "id",
  "kind",
  "name",
  "timestamp",
  "duration",
  "localEndpoint",
  "remoteEndpoint",
  "annotations",
  "binaryAnnotations",
  "tags",
  "debug",
  "shared",
]);

/**
 * A Zipkin span, strictly, for detection: hex `traceId` and `id`, only Zipkin's fields, and at least
 * one of what a span records besides its ids (another format's record with a trace id and an id has
 * fields of its own).
 */
export function isZipkinSpan(value: unknown): value is Record<string, unknown> {
  if (!isRecord(value)) return false;
  if (typeof value.traceId !== "string" || !/^[0-9a-fA-F]{16,32}$/.test(value.traceId)) return false;
  if (typeof value.id !== "string" || !/^[0-9a-fA-F]{1,32}$/.test(value.id)) return false;
  if (!Object.keys(value).every((key) => ZIPKIN_KEYS.has(key))) return false;
  return (
    isRecord(value.localEndpoint) ||
    isRecord(value.tags) ||
    Array.isArray(value.annotations) ||
    Array.isArray(value.binaryAnnotations) ||
    typeof value.timestamp === "number"
  );
}

/** A list of Zipkin spans (a trace), for detection: its first elements are spans. */
export function isZipkinSpanList(value: unknown): value is unknown[] {
  return Array.isArray(value) && value.length > 0 && value.slice(0, 8).every(isZipkinSpan);
}

/** The shape the reader reads a record as a Zipkin span by (detection is stricter: isZipkinSpan). */
export function looksLikeZipkinSpan(value: unknown): value is Record<string, unknown> {
  return isRecord(value) && "traceId" in value && "id" in value && !("spanId" in value) && !("resourceSpans" in value);
}

/** One Zipkin span as an OTLP span; `at` names the span in errors ("" for a span read as its own record). */
export function zipkinSpan(raw: Record<string, unknown>, at: string, where: RecordWhere): OtelSpan {
  const name = (p: string) => (at === "" ? p : `${at}.${p}`);
  const traceId = id(raw.traceId, name("traceId"), true) as string;
  const spanId = id(raw.id, name("id"), true) as string;
  const parentSpanId = id(raw.parentId, name("parentId"), false);
  const spanName = raw.name ?? "";
  if (typeof spanName !== "string") throw new OtlpFieldError(name("name"), `expected a string, got ${describeType(spanName)}`);
  const attrs: Record<string, unknown> = {};
  const tags = raw.tags === undefined || raw.tags === null ? {} : record(raw.tags, name("tags"), "an object of string tags");
  for (const [key, value] of Object.entries(tags)) {
    if (value === null) continue;
    if (typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean")
      throw new OtlpFieldError(name(`tags.${key}`), `expected a string, got ${describeType(value)}`);
    attrs[key] = value;
  }
  // v1: binary annotations are the tags; an endpoint on any annotation names the service.
  let serviceName = endpointService(raw.localEndpoint, name("localEndpoint"));
  for (const [i, rawBinary] of list(raw.binaryAnnotations, name("binaryAnnotations"), "binary annotations").entries()) {
    const binary = record(rawBinary, name(`binaryAnnotations.${i}`), "a binary annotation ({key, value})");
    if (typeof binary.key !== "string")
      throw new OtlpFieldError(name(`binaryAnnotations.${i}.key`), `expected a string, got ${describeType(binary.key)}`);
    const value = binary.value;
    if (value !== undefined && value !== null && typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean")
      throw new OtlpFieldError(name(`binaryAnnotations.${i}.value`), `expected a string, number or boolean, got ${describeType(value)}`);
    if (value !== undefined && value !== null && !(binary.key in attrs)) attrs[binary.key] = value;
    serviceName ??= endpointService(binary.endpoint, name(`binaryAnnotations.${i}.endpoint`));
  }
  const events: OtelEvent[] = list(raw.annotations, name("annotations"), "annotations").map((rawAnnotation, i) => {
    const annotation = record(rawAnnotation, name(`annotations.${i}`), "an annotation ({timestamp, value})");
    if (typeof annotation.value !== "string")
      throw new OtlpFieldError(name(`annotations.${i}.value`), `expected a string, got ${describeType(annotation.value)}`);
    serviceName ??= endpointService(annotation.endpoint, name(`annotations.${i}.endpoint`));
    return annotationEvent(annotation.value);
  });
  const start = micros(raw.timestamp, name("timestamp"));
  const errorTag = attrs.error;
  const status = attrs["otel.status_code"];
  const error = (errorTag !== undefined && errorTag !== false && errorTag !== "false") || status === "ERROR";
  const message = typeof errorTag === "string" && errorTag !== "" && errorTag !== "true" ? errorTag : attrs["otel.status_description"];
  return {
    traceId,
    spanId,
    ...(parentSpanId !== undefined && parentSpanId !== spanId ? { parentSpanId } : {}),
    name: spanName,
    start,
    end: start + micros(raw.duration, name("duration")),
    attrs,
    events,
    error,
    ...(typeof message === "string" && message !== "" ? { statusMessage: message } : {}),
    resource: serviceName !== undefined ? { "service.name": serviceName } : {},
    ...where,
  };
}

function endpointService(value: unknown, at: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  const endpoint = record(value, at, "an endpoint ({serviceName, ipv4, port})");
  const service = endpoint.serviceName;
  if (service === undefined || service === null || service === "") return undefined;
  if (typeof service !== "string") throw new OtlpFieldError(`${at}.serviceName`, `expected a string, got ${describeType(service)}`);
  return service;
}

/** An annotation's value as an event: `name`, `name|{attributes}|dropped`, `"name": {attributes}` or `{"name": {attributes}}`. */
export function annotationEvent(value: string): OtelEvent {
  const collector = /^([^|]*)\|(\{[\s\S]*\})\|\d+$/.exec(value);
  if (collector) {
    const attrs = parseJsonLine(collector[2] as string);
    if (attrs.ok && isRecord(attrs.value)) return { name: collector[1] as string, attrs: attrs.value };
  }
  const trimmed = value.trim();
  if (trimmed.startsWith('"') || trimmed.startsWith("{")) {
    const parsed = parseJsonLine(trimmed.startsWith("{") ? trimmed : `{${trimmed}}`);
    if (parsed.ok && isRecord(parsed.value)) {
      const entries = Object.entries(parsed.value);
      const [only] = entries;
      if (entries.length === 1 && only && isRecord(only[1])) return { name: only[0], attrs: only[1] };
    }
  }
  return { name: value, attrs: {} };
}
