/** The OpenTelemetry trace reader (src/read/otel-traces.ts) on the hand-written exports in test/fixtures/handmade/otel/ and variants built here. */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import { trajectoryInputSchema } from "../src/core/trajectory-schema.ts";
import { otelTracesReader } from "../src/read/otel-traces.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { detectFormat } from "../src/read/registry.ts";
import { collect, ROOT, tempDir } from "./helpers.ts";

const OPTIONS = { maxLineBytes: 1 << 22 };
const DIR = join(ROOT, "test/fixtures/handmade/otel");
const SEMCONV = join(DIR, "genai-semconv.jsonl");
const OPENINFERENCE = join(DIR, "openinference.jsonl");
const LEGACY = join(DIR, "legacy-events.json");
const HTTP = join(DIR, "http-server.jsonl");

const read = (path: string, options = OPTIONS): Promise<ReadItem[]> => collect(otelTracesReader.read(path, options));

function trajectories(items: ReadItem[]): Trajectory[] {
  return items.flatMap((item) => (item.kind === "trajectory" ? [item.trajectory] : []));
}

function quarantined(items: ReadItem[]): { reason: string; field?: string; line?: number }[] {
  return items.flatMap((item) =>
    item.kind === "quarantine"
      ? [{ reason: item.entry.reason, ...(item.entry.field ? { field: item.entry.field } : {}), line: item.entry.source.line }]
      : [],
  );
}

function write(lines: unknown[], name = "traces.jsonl"): string {
  const path = join(tempDir("lwm-otel-"), name);
  writeFileSync(path, `${lines.map((line) => (typeof line === "string" ? line : JSON.stringify(line))).join("\n")}\n`);
  return path;
}

// Builders for exports made here (the fixtures are the spec-shaped examples).
type Attr = string | number | boolean | Record<string, unknown>;
const value = (v: Attr) =>
  typeof v === "string"
    ? { stringValue: v }
    : typeof v === "boolean"
      ? { boolValue: v }
      : typeof v === "number"
        ? { intValue: String(v) }
        : v;
const attrs = (map: Record<string, Attr>) => Object.entries(map).map(([key, v]) => ({ key, value: value(v) }));
interface SpanSpec {
  trace?: string;
  id: string;
  parent?: string;
  name?: string;
  start: number;
  attributes: Record<string, Attr>;
  status?: Record<string, unknown>;
}
const TRACE = "11111111111111111111111111111111";
const span = (s: SpanSpec) => ({
  traceId: s.trace ?? TRACE,
  spanId: s.id,
  parentSpanId: s.parent ?? "",
  name: s.name ?? "span",
  kind: 1,
  startTimeUnixNano: String(1_700_000_000_000_000_000n + BigInt(s.start) * 1_000_000n),
  endTimeUnixNano: String(1_700_000_000_000_000_000n + BigInt(s.start + 10) * 1_000_000n),
  attributes: attrs(s.attributes),
  status: s.status ?? {},
});
const exportOf = (...spans: unknown[]) => ({
  resourceSpans: [{ resource: { attributes: attrs({ "service.name": "svc" }) }, scopeSpans: [{ scope: { name: "t" }, spans }] }],
});
const tool = (id: string, start: number, name: string, args: unknown, result?: string, extra: Record<string, Attr> = {}) =>
  span({
    id,
    start,
    name: `execute_tool ${name}`,
    attributes: {
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": name,
      "gen_ai.tool.call.id": `call-${id}`,
      "gen_ai.tool.call.arguments": JSON.stringify(args),
      ...(result !== undefined ? { "gen_ai.tool.call.result": result } : {}),
      ...extra,
    },
  });
const chat = (id: string, start: number, input: unknown[], output: unknown[]) =>
  span({
    id,
    start,
    name: "chat m",
    attributes: {
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": "m-1",
      "gen_ai.input.messages": JSON.stringify(input),
      "gen_ai.output.messages": JSON.stringify(output),
    },
  });
const USER = { role: "user", parts: [{ type: "text", content: "count the files" }] };

describe("otel-traces reader: GenAI semantic conventions", () => {
  it("reads a trace spread over two export lines: tool spans in start order, thinking, errors, dialogue, system and final answer", async () => {
    const items = await read(SEMCONV);
    expect(quarantined(items)).toEqual([]);
    const [t] = trajectories(items);
    if (!t) throw new Error("no trajectory");
    expect(trajectoryInputSchema.safeParse(t).success).toBe(true);
    expect(t.id).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
    expect(t.source).toMatchObject({ format: "otel-traces", line: 1 });
    expect(t.domain).toBe("swe");
    expect(t.task).toBe("The health check test fails; find out why and fix it.");
    expect(t.turns.map((turn) => [turn.action, turn.observation])).toEqual([
      ["pytest -q tests/test_health.py", "F\nE  assert 'ok' == 'healthy'\n1 failed"],
      ['{"name":"read_file","arguments":{"path":"app/health.py"}}', "def health():\n    return 'ok'\n"],
      [
        '{"name":"read_file","arguments":{"path":"app/missing.py"}}',
        "FileNotFoundError: [Errno 2] No such file or directory: 'app/missing.py'",
      ],
      // An MCP CallToolResult as the result: its text content.
      [
        '{"name":"edit_file","arguments":{"path":"app/health.py","old":"\'ok\'","new":"\'healthy\'"}}',
        "Edited app/health.py (1 replacement)",
      ],
    ]);
    expect(t.turns[0]?.thinking).toBe("I should run the tests first.\n\nRunning the test suite.");
    expect(t.turns[0]?.meta).toEqual({ tool: "bash" });
    expect(t.turns[1]?.meta?.is_error).toBeUndefined();
    expect(t.turns[2]?.meta?.is_error).toBe(true);
    expect(t.turns[3]?.meta?.dialogue).toEqual([{ role: "user", text: "Only touch app/health.py please." }]);
    expect(t.turns[3]?.thinking).toBe("The handler returns 'ok' but the test expects 'healthy'. Editing it.");
    expect(t.meta).toMatchObject({
      agent: "repo-fixer",
      model: "gpt-4.1-2025-04-14",
      agent_system: "You are a coding agent working in /srv/app. Use the tools.",
      final_answer: "Fixed: the health handler now returns 'healthy'.",
      service_name: "repo-fixer",
      conversation_id: "conv_7f3a",
      spans: 9,
    });
  });

  it("orders spans by start time, not by where the exporter wrote them", async () => {
    const lines = readFileSync(SEMCONV, "utf8").trim().split("\n").reverse();
    const [swapped] = trajectories(await read(write(lines)));
    const [original] = trajectories(await read(SEMCONV));
    expect(swapped?.turns).toEqual(original?.turns);
    expect(swapped?.source.line).toBe(1);
  });

  it("reads the older conventions from one pretty-printed document: message events, gen_ai.prompt.N attributes, a structured result", async () => {
    const detection = await detectFormat(LEGACY);
    expect(detection.kind === "format" && detection.reader.name).toBe("otel-traces");
    expect(detection.kind === "format" && detection.cuttable).toBe(false);
    const [t] = trajectories(await read(LEGACY));
    if (!t) throw new Error("no trajectory");
    expect(trajectoryInputSchema.safeParse(t).success).toBe(true);
    expect(t.domain).toBe("terminal");
    expect(t.task).toBe("Is the disk on this box full?");
    // The call's arguments come from the gen_ai.choice event (the tool span recorded none).
    expect(t.turns.map((turn) => turn.action)).toEqual(["df -h /"]);
    expect(JSON.parse(t.turns[0]?.observation ?? "")).toEqual({
      stdout: "Filesystem Size Used Avail Use% Mounted on\n/dev/sda1 50G 31G 19G 62% /",
      exit_code: 0,
    });
    expect(t.turns[0]?.thinking).toBe("Let me check disk usage.");
    expect(t.meta).toMatchObject({
      agent_system: "You are an on-call assistant with a shell.",
      final_answer: "No: / is 62% used, 19G free.",
    });
  });

  it("takes a call's arguments from the model's reply when the tool span left them out", async () => {
    const reply = [{ role: "assistant", parts: [{ type: "tool_call", id: "call-t1", name: "list_dir", arguments: { path: "/tmp" } }] }];
    const bare = tool("t1", 20, "list_dir", {}, "a\nb");
    const path = write([exportOf(chat("c1", 0, [USER], reply), bare)]);
    const [t] = trajectories(await read(path));
    expect(t?.turns.map((turn) => turn.action)).toEqual(['{"name":"list_dir","arguments":{"path":"/tmp"}}']);
  });

  it("keeps a tool span nested in another (an MCP client span under the framework's) as detail, not a turn", async () => {
    const outer = tool("t1", 10, "get_weather", { city: "Oslo" }, "rain, 7°C");
    const inner = span({
      id: "t2",
      parent: "t1",
      start: 11,
      name: "tools/call get_weather",
      attributes: {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "get_weather",
        "mcp.method.name": "tools/call",
        "gen_ai.tool.call.result": "{}",
      },
    });
    const [t] = trajectories(await read(write([exportOf(chat("c1", 0, [USER], []), outer, inner)])));
    expect(t?.turns.map((turn) => turn.observation)).toEqual(["rain, 7°C"]);
    expect(t?.domain).toBe("mcp");
    expect(t?.meta?.skipped).toEqual({ nested_tool_span: 1 });
  });

  it("reads a span exported twice once", async () => {
    const line = exportOf(chat("c1", 0, [USER], []), tool("t1", 10, "bash", { command: "ls" }, "a"));
    const [t] = trajectories(await read(write([line, line])));
    expect(t?.turns.map((turn) => turn.action)).toEqual(["ls"]);
    expect(t?.meta).toMatchObject({ spans: 2, skipped: { duplicate_span: 2 } });
  });

  it("reads a model client traced alone (no tool spans) from its fullest call's messages", async () => {
    const history = [
      USER,
      { role: "assistant", parts: [{ type: "tool_call", id: "c9", name: "shell", arguments: { command: "ls | wc -l" } }] },
      { role: "tool", parts: [{ type: "tool_call_response", id: "c9", response: "42" }] },
    ];
    const path = write([
      exportOf(
        chat("c1", 0, [USER], []),
        chat("c2", 50, history, [{ role: "assistant", parts: [{ type: "text", content: "42 files." }] }]),
      ),
    ]);
    const [t] = trajectories(await read(path));
    expect(t?.turns.map((turn) => [turn.action, turn.observation])).toEqual([["ls | wc -l", "42"]]);
    expect(t?.meta?.final_answer).toBe("42 files.");
  });
});

describe("otel-traces reader: OpenInference", () => {
  it("reads AGENT / LLM / TOOL spans: flattened messages, reasoning contents, tool specs, the tool's input and output values", async () => {
    const detection = await detectFormat(OPENINFERENCE);
    expect(detection.kind === "format" && detection.reader.name).toBe("otel-traces");
    const [t] = trajectories(await read(OPENINFERENCE));
    if (!t) throw new Error("no trajectory");
    expect(trajectoryInputSchema.safeParse(t).success).toBe(true);
    expect(t.domain).toBe("mcp");
    expect(t.task).toBe("Find me a flight from Lisbon to Oslo next Friday.");
    expect(t.turns).toHaveLength(1);
    expect(t.turns[0]?.action).toBe('{"name":"search_flights","arguments":{"origin":"LIS","destination":"OSL"}}');
    expect(JSON.parse(t.turns[0]?.observation ?? "")).toEqual([{ flight: "TP1234", departs: "09:40", price_eur: 212 }]);
    expect(t.turns[0]?.meta).toMatchObject({ tool: "search_flights", observation_format: "json" });
    expect(t.turns[0]?.thinking).toBe("Need to search flights.\n\nSearching flights.");
    expect(t.meta?.agent_system).toMatch(
      /^You help users plan trips\.\n\n## Tools\n\n\{"type":"function","function":\{"name":"search_flights"/,
    );
    expect(t.meta).toMatchObject({ agent: "travel-helper", model: "claude-sonnet-4", conversation_id: "sess-42" });
    expect(t.meta?.final_answer).toBe("There is a direct flight TP1234 at 09:40 for 212 EUR.");
  });

  it("takes the task from the AGENT span's input.value when no model call shows the user message", async () => {
    const agent = span({
      id: "a1",
      start: 0,
      attributes: { "openinference.span.kind": "AGENT", "input.value": JSON.stringify({ input: "how many files?" }) },
    });
    const toolSpan = span({
      id: "t1",
      parent: "a1",
      start: 5,
      attributes: {
        "openinference.span.kind": "TOOL",
        "tool.name": "run_command",
        "input.value": JSON.stringify({ command: "ls" }),
        "output.value": "a b",
      },
    });
    const [t] = trajectories(await read(write([exportOf(agent, toolSpan)])));
    expect(t?.task).toBe("how many files?");
    expect(t?.turns.map((turn) => [turn.action, turn.observation])).toEqual([["ls", "a b"]]);
    expect(t?.domain).toBe("terminal");
  });
});

describe("otel-traces reader: what is not a trajectory", () => {
  it("an HTTP service's spans (no GenAI attributes) are quarantined per trace, saying why", async () => {
    const items = await read(HTTP);
    expect(trajectories(items)).toEqual([]);
    expect(items[0]?.kind === "quarantine" && items[0].entry.id).toBe("9e107d9d372bb6826bd81d3542a419d6");
    expect(quarantined(items)).toEqual([
      {
        reason: expect.stringMatching(/^not an agent trace: its 2 span\(s\) \("GET \/api\/cart", "SELECT shop.cart"\)/),
        line: 1,
      },
    ]);
  });

  it("a chat without tool calls, and tool spans whose results were not captured, are quarantined; other traces in the file still read", async () => {
    const chatOnly = {
      ...chat("c1", 0, [USER], [{ role: "assistant", parts: [{ type: "text", content: "hi" }] }]),
      traceId: "2".repeat(32),
    };
    const noResult = { ...tool("t9", 0, "bash", { command: "ls" }), traceId: "3".repeat(32) };
    const good = tool("t1", 0, "bash", { command: "ls" }, "x");
    const items = await read(write([exportOf(chatOnly, noResult), exportOf(good)]));
    expect(trajectories(items).map((t) => t.id)).toEqual([TRACE]);
    expect(quarantined(items)).toEqual([
      {
        reason: `no tool span, and no model call whose messages hold a tool call answered by its result`,
        line: 1,
      },
      {
        reason: `1 tool span(s), none with a result (gen_ai.tool.call.result, output.value) or an error: was content capture off?`,
        field: "attributes",
        line: 1,
      },
    ]);
  });

  it("bad lines are quarantined naming the line and field; the file's other lines are read", async () => {
    const badType = exportOf({ ...tool("t2", 5, "bash", { command: "pwd" }, "/"), traceId: 7 });
    const badAttr = exportOf({ ...tool("t3", 5, "bash", { command: "pwd" }, "/"), attributes: [{ key: 3, value: { stringValue: "x" } }] });
    const badTime = exportOf({ ...tool("t4", 5, "bash", { command: "pwd" }, "/"), startTimeUnixNano: "yesterday" });
    const metrics = { resourceMetrics: [{ resource: {}, scopeMetrics: [] }] };
    const path = write([
      exportOf(tool("t1", 0, "bash", { command: "ls" }, "x")),
      badType,
      badAttr,
      badTime,
      metrics,
      { messages: [] },
      "not json",
      "[1]",
    ]);
    const items = await read(path);
    expect(trajectories(items)).toHaveLength(1);
    expect(quarantined(items)).toEqual([
      {
        reason: "line 2: resourceSpans.0.scopeSpans.0.spans.0.traceId: expected a non-empty id string, got a number",
        field: "resourceSpans.0.scopeSpans.0.spans.0.traceId",
        line: 2,
      },
      {
        reason: "line 3: resourceSpans.0.scopeSpans.0.spans.0.attributes.0.key: expected a string, got a number",
        field: "resourceSpans.0.scopeSpans.0.spans.0.attributes.0.key",
        line: 3,
      },
      {
        reason: expect.stringContaining("line 4: resourceSpans.0.scopeSpans.0.spans.0.startTimeUnixNano: expected nanoseconds"),
        field: "resourceSpans.0.scopeSpans.0.spans.0.startTimeUnixNano",
        line: 4,
      },
      { reason: "line 5: an OTLP metrics export, not spans or log records: only traces and logs are read", line: 5 },
      {
        reason:
          'line 6: expected an OTLP export ({"resourceSpans": [...]}, {"resourceLogs": [...]}) or span ({"traceId", "spanId", …}), a Tempo or Jaeger answer ({"batches"}, {"trace"}, {"data"}, {"result"}), a Jaeger trace ({"traceID", "spans"}), Zipkin spans ({"traceId", "id", …}) or Python SDK spans ({"name", "context", …}), got an object with keys messages',
        field: "resourceSpans",
        line: 6,
      },
      { reason: expect.stringMatching(/^invalid JSON/), line: 7 },
      // A list is read as spans: its element is none.
      {
        reason: 'line 8: 0: expected a span (Zipkin\'s {"traceId", "id", …}, OTLP\'s {"traceId", "spanId", …}), got a number',
        field: "0",
        line: 8,
      },
    ]);
  });

  it("a file of exports without spans is one quarantine entry", async () => {
    const items = await read(write([{ resourceSpans: [] }, { resourceSpans: [{ resource: {}, scopeSpans: [] }] }]));
    expect(quarantined(items)).toEqual([{ reason: "the file's 2 OTLP traces export(s) hold no spans", field: "resourceSpans", line: 1 }]);
  });

  it("a line over input.max_line_bytes is quarantined without reading it", async () => {
    const big = exportOf(tool("t1", 0, "bash", { command: "ls" }, "x".repeat(5000)));
    const items = await read(write([big]), { maxLineBytes: 1000 });
    expect(quarantined(items)).toEqual([{ reason: expect.stringMatching(/over the 1000-byte limit \(input\.max_line_bytes\)/), line: 1 }]);
  });

  it("a task past the file's first byte reads nothing (the file is read whole by the first)", async () => {
    expect(await read(SEMCONV, { ...OPTIONS, range: { start: 10, end: 100 } } as typeof OPTIONS)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// OTLP logs (GenAI events), Jaeger and Zipkin JSON, JSON arrays of exports

const LOGS_EVENTS = join(DIR, "genai-events.logs.jsonl");
const LOGS_DETAILS = join(DIR, "inference-details.logs.json");
const SPANS_AND_LOGS = join(DIR, "spans-and-logs.jsonl");
const APP_LOGS = join(DIR, "app-logs.jsonl");
const JAEGER_API = join(DIR, "jaeger-api.json");
const JAEGER_UI = join(DIR, "jaeger-ui-download.json");
const ZIPKIN = join(DIR, "zipkin-v2.json");
const ZIPKIN_TRACES = join(DIR, "zipkin-traces.json");
const OTLP_ARRAY = join(DIR, "otlp-array.json");

/** A plain value as an OTLP AnyValue (a log record's body, a structured attribute). */
const anyValue = (v: unknown): Record<string, unknown> =>
  typeof v === "string"
    ? { stringValue: v }
    : typeof v === "boolean"
      ? { boolValue: v }
      : typeof v === "number"
        ? { intValue: String(v) }
        : Array.isArray(v)
          ? { arrayValue: { values: v.map(anyValue) } }
          : { kvlistValue: { values: Object.entries(v as object).map(([key, x]) => ({ key, value: anyValue(x) })) } };
interface LogSpec {
  ms: number;
  name?: string;
  body?: unknown;
  attributes?: Record<string, unknown>;
  trace?: string;
  span?: string;
}
const logRecord = (r: LogSpec) => ({
  timeUnixNano: String(1_700_000_000_000_000_000n + BigInt(r.ms) * 1_000_000n),
  ...(r.name !== undefined ? { eventName: r.name } : {}),
  ...(r.body !== undefined ? { body: anyValue(r.body) } : {}),
  attributes: Object.entries(r.attributes ?? { "gen_ai.system": "openai" }).map(([key, v]) => ({ key, value: anyValue(v) })),
  traceId: r.trace ?? "",
  spanId: r.span ?? "",
});
const logsExport = (...records: unknown[]) => ({
  resourceLogs: [
    { resource: { attributes: attrs({ "service.name": "svc" }) }, scopeLogs: [{ scope: { name: "t" }, logRecords: records }] },
  ],
});
const LS_CALL = { id: "call_1", type: "function", function: { name: "bash", arguments: '{"command": "ls /tmp"}' } };
/** One model call's older-convention events (history, then the reply) on span `span` of trace `trace`. */
const secondCall = (ms: number, span = "", trace = "") => [
  logRecord({ ms, span, trace, name: "gen_ai.user.message", body: { content: "what is in /tmp?" } }),
  logRecord({ ms: ms + 1, span, trace, name: "gen_ai.assistant.message", body: { tool_calls: [LS_CALL] } }),
  logRecord({ ms: ms + 2, span, trace, name: "gen_ai.tool.message", body: { content: "a.txt\nb.txt", id: "call_1" } }),
  logRecord({
    ms: ms + 3,
    span,
    trace,
    name: "gen_ai.choice",
    body: { index: 0, finish_reason: "stop", message: { content: "Two files." } },
  }),
];
const firstCall = (ms: number, span = "", trace = "") => [
  logRecord({ ms, span, trace, name: "gen_ai.user.message", body: { content: "what is in /tmp?" } }),
  logRecord({
    ms: ms + 1,
    span,
    trace,
    name: "gen_ai.choice",
    body: { index: 0, finish_reason: "tool_calls", message: { tool_calls: [LS_CALL] } },
  }),
];

describe("otel-traces reader: GenAI events in OTLP log exports", () => {
  it("reads the older conventions' message events (eventName, or the event.name attribute), one model call per span", async () => {
    const detection = await detectFormat(LOGS_EVENTS);
    expect(detection.kind === "format" && detection.reader.name).toBe("otel-traces");
    const items = await read(LOGS_EVENTS);
    expect(quarantined(items)).toEqual([]);
    const [t] = trajectories(items);
    if (!t) throw new Error("no trajectory");
    expect(trajectoryInputSchema.safeParse(t).success).toBe(true);
    expect(t.id).toBe("0af7651916cd43dd8448eb211c80319c");
    expect(t.source).toMatchObject({ format: "otel-traces", line: 1 });
    expect(t.domain).toBe("terminal");
    expect(t.task).toBe("Which directory under /var/log is the largest?");
    // The fullest call (the second: its history holds the call and the tool's answer) is the chat.
    expect(t.turns.map((turn) => [turn.action, turn.observation])).toEqual([
      ["du -sh /var/log/* | sort -h | tail -n 3", "48M\t/var/log/apt\n310M\t/var/log/nginx\n1.2G\t/var/log/journal"],
    ]);
    expect(t.meta).toMatchObject({
      agent: "log-inspector",
      service_name: "log-inspector",
      agent_system: "You are a sysadmin assistant. Use run_shell_command to inspect the machine.",
      final_answer: "/var/log/journal is the largest, at 1.2G.",
      spans: 0,
      log_records: 8,
      // The application's own log line in the trace ("agent started …") is no GenAI event.
      skipped: { non_genai_log_record: 1 },
    });
  });

  it("reads gen_ai.client.inference.operation.details events (structured attributes) without trace ids as the file's one trace", async () => {
    const detection = await detectFormat(LOGS_DETAILS);
    expect(detection.kind === "format" && detection.reader.name).toBe("otel-traces");
    expect(detection.kind === "format" && detection.cuttable).toBe(false);
    const [t, ...more] = trajectories(await read(LOGS_DETAILS));
    expect(more).toEqual([]);
    if (!t) throw new Error("no trajectory");
    expect(trajectoryInputSchema.safeParse(t).success).toBe(true);
    // No trace id: named by its conversation.
    expect(t.id).toBe("conv_2b9e");
    expect(t.task).toBe("How many yen is 250 euros today?");
    expect(t.turns.map((turn) => [turn.action, JSON.parse(turn.observation)])).toEqual([
      ['{"name":"get_exchange_rate","arguments":{"base":"EUR","quote":"JPY"}}', { rate: 162.41, as_of: "2025-06-27" }],
    ]);
    expect(t.meta).toMatchObject({
      model: "gpt-4.1-mini-2025-04-14",
      agent_system: "You are a currency assistant. Use get_exchange_rate for rates.",
      final_answer: "250 EUR is about 40,603 JPY at 162.41 yen per euro.",
      conversation_id: "conv_2b9e",
      log_records: 2,
    });
  });

  it("gathers records without span ids into model calls in time order (a call ends at its reply); a record exported twice is read once", async () => {
    const [first, ...rest] = firstCall(0);
    const path = write([logsExport(...secondCall(500)), logsExport(first, ...rest, first)]);
    const items = await read(path);
    expect(quarantined(items)).toEqual([]);
    const [t] = trajectories(items);
    expect(t?.id).toMatch(/^otel-logs-[0-9a-f]{16}$/);
    expect(t?.turns.map((turn) => [turn.action, turn.observation])).toEqual([["ls /tmp", "a.txt\nb.txt"]]);
    expect(t?.meta).toMatchObject({ final_answer: "Two files.", log_records: 6, skipped: { duplicate_log_record: 1 } });
    // As one call (no split at the first reply) the history would hold two user messages.
    expect(t?.turns[0]?.meta?.dialogue).toBeUndefined();
  });

  it("spans and log events of one trace in one file: a record is the event of its span; a span's message attributes win; a missing span's records are a call of their own", async () => {
    const items = await read(SPANS_AND_LOGS);
    expect(quarantined(items)).toEqual([]);
    const [t] = trajectories(items);
    if (!t) throw new Error("no trajectory");
    expect(trajectoryInputSchema.safeParse(t).success).toBe(true);
    expect(t.task).toBe("Does example.org have an MX record?");
    expect(t.turns.map((turn) => [turn.action, turn.observation])).toEqual([
      ['{"name":"dig","arguments":{"name":"example.org","type":"MX"}}', "example.org. 300 IN MX 10 mail.example.org."],
    ]);
    // The chat span's reply came as its gen_ai.choice event; the last call's span was not exported.
    expect(t.turns[0]?.thinking).toBe("I'll query the MX records.");
    expect(t.meta).toMatchObject({
      agent: "dns-checker",
      model: "gpt-4o-2024-08-06",
      final_answer: "Yes: example.org has one MX record, mail.example.org (priority 10).",
      spans: 3,
      log_records: 6,
    });
    // Attributes first: a span that records its messages keeps them over its events'.
    const own = chat("c1", 0, [USER], [{ role: "assistant", parts: [{ type: "text", content: "from the span" }] }]);
    const other = logRecord({ ms: 1, trace: TRACE, span: "c1", name: "gen_ai.choice", body: { message: { content: "from the event" } } });
    const path = write([exportOf(own, tool("t1", 10, "bash", { command: "ls" }, "x")), logsExport(other)]);
    const [both] = trajectories(await read(path));
    expect(both?.turns[0]?.thinking).toBe("from the span");
    expect(both?.meta?.log_records).toBe(1);
  });

  it("a details event (in the logs, or as a span event) gives a span without message attributes its messages; ids match in any case", async () => {
    const trace = "ab".repeat(16);
    const bare = span({ trace, id: "c1", start: 0, name: "chat m", attributes: { "gen_ai.operation.name": "chat" } });
    const messages = {
      "gen_ai.input.messages": [{ role: "user", parts: [{ type: "text", content: "count the files" }] }],
      "gen_ai.output.messages": [{ role: "assistant", parts: [{ type: "text", content: "Counting." }] }],
    };
    const details = logRecord({
      ms: 1,
      trace: trace.toUpperCase(),
      span: "C1",
      name: "gen_ai.client.inference.operation.details",
      attributes: messages,
    });
    const run = { ...tool("t1", 10, "bash", { command: "ls | wc -l" }, "3"), traceId: trace };
    const [fromLogs] = trajectories(await read(write([exportOf(bare, run), logsExport(details)])));
    expect(fromLogs?.task).toBe("count the files");
    expect(fromLogs?.turns.map((turn) => [turn.action, turn.thinking])).toEqual([["ls | wc -l", "Counting."]]);
    expect(fromLogs?.id).toBe(trace);
    expect(fromLogs?.meta).toMatchObject({ spans: 2, log_records: 1 });
    // The same event recorded on the span itself (an SDK without logs).
    const asEvent = {
      ...bare,
      events: [
        {
          name: "gen_ai.client.inference.operation.details",
          attributes: Object.entries(messages).map(([key, v]) => ({ key, value: anyValue(v) })),
        },
      ],
    };
    const [fromEvent] = trajectories(await read(write([exportOf(asEvent, run)])));
    expect(fromEvent?.turns.map((turn) => [turn.action, turn.thinking])).toEqual([["ls | wc -l", "Counting."]]);
  });

  it("an application's plain logs (no GenAI events) are quarantined per trace, saying what the records are", async () => {
    const detection = await detectFormat(APP_LOGS);
    expect(detection.kind === "format" && detection.reader.name).toBe("otel-traces");
    const items = await read(APP_LOGS);
    expect(trajectories(items)).toEqual([]);
    expect(quarantined(items)).toEqual([
      {
        reason:
          'not an agent trace: its 2 log record(s) ("POST /api/checkout 201 (38 ms)", "payment provider slow: 1.2 s") are no GenAI events (no gen_ai.* event name or attribute)',
        line: 1,
      },
      {
        reason:
          'not an agent trace: its 1 log record(s) ("inventory reservation failed: sku 4417 out of stock") are no GenAI events (no gen_ai.* event name or attribute)',
        line: 1,
      },
    ]);
  });

  it("a log export without records is one entry for the file; a wrong-typed log record field is quarantined naming the line and field", async () => {
    const empty = await read(write([{ resourceLogs: [{ resource: {}, scopeLogs: [{ scope: {}, logRecords: [] }] }] }]));
    expect(quarantined(empty)).toEqual([
      { reason: "the file's 1 OTLP logs export(s) hold no log records", field: "resourceLogs", line: 1 },
    ]);
    const good = logsExport(...firstCall(0, "s1", TRACE), ...secondCall(10, "s2", TRACE));
    const badName = logsExport({ ...logRecord({ ms: 0, trace: TRACE }), eventName: 7 });
    const badBody = logsExport({ ...logRecord({ ms: 0, trace: TRACE }), body: { intValue: "seven" } });
    const items = await read(write([good, badName, badBody]));
    expect(trajectories(items).map((t) => t.turns.length)).toEqual([1]);
    expect(quarantined(items)).toEqual([
      {
        reason: "line 2: resourceLogs.0.scopeLogs.0.logRecords.0.eventName: expected a string, got a number",
        field: "resourceLogs.0.scopeLogs.0.logRecords.0.eventName",
        line: 2,
      },
      {
        reason: expect.stringContaining("line 3: resourceLogs.0.scopeLogs.0.logRecords.0.body.intValue: expected an integer"),
        field: "resourceLogs.0.scopeLogs.0.logRecords.0.body.intValue",
        line: 3,
      },
    ]);
  });
});

describe("otel-traces reader: Jaeger JSON", () => {
  it("reads the query API's answer (pretty-printed, {data: [trace]}) trace by trace: typed tags, processes, CHILD_OF parents, an exception log", async () => {
    const detection = await detectFormat(JAEGER_API);
    expect(detection.kind === "format" && [detection.reader.name, detection.layout, detection.cuttable]).toEqual([
      "otel-traces",
      "wrapped-rows",
      false,
    ]);
    const items = await read(JAEGER_API);
    expect(quarantined(items)).toEqual([]);
    const [t] = trajectories(items);
    if (!t) throw new Error("no trajectory");
    expect(trajectoryInputSchema.safeParse(t).success).toBe(true);
    expect(t.id).toBe("7d1c3f05a2e94b61b0c85e1f9a3d2c44");
    expect(t.source).toMatchObject({ format: "otel-traces", row: 0 });
    expect(t.task).toBe("Triage ticket 812: find duplicates and close it if it is one.");
    // Spans in start order (the file lists the last model call first).
    expect(t.turns.map((turn) => [turn.action, turn.observation, turn.meta?.is_error ?? false])).toEqual([
      [
        '{"name":"search_tickets","arguments":{"query":"login page 500 after password reset"}}',
        '[{"id": 790, "title": "Login returns 500 after password reset", "status": "open"}]',
        false,
      ],
      // `error: true` and otel.status_code ERROR: the exception log's type and message are the observation.
      ['{"name":"close_ticket","arguments":{"id":812,"duplicate_of":790}}', "TicketLocked: ticket 812 is locked by an admin", true],
    ]);
    expect(t.turns[1]?.thinking).toBe("Ticket 790 is the same bug; closing 812 as its duplicate.");
    expect(t.meta).toMatchObject({
      agent: "ticket-triager",
      service_name: "ticket-triager",
      model: "claude-sonnet-4-5",
      conversation_id: "triage-812",
      final_answer: "Ticket 812 duplicates 790, but it is locked, so I could not close it; I left it open for an admin.",
      spans: 6,
    });
  });

  it("reads jaeger-ui's download (one compact line, two traces): an OpenInference agent, and an HTTP trace quarantined at its element", async () => {
    const detection = await detectFormat(JAEGER_UI);
    expect(detection.kind === "format" && [detection.reader.name, detection.layout]).toEqual(["otel-traces", "wrapped-rows"]);
    const items = await read(JAEGER_UI);
    const [t] = trajectories(items);
    expect(t?.task).toBe("What is 17% of 2,340?");
    // The TOOL span's parent is a FOLLOWS_FROM reference.
    expect(t?.turns.map((turn) => [turn.action, turn.observation, turn.thinking])).toEqual([
      ['{"name":"calculator","arguments":{"expression":"0.17 * 2340"}}', "397.8", "I will compute it."],
    ]);
    expect(t?.meta).toMatchObject({ agent: "calc-agent", model: "gpt-4o", final_answer: "17% of 2,340 is 397.8." });
    expect(items.flatMap((item) => (item.kind === "quarantine" ? [[item.entry.id, item.entry.source.row]] : []))).toEqual([
      ["9f8e7d6c5b4a39281706f5e4d3c2b1a0", 1],
    ]);
  });

  it("reads Jaeger traces one per line; a tag whose value is not its type is quarantined naming the line and field", async () => {
    const { data } = JSON.parse(readFileSync(JAEGER_API, "utf8")) as { data: Record<string, unknown>[] };
    const trace = data[0] as { traceID: string; spans: Record<string, unknown>[] };
    // An MCP client span under the search_tickets tool span (a CHILD_OF reference): the tool's detail, not a turn.
    const nested = {
      ...trace.spans[3],
      spanID: "e0e0e0e0e0e0e001",
      operationName: "tools/call search_tickets",
      references: [{ refType: "CHILD_OF", traceID: trace.traceID, spanID: "d0d0d0d0d0d0d001" }],
      tags: [
        { key: "gen_ai.operation.name", type: "string", value: "execute_tool" },
        { key: "gen_ai.tool.name", type: "string", value: "search_tickets" },
        { key: "gen_ai.tool.call.result", type: "string", value: "{}" },
      ],
    };
    const withNested = { ...trace, spans: [...trace.spans, nested] };
    const bad = structuredClone(trace);
    (bad.spans[1] as { tags: unknown[] }).tags.push({ key: "retries", type: "int64", value: "three" });
    const path = write([withNested, bad]);
    expect(otelTracesReader.sniff(readFileSync(path, "utf8"), path)).toBe(true);
    const items = await read(path);
    expect(trajectories(items).map((t) => [t.turns.length, t.meta?.skipped])).toEqual([[2, { nested_tool_span: 1 }]]);
    expect(quarantined(items)).toEqual([
      {
        reason: 'line 2: spans.1.tags.5.value: expected an integer for type "int64", got a string',
        field: "spans.1.tags.5.value",
        line: 2,
      },
    ]);
  });

  it("reads Jaeger API answers appended one per line (curl >> file), and names a wrong field of one by its trace", async () => {
    const answer = JSON.parse(readFileSync(JAEGER_API, "utf8")) as { data: { spans: Record<string, unknown>[] }[] };
    const other = structuredClone(answer);
    (other.data[0] as { spans: Record<string, unknown>[] }).spans[2] = { ...answer.data[0]?.spans[2], startTime: "noon" };
    const items = await read(write([answer, { data: [], total: 0 }, other]));
    expect(trajectories(items).map((t) => [t.id, t.source.line, t.turns.length])).toEqual([["7d1c3f05a2e94b61b0c85e1f9a3d2c44", 1, 2]]);
    expect(quarantined(items)).toEqual([
      {
        reason: "line 3: data.0.spans.2.startTime: expected microseconds since the epoch (a number), got a string",
        field: "data.0.spans.2.startTime",
        line: 3,
      },
    ]);
  });
});

describe("otel-traces reader: Zipkin JSON", () => {
  it("reads a Zipkin v2 span array (string tags, an error tag, an exception annotation in the Collector's form)", async () => {
    const detection = await detectFormat(ZIPKIN);
    expect(detection.kind === "format" && [detection.reader.name, detection.cuttable]).toEqual(["otel-traces", false]);
    const items = await read(ZIPKIN);
    expect(quarantined(items)).toEqual([]);
    const [t] = trajectories(items);
    if (!t) throw new Error("no trajectory");
    expect(trajectoryInputSchema.safeParse(t).success).toBe(true);
    expect(t.id).toBe("5af7183fb1d4cf5f7e1c29d3a4b0e8c1");
    expect(t.domain).toBe("terminal");
    expect(t.turns.map((turn) => [turn.action, turn.observation, turn.meta?.is_error ?? false])).toEqual([
      ["npm run lint", "tools/release.py:3:8: F401 [*] `os` imported but unused\nFound 1 error.", false],
      ["sed -i '/^import os$/d' tools/release.py && npm run lint", "CalledProcessError: sh: 1: ruff: not found", true],
    ]);
    expect(t.meta).toMatchObject({
      agent: "build-doctor",
      service_name: "build-doctor",
      agent_system: "You fix CI failures in this repository.",
      final_answer: "The lint step still fails: ruff is not installed in this container.",
      spans: 6,
    });
  });

  it("reads Zipkin's list of traces (an array of span arrays): OpenLLMetry spans, and an HTTP trace quarantined", async () => {
    const detection = await detectFormat(ZIPKIN_TRACES);
    expect(detection.kind === "format" && detection.reader.name).toBe("otel-traces");
    const items = await read(ZIPKIN_TRACES);
    const [t] = trajectories(items);
    expect(t?.id).toBe("00000000000000004bf92f3577b34da6");
    expect(t?.turns.map((turn) => [turn.action, JSON.parse(turn.observation)])).toEqual([
      ['{"name":"get_quote","arguments":{"symbol":"ACME"}}', { symbol: "ACME", price: 41.07, currency: "USD" }],
    ]);
    expect(t?.meta).toMatchObject({ agent: "quote-bot", model: "gpt-4o-mini", final_answer: "ACME trades at 41.07 USD." });
    expect(quarantined(items)).toEqual([{ reason: expect.stringMatching(/^not an agent trace: its 1 span\(s\) \("post \/v1\/quotes"\)/) }]);
  });

  it("reads Zipkin spans one per line: events as annotations in the specification's form, a v1 span's binary annotations as its tags", async () => {
    const z = (id: string, start: number, extra: Record<string, unknown>) => ({
      traceId: "a".repeat(32),
      id,
      ...(id !== "0000000000000001" ? { parentId: "0000000000000001" } : {}),
      timestamp: 1_700_000_000_000_000 + start * 1000,
      duration: 1000,
      ...extra,
    });
    const event = (name: string, attributes: Record<string, string>) => `"${name}": ${JSON.stringify(attributes)}`;
    const chatSpan = z("0000000000000002", 0, {
      name: "chat",
      localEndpoint: { serviceName: "zip-agent" },
      tags: { "gen_ai.operation.name": "chat" },
      annotations: [
        { timestamp: 1, value: event("gen_ai.user.message", { "gen_ai.event.content": '{"content": "uptime?"}' }) },
        {
          timestamp: 2,
          value: event("gen_ai.choice", { "gen_ai.event.content": '{"message": {"content": "Checking uptime."}}' }),
        },
      ],
    });
    // Zipkin v1: no tags, binary annotations; the service named by an annotation's endpoint.
    const v1Tool = z("0000000000000003", 5, {
      name: "execute_tool shell",
      annotations: [{ timestamp: 1_700_000_000_005_000, value: "cs", endpoint: { serviceName: "zip-agent-v1" } }],
      binaryAnnotations: [
        { key: "gen_ai.operation.name", value: "execute_tool" },
        { key: "gen_ai.tool.name", value: "shell" },
        { key: "gen_ai.tool.call.arguments", value: '{"command": "uptime"}' },
        { key: "gen_ai.tool.call.result", value: " 10:00:01 up 3 days" },
      ],
    });
    const root = z("0000000000000001", 0, { name: "agent", tags: { "gen_ai.operation.name": "invoke_agent" } });
    const path = write([root, chatSpan, v1Tool]);
    expect((await detectFormat(path)).kind === "format" && ((await detectFormat(path)) as { reader: { name: string } }).reader.name).toBe(
      "otel-traces",
    );
    const [t] = trajectories(await read(path));
    expect(t?.task).toBe("uptime?");
    expect(t?.turns.map((turn) => [turn.action, turn.observation, turn.thinking])).toEqual([
      ["uptime", " 10:00:01 up 3 days", "Checking uptime."],
    ]);
    expect(t?.meta?.service_name).toBe("zip-agent");
  });

  it("reads Zipkin's list-of-traces answers appended one per line", async () => {
    const answer = JSON.parse(readFileSync(ZIPKIN_TRACES, "utf8")) as unknown[][];
    const items = await read(write([answer, [answer[1]]]));
    expect(trajectories(items).map((t) => [t.id, t.turns.length])).toEqual([["00000000000000004bf92f3577b34da6", 1]]);
    // The HTTP trace, in both answers: one trace, its span read once.
    expect(quarantined(items)).toEqual([
      { reason: expect.stringMatching(/^not an agent trace: its 1 span\(s\) \("post \/v1\/quotes"\)/), line: 1 },
    ]);
  });

  it("a wrong-typed Zipkin span is quarantined naming its element and field; the array's other spans are read", async () => {
    const spans = JSON.parse(readFileSync(ZIPKIN, "utf8")) as Record<string, unknown>[];
    const path = join(tempDir("lwm-otel-"), "spans.json");
    writeFileSync(path, JSON.stringify([{ ...spans[0], tags: { "gen_ai.operation.name": { nested: true } } }, ...spans.slice(1)], null, 2));
    const items = await read(path);
    expect(quarantined(items)).toEqual([
      { reason: "element 0: tags.gen_ai.operation.name: expected a string, got an object", field: "tags.gen_ai.operation.name" },
    ]);
    expect(items[0]?.kind === "quarantine" && items[0].entry.source.row).toBe(0);
    expect(trajectories(items).map((t) => t.turns.length)).toEqual([2]);
  });
});

describe("otel-traces reader: a JSON array of OTLP exports", () => {
  it("is detected by its elements and read element by element, a trace's spans gathered over them", async () => {
    const detection = await detectFormat(OTLP_ARRAY);
    expect(detection.kind === "format" && [detection.reader.name, detection.layout, detection.cuttable]).toEqual([
      "otel-traces",
      "json-array",
      false,
    ]);
    const [t] = trajectories(await read(OTLP_ARRAY));
    expect(t?.source).toMatchObject({ row: 0 });
    expect(t?.turns.map((turn) => [turn.action, turn.observation])).toEqual([["ls src/*.py", "src/app.py\nsrc/cli.py"]]);
    expect(t?.meta).toMatchObject({ agent: "file-lister", final_answer: "There are two: src/app.py and src/cli.py.", spans: 4 });
  });

  it("a bad element is quarantined naming the element and field; a compact array reads the same", async () => {
    const exports = JSON.parse(readFileSync(OTLP_ARRAY, "utf8")) as unknown[];
    const bad = exportOf({ ...tool("t9", 0, "bash", { command: "pwd" }, "/"), spanId: 9 });
    const path = join(tempDir("lwm-otel-"), "exports.json");
    writeFileSync(path, JSON.stringify([...exports, bad]));
    const detection = await detectFormat(path);
    expect(detection.kind === "format" && detection.reader.name).toBe("otel-traces");
    const items = await read(path);
    expect(trajectories(items).map((t) => t.id)).toEqual(["b2e1f0d9c8b7a6958473625140f1e2d3"]);
    expect(quarantined(items)).toEqual([
      {
        reason: "element 2: resourceSpans.0.scopeSpans.0.spans.0.spanId: expected a non-empty id string, got a number",
        field: "resourceSpans.0.scopeSpans.0.spans.0.spanId",
      },
    ]);
  });
});

describe("otel-traces detection", () => {
  it("claims OTLP trace exports, JSONL or one document, and nothing else", () => {
    const sniff = (text: string) => otelTracesReader.sniff(text, "x");
    expect(sniff(`${JSON.stringify(exportOf(tool("t1", 0, "bash", {}, "x")))}\n`)).toBe(true);
    expect(sniff('{\n  "resourceSpans": [\n    {\n      "resource": {')).toBe(true);
    // A first line longer than the head.
    expect(sniff('{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"a')).toBe(true);
    expect(sniff(JSON.stringify({ resourceMetrics: [] }))).toBe(false);
    expect(sniff(JSON.stringify({ resourceProfiles: [] }))).toBe(false);
    expect(sniff(JSON.stringify({ messages: [{ role: "user", content: "resourceSpans" }] }))).toBe(false);
    expect(sniff(JSON.stringify({ resourceSpans: "no" }))).toBe(false);
    // An array of exports is told by its elements (format: auto offers them one by one), not by the sniff.
    expect(sniff('[{"resourceSpans": []}]')).toBe(false);
  });

  it("claims OTLP log exports, Jaeger traces and answers, Zipkin spans and span lists, strictly", () => {
    const sniff = (text: string) => otelTracesReader.sniff(text, "x");
    const zipkin = { traceId: "a".repeat(32), id: "b".repeat(16), name: "get", timestamp: 1, localEndpoint: { serviceName: "s" } };
    const jaeger = { traceID: "c".repeat(32), spans: [], processes: {} };
    expect(sniff(JSON.stringify({ resourceLogs: [] }))).toBe(true);
    expect(sniff('{\n  "resourceLogs": [\n    {\n      "resource": {')).toBe(true);
    expect(sniff('{"resource_logs":[{"scope_logs":[{"log_records":[{"time_unix_nano":"1","body":{"string_value":"a')).toBe(true);
    expect(sniff(JSON.stringify(jaeger))).toBe(true);
    expect(sniff(JSON.stringify({ data: [jaeger], total: 0, limit: 0, offset: 0, errors: null }))).toBe(true);
    // Jaeger's answer pretty-printed, or longer than the head.
    expect(sniff('{\n    "data": [\n        {\n            "traceID": "7d1c3f05a2e94b61",\n            "spans": [\n')).toBe(true);
    expect(sniff(JSON.stringify(zipkin))).toBe(true);
    expect(sniff(JSON.stringify([zipkin, zipkin]))).toBe(true);
    expect(sniff(JSON.stringify([[zipkin], [zipkin]]))).toBe(true);
    expect(sniff('[\n  {\n    "traceId": "5af7183fb1d4cf5f",\n    "id": "e000000000000001",\n')).toBe(true);
    // Negative controls: look-alikes of other tools.
    expect(sniff(JSON.stringify({ data: [] }))).toBe(false);
    expect(sniff(JSON.stringify({ data: [{ id: 1, text: "traceID spans" }] }))).toBe(false);
    expect(sniff(JSON.stringify({ traceId: "trace-1", id: "1", name: "x", timestamp: 1 }))).toBe(false);
    // A Langfuse observation (a trace id and an id, and fields of its own) is no Zipkin span.
    const observation = {
      id: "b".repeat(16),
      traceId: "a".repeat(32),
      type: "GENERATION",
      name: "chat",
      startTime: "2025-01-01T00:00:00Z",
    };
    expect(sniff(JSON.stringify(observation))).toBe(false);
    expect(sniff(JSON.stringify([observation]))).toBe(false);
    expect(sniff(JSON.stringify({ ...zipkin, input: "x" }))).toBe(false);
    expect(sniff(JSON.stringify({ traceId: "a".repeat(32), id: "b".repeat(16) }))).toBe(false);
    expect(sniff(JSON.stringify({ traceID: 5, spans: [] }))).toBe(false);
  });

  it("leaves other formats' files to their readers", async () => {
    for (const [path, format] of [
      ["test/fixtures/handmade/goose/20250612_093000.jsonl", "goose"],
      ["test/fixtures/handmade/inspect/2025-06-12T10-00-00+00-00_ctf-find-flag_EvAl123.json", "inspect-log"],
      ["test/fixtures/handmade/gemini-cli/session-2025-12-02T09-00-4b1d2c3e.jsonl", "gemini-cli"],
      ["test/fixtures/handmade/mcp-server-log/mcp.log", "mcp-server-log"],
    ] as const) {
      const detection = await detectFormat(join(ROOT, path));
      expect(detection.kind === "format" && detection.reader.name, path).toBe(format);
    }
    for (const path of [
      SEMCONV,
      OPENINFERENCE,
      HTTP,
      LOGS_EVENTS,
      LOGS_DETAILS,
      SPANS_AND_LOGS,
      APP_LOGS,
      JAEGER_API,
      JAEGER_UI,
      ZIPKIN,
      ZIPKIN_TRACES,
      OTLP_ARRAY,
    ]) {
      const detection = await detectFormat(path);
      expect(detection.kind === "format" && detection.reader.name, path).toBe("otel-traces");
    }
  });

  it("leaves other JSON arrays and row documents to their readers", async () => {
    for (const [path, format] of [
      ["test/fixtures/handmade/gemini-cli/logs.json", "gemini-cli"],
      ["test/fixtures/handmade/adp/swe-gym-openhands.std.json", "adp"],
      ["test/fixtures/handmade/chat-tool-rows/toucan-rows.json", "chat-tool-rows"],
      ["test/fixtures/handmade/android-control/episodes.json", "android-control"],
    ] as const) {
      const detection = await detectFormat(join(ROOT, path));
      expect(detection.kind === "format" && detection.reader.name, path).toBe(format);
    }
    const dir = tempDir("lwm-otel-");
    // Rows under "data" (as Jaeger's answer holds its traces): text rows are text-jsonl's.
    const rows = join(dir, "rows.json");
    writeFileSync(
      rows,
      JSON.stringify({
        data: [
          { id: "1", text: "a trace of spans" },
          { id: "2", text: "traceID" },
        ],
        total: 2,
      }),
    );
    const byRows = await detectFormat(rows);
    expect(byRows.kind === "format" && byRows.reader.name).toBe("text-jsonl");
    // A Langfuse export of observations (trace ids and ids, but Langfuse's fields) is not taken for Zipkin spans.
    const observations = join(dir, "observations.json");
    const observation = (id: string) => ({
      id,
      traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
      type: "GENERATION",
      name: "chat",
      startTime: "2025-06-01T10:00:00.000Z",
      endTime: "2025-06-01T10:00:01.000Z",
      input: [{ role: "user", content: "hi" }],
      output: { role: "assistant", content: "hello" },
    });
    writeFileSync(observations, JSON.stringify([observation("a1b2c3d4e5f60718"), observation("a1b2c3d4e5f60719")], null, 2));
    const byObservations = await detectFormat(observations);
    expect(byObservations.kind === "format" ? byObservations.reader.name : byObservations.kind).not.toBe("otel-traces");
  });
});

// ---------------------------------------------------------------------------------------------
// Trace stores' answers (Tempo, Jaeger api_v3), bare OTLP spans, Python's ConsoleSpanExporter

const TEMPO_BATCHES = join(DIR, "tempo-batches.json");
const TEMPO_V2 = join(DIR, "tempo-v2.json");
const JAEGER_V3 = join(DIR, "jaeger-v3-stream.json");
const BARE_SPANS = join(DIR, "otlp-spans.jsonl");
const PY_CONSOLE = join(DIR, "python-console.txt");

const json = (path: string) => JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
/** The values of a file of JSON values one after another (the fixture's pretty-printed objects). */
const values = (path: string): Record<string, unknown>[] =>
  readFileSync(path, "utf8")
    .split(/\n(?=\{)/)
    .map((text) => JSON.parse(text) as Record<string, unknown>);
const detected = async (path: string) => {
  const detection = await detectFormat(path);
  return detection.kind === "format" ? [detection.reader.name, detection.layout] : [detection.kind];
};

describe("otel-traces reader: trace stores' answers", () => {
  it("reads Tempo's /api/traces answer of the older {batches} form: base64 ids, two resources, jsonpb's enum names", async () => {
    expect(await detected(TEMPO_BATCHES)).toEqual(["otel-traces", undefined]);
    const items = await read(TEMPO_BATCHES);
    expect(quarantined(items)).toEqual([]);
    const [t] = trajectories(items);
    if (!t) throw new Error("no trajectory");
    expect(trajectoryInputSchema.safeParse(t).success).toBe(true);
    // The base64 trace id read as its hex.
    expect(t.id).toBe("d4f1a0c2b3e5968778a9b0c1d2e3f405");
    expect(t.task).toBe("Total the unpaid invoices of customer ACME.");
    expect(t.turns.map((turn) => [turn.action, turn.observation, turn.thinking])).toEqual([
      [
        `{"name":"sql_query","arguments":{"sql":"SELECT SUM(amount) FROM invoices WHERE customer = 'ACME' AND paid = false"}}`,
        '[{"sum": 18240.50}]',
        "I will sum the open invoices in the billing database.",
      ],
    ]);
    expect(t.meta).toMatchObject({
      agent: "invoice-agent",
      service_name: "invoice-agent",
      conversation_id: "conv-7f3a",
      agent_system: "You answer billing questions with the read-only SQL tool.",
      final_answer: "ACME has 18,240.50 in unpaid invoices.",
      spans: 5,
    });
    // The same answer on one line (curl -o), and with hex ids (newer Tempo): the same trace, the same spans.
    const answer = json(TEMPO_BATCHES);
    const hex = JSON.parse(
      JSON.stringify(answer).replace(/"(traceId|spanId|parentSpanId)":"([^"]+)"/g, (_, key: string, id: string) =>
        JSON.stringify({ [key]: Buffer.from(id, "base64").toString("hex") }).slice(1, -1),
      ),
    );
    const [compact] = trajectories(await read(write([answer])));
    const [hexed] = trajectories(await read(write([hex])));
    for (const other of [compact, hexed]) expect([other?.id, other?.turns, other?.meta?.spans]).toEqual([t.id, t.turns, 5]);
  });

  it("reads Tempo's /api/v2/traces answer ({trace: {resourceSpans}}, a PARTIAL status) and its {trace: {batches}} form", async () => {
    expect(await detected(TEMPO_V2)).toEqual(["otel-traces", undefined]);
    const items = await read(TEMPO_V2);
    expect(quarantined(items)).toEqual([]);
    const [t] = trajectories(items);
    expect(t?.id).toBe("a7c3e91f04b2d85e6f10c2b3d4e5f607");
    expect(t?.task).toBe("Which Python version added the match statement?");
    expect(t?.turns.map((turn) => [turn.action, turn.observation])).toEqual([
      ['{"name":"search_docs","arguments":{"query":"match statement"}}', "PEP 634 (Structural Pattern Matching) is new in Python 3.10."],
    ]);
    expect(t?.meta).toMatchObject({ agent: "docs-researcher", model: "gpt-4.1-mini", conversation_id: "sess-91", spans: 4 });
    const answer = json(TEMPO_V2) as { trace: { resourceSpans: unknown[] } };
    const older = { trace: { batches: answer.trace.resourceSpans } };
    expect(otelTracesReader.sniff(`${JSON.stringify(older)}\n`, "x")).toBe(true);
    expect(trajectories(await read(write([older]))).map((x) => [x.id, x.turns.length])).toEqual([[t?.id, 1]]);
  });

  it("reads Jaeger api_v3's stream of {result} messages: pretty-printed one after another, one per line, or run together", async () => {
    expect(await detected(JAEGER_V3)).toEqual(["otel-traces", undefined]);
    const items = await read(JAEGER_V3);
    expect(quarantined(items)).toEqual([]);
    const [t] = trajectories(items);
    if (!t) throw new Error("no trajectory");
    expect(t.id).toBe("0af7651916cd43dd8448eb211c80319c");
    expect(t.source).toMatchObject({ line: 1, offset: 0 });
    expect(t.task).toBe("Is it raining in Lisbon?");
    // OpenLLMetry: the call in the first message, the tool span and the final reply in the second.
    expect(t.turns.map((turn) => [turn.action, turn.observation])).toEqual([
      ['{"name":"get_weather","arguments":{"city":"Lisbon"}}', '{"city": "Lisbon", "condition": "light rain", "temp_c": 17}'],
    ]);
    expect(t.meta).toMatchObject({ agent: "weather-bot", final_answer: "Yes: light rain in Lisbon, 17 °C.", spans: 4 });
    const messages = values(JAEGER_V3);
    expect(messages).toHaveLength(2);
    const perLine = write(messages);
    const runTogether = write([messages.map((m) => JSON.stringify(m)).join("")]);
    for (const path of [perLine, runTogether]) {
      expect(await detected(path), path).toEqual(["otel-traces", undefined]);
      const again = await read(path);
      expect(quarantined(again)).toEqual([]);
      expect(trajectories(again).map((x) => [x.id, x.turns, x.meta?.spans])).toEqual([[t.id, t.turns, 4]]);
    }
  });

  it("names a bad field of a streamed message by its line and value; the stream's other messages are read", async () => {
    const [first, second] = values(JAEGER_V3) as [Record<string, unknown>, Record<string, unknown>];
    const bad = structuredClone(second) as { result: { resourceSpans: { scopeSpans: { spans: Record<string, unknown>[] }[] }[] } };
    (bad.result.resourceSpans[0]?.scopeSpans[0]?.spans[0] as Record<string, unknown>).startTimeUnixNano = "at noon";
    // Pretty-printed one after another: the bad message by the line it starts at, then a message cut off.
    const dir = tempDir("lwm-otel-");
    const pretty = join(dir, "stream.json");
    const firstText = JSON.stringify(first, null, 2);
    writeFileSync(pretty, `${firstText}\n${JSON.stringify(bad, null, 2)}\n${JSON.stringify(second, null, 2).slice(0, 200)}`);
    const badLine = firstText.split("\n").length + 1;
    const items = await read(pretty);
    expect(quarantined(items)).toEqual([
      {
        reason: `line ${badLine}: result.resourceSpans.0.scopeSpans.0.spans.0.startTimeUnixNano: expected nanoseconds since the epoch (a decimal string or a number), got a string`,
        field: "result.resourceSpans.0.scopeSpans.0.spans.0.startTimeUnixNano",
        line: badLine,
      },
      { reason: expect.stringMatching(/^invalid JSON/), line: badLine + JSON.stringify(bad, null, 2).split("\n").length },
      // The first message's spans are read: alone they hold no tool call answered by its result.
      { reason: "no tool span, and no model call whose messages hold a tool call answered by its result", line: 1 },
    ]);
    // Run together on one line: the line is quarantined naming the value.
    const together = await read(write([`${JSON.stringify(first)}${JSON.stringify(bad)}`]));
    expect(quarantined(together)).toEqual([
      {
        reason:
          "line 1: value 2: result.resourceSpans.0.scopeSpans.0.spans.0.startTimeUnixNano: expected nanoseconds since the epoch (a decimal string or a number), got a string",
        field: "result.resourceSpans.0.scopeSpans.0.spans.0.startTimeUnixNano",
        line: 1,
      },
    ]);
  });

  it("refuses answers that hold no spans, saying what they are: api_v3 errors and trace summaries, Tempo's search answer", async () => {
    const tempoSearch = {
      traces: [
        {
          traceID: "2f3e0cee77ae5dc9c17ade3689eb2e54",
          rootServiceName: "shop-backend",
          rootTraceName: "update-billing",
          startTimeUnixNano: "1684778327699392724",
          durationMs: 557,
          spanSets: [
            { spans: [{ spanID: "563d623c76514f8e", startTimeUnixNano: "1684778327735077898", durationNanos: "446979497" }], matched: 1 },
          ],
        },
      ],
      metrics: { totalBlocks: 13 },
    };
    const path = write([
      { error: { grpcCode: 5, httpCode: 404, message: "trace not found", httpStatus: "Not Found" } },
      { result: { summaries: [{ traceId: "0af7651916cd43dd8448eb211c80319c", rootServiceName: "x", spanCount: 3 }] } },
      tempoSearch,
      { result: { resourceSpans: [] } },
    ]);
    const items = await read(path);
    expect(quarantined(items)).toEqual([
      { reason: 'line 1: error: a Jaeger api_v3 error answer (HTTP 404): "trace not found", no trace', field: "error", line: 1 },
      { reason: expect.stringMatching(/^line 2: result\.summaries: Jaeger's trace summaries/), field: "result.summaries", line: 2 },
      { reason: expect.stringMatching(/^line 3: traces: Tempo's search answer \(\/api\/search\)/), field: "traces", line: 3 },
    ]);
    // The empty result is read (no spans); records in = out + quarantined.
    expect(items).toHaveLength(3);
    // Empty results run together on one line: the file holds no spans, said once.
    expect(quarantined(await read(write(['{"result":{"resourceSpans":[]}}{"result":{"resourceSpans":[]}}'])))).toEqual([
      { reason: "the file's 2 Jaeger api_v3 result(s) hold no spans", field: "resourceSpans", line: 1 },
    ]);
    // None of them is claimed by detection.
    for (const answer of [{ error: { httpCode: 404, message: "x" } }, tempoSearch, { result: { resourceSpans: [] } }])
      expect(otelTracesReader.sniff(`${JSON.stringify(answer)}\n`, "x")).toBe(false);
  });
});

describe("otel-traces reader: bare OTLP spans", () => {
  it("reads spans one per line (no resourceSpans envelope), the root last; another trace's HTTP span is quarantined", async () => {
    expect(await detected(BARE_SPANS)).toEqual(["otel-traces", undefined]);
    const items = await read(BARE_SPANS);
    const [t] = trajectories(items);
    if (!t) throw new Error("no trajectory");
    expect(trajectoryInputSchema.safeParse(t).success).toBe(true);
    expect(t.id).toBe("3e0f1b2c4d5a69788796a5b4c3d2e1f0");
    expect(t.task).toBe("Why is the api pod restarting?");
    expect(t.turns.map((turn) => [turn.action, turn.observation])).toEqual([
      [
        "kubectl logs api-7d9f --previous | tail -n 3",
        "Error: connect ECONNREFUSED 10.0.3.7:5432\nretrying in 5s\nexiting after 3 attempts",
      ],
    ]);
    expect(t.meta).toMatchObject({
      agent: "ops-agent",
      agent_system: "You manage a Kubernetes cluster with kubectl.",
      final_answer: "The api pod cannot reach Postgres at 10.0.3.7:5432 and exits after 3 retries.",
      spans: 4,
    });
    expect(t.meta?.service_name).toBeUndefined();
    expect(quarantined(items)).toEqual([
      { reason: expect.stringMatching(/^not an agent trace: its 1 span\(s\) \("GET \/healthz"\)/), line: 5 },
    ]);
  });

  it("reads them as a JSON array, as a line's list, and in protobuf's field names; a wrong-typed field names the line and field", async () => {
    const spans = readFileSync(BARE_SPANS, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .slice(0, 4);
    const array = join(tempDir("lwm-otel-"), "spans.json");
    writeFileSync(array, JSON.stringify(spans, null, 2));
    // Claimed whole by its start, as Zipkin's span arrays are; read element by element.
    expect(await detected(array)).toEqual(["otel-traces", undefined]);
    const snake = spans.map((s) =>
      Object.fromEntries(Object.entries(s).map(([k, v]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), v])),
    );
    for (const path of [array, write([spans]), write(snake)]) {
      const items = await read(path);
      expect(quarantined(items), path).toEqual([]);
      expect(trajectories(items).map((x) => [x.id, x.turns.length, x.meta?.spans])).toEqual([["3e0f1b2c4d5a69788796a5b4c3d2e1f0", 1, 4]]);
    }
    const items = await read(
      write([...spans.slice(0, 3), { ...spans[3], attributes: [{ key: "gen_ai.agent.name", value: { intValue: "many" } }] }]),
    );
    expect(quarantined(items)).toEqual([
      {
        reason: "line 4: attributes.0.value.intValue: expected an integer (a number or a decimal string), got a string",
        field: "attributes.0.value.intValue",
        line: 4,
      },
    ]);
    expect(trajectories(items)).toHaveLength(1);
  });
});

describe("otel-traces reader: the Python SDK's ConsoleSpanExporter", () => {
  it("reads span.to_json() objects pretty-printed one after another (children before their root): ISO times, 0x ids, an ERROR status", async () => {
    expect(await detected(PY_CONSOLE)).toEqual(["otel-traces", undefined]);
    const items = await read(PY_CONSOLE);
    expect(quarantined(items)).toEqual([]);
    const [t] = trajectories(items);
    if (!t) throw new Error("no trajectory");
    expect(trajectoryInputSchema.safeParse(t).success).toBe(true);
    expect(t.id).toBe("8e3b6c1d2f4a5b697a8b9c0d1e2f3a4b");
    expect(t.task).toBe("Rename the note 'todo.md' to 'tasks.md' and show the folder.");
    expect(t.turns.map((turn) => [turn.action, turn.observation, turn.meta?.is_error ?? false, turn.thinking])).toEqual([
      [
        '{"name":"rename_note","arguments":{"old":"notes/todo.md","new":"notes/tasks.md"}}',
        "FileNotFoundError: [Errno 2] No such file or directory: 'notes/todo.md'",
        true,
        undefined,
      ],
      [
        '{"name":"list_notes","arguments":{"folder":"notes"}}',
        "notes/TODO.md\nnotes/ideas.md",
        false,
        "The note is not there; I will list the folder.",
      ],
    ]);
    expect(t.meta).toMatchObject({
      agent: "notes-agent",
      service_name: "notes-agent",
      model: "gpt-4o",
      final_answer: "There is no todo.md, only TODO.md and ideas.md; should I rename TODO.md?",
      spans: 6,
    });
  });

  it("reads them one per line (to_json(indent=None)) and as a JSON array; a bad time names the line and field", async () => {
    const spans = values(PY_CONSOLE);
    const array = join(tempDir("lwm-otel-"), "spans.json");
    writeFileSync(array, JSON.stringify(spans, null, 4));
    expect(await detected(array)).toEqual(["otel-traces", "json-array"]);
    for (const path of [write(spans), array]) {
      expect(trajectories(await read(path)).map((x) => [x.id, x.turns.length, x.meta?.spans])).toEqual([
        ["8e3b6c1d2f4a5b697a8b9c0d1e2f3a4b", 2, 6],
      ]);
    }
    const items = await read(write([...spans.slice(0, 5), { ...spans[5], start_time: "yesterday" }]));
    expect(quarantined(items)).toEqual([
      { reason: expect.stringMatching(/^line 6: start_time: expected an ISO 8601 UTC time/), field: "start_time", line: 6 },
    ]);
    const bad = await read(write([{ ...spans[0], context: { trace_id: 7, span_id: "0x51a0000000000002" } }]));
    expect(quarantined(bad)).toEqual([
      { reason: "line 1: context.trace_id: expected a 0x-prefixed hex id, got a number", field: "context.trace_id", line: 1 },
    ]);
  });
});

describe("otel-traces detection of the new shapes", () => {
  const sniff = (value: unknown) => otelTracesReader.sniff(`${typeof value === "string" ? value : JSON.stringify(value)}\n`, "x");
  const rs = (json(TEMPO_V2) as { trace: { resourceSpans: unknown[] } }).trace.resourceSpans;

  it("claims envelopes only when they hold OTLP spans", () => {
    expect(sniff({ result: { resourceSpans: rs } })).toBe(true);
    expect(sniff({ trace: { resourceSpans: rs }, status: "PARTIAL", message: "x" })).toBe(true);
    expect(sniff({ batches: rs })).toBe(true);
    // Pretty-printed, longer than the head.
    expect(sniff('{\n  "batches": [\n    {\n      "resource": {\n        "attributes": [')).toBe(true);
    expect(sniff('{\n  "result": {\n    "resourceSpans": [\n      {\n        "resource": {')).toBe(true);
    expect(sniff('{"trace":{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"a')).toBe(true);
    // Negative controls: other tools' result / trace / batches members.
    expect(sniff({ result: "ok" })).toBe(false);
    expect(sniff({ result: { content: [{ type: "text", text: "resourceSpans" }], isError: false } })).toBe(false);
    expect(sniff({ jsonrpc: "2.0", id: 1, result: { resourceSpans: rs } })).toBe(false);
    expect(sniff({ result: { resourceSpans: [] } })).toBe(false);
    expect(sniff({ result: { resourceSpans: [{ resource: {}, scopeSpans: [] }] } })).toBe(false);
    expect(sniff({ result: { resourceSpans: rs, next: 1 } })).toBe(false);
    expect(sniff({ trace: { id: "t1", spans: [{ id: "s1" }] } })).toBe(false);
    expect(sniff({ trace: { resourceSpans: [{ name: "x", spans: [] }] } })).toBe(false);
    expect(sniff({ trace: { resourceSpans: rs }, run_id: "r1" })).toBe(false);
    expect(sniff({ batches: [{ input: "a", output: "b" }] })).toBe(false);
    expect(sniff({ batches: rs, size: 2 })).toBe(false);
    expect(sniff({ batches: [] })).toBe(false);
  });

  it("claims bare OTLP spans and Python's console spans strictly", () => {
    const bare = JSON.parse(readFileSync(BARE_SPANS, "utf8").split("\n")[0] as string) as Record<string, unknown>;
    const console = values(PY_CONSOLE)[0] as Record<string, unknown>;
    expect(sniff(bare)).toBe(true);
    expect(sniff([bare, bare])).toBe(true);
    expect(sniff(console)).toBe(true);
    expect(sniff(JSON.stringify(console, null, 4))).toBe(true);
    expect(sniff(`${JSON.stringify(console, null, 4).slice(0, 180)}`)).toBe(true);
    // Negative controls.
    const { attributes: _, ...noAttributes } = bare;
    expect(sniff({ ...noAttributes, attributes: { "gen_ai.operation.name": "chat" } })).toBe(false);
    expect(sniff({ ...bare, traceId: "trace-1" })).toBe(false);
    expect(sniff({ ...bare, spanId: "9a0000000000000" })).toBe(false);
    expect(sniff({ ...bare, input: "x" })).toBe(false);
    expect(sniff({ ...bare, startTimeUnixNano: "2025-07-01T00:00:00Z" })).toBe(false);
    expect(sniff({ traceId: "3e0f1b2c4d5a69788796a5b4c3d2e1f0", spanId: "9a00000000000001", name: "x" })).toBe(false);
    // A Langfuse observation, a LangSmith run: their own fields.
    expect(
      sniff({
        id: "9a00000000000001",
        traceId: "3e0f1b2c4d5a69788796a5b4c3d2e1f0",
        type: "SPAN",
        name: "x",
        startTime: "2025-01-01T00:00:00Z",
      }),
    ).toBe(false);
    expect(
      sniff({ id: "r1", trace_id: "3e0f1b2c4d5a69788796a5b4c3d2e1f0", run_type: "llm", name: "x", start_time: "2025-01-01T00:00:00" }),
    ).toBe(false);
    expect(sniff({ ...console, kind: "client" })).toBe(false);
    expect(sniff({ ...console, context: { trace_id: "8e3b6c1d2f4a5b697a8b9c0d1e2f3a4b", span_id: "0x51a0000000000002" } })).toBe(false);
    expect(sniff({ ...console, session: "s1" })).toBe(false);
  });

  it("leaves other formats' concatenated and pretty-printed files to their readers", async () => {
    const dir = tempDir("lwm-otel-");
    // An MCP JSON-RPC stream pretty-printed one message after another: `result`s that are no traces.
    const mcp = join(dir, "mcp-stream.json");
    writeFileSync(
      mcp,
      [
        { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "traces", arguments: {} } },
        { jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: '{"resourceSpans": []}' }] } },
      ]
        .map((m) => JSON.stringify(m, null, 2))
        .join("\n"),
    );
    const byMcp = await detectFormat(mcp);
    expect(byMcp.kind === "format" ? byMcp.reader.name : byMcp.kind).not.toBe("otel-traces");
    // A tool's own span records (OTLP-like ids, its own fields and plain attributes), and a document with a `trace` and a `result`.
    const custom = write(
      [1, 2, 3].map((n) => ({
        traceId: "3e0f1b2c4d5a69788796a5b4c3d2e1f0",
        spanId: `9a0000000000000${n}`,
        name: "step",
        startTime: "2025-07-01T00:00:00Z",
        attributes: { "gen_ai.operation.name": "chat" },
      })),
    );
    const runDoc = join(dir, "run.json");
    writeFileSync(
      runDoc,
      JSON.stringify({ trace: { id: "t-1", steps: [{ tool: "bash", output: "ok" }] }, result: { text: "done" } }, null, 2),
    );
    for (const path of [custom, runDoc]) {
      const detection = await detectFormat(path);
      expect(detection.kind === "format" ? detection.reader.name : detection.kind, path).not.toBe("otel-traces");
    }
    for (const path of [TEMPO_BATCHES, TEMPO_V2, JAEGER_V3, BARE_SPANS, PY_CONSOLE])
      expect((await detected(path))[0], path).toBe("otel-traces");
  });
});
