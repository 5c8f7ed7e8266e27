/**
 * OTLP in protobuf (src/read/otel/otlp-proto.ts), read by the OpenTelemetry trace reader. The
 * files are written here by OpenTelemetry's own JavaScript SDK and serializers
 * (@opentelemetry/otlp-transformer: the protobuf and the JSON encodings of the same spans and log
 * records), framed as the Collector's file exporter frames them: the protobuf must read to exactly
 * what the JSON reads to.
 */
import { readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync, zstdCompressSync } from "node:zlib";
import { context, type SpanContext, TraceFlags, trace } from "@opentelemetry/api";
import { SeverityNumber } from "@opentelemetry/api-logs";
import {
  JsonLogsSerializer,
  JsonTraceSerializer,
  ProtobufLogsSerializer,
  ProtobufMetricsSerializer,
  ProtobufTraceSerializer,
} from "@opentelemetry/otlp-transformer";
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } from "@opentelemetry/sdk-logs";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { describe, expect, it } from "vitest";
import { decodeOtlpMessage, otlpFramingOfFile } from "../src/read/otel/otlp-proto.ts";
import { otelTracesReader } from "../src/read/otel-traces.ts";
import type { ReadItem } from "../src/read/reader.ts";
import { detectFormat } from "../src/read/registry.ts";
import { collect, ROOT, tempDir } from "./helpers.ts";

const OPTIONS = { maxLineBytes: 1 << 22 };
const read = (path: string, options = OPTIONS): Promise<ReadItem[]> => collect(otelTracesReader.read(path, options));

/** Items without their sources (a record's place differs between the encodings). */
const withoutSources = (items: ReadItem[]) => JSON.parse(JSON.stringify(items, (key, value) => (key === "source" ? undefined : value)));
const quarantined = (items: ReadItem[]) => items.flatMap((item) => (item.kind === "quarantine" ? [item.entry] : []));

/** A message preceded by its length, 4 bytes big-endian, as the Collector's file exporter writes `format: proto`. */
function frame(message: Uint8Array): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(message.length);
  return Buffer.concat([length, message]);
}

function write(name: string, bytes: Uint8Array | string): string {
  const path = join(tempDir("lwm-otlp-proto-"), name);
  writeFileSync(path, bytes);
  return path;
}

/** An agent's trace as the SDK records it: an agent span, a model call that asks for a tool, the tool's run, a second call. */
async function agentSpans() {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  const tracer = provider.getTracer("shell-agent", "0.3.0");
  const agent = tracer.startSpan("invoke_agent shell-agent", {
    attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "shell-agent" },
    startTime: [1751000000, 0],
  });
  const inside = trace.setSpan(context.active(), agent);
  const ask = [{ role: "user", parts: [{ type: "text", content: "How big is /var/log?" }] }];
  const call = { type: "tool_call", id: "call_1", name: "run_shell_command", arguments: { command: "du -sh /var/log" } };
  const chat = tracer.startSpan(
    "chat gpt-4o-mini",
    {
      attributes: {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.input.messages": JSON.stringify(ask),
        "gen_ai.output.messages": JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: "Let me check." }, call] }]),
        "gen_ai.usage.input_tokens": 52,
        "gen_ai.request.temperature": 0.2,
      },
      startTime: [1751000001, 0],
    },
    inside,
  );
  chat.end([1751000002, 0]);
  const tool = tracer.startSpan(
    "execute_tool run_shell_command",
    {
      attributes: {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "run_shell_command",
        "gen_ai.tool.call.id": "call_1",
        "gen_ai.tool.call.arguments": JSON.stringify({ command: "du -sh /var/log" }),
        "gen_ai.tool.call.result": "1.2G\t/var/log",
        "process.exit_code": 0,
        "shell.flags": ["-s", "-h"],
        "shell.interactive": false,
      },
      startTime: [1751000003, 0],
    },
    inside,
  );
  tool.addEvent("stdout.flushed", { bytes: 14 }, [1751000003, 500]);
  tool.setStatus({ code: 1 });
  tool.end([1751000004, 0]);
  const answer = tracer.startSpan(
    "chat gpt-4o-mini",
    {
      attributes: {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": JSON.stringify([...ask]),
        "gen_ai.output.messages": JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: "/var/log holds 1.2G." }] }]),
      },
      startTime: [1751000005, 0],
    },
    inside,
  );
  answer.end([1751000006, 0]);
  agent.end([1751000007, 0]);
  await provider.forceFlush();
  return exporter.getFinishedSpans();
}

/** GenAI message events (semantic conventions up to v1.36) as log records of one span, emitted through the logs SDK. */
async function genAiEvents() {
  const exporter = new InMemoryLogRecordExporter();
  const provider = new LoggerProvider({ processors: [new SimpleLogRecordProcessor({ exporter })] });
  const logger = provider.getLogger("opentelemetry.instrumentation.openai_v2", "2.1b0");
  const span: SpanContext = { traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331", traceFlags: TraceFlags.SAMPLED };
  const inSpan = trace.setSpanContext(context.active(), span);
  const events: [string, Record<string, unknown>][] = [
    ["gen_ai.system.message", { content: "You are a sysadmin assistant." }],
    ["gen_ai.user.message", { content: "Which directory under /var/log is the largest?" }],
    [
      "gen_ai.assistant.message",
      {
        tool_calls: [
          { id: "call_7", type: "function", function: { name: "run_shell_command", arguments: '{"command": "du -s /var/log/*"}' } },
        ],
      },
    ],
    ["gen_ai.tool.message", { id: "call_7", content: "812\t/var/log/journal\n44\t/var/log/apt" }],
    ["gen_ai.choice", { index: 0, finish_reason: "stop", message: { content: "/var/log/journal, at 812 KB." } }],
  ];
  for (const [i, [eventName, body]] of events.entries())
    logger.emit({
      eventName,
      body: body as never,
      attributes: { "gen_ai.system": "openai" },
      severityNumber: SeverityNumber.INFO,
      timestamp: [1751000000, i * 1000],
      context: inSpan,
    });
  await provider.forceFlush();
  return exporter.getFinishedLogRecords();
}

/**
 * An OTLP/JSON value without what proto3 leaves unwritten (empty lists and objects, zeros, empty
 * strings, false), 64-bit integers as strings (protobuf's JSON mapping; the SDK writes numbers).
 */
function withoutDefaults(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutDefaults);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    const kept = key === "intValue" ? String(inner) : withoutDefaults(inner);
    const empty = Array.isArray(kept) ? kept.length === 0 : kept !== null && typeof kept === "object" && Object.keys(kept).length === 0;
    if (!empty && kept !== 0 && kept !== "" && kept !== false && kept !== "0") out[key] = kept;
  }
  return out;
}

describe("OTLP protobuf: the OpenTelemetry SDK's own encodings read alike", () => {
  it("decodes each message to the OTLP/JSON the SDK's JSON serializer writes for the same spans and log records", async () => {
    const spans = await agentSpans();
    const records = await genAiEvents();
    for (const [proto, json] of [
      [ProtobufTraceSerializer.serializeRequest(spans), JsonTraceSerializer.serializeRequest(spans)],
      [ProtobufLogsSerializer.serializeRequest(records), JsonLogsSerializer.serializeRequest(records)],
    ] as const) {
      const decoded = decodeOtlpMessage(proto as Uint8Array, 1 << 24);
      const expected = JSON.parse(Buffer.from(json as Uint8Array).toString());
      expect(withoutDefaults(decoded)).toEqual(withoutDefaults(expected));
    }
  });

  it("spans: one message, length-prefixed messages, zstd-compressed frames and the JSON export all read to the same trajectory", async () => {
    const spans = await agentSpans();
    const json = write("trace.jsonl", `${Buffer.from(JsonTraceSerializer.serializeRequest(spans) as Uint8Array).toString()}\n`);
    const single = write("trace.pb", ProtobufTraceSerializer.serializeRequest(spans) as Uint8Array);
    // Two export batches, as a batch processor sends them: the trace is gathered from both.
    const batches = [spans.slice(0, 2), spans.slice(2)].map((batch) => ProtobufTraceSerializer.serializeRequest(batch) as Uint8Array);
    const framed = write("trace.otlp", Buffer.concat(batches.map(frame)));
    const zstd = write("trace.otlp.zst-frames", Buffer.concat(batches.map((batch) => frame(zstdCompressSync(batch)))));
    const jsonBatches = [spans.slice(0, 2), spans.slice(2)].map((batch) => JsonTraceSerializer.serializeRequest(batch) as Uint8Array);
    // The file exporter's `format: json` with `compression: zstd`: compressed JSON documents, framed.
    const zstdJson = write("trace.json.zst-frames", Buffer.concat(jsonBatches.map((batch) => frame(zstdCompressSync(batch)))));
    // A framed export compressed whole afterwards (`zstd trace.otlp`, `gzip trace.otlp`): its start is looked at decompressed.
    const wholeZstd = write("trace.otlp.zst", zstdCompressSync(Buffer.concat(batches.map(frame))));
    const wholeGzip = write("trace.otlp.gz", gzipSync(Buffer.concat(batches.map(frame))));

    const expected = withoutSources(await read(json));
    expect(expected).toHaveLength(1);
    const [trajectory] = expected;
    expect(trajectory.kind).toBe("trajectory");
    expect(trajectory.trajectory).toMatchObject({
      id: spans[0]?.spanContext().traceId,
      task: "How big is /var/log?",
      turns: [{ action: "du -sh /var/log", observation: "1.2G\t/var/log", thinking: "Let me check." }],
      meta: { agent: "shell-agent", model: "gpt-4o-mini", final_answer: "/var/log holds 1.2G.", spans: 4 },
    });
    for (const path of [single, framed, zstd, zstdJson, wholeZstd, wholeGzip]) {
      expect(withoutSources(await read(path)), path).toEqual(expected);
      const detected = await detectFormat(path);
      expect(detected.kind === "format" && detected.reader.name, path).toBe("otel-traces");
    }
    expect(await otlpFramingOfFile(single)).toBe("single");
    expect(await otlpFramingOfFile(framed)).toBe("length-prefixed");
    expect(await otlpFramingOfFile(wholeZstd)).toBe("length-prefixed");
  });

  it("log records (GenAI events): protobuf and JSON read alike, as the events of their span's trace", async () => {
    const records = await genAiEvents();
    const json = write("events.jsonl", `${Buffer.from(JsonLogsSerializer.serializeRequest(records) as Uint8Array).toString()}\n`);
    const framed = write("events.otlp", frame(ProtobufLogsSerializer.serializeRequest(records) as Uint8Array));
    const expected = withoutSources(await read(json));
    expect(expected).toHaveLength(1);
    expect(expected[0].trajectory).toMatchObject({
      id: "0af7651916cd43dd8448eb211c80319c",
      task: "Which directory under /var/log is the largest?",
      turns: [{ action: "du -s /var/log/*", observation: "812\t/var/log/journal\n44\t/var/log/apt" }],
    });
    expect(withoutSources(await read(framed))).toEqual(expected);
  });
});

describe("OTLP protobuf: what is not read is said, and nothing is lost", () => {
  it("a metrics export is refused naming what it is; a message cut short by the file's end, and one over the line limit, are quarantined, the others read", async () => {
    const spans = await agentSpans();
    const message = ProtobufTraceSerializer.serializeRequest(spans) as Uint8Array;

    class Collect extends MetricReader {
      protected override onForceFlush = async () => {};
      protected override onShutdown = async () => {};
    }
    const reader = new Collect();
    const meters = new MeterProvider({ readers: [reader] });
    meters.getMeter("agent").createCounter("gen_ai.client.token.usage").add(52, { "gen_ai.token.type": "input" });
    const { resourceMetrics } = await reader.collect();
    const metrics = ProtobufMetricsSerializer.serializeRequest(resourceMetrics) as Uint8Array;
    const withMetrics = write("mixed.otlp", Buffer.concat([frame(metrics), frame(message)]));
    const items = await read(withMetrics);
    expect(items.filter((item) => item.kind === "trajectory")).toHaveLength(1);
    expect(quarantined(items)).toEqual([
      expect.objectContaining({
        reason: expect.stringMatching(/^message 0 \(byte 0\): not OTLP trace or log data \(metrics and profiles are not read\)/),
      }),
    ]);

    // Cut inside the second message: the first is read, the rest named by where the file ends.
    const two = Buffer.concat([frame(message), frame(message)]);
    const cut = await read(write("cut.otlp", two.subarray(0, two.length - 10)));
    expect(cut.filter((item) => item.kind === "trajectory")).toHaveLength(1);
    expect(quarantined(cut).map((entry) => entry.reason)).toEqual([
      `the file ends inside message 1 (byte ${message.length + 4}): ${message.length - 10} of the ${message.length} bytes its length announces`,
    ]);

    // Over input.max_line_bytes: that message is quarantined unread, the next one still read.
    const big = await read(write("big.otlp", Buffer.concat([frame(message), frame(message)])), { maxLineBytes: message.length - 1 });
    expect(quarantined(big).map((entry) => entry.reason)).toEqual([
      `message 0 (byte 0) is ${message.length} bytes, over the ${message.length - 1}-byte limit (input.max_line_bytes)`,
      `message 1 (byte ${message.length + 4}) is ${message.length} bytes, over the ${message.length - 1}-byte limit (input.max_line_bytes)`,
    ]);
  });

  it("damaged bytes are quarantined with a reason, never thrown: every single-byte change of a framed export", async () => {
    const message = ProtobufTraceSerializer.serializeRequest(await agentSpans()) as Uint8Array;
    const file = frame(message);
    let reads = 0;
    for (let at = 4; at < file.length; at += 7) {
      const damaged = Buffer.from(file);
      damaged[at] = (damaged[at] as number) ^ 0xa5;
      const items = await read(write("damaged.otlp", damaged));
      // One message: it reads to a trajectory (a changed letter), to the trace's own quarantine, or is quarantined itself.
      expect(items.length, `byte ${at}`).toBeGreaterThanOrEqual(1);
      for (const entry of quarantined(items)) expect(entry.reason, `byte ${at}`).not.toBe("");
      reads++;
    }
    expect(reads).toBeGreaterThan(50);
  });

  it("a string field that is not UTF-8 quarantines its message, naming why (proto3 strings are UTF-8)", async () => {
    const message = Buffer.from(ProtobufTraceSerializer.serializeRequest(await agentSpans()) as Uint8Array);
    const name = Buffer.from("shell-agent");
    const at = message.indexOf(name);
    expect(at).toBeGreaterThan(0);
    const damaged = Buffer.from(message);
    damaged.fill(0xff, at, at + 3);
    const items = await read(write("not-utf8.otlp", Buffer.concat([frame(damaged), frame(message)])));
    expect(items.filter((item) => item.kind === "trajectory")).toHaveLength(1);
    expect(quarantined(items).map((entry) => entry.reason)).toEqual([
      expect.stringMatching(/^message 0 \(byte 0\): not OTLP trace or log data .*as TracesData: a string field is not UTF-8 text/),
    ]);
  });

  it("claims no other file: no demo or fixture file is taken for OTLP protobuf", async () => {
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) walk(path);
        else files.push(path);
      }
    };
    for (const dir of ["data/demo", "test/fixtures"]) walk(join(ROOT, dir));
    expect(files.length).toBeGreaterThan(200);
    const claimed: string[] = [];
    for (const path of files) if (await otlpFramingOfFile(path)) claimed.push(path);
    expect(claimed).toEqual([]);
    // The check is not blind: a protobuf export among them is claimed.
    const message = ProtobufTraceSerializer.serializeRequest(await agentSpans()) as Uint8Array;
    expect(await otlpFramingOfFile(write("x.bin", frame(message)))).toBe("length-prefixed");
  });
});
