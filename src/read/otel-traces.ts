import type { SourceRef, Turn } from "../core/trajectory.ts";
import { quarantine, rowItem } from "./chat-rows/row-item.ts";
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
import { exportSpans, isTracesExport, type OtelSpan, OtlpFieldError, otherSignal } from "./otel/otlp.ts";
import { firstLine, parseJsonLine, type Reader, type ReaderOptions, type ReadItem } from "./reader.ts";
import { isRecord, jsonObjectLines, MAX_JSON_DEPTH, nestsTooDeep } from "./record-helpers.ts";

const FORMAT = "otel-traces";

/*
 * Agent traces exported as OpenTelemetry spans: OTLP/JSON `ExportTraceServiceRequest`s, one per
 * line as the OpenTelemetry Collector's file exporter writes them (or one document), with the
 * attributes of the OpenTelemetry GenAI semantic conventions, OpenInference or OpenLLMetry
 * (src/read/otel/messages.ts names them; src/read/otel/otlp.ts the OTLP shape).
 *
 * A whole-file reader: the spans of every line are grouped by `traceId` (a trace's spans come
 * in many export batches), so memory is bounded by the file; each line is bounded by
 * `input.max_line_bytes`. One trace = one trajectory, id = the trace id, its spans in start order:
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
 *   alone, tools run by application code): the fullest inference span's input messages and reply,
 *   read as a chat row.
 * - Domain (unless set): from the tools, as chat rows (src/read/chat-rows/domain.ts). Meta: `agent`
 *   (`gen_ai.agent.name`, `agent.name`, else the resource's `service.name`), `model`,
 *   `service_name`, `conversation_id` (`gen_ai.conversation.id`, `session.id`), `spans`.
 *
 * Quarantined: a line that is not an OTLP traces export (logs and metrics lines named as such), or
 * whose field has the wrong type (naming the line and field); a trace with no GenAI / OpenInference
 * span (an HTTP service's spans), or with no tool call answered by its result.
 */
export const otelTracesReader: Reader = {
  name: FORMAT,
  domain: "from the tools",
  description: "OpenTelemetry OTLP/JSON trace exports of agents (GenAI semconv or OpenInference spans), one trace per trajectory",

  sniff(head) {
    const text = head.replace(/^\uFEFF/, "");
    const line = firstLine(text).trim();
    if (line.startsWith("{") && line !== "{") {
      const parsed = parseJsonLine(line);
      if (parsed.ok) return isTracesExport(parsed.value);
    }
    // A pretty-printed export, or a first line longer than the head.
    return /^\{\s*"resource_?[sS]pans"\s*:\s*\[\s*(\]|\{\s*"(resource|scope_?[sS]pans|instrumentationLibrarySpans|schema_?[uU]rl)"\s*:)/.test(
      text.trimStart(),
    );
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    const { range, ...whole } = options;
    if (range && range.start > 0) return;
    const traces = new Map<string, OtelSpan[]>();
    let order = 0;
    // Lines read, and how many of them were exports read without fault.
    let lines = 0;
    let exports = 0;
    for await (const line of jsonObjectLines(path, whole, FORMAT)) {
      lines += 1;
      if (line.kind === "quarantine") {
        yield line;
        continue;
      }
      const { record, source } = line;
      const lineNo = source.line ?? 1;
      const fail = (field: string | undefined, reason: string): ReadItem =>
        quarantine(source, { ...(field ? { field } : {}), reason: `line ${lineNo}: ${reason}` }, line.text);
      if (!isTracesExport(record)) {
        const signal = otherSignal(record);
        yield signal
          ? fail(undefined, `an OTLP ${signal} export, not spans: only traces are read`)
          : fail(
              "resourceSpans",
              `expected an OTLP traces export ({"resourceSpans": [...]}), got an object with keys ${Object.keys(record).slice(0, 8).join(", ")}`,
            );
        continue;
      }
      if (nestsTooDeep(record)) {
        yield fail(undefined, `the export nests deeper than ${MAX_JSON_DEPTH} levels`);
        continue;
      }
      let spans: OtelSpan[];
      try {
        spans = exportSpans(record, { line: lineNo, offset: source.offset ?? 0, order });
      } catch (err) {
        if (!(err instanceof OtlpFieldError)) throw err;
        yield fail(err.field, err.message);
        continue;
      }
      exports += 1;
      order += spans.length;
      for (const span of spans) {
        const trace = traces.get(span.traceId);
        if (trace) trace.push(span);
        else traces.set(span.traceId, [span]);
      }
    }
    for (const [traceId, spans] of traces) yield traceItem(traceId, spans, path, options);
    // Exports with empty span lists only: nothing to read, said once for the file.
    if (traces.size === 0 && exports > 0 && exports === lines)
      yield quarantine(
        { uri: path, line: 1, offset: 0, format: FORMAT },
        { field: "resourceSpans", reason: `the file's ${exports} OTLP traces export(s) hold no spans` },
      );
  },
};

function traceItem(traceId: string, unsorted: OtelSpan[], path: string, options: ReaderOptions): ReadItem {
  const first = unsorted.reduce((a, b) => (b.order < a.order ? b : a));
  const source: SourceRef = { uri: path, line: first.line, offset: first.offset, format: FORMAT };
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
    return fail(
      undefined,
      `not an agent trace: its ${spans.length} span(s) (${names.join(", ")}) carry no GenAI (gen_ai.*), OpenInference or OpenLLMetry attributes`,
    );
  }
  const skipped: Record<string, number> = duplicates > 0 ? { duplicate_span: duplicates } : {};
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
    spans: spans.length,
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
function withThinking(turn: Turn): Turn {
  const meta = { ...turn.meta };
  const parts = [meta.agent_reasoning, meta.agent_thought].filter((p): p is string => typeof p === "string" && p.trim() !== "");
  delete meta.agent_reasoning;
  delete meta.agent_thought;
  return { ...turn, ...(parts.length > 0 ? { thinking: parts.join("\n\n") } : {}), meta };
}

/**
 * The chat a trace with tool spans shows: the first model call's system and user messages, each
 * later user message, each reply's text and reasoning, and each tool span as a call and its result.
 */
function conversation(spans: OtelSpan[], insideTool: (span: OtelSpan) => boolean, count: (what: string) => void): ChatMessage[] {
  const messages: ChatMessage[] = [];
  let users = 0;
  let started = false;
  let pending: ChatMessage | undefined;
  const flush = () => {
    if (pending && (pending.content.trim() !== "" || pending.reasoning_content)) messages.push(pending);
    pending = undefined;
  };
  // Arguments the model wrote for a call, by id, where the tool span recorded none.
  const requested = new Map<string, unknown>();
  for (const span of spans) {
    if (isToolSpan(span)) {
      if (insideTool(span)) {
        count("nested_tool_span");
        continue;
      }
      const run = toolExecution(span);
      if (!run) {
        count("tool_span_without_name");
        continue;
      }
      if (run.result === undefined) {
        count("tool_span_without_result");
        continue;
      }
      const id = run.call.id ?? `span-${span.spanId}`;
      const known = run.call.id !== undefined ? requested.get(run.call.id) : undefined;
      const args =
        isRecord(run.call.function.arguments) && Object.keys(run.call.function.arguments).length === 0 && known !== undefined
          ? known
          : run.call.function.arguments;
      const reply = pending ?? { role: "assistant", content: "" };
      pending = undefined;
      messages.push({
        ...reply,
        role: "assistant",
        tool_calls: [{ ...run.call, id, function: { ...run.call.function, arguments: args } }],
      });
      messages.push({ role: "tool", tool_call_id: id, content: run.result, ...(run.error ? { is_error: true } : {}) });
      continue;
    }
    if (!isLlmSpan(span)) continue;
    if (insideTool(span)) {
      count("nested_llm_span");
      continue;
    }
    const inputs = inputMessages(span);
    const system = systemInstructions(span);
    // The agent's instructions, from its first model call.
    if (!started) {
      started = true;
      if (system !== undefined) messages.push({ role: "system", content: system });
      else for (const m of inputs) if (m.role === "system" || m.role === "developer") messages.push({ role: "system", content: m.content });
    }
    const userMessages = inputs.filter((m) => m.role === "user" || m.role === "human");
    if (userMessages.length > users) {
      flush();
      for (const m of userMessages.slice(users)) messages.push({ role: "user", content: m.content });
      users = userMessages.length;
    }
    const reply = outputMessage(span);
    if (reply) {
      flush();
      for (const c of reply.tool_calls ?? []) if (c.id !== undefined) requested.set(c.id, c.function.arguments);
      pending = {
        role: "assistant",
        content: reply.content,
        ...(reply.reasoning_content ? { reasoning_content: reply.reasoning_content } : {}),
      };
    }
  }
  flush();
  return messages;
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
