import { describeType, isRecord } from "../record-helpers.ts";
import { field, type OtelSpan, OtlpFieldError, type RecordWhere, resourceSpansOf } from "./otlp.ts";

/*
 * Trace-by-id answers of the trace stores that answer in OTLP/JSON: an OTLP ResourceSpans list
 * (what an export's `resourceSpans` holds, read by src/read/otel/otlp.ts) inside an envelope.
 *
 * - Grafana Tempo `GET /api/traces/<traceID>` (grafana/tempo docs/sources/tempo/api_docs): the
 *   `tempopb.Trace` message, `{"batches": [ResourceSpans]}` until its field was renamed
 *   `resourceSpans` (that answer is an OTLP export as it is). Tempo's gogo jsonpb writes the ids as
 *   base64 (grafana/tempo#5437), newer Tempo as hex: otlp.ts `otlpId` reads both.
 * - Tempo `GET /api/v2/traces/<traceID>`: `tempopb.TraceByIDResponse`, `{"trace": {"resourceSpans"
 *   (or "batches"): [...]}, "status": "COMPLETE" | "PARTIAL", "message"}` (a PARTIAL trace is read as
 *   far as it goes).
 * - Jaeger api_v3 `GET /api/v3/traces/{trace_id}` (jaegertracing/jaeger-idl
 *   `proto/api_v3/query_service.proto`): `QueryService.GetTrace` streams TracesData messages, each
 *   wrapped by the HTTP gateway as `{"result": {"resourceSpans": [...]}}` (`GRPCGatewayWrapper`; a
 *   stream of them one after another, `Transfer-Encoding: chunked`); `FindTraces` answers the same.
 *   An error is `{"error": {"grpcCode", "httpCode", "message", "httpStatus"}}` (`GRPCGatewayError`).
 *
 * Not read, refused with their reason: Tempo's search answer (`{"traces": [{traceID,
 * rootServiceName, spanSets}]}`: summaries of the matched spans, not the traces), Jaeger's
 * trace-summaries stream (`{"result": {"summaries": [...]}}`) and api_v3 error answers.
 */

/** A ResourceSpans list in its envelope: what it is, where it is (field names), the list. */
interface Envelope {
  kind: string;
  at: string;
  list: unknown;
}

const RESOURCE_SPANS_KEYS = ["resourceSpans", "resource_spans"];

function resourceSpansKey(container: Record<string, unknown>): string | undefined {
  return RESOURCE_SPANS_KEYS.find((key) => Array.isArray(container[key]));
}

/** The envelope a parsed record is, when it is one (told by its keys, for reading: `isEnvelope` is detection's stricter test). */
function envelopeOf(value: Record<string, unknown>): Envelope | undefined {
  if (Array.isArray(value.batches) && resourceSpansKey(value) === undefined)
    return { kind: "Tempo trace (/api/traces)", at: "batches", list: value.batches };
  if (isRecord(value.trace)) {
    const key = resourceSpansKey(value.trace) ?? (Array.isArray(value.trace.batches) ? "batches" : undefined);
    if (key !== undefined) return { kind: "Tempo trace-by-id answer (/api/v2/traces)", at: `trace.${key}`, list: value.trace[key] };
  }
  if (isRecord(value.result)) {
    const key = resourceSpansKey(value.result);
    if (key !== undefined) return { kind: "Jaeger api_v3 result", at: `result.${key}`, list: value.result[key] };
  }
  return undefined;
}

/** The spans of a record that is an envelope, with what it is; undefined for any other record. */
export function envelopeSpans(value: Record<string, unknown>, where: RecordWhere): { kind: string; spans: OtelSpan[] } | undefined {
  const envelope = envelopeOf(value);
  if (!envelope) return undefined;
  return { kind: envelope.kind, spans: resourceSpansOf(envelope.list, envelope.at, where) };
}

/** The members each envelope has besides its list (Tempo v2's status and message; Jaeger's wrapper has none). */
const ENVELOPE_MEMBERS: Record<string, readonly string[]> = {
  batches: ["batches"],
  trace: ["trace", "metrics", "status", "message"],
  result: ["result"],
};

const RESOURCE_SPANS_FIELDS = new Set([
  "resource",
  "scopeSpans",
  "scope_spans",
  "instrumentationLibrarySpans",
  "instrumentation_library_spans",
  "schemaUrl",
  "schema_url",
]);

/**
 * An envelope, strictly, for detection: only its own members, and a list of ResourceSpans objects
 * (nothing but their fields) of which one holds a span with a span id — a `{"result": …}` or
 * `{"trace": …}` of another tool (a tool call's result, a run's trace) holds no OTLP spans.
 */
export function isEnvelope(value: unknown): boolean {
  if (!isRecord(value)) return false;
  const envelope = envelopeOf(value);
  if (!envelope) return false;
  const top = envelope.at.split(".")[0] as string;
  if (!Object.keys(value).every((key) => ENVELOPE_MEMBERS[top]?.includes(key))) return false;
  if (top === "trace" && !Object.keys(value.trace as object).every((key) => [...RESOURCE_SPANS_KEYS, "batches"].includes(key)))
    return false;
  if (top === "result" && Object.keys(value.result as object).length !== 1) return false;
  return holdsOtlpSpans(envelope.list);
}

function holdsOtlpSpans(list: unknown): boolean {
  if (!Array.isArray(list) || list.length === 0) return false;
  const head = list.slice(0, 8);
  if (!head.every((rs) => isRecord(rs) && Object.keys(rs).every((key) => RESOURCE_SPANS_FIELDS.has(key)))) return false;
  return head.some((rs) => {
    const scopes =
      field(rs as Record<string, unknown>, "scopeSpans") ?? field(rs as Record<string, unknown>, "instrumentationLibrarySpans");
    if (!Array.isArray(scopes)) return false;
    return scopes.some((scope) => {
      const spans = isRecord(scope) ? scope.spans : undefined;
      const first: unknown = Array.isArray(spans) ? spans[0] : undefined;
      return isRecord(first) && typeof field(first, "spanId") === "string" && typeof field(first, "traceId") === "string";
    });
  });
}

/**
 * Why a record that is a trace store's answer but holds no spans is not read, or undefined for any
 * other record; the field named is the answer's own.
 */
export function refusedAnswer(value: Record<string, unknown>): OtlpFieldError | undefined {
  const error = value.error;
  if (isRecord(error) && Object.keys(value).length === 1 && ("httpCode" in error || "grpcCode" in error)) {
    const code = error.httpCode ?? error.grpcCode;
    const message = typeof error.message === "string" ? `: ${JSON.stringify(error.message)}` : "";
    return new OtlpFieldError("error", `a Jaeger api_v3 error answer (HTTP ${describeCode(code)})${message}, no trace`);
  }
  if (isRecord(value.result) && Array.isArray(value.result.summaries))
    return new OtlpFieldError(
      "result.summaries",
      "Jaeger's trace summaries (/api/v3/trace-summaries), not the traces' spans: fetch each trace with /api/v3/traces/{trace_id}",
    );
  const traces = value.traces;
  if (
    Array.isArray(traces) &&
    traces.length > 0 &&
    traces.every((t) => isRecord(t) && typeof t.traceID === "string" && "rootServiceName" in t)
  )
    return new OtlpFieldError(
      "traces",
      "Tempo's search answer (/api/search) lists trace summaries and the matched spans' ids, not the traces: fetch each trace with /api/traces/<traceID>",
    );
  return undefined;
}

function describeCode(code: unknown): string {
  return typeof code === "number" || typeof code === "string" ? String(code) : describeType(code);
}
