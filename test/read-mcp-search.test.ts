/**
 * The MCP and search readers on data the project made: the recorded sessions with the MCP
 * reference server (data/demo/mcp, scripts/record-demo/mcp.ts), the local search service's
 * responses and agent trace (data/demo/search, scripts/record-demo/search.ts), a hand-written
 * transcript (test/fixtures/handmade/mcp) and inline messages. Expected values come from the
 * recorders' scripts (what the client sent is ours) and were checked against the recorded files.
 * The third-party samples (go-sdk, MCP spec, Brave) are read by test/third-party/mcp-search.test.ts.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import { agentWorldBenchReader } from "../src/read/agentworldbench-jsonl.ts";
import { canonicalJsonlReader } from "../src/read/canonical-jsonl.ts";
import { mcpJsonRpcReader } from "../src/read/mcp-jsonrpc.ts";
import type { Reader, ReadItem } from "../src/read/reader.ts";
import { readHead } from "../src/read/registry.ts";
import { searchApiReader } from "../src/read/search-api.ts";
import { collect, ROOT, tempDir } from "./helpers.ts";

const OPTIONS = { maxLineBytes: 1 << 20 };
const MCP_DEMO = join(ROOT, "data/demo/mcp");
const SEARCH_DEMO = join(ROOT, "data/demo/search");
const TOOLS_JSONL = join(MCP_DEMO, "everything-tools.jsonl");
const TOOLS_TXTAR = join(MCP_DEMO, "everything-tools.txtar");
const CANONICAL_GZ = join(MCP_DEMO, "everything.jsonl.gz");
const AGENTWORLDBENCH = join(MCP_DEMO, "everything-agentworldbench.jsonl");
const IMPATIENT = join(ROOT, "test/fixtures/handmade/mcp/impatient-client.txtar");
const GIT_RESET = join(SEARCH_DEMO, "brave-web-git-reset.json");
const HTTP_304 = join(SEARCH_DEMO, "brave-web-http-304.json");
const TRACE = join(SEARCH_DEMO, "agent-trace.jsonl");

const trajectories = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "trajectory" ? [i.trajectory] : []));
const quarantined = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "quarantine" ? [i.entry] : []));
/** Canonical JSON of a value (2-space, key order as written). */
const pretty = (value: unknown) => JSON.stringify(value, null, 2);

async function readOne(reader: Reader, path: string): Promise<Trajectory> {
  const items = await collect(reader.read(path, OPTIONS));
  expect(quarantined(items)).toEqual([]);
  expect(items).toHaveLength(1);
  return trajectories(items)[0] as Trajectory;
}

async function readAll(reader: Reader, path: string): Promise<Trajectory[]> {
  const items = await collect(reader.read(path, OPTIONS));
  expect(quarantined(items)).toEqual([]);
  return trajectories(items);
}

function writeTemp(name: string, content: string | Buffer): string {
  const path = join(tempDir(), name);
  writeFileSync(path, content);
  return path;
}

const methods = (t: Trajectory) => t.turns.map((turn) => turn.meta?.method);
const errorCodes = (t: Trajectory) => t.turns.map((turn) => turn.meta?.error_code ?? null);
const toolNames = (t: Trajectory) => t.turns.map((turn) => JSON.parse(turn.action).params?.name ?? null);

/** The recorded tools session, message by message, as the recorder wrote it. */
const wire = () =>
  readFileSync(TOOLS_JSONL, "utf8")
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line) as { direction: "client" | "server"; message: Record<string, unknown> });

describe("mcp-jsonrpc reader: the recorded session with the reference server (everything-tools.jsonl)", () => {
  it("one turn per request the client sent, in order, with the reply of the same id", async () => {
    const t = await readOne(mcpJsonRpcReader, TOOLS_JSONL);
    expect(t).toMatchObject({ domain: "mcp", source: { format: "mcp-jsonrpc", line: 1 } });
    expect(t.id).toMatch(/^everything-tools-[0-9a-f]{12}$/);
    expect(t.task).toBeUndefined();
    // scripts/record-demo/mcp-sessions.ts: initialize, tools/list, 9 tools/call, ping
    expect(methods(t)).toEqual(["initialize", "tools/list", ...Array(9).fill("tools/call"), "ping"]);
    expect(toolNames(t)).toEqual([
      null,
      null,
      "echo",
      "get-sum",
      "get-structured-content",
      "get-annotated-message",
      "get-sum",
      "no-such-tool",
      null,
      "trigger-long-running-operation",
      "get-roots-list",
      null,
    ]);
    expect(t.turns[0]?.action).toBe(
      pretty({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: { roots: { listChanged: false } },
          clientInfo: { name: "lwm-data-recorder", version: "1.0.0" },
        },
      }),
    );
    expect(JSON.parse(t.turns[0]?.observation ?? "").result.serverInfo).toEqual({
      name: "mcp-servers/everything",
      title: "Everything Reference Server",
      version: "2.0.0",
    });
    expect(t.turns[3]?.observation).toBe(
      pretty({ result: { content: [{ type: "text", text: "The sum of 19 and 23 is 42." }] }, jsonrpc: "2.0", id: 4 }),
    );
  });

  it("structuredContent, isError results and a JSON-RPC error are part of the observation and marked in turn meta", async () => {
    const t = await readOne(mcpJsonRpcReader, TOOLS_JSONL);
    const weather = { temperature: 36, conditions: "Light rain / drizzle", humidity: 82 };
    expect(JSON.parse(t.turns[4]?.observation ?? "").result).toEqual({
      content: [{ type: "text", text: JSON.stringify(weather) }],
      structuredContent: weather,
    });
    // get-sum with b = "two" and the unknown tool: tool errors (isError), not protocol errors.
    expect(t.turns.map((turn) => turn.meta?.is_error ?? false)).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
      true,
      true,
      false,
      false,
      false,
      false,
    ]);
    expect(JSON.parse(t.turns[7]?.observation ?? "").result.content[0].text).toBe("MCP error -32602: Tool no-such-tool not found");
    // tools/call without a name: the request is invalid; the server answers -32603 (the SDK's choice).
    expect(errorCodes(t)).toEqual([null, null, null, null, null, null, null, null, -32603, null, null, null]);
    expect(t.turns[8]?.meta).toEqual({ method: "tools/call", error_code: -32603 });
    // An annotated "Error: Operation failed" text is an ordinary result, not an error.
    expect(t.turns[5]?.meta).toEqual({ method: "tools/call" });
  });

  it("notifications, the server's roots/list and the client's answer are counted, not turns", async () => {
    const t = await readOne(mcpJsonRpcReader, TOOLS_JSONL);
    // The long-running call's three progress notifications come before its reply, which is the observation.
    expect(JSON.parse(t.turns[9]?.observation ?? "").result.content[0].text).toBe(
      "Long running operation completed. Duration: 0.3 seconds, Steps: 3.",
    );
    for (const turn of t.turns) expect(turn.observation).not.toContain("notifications/");
    // The roots the client answered with reach the server: get-roots-list reports them.
    expect(JSON.parse(t.turns[10]?.observation ?? "").result.content[0].text).toMatch(
      /^Current MCP Roots \(1 total\):\n\n1\. demo-workspace\n {3}URI: file:\/\/\/tmp\/lwm-demo-record\/mcp\n/,
    );
    // client: 12 requests, notifications/initialized, the answer to roots/list;
    // server: 12 replies, tools/list_changed x2, the roots log message, progress x3, roots/list.
    expect(t.meta).toEqual({
      transcript: "jsonrpc-stream",
      messages: 33,
      client_notifications: 1,
      server_notifications: 6,
      server_requests: 1,
      client_responses: 1,
      unmatched_replies: 0,
      unanswered_requests: 0,
    });
    expect(wire()).toHaveLength(33);
  });

  it("the same session as bare messages (wrappers removed): same turns; senders inferred from the methods", async () => {
    const wrapped = await readOne(mcpJsonRpcReader, TOOLS_JSONL);
    const bare = wire()
      .map(({ message }) => JSON.stringify(message, null, 2))
      .join("\n");
    const path = writeTemp("bare.json", bare);
    expect(mcpJsonRpcReader.sniff(bare.slice(0, 4096), path)).toBe(true);
    const t = await readOne(mcpJsonRpcReader, path);
    expect(t.turns).toEqual(wrapped.turns);
    // Server-only methods (tools/list_changed, notifications/message, roots/list) are placed on the
    // server; notifications/progress can come from either side and, bare, counts as the client's.
    // The bare answer to the server's roots/list (id 0, no client request with that id) is the client's.
    expect(t.meta).toMatchObject({
      messages: 33,
      client_notifications: 4,
      server_notifications: 3,
      server_requests: 1,
      client_responses: 1,
      unmatched_replies: 0,
    });
  });

  it("reads a gzip-compressed copy to the same trajectory", async () => {
    const plain = await readOne(mcpJsonRpcReader, TOOLS_JSONL);
    const gz = await readOne(mcpJsonRpcReader, writeTemp("everything-tools.jsonl.gz", gzipSync(readFileSync(TOOLS_JSONL))));
    expect(gz.turns).toEqual(plain.turns);
    expect(gz.meta).toEqual(plain.meta);
  });
});

describe("mcp-jsonrpc reader: txtar transcripts", () => {
  it("everything-tools.txtar (the same session, go-sdk layout): the same turns, the comment as task, extra sections in meta", async () => {
    const stream = await readOne(mcpJsonRpcReader, TOOLS_JSONL);
    const t = await readOne(mcpJsonRpcReader, TOOLS_TXTAR);
    expect(t.id).toMatch(/^everything-tools-[0-9a-f]{12}$/);
    expect(t.id).not.toBe(stream.id);
    expect(t.task).toMatch(/^A client that offers roots talks to the MCP reference server "everything" over stdio:\n/);
    expect(t.turns).toEqual(stream.turns);
    const { txtar_sections, transcript, ...counts } = t.meta ?? {};
    const { transcript: streamTranscript, ...streamCounts } = stream.meta ?? {};
    expect([transcript, streamTranscript]).toEqual(["txtar", "jsonrpc-stream"]);
    expect(counts).toEqual(streamCounts);
    // The `-- tools --` section names the server's tools as its tools/list reply listed them.
    const listed = JSON.parse(stream.turns[1]?.observation ?? "").result.tools.map((tool: { name: string }) => tool.name);
    expect(txtar_sections).toEqual({ tools: listed.join("\n") });
    expect(listed.slice(0, 3)).toEqual(["echo", "get-annotated-message", "get-env"]);
  });

  it("impatient-client.txtar (hand-made): out-of-order replies, a repeated id, requests without id, a request never answered", async () => {
    const t = await readOne(mcpJsonRpcReader, IMPATIENT);
    expect(t.task).toMatch(/^Hand-written for lwm-data's tests: a client that does not wait for replies\./);
    // The ping without id is a notification; notifications/cancelled with id 3 is a request.
    expect(methods(t)).toEqual(["tools/list", "initialize", "tools/list", "notifications/cancelled", "tools/call"]);
    expect(errorCodes(t)).toEqual([-32002, null, null, -32601, null]);
    // id 2 twice: the first request gets the first id-2 reply (the error), the second the tool list.
    expect(t.turns[0]?.observation).toBe(pretty({ jsonrpc: "2.0", id: 2, error: { code: -32002, message: "not initialized" } }));
    expect(t.turns[2]?.observation).toBe(
      pretty({ jsonrpc: "2.0", id: 2, result: { tools: [{ name: "lookup", inputSchema: { type: "object" } }] } }),
    );
    // The server section is tab-indented; the observation is canonical 2-space JSON.
    expect(t.turns[1]?.observation).toMatch(/^\{\n {2}"jsonrpc": "2\.0",\n {2}"id": 1,\n {2}"result": \{\n {4}"protocolVersion"/);
    expect(t.turns[4]).toEqual({
      action: pretty({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "lookup", arguments: { key: "a" } } }),
      observation: "",
      meta: { method: "tools/call", unanswered: true },
    });
    expect(t.meta).toEqual({
      transcript: "txtar",
      messages: 13,
      client_notifications: 2,
      server_notifications: 1,
      server_requests: 0,
      client_responses: 0,
      unmatched_replies: 1,
      unanswered_requests: 1,
      txtar_sections: { tools: "lookup" },
    });
  });
});

describe("mcp-jsonrpc reader: inline message streams", () => {
  it("unanswered requests stay turns with an empty observation; isError, batches and unmatched replies", async () => {
    const lines = [
      { jsonrpc: "2.0", id: "a", method: "tools/call", params: { name: "fail" } },
      { jsonrpc: "2.0", id: "a", result: { content: [{ type: "text", text: "boom" }], isError: true } },
      [
        { jsonrpc: "2.0", id: "b", method: "tools/list" },
        { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "x" } },
      ],
      { jsonrpc: "2.0", id: "zz", result: {} },
      { jsonrpc: "2.0", id: "c", method: "ping" },
      { jsonrpc: "2.0", id: "b", result: { tools: [] } },
    ];
    const t = await readOne(mcpJsonRpcReader, writeTemp("t.jsonl", lines.map((l) => JSON.stringify(l)).join("\n")));
    expect(t.turns.map((turn) => turn.meta)).toEqual([
      { method: "tools/call", is_error: true },
      { method: "tools/list" },
      { method: "ping", unanswered: true },
    ]);
    expect(t.turns[2]?.observation).toBe("");
    expect(t.meta).toMatchObject({ messages: 7, unmatched_replies: 1, unanswered_requests: 1, client_notifications: 1 });
  });

  it("quarantines a transcript with bad JSON, a non-JSON-RPC value, no request, or over the size limit — one entry per file", async () => {
    const cases: [string, RegExp][] = [
      // A cut line with a line after it (a cut LAST line is read without it: see below).
      [
        '{"jsonrpc":"2.0","id":1,"method":"ping"}\n{"jsonrpc":"2.0","id":1,"result":{}\n{"jsonrpc":"2.0","id":2,"method":"ping"}\n',
        /line 2: unterminated JSON value/,
      ],
      // A last line that closes but is not JSON was written whole: corrupt, not cut.
      ['{"jsonrpc":"2.0","id":1,"method":"ping"}\n{"jsonrpc":"2.0","id":1,"result":{},}\n', /line 2: invalid JSON/],
      ['{"jsonrpc":"2.0","id":1,"method":"ping"}\n{"hello":"world"}\n', /line 2: not a JSON-RPC 2\.0 message/],
      ['{"jsonrpc":"2.0","method":"notifications/initialized"}\n', /no client request/],
      ['{"jsonrpc":"2.0","id":1}\n', /line 1: a JSON-RPC message needs a "method"/],
    ];
    for (const [content, reason] of cases) {
      const items = await collect(mcpJsonRpcReader.read(writeTemp("bad.jsonl", content), OPTIONS));
      expect(items).toHaveLength(1);
      expect(quarantined(items)[0]).toMatchObject({ stage: "read", source: { format: "mcp-jsonrpc" } });
      expect(quarantined(items)[0]?.reason).toMatch(reason);
    }
    const tiny = await collect(mcpJsonRpcReader.read(TOOLS_TXTAR, { maxLineBytes: 1000 }));
    expect(tiny).toHaveLength(1);
    expect(quarantined(tiny)[0]?.reason).toMatch(/over the 1000-byte record limit/);
  });
});

describe("mcp-jsonrpc reader: a message stream whose last line was cut while it was written (cut-last-line.ts)", () => {
  const lines = readFileSync(TOOLS_JSONL, "utf8").trimEnd().split("\n");

  it("reads the messages before it, with meta.truncated_line; the request it would have answered stays unanswered", async () => {
    const before = await readOne(mcpJsonRpcReader, writeTemp("before.jsonl", `${lines.slice(0, -1).join("\n")}\n`));
    const cutText = (lines.at(-1) as string).slice(0, 45);
    const t = await readOne(mcpJsonRpcReader, writeTemp("cut.jsonl", `${lines.slice(0, -1).join("\n")}\n${cutText}`));
    expect(t.turns).toEqual(before.turns);
    expect(t.turns.at(-1)?.meta).toMatchObject({ method: "ping", unanswered: true });
    expect(t.meta).toEqual({ ...before.meta, truncated_line: { line: lines.length, bytes: 45 } });
    expect(before.meta?.truncated_line).toBeUndefined();
  });

  it("negative controls: a cut middle line, a pretty-printed value cut over several lines, a file of one cut line", async () => {
    const cases: [string, RegExp][] = [
      [[...lines.slice(0, 5), (lines[5] as string).slice(0, 45), ...lines.slice(6)].join("\n"), /^line \d+: /],
      [
        `${pretty({ jsonrpc: "2.0", id: 1, method: "ping" })}\n${pretty({ jsonrpc: "2.0", id: 1, result: { a: 1 } }).slice(0, 40)}`,
        /^line 6: unterminated/,
      ],
      [(lines[0] as string).slice(0, 45), /^line 1: unterminated/],
    ];
    for (const [content, reason] of cases) {
      const items = await collect(mcpJsonRpcReader.read(writeTemp("bad.jsonl", content), OPTIONS));
      expect(items.map((item) => item.kind)).toEqual(["quarantine"]);
      expect(quarantined(items)[0]?.reason).toMatch(reason);
    }
  });
});

describe("the recorded sessions as canonical JSONL (gzip) and AgentWorldBench rows", () => {
  it("everything.jsonl.gz: both sessions; the recorder's own request/reply pairs match what the MCP reader pairs", async () => {
    expect(gunzipSync(readFileSync(CANONICAL_GZ)).toString("utf8").split("\n")[0]).toMatch(/^\{"id":"mcp-everything\/everything-tools"/);
    const [tools, browse, ...rest] = await readAll(canonicalJsonlReader, CANONICAL_GZ);
    expect(rest).toEqual([]);
    expect(tools?.id).toBe("mcp-everything/everything-tools");
    expect(tools?.domain).toBe("mcp");
    const stream = await readOne(mcpJsonRpcReader, TOOLS_JSONL);
    const textOf = (t: Trajectory | undefined) => t?.turns.map(({ action, observation }) => ({ action, observation }));
    expect(textOf(tools)).toEqual(textOf(stream));
    expect(tools?.task).toBe((await readOne(mcpJsonRpcReader, TOOLS_TXTAR)).task);
    expect(browse?.id).toBe("mcp-everything/everything-resources-prompts");
    expect(methods(browse as Trajectory)).toEqual([
      "initialize",
      "resources/list",
      "resources/templates/list",
      "resources/read",
      "prompts/list",
      "prompts/get",
      "prompts/get",
      "prompts/get",
      "completion/complete",
      "logging/setLevel",
      "tools/run",
      "ping",
    ]);
    // A resource id the server refuses, a prompt without its required argument, an unknown method.
    const errors = browse?.turns.map((turn) => JSON.parse(turn.observation).error?.code ?? null);
    expect(errors).toEqual([null, null, null, -32603, null, null, null, -32602, null, null, -32601, null]);
    expect(JSON.parse(browse?.turns[6]?.observation ?? "").result.messages[0].content.text).toBe(
      "What's weather in Lyon, Auvergne-Rhône-Alpes?",
    );
    // The package's instructions document is not copied: the field says how long it was.
    expect(JSON.parse(browse?.turns[0]?.observation ?? "").result.instructions).toMatch(
      /^\[\d+ characters of the server package's docs\/instructions\.md, left out of this recording\]$/,
    );
  });

  it("everything-agentworldbench.jsonl: one row per turn, the id beyond 2^53 kept exact, the benchmark's markup stripped", async () => {
    const text = readFileSync(AGENTWORLDBENCH, "utf8");
    expect(text.startsWith('{"task":"mcp","id":14502100000000000123,')).toBe(true);
    const t = await readOne(agentWorldBenchReader, AGENTWORLDBENCH);
    expect(t.id).toBe("14502100000000000123");
    expect(t.system).toBe(readFileSync(join(ROOT, "configs/system-prompts/mcp.md"), "utf8").trim());
    expect(t.meta).toEqual({ total_turns: 12, rows: 12 });
    const [, browse] = await readAll(canonicalJsonlReader, CANONICAL_GZ);
    // Each action is the request in a ```json fence, each observation the reply: the browse session.
    expect(t.turns).toEqual(browse?.turns.map(({ action, observation }) => ({ action: `\`\`\`json\n${action}\n\`\`\``, observation })));
  });
});

describe("search-api reader: the local service's Brave-layout responses", () => {
  it("brave-web-http-304.json (pretty-printed, 4 spaces): one turn, the query as a web_search call, the response as canonical JSON", async () => {
    const raw = readFileSync(HTTP_304, "utf8");
    const t = await readOne(searchApiReader, HTTP_304);
    expect(t).toMatchObject({ domain: "search", source: { format: "search-api", line: 1 } });
    expect(t.id).toMatch(/^brave-web-http-304-[0-9a-f]{12}$/);
    expect(t.turns).toHaveLength(1);
    const turn = t.turns[0];
    expect(turn?.action).toBe(pretty({ name: "web_search", arguments: { query: "304 Not Modified conditional request" } }));
    expect(turn?.meta).toEqual({ endpoint: "search" });
    expect(raw.startsWith('{\n    "query": {\n        "original": "304 Not Modified conditional request",')).toBe(true);
    expect(turn?.observation).toBe(pretty(JSON.parse(raw)));
    const response = JSON.parse(turn?.observation ?? "");
    expect(response.web.results.map((r: { url: string }) => r.url).slice(0, 2)).toEqual([
      "https://web.example.test/guides/http/etag",
      "https://apis.example.test/blog/status-codes",
    ]);
    // The snippet HTML is still there: decoding it is the normalizer's job.
    expect(response.web.results[0].description).toBe(
      "If the resource hasn&#x27;t changed, the server answers &quot;<strong>304</strong> <strong>Not</strong> <strong>Modified</strong>&quot; with no body, and the client keeps using its copy.",
    );
  });

  it("brave-web-git-reset.json (one line, as the service sent it): read as a one-response-per-line file", async () => {
    const raw = readFileSync(GIT_RESET, "utf8");
    expect(raw.trimEnd().split("\n")).toHaveLength(1);
    const t = await readOne(searchApiReader, GIT_RESET);
    expect(t.source).toMatchObject({ line: 1, offset: 0 });
    expect(t.turns[0]?.action).toBe(pretty({ name: "web_search", arguments: { query: "recover commits after git reset --hard" } }));
    expect(t.turns[0]?.observation).toBe(pretty(JSON.parse(raw)));
    expect(JSON.parse(t.turns[0]?.observation ?? "").web.results[0].title).toBe('Recovering "lost" commits with the reflog');
  });

  it("the same responses as JSONL lines and inside a streamed (gzip) JSON array", async () => {
    const [web304, webGit] = [await readOne(searchApiReader, HTTP_304), await readOne(searchApiReader, GIT_RESET)];
    const responses = [JSON.parse(readFileSync(HTTP_304, "utf8")), JSON.parse(readFileSync(GIT_RESET, "utf8"))];
    const lines = await readAll(searchApiReader, writeTemp("responses.jsonl", responses.map((r) => `${JSON.stringify(r)}\n`).join("")));
    expect(lines.map((t) => t.turns)).toEqual([web304.turns, webGit.turns]);
    expect(lines.map((t) => t.source.line)).toEqual([1, 2]);
    const news = {
      type: "news",
      query: { original: "mcp spec" },
      results: [{ title: "MCP &amp; you", url: "https://example.org/a?x=1&amp;y=2" }],
    };
    const arrayPath = writeTemp("responses.json.gz", gzipSync(JSON.stringify([responses[0], news, { not: "a response" }])));
    const items = await collect(searchApiReader.read(arrayPath, OPTIONS));
    const [web, newsTrajectory] = trajectories(items);
    expect(web?.turns).toEqual(web304.turns);
    expect(web?.id).toMatch(/^responses\.json\[0\]-[0-9a-f]{12}$/);
    expect(newsTrajectory?.turns[0]?.action).toBe(pretty({ name: "news_search", arguments: { query: "mcp spec" } }));
    expect(newsTrajectory?.turns[0]?.meta).toEqual({ endpoint: "news" });
    expect(quarantined(items)).toHaveLength(1);
    expect(quarantined(items)[0]?.reason).toMatch(/not a search-API response/);
  });

  it("quarantines the rest of a JSON array that breaks mid-way", async () => {
    const response = JSON.stringify(JSON.parse(readFileSync(HTTP_304, "utf8")));
    const items = await collect(searchApiReader.read(writeTemp("broken.json", `[${response}, {"type": "search", "query": `), OPTIONS));
    expect(trajectories(items)).toHaveLength(1);
    expect(quarantined(items)[0]?.reason).toMatch(/JSON array breaks after element 1/);
  });
});

describe("search-api reader: agent search/extract traces", () => {
  it("agent-trace.jsonl (recorded): three tasks; searches hold the results the service returned; a 404 extract is an error turn", async () => {
    const [git, http, emoji, ...rest] = await readAll(searchApiReader, TRACE);
    expect(rest).toEqual([]);
    // scripts/record-demo/search.ts: 2, 3 and 4 steps after each task line (lines 1, 4, 8).
    expect([git?.id, http?.id, emoji?.id]).toEqual(["git-undo-reset", "http-304", "js-emoji-length"]);
    expect([git, http, emoji].map((t) => t?.source.line)).toEqual([1, 4, 8]);
    expect([git, http, emoji].map((t) => t?.turns.map((turn) => JSON.parse(turn.action).name))).toEqual([
      ["web_search", "web_extract"],
      ["web_search", "web_extract", "web_extract"],
      ["web_search", "web_extract", "web_search", "web_extract"],
    ]);
    expect(git?.task).toBe("I ran `git reset --hard` on the wrong branch and my last three commits are gone. How do I get them back?");
    expect(git?.turns[0]?.thinking).toBe("Look for how to undo a hard reset.");
    // The trace's results are the saved response's results, reduced to title, url and description.
    const saved = JSON.parse(readFileSync(GIT_RESET, "utf8")).web.results as Record<string, unknown>[];
    expect(git?.turns[0]?.observation).toBe(pretty(saved.map(({ title, url, description }) => ({ title, url, description }))));
    expect(git?.turns[1]?.action).toBe(
      pretty({ name: "web_extract", arguments: { url: "https://devnotes.example.test/articles/git-reflog" } }),
    );
    expect(git?.turns[1]?.observation).toMatch(/^# Recovering "lost" commits with the reflog\n\nEvery time HEAD or a branch moves/);
    expect(http?.turns[1]).toEqual({
      action: pretty({ name: "web_extract", arguments: { url: "https://web.example.test/guides/http/304-not-modified" } }),
      observation: "HTTP 404 Not Found",
      thinking: "Maybe the guide has a page just for 304.",
    });
    expect(http?.turns[2]?.observation).toMatch(/^# ETag and If-None-Match: conditional requests\n/);
    expect(emoji?.task).toContain("'😀'.length");
  });

  it("task lines split trajectories; tool names, error steps and a bad step (inline trace)", async () => {
    const results = (JSON.parse(readFileSync(HTTP_304, "utf8")).web.results as Record<string, unknown>[])
      .slice(0, 2)
      .map(({ title, url, description }) => ({ title, url, description }));
    const lines = [
      { type: "task", id: "q1", task: "What does 304 mean?" },
      { type: "search", query: "304 status", results, thinking: "Start broad." },
      { type: "extract", url: results[0]?.url, text: "# ETag\n\nAn ETag is an opaque validator…" },
      { type: "task", id: 2 },
      { type: "extract", url: "https://example.invalid/", error: "HTTP 404 Not Found" },
      { type: "search", tool: "brave_web_search", query: "404", results: [] },
      { type: "task", id: "q3" },
      { type: "search", query: "missing results" },
    ];
    const jsonl = lines.map((l) => JSON.stringify(l)).join("\n");
    const path = writeTemp("trace.jsonl", jsonl);
    expect(searchApiReader.sniff(jsonl, path)).toBe(true);
    expect(mcpJsonRpcReader.sniff(jsonl, path)).toBe(false);
    const items = await collect(searchApiReader.read(path, OPTIONS));
    expect(items).toHaveLength(3);
    const [q1, two] = trajectories(items);
    expect(q1).toMatchObject({ id: "q1", task: "What does 304 mean?", source: { line: 1, offset: 0 } });
    expect(q1?.turns).toHaveLength(2);
    expect(q1?.turns[0]?.observation).toBe(pretty(results));
    expect(q1?.turns[0]?.thinking).toBe("Start broad.");
    expect(q1?.turns[1]?.action).toBe(pretty({ name: "web_extract", arguments: { url: "https://web.example.test/guides/http/etag" } }));
    expect(two).toMatchObject({ id: "2", source: { line: 4 } });
    expect(two?.turns.map((t) => [JSON.parse(t.action).name, t.observation])).toEqual([
      ["web_extract", "HTTP 404 Not Found"],
      ["brave_web_search", "[]"],
    ]);
    const bad = quarantined(items)[0];
    expect(bad).toMatchObject({ id: "q3", source: { line: 7 } });
    expect(bad?.reason).toMatch(/^line 8: a search step needs "results" \(array\) or "error"/);
  });

  it("a trace without task lines is one trajectory with a content-hash id; a bad JSON line quarantines it", async () => {
    const steps = readFileSync(TRACE, "utf8").split("\n").slice(1, 3);
    const good = await readAll(searchApiReader, writeTemp("steps.jsonl", steps.join("\n")));
    expect(good).toHaveLength(1);
    expect(good[0]?.id).toMatch(/^steps-[0-9a-f]{12}$/);
    expect(good[0]?.task).toBeUndefined();
    expect(good[0]?.turns).toHaveLength(2);
    const broken = await collect(searchApiReader.read(writeTemp("steps.jsonl", [...steps, "{oops"].join("\n")), OPTIONS));
    expect(broken).toHaveLength(1);
    expect(quarantined(broken)[0]?.reason).toMatch(/^line 3: invalid JSON/);
  });
});

describe("sniffing: each format claims its own files and no one else's", () => {
  it("MCP transcripts → mcp-jsonrpc; search responses and traces → search-api; canonical/AgentWorldBench → neither", async () => {
    const expectations: [string, boolean, boolean][] = [
      [TOOLS_JSONL, true, false],
      [TOOLS_TXTAR, true, false],
      [IMPATIENT, true, false],
      [GIT_RESET, false, true],
      [HTTP_304, false, true],
      [TRACE, false, true],
      [CANONICAL_GZ, false, false],
      [AGENTWORLDBENCH, false, false],
    ];
    for (const [path, mcp, search] of expectations) {
      const head = await readHead(path);
      expect([path, mcpJsonRpcReader.sniff(head, path), searchApiReader.sniff(head, path)]).toEqual([path, mcp, search]);
    }
  });
});
