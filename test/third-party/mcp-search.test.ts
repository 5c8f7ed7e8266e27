/**
 * The MCP and search readers on third-party samples (../shared/fixtures/real/mcp and /search):
 * the Go SDK's server conformance transcripts, the MCP specification's schema examples and a
 * Brave Search API response. Expected values were read off the sample files by a person (the
 * comments say where). The same readers are covered on the project's own recordings by
 * test/read-mcp-search.test.ts.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { beforeAll, expect, it } from "vitest";
import type { Trajectory } from "../../src/core/trajectory.ts";
import { mcpJsonRpcReader } from "../../src/read/mcp-jsonrpc.ts";
import type { ReadItem } from "../../src/read/reader.ts";
import { readHead } from "../../src/read/registry.ts";
import { searchApiReader } from "../../src/read/search-api.ts";
import { collect, tempDir } from "../helpers.ts";
import { describeThirdParty, thirdParty } from "./support.ts";

const OPTIONS = { maxLineBytes: 1 << 20 };
const GO_SDK = thirdParty("mcp/go-sdk-conformance");
const SPEC = thirdParty("mcp/mcp-spec-examples");
const BRAVE = thirdParty("search/brave/brave_web.json");

const trajectories = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "trajectory" ? [i.trajectory] : []));
const quarantined = (items: ReadItem[]) => items.flatMap((i) => (i.kind === "quarantine" ? [i.entry] : []));
/** Canonical JSON of a value written out by hand from the source file (2-space, source key order). */
const pretty = (value: unknown) => JSON.stringify(value, null, 2);

async function readOne(reader: typeof mcpJsonRpcReader, path: string): Promise<Trajectory> {
  const items = await collect(reader.read(path, OPTIONS));
  expect(quarantined(items)).toEqual([]);
  expect(items).toHaveLength(1);
  return trajectories(items)[0] as Trajectory;
}

function writeTemp(name: string, content: string | Buffer): string {
  const path = join(tempDir(), name);
  writeFileSync(path, content);
  return path;
}

const methods = (t: Trajectory) => t.turns.map((turn) => turn.meta?.method);
const errorCodes = (t: Trajectory) => t.turns.map((turn) => turn.meta?.error_code ?? null);

describeThirdParty("mcp-jsonrpc reader: go-sdk conformance txtar (values read off the .txtar files)", () => {
  it("tools.txtar: 12 requests paired by id, ping/notification/client reply kept out", async () => {
    const t = await readOne(mcpJsonRpcReader, join(GO_SDK, "v1.0.0__tools.txtar"));
    expect(t).toMatchObject({ domain: "mcp", source: { format: "mcp-jsonrpc", line: 1 } });
    expect(t.id).toMatch(/^v1\.0\.0__tools-[0-9a-f]{12}$/);
    expect(t.task).toMatch(/^Check behavior of a server with just tools\.\n\nFixed bugs:/);
    expect(t.turns).toHaveLength(12);
    expect(methods(t)).toEqual(["initialize", "tools/list", "resources/list", "prompts/list", ...Array(8).fill("tools/call")]);
    // id 5: no params (-32600); id 8 and id 10: missing required arguments (-32602).
    expect(errorCodes(t)).toEqual([null, null, null, null, -32600, null, null, -32602, null, -32602, null, null]);
    // client lines 1-9: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{…}}`
    expect(t.turns[0]?.action).toBe(
      pretty({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2024-11-05", capabilities: {}, clientInfo: { name: "ExampleClient", version: "1.0.0" } },
      }),
    );
    // first server value
    expect(t.turns[0]?.observation).toBe(
      pretty({
        jsonrpc: "2.0",
        id: 1,
        result: {
          capabilities: { logging: {}, tools: { listChanged: true } },
          protocolVersion: "2024-11-05",
          serverInfo: { name: "testServer", version: "v1.0.0" },
        },
      }),
    );
    // last client line: `{ "jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {"name": "inc" } }`
    expect(t.turns[11]?.action).toBe(pretty({ jsonrpc: "2.0", id: 11, method: "tools/call", params: { name: "inc" } }));
    // last server value: the default x=6 incremented
    expect(t.turns[11]?.observation).toBe(
      pretty({ jsonrpc: "2.0", id: 11, result: { content: [{ type: "text", text: '{"y":7}' }], structuredContent: { y: 7 } } }),
    );
    // the first id-11 call (x=3) got the first id-11 reply
    expect(t.turns[10]?.observation).toContain('"text": "{\\"y\\":4}"');
    expect(t.meta).toEqual({
      transcript: "txtar",
      messages: 27,
      client_notifications: 1,
      server_notifications: 0,
      server_requests: 1,
      client_responses: 1,
      unmatched_replies: 0,
      unanswered_requests: 0,
      txtar_sections: { tools: "greet\nstructured\ntomorrow\ninc" },
    });
  });

  it("lifecycle.txtar: replies out of request order and repeated ids are paired first-come", async () => {
    const t = await readOne(mcpJsonRpcReader, join(GO_SDK, "v1.0.0__lifecycle.txtar"));
    expect(t.turns).toHaveLength(5);
    expect(methods(t)).toEqual(["tools/list", "initialize", "ping", "tools/list", "tools/list"]);
    expect(t.turns[0]?.action).toBe(pretty({ jsonrpc: "2.0", id: 2, method: "tools/list" }));
    expect(t.turns[0]?.observation).toBe(
      pretty({ jsonrpc: "2.0", id: 2, error: { code: 0, message: 'method "tools/list" is invalid during session initialization' } }),
    );
    expect(t.turns[2]?.observation).toBe(pretty({ jsonrpc: "2.0", id: 1, result: {} }));
    expect(t.turns[3]?.observation).toBe(pretty({ jsonrpc: "2.0", id: 2, result: { tools: [] } }));
    expect(t.turns[4]?.action).toBe(pretty({ jsonrpc: "2.0", id: 3, method: "tools/list" }));
    expect(t.turns[4]?.observation).toBe(pretty({ jsonrpc: "2.0", id: 3, result: { tools: [] } }));
    expect(t.meta).toMatchObject({ messages: 12, client_notifications: 2, unanswered_requests: 0, unmatched_replies: 0 });
  });

  it("bad_requests.txtar: requests without id are notifications; a notification with an id is a request", async () => {
    const t = await readOne(mcpJsonRpcReader, join(GO_SDK, "v1.0.0__bad_requests.txtar"));
    expect(t.turns).toHaveLength(6);
    expect(methods(t)).toEqual([
      "initialize",
      "initialize",
      "notifications/initialized",
      "logging/setLevel",
      "completion/complete",
      "logging/setLevel",
    ]);
    expect(errorCodes(t)).toEqual([-32600, null, -32600, -32600, -32600, -32600]);
    expect(t.turns[0]?.action).toBe(pretty({ jsonrpc: "2.0", id: 1, method: "initialize" }));
    expect(t.turns[0]?.observation).toBe(
      pretty({ jsonrpc: "2.0", id: 1, error: { code: -32600, message: 'invalid request: missing required "params"' } }),
    );
    expect(t.turns[5]?.action).toBe(pretty({ jsonrpc: "2.0", id: 4, method: "logging/setLevel", params: null }));
    expect(t.turns[5]?.observation).toBe(
      pretty({
        jsonrpc: "2.0",
        id: 4,
        error: { code: -32600, message: "handling 'logging/setLevel': invalid request: missing required \"params\"" },
      }),
    );
    // `initialize` without id, `notifications/initialized`, `ping` without id
    expect(t.meta).toMatchObject({ messages: 15, client_notifications: 3, server_requests: 0, txtar_sections: { prompts: "code_review" } });
  });

  it("resources.txtar: a server-initiated roots/list and the client's answer are not turns", async () => {
    const t = await readOne(mcpJsonRpcReader, join(GO_SDK, "v1.0.0__resources.txtar"));
    expect(t.turns).toHaveLength(6);
    expect(methods(t)).toEqual([
      "initialize",
      "resources/list",
      "resources/read",
      "resources/read",
      "resources/read",
      "resources/subscribe",
    ]);
    expect(t.turns[0]?.observation).toMatch(/^\{\n {2}"jsonrpc": "2\.0",\n {2}"id": 1,\n {2}"result": \{\n {4}"capabilities": \{/);
    expect(t.turns[2]?.observation).toContain('"text": "This is the MCP test server."');
    expect(t.turns[3]?.observation).toContain('"blob": "Q29udGVudHMK"');
    expect(t.turns[5]?.action).toBe(pretty({ jsonrpc: "2.0", id: 5, method: "resources/subscribe" }));
    expect(t.turns[5]?.observation).toBe(
      pretty({ jsonrpc: "2.0", id: 5, error: { code: -32600, message: 'invalid request: missing required "params"' } }),
    );
    expect(t.meta).toMatchObject({ messages: 15, client_notifications: 1, server_requests: 1, client_responses: 1, unmatched_replies: 0 });
  });

  it("reads a gzip-compressed transcript to the same trajectory", async () => {
    const plain = await readOne(mcpJsonRpcReader, join(GO_SDK, "v1.0.0__tools.txtar"));
    const gz = await readOne(mcpJsonRpcReader, writeTemp("tools.txtar.gz", gzipSync(readFileSync(join(GO_SDK, "v1.0.0__tools.txtar")))));
    expect(gz.turns).toEqual(plain.turns);
  });
});

describeThirdParty("mcp-jsonrpc reader: message streams (JSONL)", () => {
  const spec = (name: string) => readFileSync(join(SPEC, `${name}.json`), "utf8");
  // Read inside the tests: describe bodies run even when the suite is skipped (samples absent).
  const specWire = (): [string, string][] => [
    ["client", spec("ListToolsRequest__list-tools-request")],
    ["server", spec("ListToolsResultResponse__list-tools-result-response")],
    ["client", spec("CallToolRequest__call-tool-request")],
    ["server", spec("ProgressNotification__progress-message")],
    ["server", spec("ToolListChangedNotification__tools-list-changed")],
    ["server", spec("CallToolResultResponse__call-tool-result-response")],
  ];

  it("wrapped {direction, message} lines built from the spec examples", async () => {
    const wire = specWire();
    const jsonl = wire.map(([direction, text]) => JSON.stringify({ direction, message: JSON.parse(text) })).join("\n");
    const path = writeTemp("session.jsonl", `${jsonl}\n`);
    expect(mcpJsonRpcReader.sniff(jsonl, path)).toBe(true);
    const t = await readOne(mcpJsonRpcReader, path);
    expect(t.turns).toHaveLength(2);
    expect(methods(t)).toEqual(["tools/list", "tools/call"]);
    expect(t.turns[0]?.observation).toBe(pretty(JSON.parse(wire[1]?.[1] as string)));
    expect(t.turns[1]?.action).toBe(pretty(JSON.parse(wire[2]?.[1] as string)));
    expect(t.turns[1]?.observation).toContain('"text": "Current weather in New York:\\nTemperature: 72°F\\nConditions: Partly cloudy"');
    expect(t.turns[1]?.meta).toEqual({ method: "tools/call" });
    expect(t.meta).toMatchObject({ transcript: "jsonrpc-stream", messages: 6, server_notifications: 2, client_notifications: 0 });
  });

  it("bare messages, pretty-printed and concatenated: same turns; a server-only method is placed on the server", async () => {
    const path = writeTemp(
      "session.json",
      specWire()
        .map(([, text]) => text)
        .join("\n"),
    );
    expect(mcpJsonRpcReader.sniff(readFileSync(path, "utf8"), path)).toBe(true);
    const t = await readOne(mcpJsonRpcReader, path);
    expect(methods(t)).toEqual(["tools/list", "tools/call"]);
    // notifications/progress can come from either side; bare, it is counted as the client's.
    expect(t.meta).toMatchObject({ server_notifications: 1, client_notifications: 1 });
  });
  it("a transcript over the record limit is quarantined whole", async () => {
    const tiny = await collect(mcpJsonRpcReader.read(join(GO_SDK, "v1.0.0__tools.txtar"), { maxLineBytes: 1000 }));
    expect(quarantined(tiny)[0]?.reason).toMatch(/over the 1000-byte record limit/);
  });
});

describeThirdParty("search-api reader: Brave responses", () => {
  // Read inside the tests: describe bodies run even when the suite is skipped (samples absent).
  let raw = "";
  beforeAll(() => {
    raw = readFileSync(BRAVE, "utf8");
  });

  it("brave_web.json: one turn, action = the query as a web_search call, observation = the response as canonical JSON", async () => {
    const t = await readOne(searchApiReader, BRAVE);
    expect(t).toMatchObject({ domain: "search", source: { format: "search-api", line: 1 } });
    expect(t.id).toMatch(/^brave_web-[0-9a-f]{12}$/);
    expect(t.turns).toHaveLength(1);
    const turn = t.turns[0];
    // `"query": {"original": "hello world", …}` on lines 2-3 of the file
    expect(turn?.action).toBe('{\n  "name": "web_search",\n  "arguments": {\n    "query": "hello world"\n  }\n}');
    expect(turn?.meta).toEqual({ endpoint: "search" });
    // The file is 4-space indented; the observation is the same JSON at 2 spaces, keys in file order.
    expect(turn?.observation).toBe(pretty(JSON.parse(raw)));
    expect(turn?.observation.startsWith('{\n  "query": {\n    "original": "hello world",\n    "show_strict_warning": false,')).toBe(true);
    // Last web result (line ~880): Go by Example. The HTML is still there: decoding is the normalizer's job.
    expect(turn?.observation).toContain('"title": "Go by Example: Hello World"');
    expect(turn?.observation).toContain("A &quot;Hello, World!&quot; program is <strong>usually a simple computer program");
    expect(JSON.parse(turn?.observation ?? "").web.results).toHaveLength(20);
  });

  it("the same response as a JSONL line and inside a streamed (gzip) JSON array", async () => {
    const file = await readOne(searchApiReader, BRAVE);
    const line = await readOne(searchApiReader, writeTemp("responses.jsonl", `${JSON.stringify(JSON.parse(raw))}\n`));
    expect(line.turns).toEqual(file.turns);
    const news = {
      type: "news",
      query: { original: "mcp spec" },
      results: [{ title: "MCP &amp; you", url: "https://example.org/a?x=1&amp;y=2" }],
    };
    const arrayPath = writeTemp("responses.json.gz", gzipSync(JSON.stringify([JSON.parse(raw), news, { not: "a response" }])));
    const items = await collect(searchApiReader.read(arrayPath, OPTIONS));
    const [web, newsTrajectory] = trajectories(items);
    expect(web?.turns).toEqual(file.turns);
    expect(web?.id).toMatch(/^responses\.json\[0\]-[0-9a-f]{12}$/);
    expect(newsTrajectory?.turns[0]?.action).toBe(pretty({ name: "news_search", arguments: { query: "mcp spec" } }));
    expect(newsTrajectory?.turns[0]?.meta).toEqual({ endpoint: "news" });
    expect(quarantined(items)).toHaveLength(1);
    expect(quarantined(items)[0]?.reason).toMatch(/not a search-API response/);
  });

  it("quarantines the rest of a JSON array that breaks mid-way", async () => {
    const items = await collect(
      searchApiReader.read(writeTemp("broken.json", `[${JSON.stringify(JSON.parse(raw))}, {"type": "search", "query": `), OPTIONS),
    );
    expect(trajectories(items)).toHaveLength(1);
    expect(quarantined(items)[0]?.reason).toMatch(/JSON array breaks after element 1/);
  });
});

describeThirdParty("search-api reader: agent search/extract traces", () => {
  // Read inside the tests: describe bodies run even when the suite is skipped (samples absent).
  let results: { title: string; url: string; description: string }[] = [];
  let lines: Record<string, unknown>[] = [];
  let jsonl = "";
  beforeAll(() => {
    results = (JSON.parse(readFileSync(BRAVE, "utf8")).web.results as { title: string; url: string; description: string }[])
      .slice(0, 3)
      .map(({ title, url, description }) => ({ title, url, description }));
    lines = [
      { type: "task", id: "q1", task: "What is a Hello World program?" },
      { type: "search", query: "hello world program", results, thinking: "Start broad." },
      {
        type: "extract",
        url: results[0]?.url,
        text: '# "Hello, World!" program\n\nA "Hello, World!" program is usually a simple computer program…',
      },
      { type: "task", id: 2 },
      { type: "extract", url: "https://example.invalid/", error: "HTTP 404 Not Found" },
      { type: "search", tool: "brave_web_search", query: "404", results: [] },
      { type: "task", id: "q3" },
      { type: "search", query: "missing results" },
    ];
    jsonl = lines.map((l) => JSON.stringify(l)).join("\n");
  });

  it("is detected by content and turns each step into a turn; task lines split trajectories", async () => {
    const path = writeTemp("trace.jsonl", jsonl);
    expect(searchApiReader.sniff(jsonl, path)).toBe(true);
    expect(mcpJsonRpcReader.sniff(jsonl, path)).toBe(false);
    const items = await collect(searchApiReader.read(path, OPTIONS));
    expect(items).toHaveLength(3);
    const [q1, two] = trajectories(items);
    expect(q1).toMatchObject({ id: "q1", task: "What is a Hello World program?", source: { line: 1, offset: 0 } });
    expect(q1?.turns).toHaveLength(2);
    expect(q1?.turns[0]?.action).toBe(pretty({ name: "web_search", arguments: { query: "hello world program" } }));
    expect(q1?.turns[0]?.observation).toBe(pretty(results));
    expect(q1?.turns[0]?.thinking).toBe("Start broad.");
    expect(q1?.turns[1]?.action).toBe(
      pretty({ name: "web_extract", arguments: { url: "https://en.wikipedia.org/wiki/%22Hello,_World!%22_program" } }),
    );
    expect(q1?.turns[1]?.observation).toMatch(/^# "Hello, World!" program\n/);
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
    const steps = lines.slice(1, 3).map((l) => JSON.stringify(l));
    const good = trajectories(await collect(searchApiReader.read(writeTemp("steps.jsonl", steps.join("\n")), OPTIONS)));
    expect(good).toHaveLength(1);
    expect(good[0]?.id).toMatch(/^steps-[0-9a-f]{12}$/);
    expect(good[0]?.task).toBeUndefined();
    const broken = await collect(searchApiReader.read(writeTemp("steps.jsonl", [...steps, "{oops"].join("\n")), OPTIONS));
    expect(broken).toHaveLength(1);
    expect(quarantined(broken)[0]?.reason).toMatch(/^line 3: invalid JSON/);
  });
});

describeThirdParty("sniffing: each format claims its own files and no one else's", () => {
  it("go-sdk txtar → mcp-jsonrpc; Brave → search-api", async () => {
    for (const name of ["v1.0.0__tools.txtar", "v1.0.0__lifecycle.txtar", "v1.0.0__bad_requests.txtar", "v1.0.0__resources.txtar"]) {
      const head = await readHead(join(GO_SDK, name));
      expect([name, mcpJsonRpcReader.sniff(head, name), searchApiReader.sniff(head, name)]).toEqual([name, true, false]);
    }
    const brave = await readHead(BRAVE);
    expect([mcpJsonRpcReader.sniff(brave, BRAVE), searchApiReader.sniff(brave, BRAVE)]).toEqual([false, true]);
  });
});
