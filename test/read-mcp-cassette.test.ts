/**
 * Issue 34: MCP record/replay cassettes (src/read/mcp-cassette.ts). The fixtures under
 * test/fixtures/handmade/mcp-cassette/ (README.md there) follow mcp-recorder's Cassette model
 * (devhelmhq/mcp-recorder src/mcp_recorder/_types.py) and agent-vcr's `.vcr` recordings
 * (Jarvis2021/agent-vcr examples/recordings/). No cassette is among the shared samples.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { globSync } from "tinyglobby";
import { describe, expect, it } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import { mcpCassetteReader } from "../src/read/mcp-cassette.ts";
import { mcpJsonRpcReader } from "../src/read/mcp-jsonrpc.ts";
import type { ReaderOptions, ReadItem } from "../src/read/reader.ts";
import { READERS, readHead } from "../src/read/registry.ts";
import { collect, ROOT, tempDir } from "./helpers.ts";
import { describeThirdParty, thirdParty } from "./third-party/support.ts";

const OPTIONS: ReaderOptions = { maxLineBytes: 64 << 20 };
const DIR = join(ROOT, "test/fixtures/handmade/mcp-cassette");

async function read(name: string): Promise<ReadItem[]> {
  return collect(mcpCassetteReader.read(join(DIR, name), OPTIONS));
}

async function readOne(name: string): Promise<Trajectory> {
  const items = await read(name);
  expect(items).toHaveLength(1);
  const item = items[0];
  if (item?.kind !== "trajectory") throw new Error(`not a trajectory: ${JSON.stringify(item)}`);
  return item.trajectory;
}

/** Turns as [method, compact action, compact observation]. */
function compact(t: Trajectory): [unknown, unknown, unknown][] {
  return t.turns.map((turn) => [turn.meta?.method, JSON.parse(turn.action), turn.observation === "" ? "" : JSON.parse(turn.observation)]);
}

describe("MCP cassettes: mcp-recorder", () => {
  it("every client request is a turn, paired with its recorded response; the notification and lifecycle entries are counted", async () => {
    const t = await readOne("mcp-recorder-session.json");
    expect(t.id).toMatch(/^mcp-recorder-session-[0-9a-f]{16}$/);
    expect(t.domain).toBe("mcp");
    expect(t.task).toBeUndefined();
    expect(compact(t).map(([method, action]) => [method, (action as { id: number }).id])).toEqual([
      ["initialize", 0],
      ["tools/list", 1],
      ["tools/call", 2],
      ["tools/call", 3],
      ["prompts/list", 4],
    ]);
    expect(JSON.parse(t.turns[2]?.observation ?? "")).toEqual({
      jsonrpc: "2.0",
      id: 2,
      result: { content: [{ type: "text", text: "lantern (n.): a lamp with a transparent case." }], isError: false },
    });
    expect(t.turns[3]?.meta).toEqual({ method: "tools/call", is_error: true });
    expect(t.turns[4]?.meta).toEqual({ method: "prompts/list", error_code: -32601 });
    // The request's own key order is kept (canonical JSON of the recorded text).
    expect(t.turns[0]?.action.split("\n")[1]).toBe('  "method": "initialize",');
    expect(t.meta).toEqual({
      cassette: {
        layout: "mcp-recorder",
        version: "1.0",
        recorded_at: "2025-11-02T10:00:00+00:00",
        server_url: "http://127.0.0.1:8000",
        protocol_version: "2025-06-18",
        server_info: { name: "Dictionary", version: "1.2.0" },
      },
      messages: 11,
      client_notifications: 1,
      server_notifications: 0,
      server_requests: 0,
      client_responses: 0,
      unmatched_replies: 0,
      unanswered_requests: 0,
      lifecycle_interactions: 1,
    });
  });
});

describe("MCP cassettes: agent-vcr and the bare interactions shape", () => {
  it("agent-vcr: the initialize pair first, then the interactions; the progress notification is the server's", async () => {
    const t = await readOne("agent-vcr-session.vcr");
    expect(compact(t)).toEqual([
      [
        "initialize",
        {
          jsonrpc: "2.0",
          id: 0,
          method: "initialize",
          params: { protocolVersion: "2024-11-05", capabilities: {}, clientInfo: { name: "claude-desktop", version: "0.9.0" } },
        },
        {
          jsonrpc: "2.0",
          id: 0,
          result: { protocolVersion: "2024-11-05", capabilities: { tools: {} }, serverInfo: { name: "unit-converter", version: "0.3.0" } },
        },
      ],
      [
        "tools/call",
        {
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "convert", arguments: { value: 10, from: "km", to: "mi" }, _meta: { progressToken: "p1" } },
        },
        { jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "6.21371 mi" }] } },
      ],
      [
        "tools/call",
        { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "convert", arguments: { value: 1, from: "km", to: "parsec-ish" } } },
        { jsonrpc: "2.0", id: 2, error: { code: -32602, message: "Unknown unit: parsec-ish" } },
      ],
    ]);
    expect(t.turns[2]?.meta).toEqual({ method: "tools/call", error_code: -32602 });
    expect(t.meta).toMatchObject({ agent: "claude-desktop", server_notifications: 1, client_notifications: 0, messages: 7 });
    expect(t.meta?.cassette).toMatchObject({ layout: "agent-vcr", format_version: "1.0.0", transport: "stdio" });
  });

  it("a request recorded without a response stays a turn, unanswered", async () => {
    const t = await readOne("bare-interactions.json");
    expect(compact(t)).toEqual([
      ["tools/list", { jsonrpc: "2.0", id: "a", method: "tools/list" }, { jsonrpc: "2.0", id: "a", result: { tools: [] } }],
      ["ping", { jsonrpc: "2.0", id: "b", method: "ping" }, ""],
    ]);
    expect(t.turns[1]?.meta).toEqual({ method: "ping", unanswered: true });
    expect(t.meta).toMatchObject({ cassette: { layout: "interactions" }, unanswered_requests: 1 });
  });

  it("the same session as a direction-tagged transcript gives the same turns through mcp-jsonrpc (one pairing convention)", async () => {
    const t = await readOne("agent-vcr-session.vcr");
    const dir = tempDir("cassette-vs-jsonrpc-");
    const lines = t.turns.flatMap((turn) => [
      { direction: "client", message: JSON.parse(turn.action) },
      { direction: "server", message: JSON.parse(turn.observation) },
    ]);
    const file = join(dir, "same.jsonl");
    writeFileSync(file, lines.map((line) => JSON.stringify(line)).join("\n"));
    const [item] = await collect(mcpJsonRpcReader.read(file, OPTIONS));
    if (item?.kind !== "trajectory") throw new Error(JSON.stringify(item));
    expect(item.trajectory.turns).toEqual(t.turns);
  });
});

describe("MCP cassettes: hostile files are quarantined whole", () => {
  it.each([
    [
      "hostile-http-request.json",
      "interactions.1.request",
      /^interactions\.1\.request: expected a JSON-RPC 2\.0 message .*got \{"method":"POST"/,
    ],
    ["hostile-truncated.json", undefined, /^invalid JSON: /],
    ["hostile-no-request.json", undefined, /^no client request in the cassette/],
  ])("%s", async (name, field, reason) => {
    const items = await read(name);
    expect(items).toHaveLength(1);
    const item = items[0];
    if (item?.kind !== "quarantine") throw new Error(`not quarantined: ${JSON.stringify(item)}`);
    expect(item.entry.field).toBe(field);
    expect(item.entry.reason).toMatch(reason);
    expect(item.entry.source).toEqual({ uri: join(DIR, name), line: 1, offset: 0, format: "mcp-cassette" });
  });

  it("a document that is JSON but no cassette is refused with its shape", async () => {
    const dir = tempDir("cassette-shape-");
    const file = join(dir, "x.json");
    writeFileSync(file, JSON.stringify({ interactions: "none", jsonrpc: "2.0" }));
    const [item] = await collect(mcpCassetteReader.read(file, OPTIONS));
    expect(item?.kind === "quarantine" && item.entry.reason).toBe(
      'not an MCP cassette: expected an object with an "interactions" array, got an object with keys interactions, jsonrpc',
    );
  });
});

describe("MCP cassettes: detection", () => {
  const own = [
    "mcp-recorder-session.json",
    "agent-vcr-session.vcr",
    "bare-interactions.json",
    "hostile-truncated.json",
    "hostile-http-request.json",
  ];

  it("sniffs its cassettes (and a truncated one, by its keys), and no existing reader claims them", async () => {
    for (const name of own) {
      const file = join(DIR, name);
      const head = await readHead(file);
      expect(mcpCassetteReader.sniff(head, file), name).toBe(true);
      expect(READERS.find((reader) => reader.sniff(head, file))?.name, name).toBe("mcp-cassette");
    }
  });

  it("does not claim a vcr.py HTTP cassette whose body holds JSON-RPC as a string", () => {
    const http = JSON.stringify({
      interactions: [
        { request: { method: "POST", uri: "http://x/mcp", body: '{"jsonrpc": "2.0", "id": 1}' }, response: { status: { code: 200 } } },
      ],
    });
    expect(mcpCassetteReader.sniff(http, "cassette.json")).toBe(false);
  });

  it("does not claim the other readers' fixtures or the demo data", async () => {
    const files = globSync(["data/demo/**/*", "test/fixtures/**/*"], {
      cwd: ROOT,
      absolute: true,
      onlyFiles: true,
      ignore: ["**/*.md", "test/fixtures/handmade/mcp-cassette/**"],
    });
    expect(files.length).toBeGreaterThan(60);
    for (const file of files) expect(mcpCassetteReader.sniff(await readHead(file), file), file).toBe(false);
  });
});

describeThirdParty("MCP cassettes: the shared MCP samples stay mcp-jsonrpc's", () => {
  it("claims none of ../shared/fixtures/real/mcp/, which mcp-jsonrpc still reads", async () => {
    const files = globSync(["**/*.txtar", "**/*.json"], { cwd: thirdParty("mcp"), absolute: true });
    expect(files.length).toBeGreaterThan(10);
    for (const file of files) {
      const head = await readHead(file);
      expect(mcpCassetteReader.sniff(head, file), file).toBe(false);
    }
    const lifecycle = await collect(mcpJsonRpcReader.read(thirdParty("mcp/go-sdk-conformance/v1.0.0__lifecycle.txtar"), OPTIONS));
    expect(lifecycle.map((item) => item.kind)).toEqual(["trajectory"]);
  });
});

describe("MCP pairing: server→client requests whose ids collide with the client's (probe 6)", () => {
  // Each side numbers its own requests from 0: the server's sampling/createMessage id 1, sent while
  // the client's tools/call id 1 is open, is answered by the client first; the tool result comes after.
  const stream = [
    { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: { sampling: {} } } },
    { jsonrpc: "2.0", id: 0, result: { protocolVersion: "2025-06-18", serverInfo: { name: "s", version: "1" } } },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "ask", arguments: {} } },
    { jsonrpc: "2.0", id: 0, method: "roots/list" },
    { jsonrpc: "2.0", id: 0, result: { roots: [] } },
    { jsonrpc: "2.0", id: 1, method: "sampling/createMessage", params: { messages: [], maxTokens: 5 } },
    { jsonrpc: "2.0", id: 1, result: { role: "assistant", content: { type: "text", text: "sampled" }, model: "m" } },
    { jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "tool done" }] } },
  ];

  it("mcp-jsonrpc (bare JSONL): the client's reply to the nested server request is not the tool's result", async () => {
    const file = join(tempDir("mcp-collide-"), "collide.jsonl");
    writeFileSync(file, stream.map((m) => JSON.stringify(m)).join("\n"));
    const items = await collect(mcpJsonRpcReader.read(file, OPTIONS));
    const t = items[0]?.kind === "trajectory" ? items[0].trajectory : undefined;
    expect(t && compact(t)).toEqual([
      ["initialize", stream[0], stream[1]],
      ["tools/call", stream[3], stream[8]],
    ]);
    expect(t?.meta).toMatchObject({ server_requests: 2, client_responses: 2, unmatched_replies: 0, unanswered_requests: 0 });
  });

  it("mcp-cassette (bare interactions, no direction): a sampling/createMessage request is the server's, not a turn", async () => {
    const file = join(tempDir("cassette-server-request-"), "bare.json");
    const cassette = {
      interactions: [
        { request: stream[3], response: stream[8] },
        { request: stream[6], response: stream[7] },
      ],
    };
    writeFileSync(file, JSON.stringify(cassette));
    const items = await collect(mcpCassetteReader.read(file, OPTIONS));
    const t = items[0]?.kind === "trajectory" ? items[0].trajectory : undefined;
    expect(t && compact(t)).toEqual([["tools/call", stream[3], stream[8]]]);
    expect(t?.meta).toMatchObject({ server_requests: 1, client_responses: 1, unmatched_replies: 0 });
  });
});
