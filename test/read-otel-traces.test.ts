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
    const logs = { resourceLogs: [{ resource: {}, scopeLogs: [] }] };
    const path = write([
      exportOf(tool("t1", 0, "bash", { command: "ls" }, "x")),
      badType,
      badAttr,
      badTime,
      logs,
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
      { reason: "line 5: an OTLP logs export, not spans: only traces are read", line: 5 },
      {
        reason: 'line 6: expected an OTLP traces export ({"resourceSpans": [...]}), got an object with keys messages',
        field: "resourceSpans",
        line: 6,
      },
      { reason: expect.stringMatching(/^invalid JSON/), line: 7 },
      { reason: "expected a JSON object, got an array", line: 8 },
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

describe("otel-traces detection", () => {
  it("claims OTLP trace exports, JSONL or one document, and nothing else", () => {
    const sniff = (text: string) => otelTracesReader.sniff(text, "x");
    expect(sniff(`${JSON.stringify(exportOf(tool("t1", 0, "bash", {}, "x")))}\n`)).toBe(true);
    expect(sniff('{\n  "resourceSpans": [\n    {\n      "resource": {')).toBe(true);
    // A first line longer than the head.
    expect(sniff('{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"a')).toBe(true);
    expect(sniff(JSON.stringify({ resourceLogs: [] }))).toBe(false);
    expect(sniff(JSON.stringify({ resourceMetrics: [] }))).toBe(false);
    expect(sniff(JSON.stringify({ messages: [{ role: "user", content: "resourceSpans" }] }))).toBe(false);
    expect(sniff(JSON.stringify({ resourceSpans: "no" }))).toBe(false);
    expect(sniff('[{"resourceSpans": []}]')).toBe(false);
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
    for (const path of [SEMCONV, OPENINFERENCE, HTTP]) {
      const detection = await detectFormat(path);
      expect(detection.kind === "format" && detection.reader.name, path).toBe("otel-traces");
    }
  });
});
