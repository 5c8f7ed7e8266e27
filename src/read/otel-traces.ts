import { basename } from "node:path";
import type { SourceRef, Turn } from "../core/trajectory.ts";
import { quarantine, rowItem } from "./chat-rows/row-item.ts";
import { layoutOfHead, readHead } from "./json-array.ts";
import { bareOtlpSpan, isBareOtlpSpan, isBareOtlpSpanList, looksLikeBareOtlpSpan } from "./otel/bare-spans.ts";
import { concatenatedRecordLines, firstObjectText, holdsSeveralValues, jsonValuesOf } from "./otel/concatenated.ts";
import { envelopeSpans, isEnvelope, refusedAnswer } from "./otel/envelopes.ts";
import { isJaegerDocument, isJaegerTrace, jaegerDocumentSpans, jaegerTraceSpans } from "./otel/jaeger.ts";
import {
  agentInput,
  type ChatMessage,
  inputMessages,
  isGenAiSpan,
  isLlmSpan,
  isToolSpan,
  outputMessage,
  systemInstructions,
  toolDefinitions,
  toolExecution,
} from "./otel/messages.ts";
import { exportSpans, isLogsExport, isTracesExport, type OtelSpan, OtlpFieldError, otherSignal, type RecordWhere } from "./otel/otlp.ts";
import { exportLogRecords, mergeLogRecords, type OtelLogRecord } from "./otel/otlp-logs.ts";
import { otlpFramingOfFile, otlpProtoRecordLines } from "./otel/otlp-proto.ts";
import { consoleSpan, isConsoleSpan, isConsoleSpanList, looksLikeConsoleSpan } from "./otel/python-console.ts";
import { isZipkinSpan, isZipkinSpanList, looksLikeZipkinSpan, zipkinSpan } from "./otel/zipkin.ts";
import { firstLine, parseJsonLine, parseSniffedJson, type Reader, type ReaderOptions, type ReadItem, recordLines } from "./reader.ts";
import { contentId, isRecord } from "./record-helpers.ts";
import type { RecordLine } from "./record-line.ts";
import { conversation as chatOf } from "./trace/conversation.ts";
import { describeRecord, emptyFile, traceRecords } from "./trace/record-loop.ts";

const FORMAT = "otel-traces";

/*
 * Agent traces exported as OpenTelemetry spans (or the spans of the tracers OpenTelemetry exports
 * to), with the attributes of the OpenTelemetry GenAI semantic conventions, OpenInference or
 * OpenLLMetry (src/read/otel/messages.ts names them). Each record of the file is one of:
 *
 * - an OTLP/JSON `ExportTraceServiceRequest` (`{"resourceSpans": …}`), one per line as the
 *   OpenTelemetry Collector's file exporter writes them, one pretty-printed document, or a JSON
 *   array of them (src/read/otel/otlp.ts);
 * - an OTLP/JSON `ExportLogsServiceRequest` (`{"resourceLogs": …}`) whose log records are GenAI
 *   events — the message events of the conventions up to v1.36, or the later
 *   `gen_ai.client.inference.operation.details` (src/read/otel/otlp-logs.ts). A record whose span
 *   the file holds is that span's event (spans and logs of one trace are read together; a span's
 *   message attributes win over its events); the others make model-call spans of their own.
 *   Records without a trace id are one trace: the file's;
 * - Jaeger JSON: its query API's answer or jaeger-ui's download (`{"data": [trace, …]}`), or one
 *   trace (`{"traceID", "spans", "processes"}`) per line (src/read/otel/jaeger.ts);
 * - Zipkin JSON: an array of v2 (or v1) spans, as Zipkin's API answers and its UI downloads, an
 *   array of such arrays, or one span per line (src/read/otel/zipkin.ts);
 * - a trace store's trace-by-id answer, OTLP in an envelope: Grafana Tempo's `{"batches": [...]}`
 *   (`/api/traces`, ids hex or base64) and `{"trace": {"resourceSpans": [...]}, "status"}`
 *   (`/api/v2/traces`), Jaeger api_v3's `{"result": {"resourceSpans": [...]}}`, a stream of them one
 *   after another (src/read/otel/envelopes.ts);
 * - bare OTLP/JSON Span objects, one per line or in a JSON array (src/read/otel/bare-spans.ts);
 * - the OpenTelemetry Python SDK's ConsoleSpanExporter output: `span.to_json()` objects,
 *   pretty-printed one after another or one per line (src/read/otel/python-console.ts).
 *
 * JSON values written one after another (pretty-printed, or several on a line) are records each
 * (src/read/otel/concatenated.ts). OTLP in protobuf — the Collector's file exporter with `format:
 * proto` (length-prefixed messages, zstd-compressed or not), or one message alone (an OTLP/HTTP
 * request body) — is decoded message by message into the OTLP/JSON above (src/read/otel/otlp-proto.ts).
 *
 * A whole-file reader: the spans and log records of every record are grouped by trace id (a trace's
 * spans come in many export batches), so memory is bounded by the file; each line, array element or
 * document is bounded by `input.max_line_bytes`. One trace = one trajectory, id = the trace id, its
 * spans in start order:
 *
 * - Action: each tool execution span (`execute_tool`, OpenInference `TOOL`, OpenLLMetry `tool`) —
 *   a shell tool's command itself, any other tool `{"name", "arguments"}`, as chat-tool-rows
 *   renders calls (the call is built as an OpenAI message and read by src/read/chat-rows/). A tool
 *   span inside another tool span (an MCP client span under the framework's, a sub-agent run as a
 *   tool) is its detail, not a turn (`meta.skipped.nested_tool_span`); so are inference spans inside
 *   a tool span.
 * - Observation: the span's result (`gen_ai.tool.call.result`, `output.value`); an MCP
 *   CallToolResult's text. An error status (or `error.type`, or an MCP `isError`) →
 *   `turn.meta.is_error`, the exception event's or status' message the observation when there is
 *   no result. A tool span with neither is no turn (`tool_span_without_result`: content capture off).
 * - Thinking: the text and reasoning of the model's reply before the call (the inference span's
 *   output) → `turn.thinking`.
 * - Task: the first user message the first inference span sent (else the agent span's input);
 *   later user messages are `turn.meta.dialogue`; the system message (or `gen_ai.system_instructions`)
 *   and the tools offered go to `meta.agent_system`. The last reply with no call after it is
 *   `meta.final_answer`.
 * - A trace without tool spans whose model calls carry the whole chat (a model client instrumented
 *   alone, tools run by application code; GenAI events in logs): the fullest inference call's input
 *   messages and reply, read as a chat row.
 * - Domain (unless set): from the tools, as chat rows (src/read/chat-rows/domain.ts). Meta: `agent`
 *   (`gen_ai.agent.name`, `agent.name`, else the resource's `service.name`), `model`,
 *   `service_name`, `conversation_id` (`gen_ai.conversation.id`, `session.id`), `spans`, `log_records`.
 *
 * Quarantined: a record that is none of these (metrics and profiles exports named as such; a trace
 * store's answer without spans — Tempo's search answer, Jaeger's trace summaries or error answer —
 * saying what it is), or whose field has the wrong type (naming the line or element, the value of
 * several on one line, and the field); a trace with no GenAI /
 * OpenInference span or event (an HTTP service's spans, an application's plain logs), or with no
 * tool call answered by its result.
 */
export const otelTracesReader: Reader = {
  name: FORMAT,
  domain: "from the tools",
  description:
    "Agent traces as OpenTelemetry OTLP/JSON or OTLP protobuf trace or log exports or spans (GenAI semconv, OpenInference, OpenLLMetry), Tempo or Jaeger answers, Jaeger or Zipkin JSON, Python console spans; one trace per trajectory",

  sniff(head) {
    const text = head.replace(/^\uFEFF/, "");
    const line = firstLine(text).trim();
    if (/^[[{]/.test(line) && line !== "{" && line !== "[") {
      const parsed = parseSniffedJson(line);
      if (parsed.ok) return isTraceRecord(parsed.value);
    }
    // A pretty-printed document (or values one after another: its first), or a first line longer than the head.
    const start = text.trimStart();
    const first = start.startsWith("{") ? firstObjectText(start) : undefined;
    const parsed = first !== undefined ? parseSniffedJson(first) : undefined;
    if (parsed?.ok && isTraceRecord(parsed.value)) return true;
    return (
      PRETTY_OTLP.test(start) ||
      JAEGER_START.test(start) ||
      ZIPKIN_START.test(start) ||
      ENVELOPE_START.test(start) ||
      CONSOLE_START.test(start) ||
      BARE_SPAN_START.test(start)
    );
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    const { range, ...whole } = options;
    if (range && range.start > 0) return;
    // Spans and log records by trace id ("" for log records without one).
    const traces = new Map<string, { spans: OtelSpan[]; logs: OtelLogRecord[] }>();
    const traceOf = (key: string) => {
      let trace = traces.get(key);
      if (!trace) {
        trace = { spans: [], logs: [] };
        traces.set(key, trace);
      }
      return trace;
    };
    let order = 0;
    // The values read by kind (a line may hold several).
    const kinds = new Map<string, number>();
    // OTLP in protobuf (src/read/otel/otlp-proto.ts): each message decoded to OTLP/JSON, then read as JSON is.
    const framing = await otlpFramingOfFile(path, true);
    const records = framing ? otlpProtoRecordLines(path, whole, FORMAT, framing) : recordSource(path, whole);
    const file = yield* traceRecords<Contents>(records, {
      fieldError: OtlpFieldError,
      namesField: false,
      ...(framing ? { rowName: "message" } : {}),
      // Several values on one line (a chunked stream written without line ends): each is read.
      severalValues,
      read: (value, record, earlier) =>
        valueContents(
          value,
          { ...record.where, order: order + earlier.reduce((n, c) => n + c.spans.length + c.logs.length, 0) },
          record.fail,
        ),
      keep(contents) {
        kinds.set(contents.kind, (kinds.get(contents.kind) ?? 0) + 1);
        order += contents.spans.length + contents.logs.length;
        for (const span of contents.spans) traceOf(span.traceId).spans.push(span);
        for (const log of contents.logs) traceOf(log.traceId ?? "").logs.push(log);
      },
    });
    for (const [traceId, trace] of traces) yield traceItems(traceId, trace.spans, trace.logs, path, options);
    // Records with empty span and record lists only: nothing to read, said once for the file.
    if (traces.size === 0 && file.fine > 0 && file.fine === file.records) {
      const logsOnly = [...kinds.keys()].every((kind) => kind === LOGS);
      const what = [...kinds].map(([kind, n]) => `${n} ${kind}(s)`).join(" and ");
      const none = logsOnly ? "log records" : kinds.has(LOGS) ? "spans or log records" : "spans";
      yield emptyFile(path, FORMAT, logsOnly ? "resourceLogs" : "resourceSpans", `the file's ${what} hold no ${none}`);
    }
  },
};

const LOGS = "OTLP logs export";

/** An OTLP export (traces or logs) pretty-printed, or on a first line longer than the head. */
const PRETTY_OTLP =
  /^\{\s*"resource_?([sS]pans|[lL]ogs)"\s*:\s*\[\s*(\]|\{\s*"(resource|scope_?([sS]pans|[lL]ogs)|instrumentationLibrary(Spans|Logs)|schema_?[uU]rl)"\s*:)/;
/** A Jaeger API answer as Jaeger writes it (a trace's fields in its struct's order: traceID, spans, …). */
const JAEGER_START = /^\{\s*"data"\s*:\s*\[\s*\{\s*"traceID"\s*:\s*"[0-9a-fA-F]+"\s*,\s*"spans"\s*:\s*\[/;
/** Zipkin spans (or a list of traces) as Zipkin writes them: traceId first, then parentId or id. */
const ZIPKIN_START = /^\[\s*(\[\s*)?\{\s*"traceId"\s*:\s*"[0-9a-fA-F]{16,32}"\s*,\s*"(parentId|id)"\s*:\s*"[0-9a-fA-F]{1,32}"/;
/** The opening of a ResourceSpans list: `[` then `]` or a ResourceSpans object's first field. */
const RESOURCE_SPANS_OPEN = String.raw`\[\s*(\]|\{\s*"(resource|scope_?[sS]pans|instrumentation_?[lL]ibrary_?[sS]pans|schema_?[uU]rl)"\s*:)`;
/** Tempo's `{"batches": …}` and `{"trace": {"resourceSpans": …}}`, Jaeger api_v3's `{"result": {"resourceSpans": …}}`, longer than the head. */
const ENVELOPE_START = new RegExp(
  String.raw`^\{\s*("batches"|"trace"\s*:\s*\{\s*"(resource_?[sS]pans|batches)"|"result"\s*:\s*\{\s*"resource_?[sS]pans")\s*:\s*${RESOURCE_SPANS_OPEN}`,
);
/** Python's `span.to_json()` as it writes it: name, then the context's 0x-prefixed trace id. */
const CONSOLE_START =
  /^\{\s*"name"\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*"context"\s*:\s*\{\s*"trace_id"\s*:\s*"0x[0-9a-f]{32}"\s*,\s*"span_id"\s*:\s*"0x[0-9a-f]{16}"/;
/** A bare OTLP span (or a list of them) on a line longer than the head: its ids first, as protobuf writes the fields. */
const BARE_SPAN_START =
  /^\[?\s*\{\s*"trace_?[iI]d"\s*:\s*"[0-9a-fA-F]{32}"\s*,\s*"span_?[iI]d"\s*:\s*"[0-9a-fA-F]{16}"\s*,\s*"(trace_?[sS]tate|parent_?[sS]pan_?[iI]d|flags|name|kind|start_?[tT]ime_?[uU]nix_?[nN]ano)"\s*:/;

/** What the sniff claims as one JSON line: any record the reader reads, told strictly. */
function isTraceRecord(value: unknown): boolean {
  if (isTracesExport(value) || isLogsExport(value) || isJaegerTrace(value) || isZipkinSpan(value) || isZipkinSpanList(value)) return true;
  if (isEnvelope(value) || isBareOtlpSpan(value) || isBareOtlpSpanList(value) || isConsoleSpan(value) || isConsoleSpanList(value))
    return true;
  if (isJaegerDocument(value)) return (value.data as unknown[]).length > 0;
  return Array.isArray(value) && value.length > 0 && value.slice(0, 8).every(isZipkinSpanList);
}

/**
 * The file's records: its lines, array elements or document (src/read/reader.ts `recordLines`), or,
 * for JSON values one after another (pretty-printed spans of Python's console exporter, a stream of
 * api_v3 results), each value.
 */
async function* recordSource(path: string, options: ReaderOptions): AsyncGenerator<RecordLine> {
  if (layoutOfHead(await readHead(path)).kind === "document" && (await holdsSeveralValues(path)))
    return yield* concatenatedRecordLines(path, options, FORMAT);
  yield* recordLines(path, options, FORMAT);
}

/** The values of a line that is several JSON objects one after another, or undefined. */
function severalValues(text: string): unknown[] | undefined {
  const pieces = jsonValuesOf(text);
  if (pieces.length < 2 || !pieces.every((piece) => piece.closed && piece.opener === 0x7b && piece.text !== undefined)) return undefined;
  const values: unknown[] = [];
  for (const piece of pieces) {
    const parsed = parseJsonLine(piece.text as string);
    if (!parsed.ok) return undefined;
    values.push(parsed.value);
  }
  return values;
}

/** The spans and log records of one parsed value, or its quarantine entry (made by `fail`, which names its place); a field error is thrown. */
function valueContents(
  value: Record<string, unknown> | unknown[],
  where: RecordWhere,
  fail: (field: string | undefined, reason: string) => ReadItem,
): { contents: Contents } | { item: ReadItem } {
  const found = recordContents(value, where, "");
  if (typeof found !== "string") return { contents: found };
  if (found !== "other")
    return { item: fail(undefined, `an OTLP ${found} export, not spans or log records: only traces and logs are read`) };
  return {
    item: fail(
      "resourceSpans",
      `expected an OTLP export ({"resourceSpans": [...]}, {"resourceLogs": [...]}) or span ({"traceId", "spanId", …}), a Tempo or Jaeger answer ({"batches"}, {"trace"}, {"data"}, {"result"}), a Jaeger trace ({"traceID", "spans"}), Zipkin spans ({"traceId", "id", …}) or Python SDK spans ({"name", "context", …}), got ${describeRecord(value)}`,
    ),
  };
}

interface Contents {
  kind: string;
  spans: OtelSpan[];
  logs: OtelLogRecord[];
}

/**
 * The spans and log records of one record, or what it is when it is not one the reader reads: "other",
 * or the OTLP signal it is. `prefix` names the record's place in a list (Zipkin spans) in field names.
 */
function recordContents(value: Record<string, unknown> | unknown[], where: RecordWhere, prefix: string): Contents | string {
  const spans = (kind: string, list: OtelSpan[]): Contents => ({ kind, spans: list, logs: [] });
  if (Array.isArray(value)) {
    // Zipkin spans, or a list of such lists (its /api/v2/traces answer); bare OTLP spans; Python's spans.
    const out: OtelSpan[] = [];
    for (const [i, element] of value.entries()) {
      const at = `${prefix}${i}`;
      const here = { ...where, order: where.order + out.length };
      if (looksLikeZipkinSpan(element)) out.push(zipkinSpan(element, at, here));
      else if (looksLikeBareOtlpSpan(element)) out.push(bareOtlpSpan(element, at, here));
      else if (looksLikeConsoleSpan(element)) out.push(consoleSpan(element, at, here));
      else if (Array.isArray(element) && prefix === "") {
        const inner = recordContents(element, here, `${at}.`);
        if (typeof inner !== "string") out.push(...inner.spans);
      } else
        throw new OtlpFieldError(
          at,
          `expected a span (Zipkin's {"traceId", "id", …}, OTLP's {"traceId", "spanId", …}), got ${describeRecord(element)}`,
        );
    }
    return spans("span list", out);
  }
  if (isTracesExport(value)) return spans("OTLP traces export", exportSpans(value, where));
  if (isLogsExport(value)) return { kind: LOGS, spans: [], logs: exportLogRecords(value, where) };
  if (isJaegerDocument(value)) return spans("Jaeger trace document", jaegerDocumentSpans(value, where));
  if (isJaegerTrace(value)) return spans("Jaeger trace", jaegerTraceSpans(value, "", where));
  const envelope = envelopeSpans(value, where);
  if (envelope) return spans(envelope.kind, envelope.spans);
  if (looksLikeZipkinSpan(value)) return spans("Zipkin span", [zipkinSpan(value, "", where)]);
  if (looksLikeBareOtlpSpan(value)) return spans("OTLP span", [bareOtlpSpan(value, "", where)]);
  if (looksLikeConsoleSpan(value)) return spans("Python SDK span", [consoleSpan(value, "", where)]);
  const refused = refusedAnswer(value);
  if (refused) throw refused;
  return otherSignal(value) ?? "other";
}

function sourceOf(path: string, where: RecordWhere): SourceRef {
  return {
    uri: path,
    ...(where.line !== undefined ? { line: where.line } : {}),
    ...(where.row !== undefined ? { row: where.row } : {}),
    offset: where.offset,
    format: FORMAT,
  };
}

/** One trace (its spans and log records) as its read item. */
function traceItems(key: string, spans: OtelSpan[], logs: OtelLogRecord[], path: string, options: ReaderOptions): ReadItem {
  // Log records without a trace id: the file's one trace, named by its conversation or its first record.
  const conversation = logs.map((log) => log.attrs["gen_ai.conversation.id"]).find((c) => typeof c === "string" && c !== "");
  const traceId =
    key !== ""
      ? key
      : typeof conversation === "string"
        ? conversation
        : contentId("otel-logs", `${basename(path)}\n${logs[0]?.digest ?? ""}`);
  const merged = mergeLogRecords(traceId, spans, logs);
  if (merged.spans.length === 0) {
    const first = logs.reduce((a, b) => (b.where.order < a.where.order ? b : a));
    const names = merged.otherNames.map((name) => JSON.stringify(name)).join(", ");
    return quarantine(sourceOf(path, first.where), {
      id: traceId,
      reason: `not an agent trace: its ${logs.length} log record(s) (${names}) are no GenAI events (no gen_ai.* event name or attribute)`,
    });
  }
  return traceItem(traceId, merged.spans, path, options, merged);
}

function traceItem(
  traceId: string,
  unsorted: OtelSpan[],
  path: string,
  options: ReaderOptions,
  logs: { used: number; skipped: Record<string, number>; otherNames: string[] },
): ReadItem {
  const first = unsorted.reduce((a, b) => (b.order < a.order ? b : a));
  const source = sourceOf(path, first);
  const fail = (field: string | undefined, reason: string): ReadItem =>
    quarantine(source, { id: traceId, ...(field ? { field } : {}), reason });
  // A span exported twice (an exporter's retry, two pipelines writing one file) is read once.
  const byId = new Map<string, OtelSpan>();
  let duplicates = 0;
  for (const span of unsorted) {
    if (byId.has(span.spanId)) duplicates += 1;
    else byId.set(span.spanId, span);
  }
  const depths = new Map([...byId.values()].map((span) => [span, ancestors(span, byId).length]));
  const depth = (span: OtelSpan) => depths.get(span) ?? 0;
  // Start order; a parent before the child that starts with it.
  const spans = [...byId.values()].sort((a, b) =>
    a.start < b.start ? -1 : a.start > b.start ? 1 : depth(a) - depth(b) || a.order - b.order,
  );
  if (!spans.some(isGenAiSpan)) {
    const names = [...new Set(spans.map((span) => span.name))].slice(0, 5).map((name) => JSON.stringify(name));
    const skippedLogs = logs.skipped.non_genai_log_record ?? 0;
    const other =
      skippedLogs > 0
        ? `, and its ${skippedLogs} log record(s) (${logs.otherNames.map((name) => JSON.stringify(name)).join(", ")}) are no GenAI events`
        : "";
    return fail(
      undefined,
      `not an agent trace: its ${spans.length} span(s) (${names.join(", ")}) carry no GenAI (gen_ai.*), OpenInference or OpenLLMetry attributes${other}`,
    );
  }
  const skipped: Record<string, number> = { ...logs.skipped, ...(duplicates > 0 ? { duplicate_span: duplicates } : {}) };
  const count = (what: string) => {
    skipped[what] = (skipped[what] ?? 0) + 1;
  };
  // Spans inside a tool span are that tool's own work (an MCP client span, a sub-agent's steps).
  const insideTool = (span: OtelSpan) => ancestors(span, byId).some(isToolSpan);
  const tools = spans.filter(isToolSpan);
  const llms = spans.filter((span) => isLlmSpan(span) && !insideTool(span));
  const definitions = llms.map(toolDefinitions).find((found) => found.length > 0) ?? [];
  const messages = tools.length === 0 ? historyMessages(llms) : conversation(spans, insideTool, count);
  if (messages === undefined)
    return fail(undefined, "no tool span, and no model call whose messages hold a tool call answered by its result");
  if (tools.length > 0 && !messages.some((m) => m.role === "tool"))
    return fail(
      "attributes",
      `${tools.length} tool span(s), none with a result (gen_ai.tool.call.result, output.value) or an error: was content capture off?`,
    );
  if (!messages.some((m) => m.role === "user")) {
    const task = spans.map(agentInput).find((input) => input !== undefined);
    if (task !== undefined) messages.splice(messages[0]?.role === "system" ? 1 : 0, 0, { role: "user", content: task });
  }
  const attr = (keys: string[]) => {
    for (const span of spans)
      for (const key of keys) {
        const value = span.attrs[key];
        if (typeof value === "string" && value !== "") return value;
      }
    return undefined;
  };
  const service = spans
    .map((span) => span.resource["service.name"])
    .find((name): name is string => typeof name === "string" && name !== "");
  const agent = attr(["gen_ai.agent.name", "agent.name"]) ?? service;
  const model = attr(["gen_ai.response.model", "gen_ai.request.model", "llm.model_name"]);
  const row: Record<string, unknown> = {
    id: traceId,
    messages,
    ...(definitions.length > 0 ? { tools: definitions } : {}),
    ...(agent !== undefined ? { agent } : {}),
    ...(model !== undefined ? { model } : {}),
  };
  const item = rowItem(row, source, JSON.stringify(row), options);
  if (item.kind !== "trajectory") return item;
  const { trajectory } = item;
  const conversationId = attr(["gen_ai.conversation.id", "session.id"]);
  const rowSkipped = isRecord(trajectory.meta?.skipped) ? (trajectory.meta.skipped as Record<string, number>) : {};
  const allSkipped = { ...rowSkipped };
  for (const [key, n] of Object.entries(skipped)) allSkipped[key] = (allSkipped[key] ?? 0) + n;
  const meta: Record<string, unknown> = {
    ...trajectory.meta,
    ...(service !== undefined ? { service_name: service } : {}),
    ...(conversationId !== undefined ? { conversation_id: conversationId } : {}),
    spans: spans.filter((span) => span.logRecords === undefined).length,
    ...(logs.used > 0 ? { log_records: logs.used } : {}),
    ...(Object.keys(allSkipped).length > 0 ? { skipped: allSkipped } : {}),
  };
  return { kind: "trajectory", trajectory: { ...trajectory, turns: trajectory.turns.map(withThinking), meta } };
}

function ancestors(span: OtelSpan, byId: Map<string, OtelSpan>): OtelSpan[] {
  const out: OtelSpan[] = [];
  const seen = new Set<string>([span.spanId]);
  let parent = span.parentSpanId !== undefined ? byId.get(span.parentSpanId) : undefined;
  while (parent && !seen.has(parent.spanId)) {
    out.push(parent);
    seen.add(parent.spanId);
    parent = parent.parentSpanId !== undefined ? byId.get(parent.parentSpanId) : undefined;
  }
  return out;
}

/** The model's text and reasoning before a call as the turn's `thinking` (as the agent-log readers keep it). */
export function withThinking(turn: Turn): Turn {
  const meta = { ...turn.meta };
  const parts = [meta.agent_reasoning, meta.agent_thought].filter((p): p is string => typeof p === "string" && p.trim() !== "");
  delete meta.agent_reasoning;
  delete meta.agent_thought;
  return { ...turn, ...(parts.length > 0 ? { thinking: parts.join("\n\n") } : {}), meta };
}

/** The chat a trace with tool spans shows (src/read/trace/conversation.ts), each tool span a call and its result. */
function conversation(spans: OtelSpan[], insideTool: (span: OtelSpan) => boolean, count: (what: string) => void): ChatMessage[] {
  return chatOf(spans, {
    kind: (span) => (isToolSpan(span) ? "tool" : isLlmSpan(span) ? "model" : undefined),
    insideTool,
    nested: { tool: "nested_tool_span", model: "nested_llm_span" },
    count,
    toolAnswer(span, asked) {
      const run = toolExecution(span);
      if (!run) return "tool_span_without_name";
      if (run.result === undefined) return "tool_span_without_result";
      const id = run.call.id ?? `span-${span.spanId}`;
      // The arguments the model wrote for the call, where the tool span recorded none.
      const known = run.call.id !== undefined ? asked.byId.get(run.call.id)?.function.arguments : undefined;
      const args =
        isRecord(run.call.function.arguments) && Object.keys(run.call.function.arguments).length === 0 && known !== undefined
          ? known
          : run.call.function.arguments;
      return { call: { ...run.call, id, function: { ...run.call.function, arguments: args } }, result: run.result, isError: run.error };
    },
    modelTurn(span) {
      const inputs = inputMessages(span);
      const system = systemInstructions(span);
      return {
        system: system !== undefined ? [system] : inputs.filter((m) => m.role === "system" || m.role === "developer").map((m) => m.content),
        users: inputs.filter((m) => m.role === "user" || m.role === "human").map((m) => m.content),
        reply: outputMessage(span),
      };
    },
  });
}

/** A trace without tool spans: the chat its fullest model call held (input messages and reply), if any. */
function historyMessages(llms: OtelSpan[]): ChatMessage[] | undefined {
  let best: { span: OtelSpan; inputs: ChatMessage[] } | undefined;
  for (const span of llms) {
    const inputs = inputMessages(span);
    if (!best || inputs.length >= best.inputs.length) best = { span, inputs };
  }
  if (!best?.inputs.some((m) => m.role === "tool")) return undefined;
  const system = systemInstructions(best.span);
  const reply = outputMessage(best.span);
  return [...(system !== undefined ? [{ role: "system", content: system }] : []), ...best.inputs, ...(reply ? [reply] : [])];
}
