/**
 * Issue 34: Claude Desktop MCP logs (src/read/mcp-server-log.ts). The fixtures under
 * test/fixtures/handmade/mcp-server-log/ (README.md there) are written from the log lines quoted
 * in MCP's debugging guide (modelcontextprotocol.io/docs/tools/debugging: where the logs are,
 * `mcp.log` vs `mcp-server-<name>.log`) and in public bug reports that paste them (both prefix
 * orders, the ` { metadata: undefined }` tail). No Claude Desktop log is among the shared samples.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { globSync } from "tinyglobby";
import { describe, expect, it } from "vitest";
import type { Trajectory } from "../src/core/trajectory.ts";
import { mcpJsonRpcReader } from "../src/read/mcp-jsonrpc.ts";
import { mcpServerLogReader, parseClaudeLogLine } from "../src/read/mcp-server-log.ts";
import type { ReaderOptions, ReadItem } from "../src/read/reader.ts";
import { READERS, readHead } from "../src/read/registry.ts";
import { collect, ROOT, tempDir } from "./helpers.ts";
import { describeThirdParty, thirdParty } from "./third-party/support.ts";

const OPTIONS: ReaderOptions = { maxLineBytes: 64 << 20 };
const DIR = join(ROOT, "test/fixtures/handmade/mcp-server-log");
const DISCONNECTED =
  "Server disconnected. For troubleshooting guidance, please visit our [debugging documentation](https://modelcontextprotocol.io/docs/tools/debugging) { metadata: undefined }";

async function read(name: string, options = OPTIONS): Promise<ReadItem[]> {
  return collect(mcpServerLogReader.read(join(DIR, name), options));
}

function trajectories(items: ReadItem[]): Trajectory[] {
  return items.flatMap((item) => (item.kind === "trajectory" ? [item.trajectory] : []));
}

/** Turns as [method, request id, compact observation]. */
function summary(t: Trajectory): [unknown, unknown, unknown][] {
  return t.turns.map((turn) => [
    turn.meta?.method,
    JSON.parse(turn.action).id,
    turn.observation === "" ? "" : JSON.parse(turn.observation),
  ]);
}

describe("Claude Desktop log lines", () => {
  it("both prefix orders, the metadata tail kept in the text, raw stderr lines refused", () => {
    expect(parseClaudeLogLine('2025-07-20T13:44:16.395Z [weather] [info] Message from client: {"a":1} { metadata: undefined }')).toEqual({
      time: "2025-07-20T13:44:16.395Z",
      server: "weather",
      level: "info",
      text: 'Message from client: {"a":1} { metadata: undefined }',
    });
    expect(parseClaudeLogLine("2025-04-11T23:03:05.000Z [error] [memory] Server disconnected.\r")).toEqual({
      time: "2025-04-11T23:03:05.000Z",
      server: "memory",
      level: "error",
      text: "Server disconnected.",
    });
    expect(parseClaudeLogLine("2025-07-20 15:45:02,010 - weather - INFO - fetching forecast")).toBeUndefined();
    expect(parseClaudeLogLine("KeyError: 'Oslo'")).toBeUndefined();
  });
});

describe("Claude Desktop logs: mcp-server-weather.log, two sessions of one server", () => {
  it("a new initialize starts a new session: two trajectories in log order", async () => {
    const items = await read("mcp-server-weather.log");
    expect(items.map((item) => item.kind)).toEqual(["trajectory", "trajectory"]);
    const [first, second] = trajectories(items) as [Trajectory, Trajectory];
    expect(first.id).toMatch(/^mcp-server-weather-weather-1-[0-9a-f]{12}$/);
    expect(second.id).toMatch(/^mcp-server-weather-weather-2-[0-9a-f]{12}$/);
    expect(first.source).toEqual({ uri: join(DIR, "mcp-server-weather.log"), line: 3, offset: 197, format: "mcp-server-log" });
    expect(first.domain).toBe("mcp");
    expect(first.task).toBeUndefined();
    expect(summary(first)).toEqual([
      [
        "initialize",
        0,
        {
          jsonrpc: "2.0",
          id: 0,
          result: {
            protocolVersion: "2025-06-18",
            capabilities: { tools: { listChanged: false } },
            serverInfo: { name: "weather", version: "1.4.0" },
          },
        },
      ],
      [
        "tools/list",
        1,
        {
          jsonrpc: "2.0",
          id: 1,
          result: {
            tools: [
              {
                name: "get_forecast",
                description: "Forecast for a city.",
                inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
              },
            ],
          },
        },
      ],
      ["resources/list", 2, { jsonrpc: "2.0", id: 2, error: { code: -32601, message: "Method not found" } }],
      ["tools/call", 3, { jsonrpc: "2.0", id: 3, result: { content: [{ type: "text", text: "Lisbon: sunny, 24 C" }], isError: false } }],
    ]);
    expect(first.turns[2]?.meta).toEqual({ method: "resources/list", error_code: -32601 });
    expect(JSON.parse(first.turns[3]?.action ?? "")).toEqual({
      method: "tools/call",
      params: { name: "get_forecast", arguments: { city: "Lisbon" } },
      jsonrpc: "2.0",
      id: 3,
    });
    expect(first.meta).toEqual({
      agent: "claude-ai",
      mcp_server: { name: "weather", server_info: { name: "weather", version: "1.4.0" } },
      server_log: {
        session: 1,
        first_time: "2025-07-20T13:44:16.395Z",
        last_time: "2025-07-20T13:50:00.002Z",
        lines: 14,
        stderr_lines: 2,
        error_lines: 1,
        errors: [DISCONNECTED],
      },
      messages: 9,
      client_notifications: 1,
      server_notifications: 0,
      server_requests: 0,
      client_responses: 0,
      unmatched_replies: 0,
      unanswered_requests: 0,
    });
  });

  it("the second session: an isError result, and the call the crashed server never answered", async () => {
    const [, second] = trajectories(await read("mcp-server-weather.log")) as [Trajectory, Trajectory];
    expect(summary(second).map(([method, id]) => [method, id])).toEqual([
      ["initialize", 0],
      ["tools/call", 1],
      ["tools/call", 2],
    ]);
    expect(second.turns[1]?.meta).toEqual({ method: "tools/call", is_error: true });
    expect(second.turns[2]?.observation).toBe("");
    expect(second.turns[2]?.meta).toEqual({ method: "tools/call", unanswered: true });
    expect(second.meta?.server_log).toMatchObject({ session: 2, stderr_lines: 3, error_lines: 1, errors: [DISCONNECTED] });
    expect(second.meta?.unanswered_requests).toBe(1);
  });

  it("the same messages as a direction-tagged transcript give the same turns through mcp-jsonrpc (one pairing convention)", async () => {
    const [first] = trajectories(await read("mcp-server-weather.log")) as [Trajectory];
    const lines = (await import("node:fs"))
      .readFileSync(join(DIR, "mcp-server-weather.log"), "utf8")
      .split("\n")
      .slice(0, 16)
      .flatMap((line) => {
        const match = /Message from (client|server): (\{.*\}) \{ metadata: undefined \}$/.exec(line);
        return match ? [JSON.stringify({ direction: match[1], message: JSON.parse(match[2] as string) })] : [];
      });
    expect(lines).toHaveLength(9);
    const file = join(tempDir("log-vs-jsonrpc-"), "same.jsonl");
    writeFileSync(file, lines.join("\n"));
    const [item] = await collect(mcpJsonRpcReader.read(file, OPTIONS));
    if (item?.kind !== "trajectory") throw new Error(JSON.stringify(item));
    expect(item.trajectory.turns).toEqual(first.turns);
  });
});

describe("Claude Desktop logs: mcp.log and other variants", () => {
  it("mcp.log interleaves servers (`[level] [server]`): one session per server, each paired on its own", async () => {
    const items = await read("mcp.log");
    const [fs, memory] = trajectories(items) as [Trajectory, Trajectory];
    expect(items).toHaveLength(2);
    expect(fs.id).toMatch(/^mcp-filesystem-1-/);
    expect(memory.id).toMatch(/^mcp-memory-1-/);
    expect(summary(fs).map(([method, id, obs]) => [method, id, (obs as { result: unknown }).result])).toEqual([
      [
        "initialize",
        0,
        { protocolVersion: "2024-11-05", capabilities: { tools: {} }, serverInfo: { name: "secure-filesystem-server", version: "0.2.0" } },
      ],
      ["tools/call", 1, { content: [{ type: "text", text: "[FILE] a.txt\n[DIR] sub" }] }],
    ]);
    expect(summary(memory).map(([method, id, obs]) => [method, id, (obs as { result: unknown }).result])).toEqual([
      [
        "initialize",
        0,
        { protocolVersion: "2024-11-05", capabilities: { tools: {} }, serverInfo: { name: "memory-server", version: "0.6.0" } },
      ],
      ["tools/call", 1, { content: [{ type: "text", text: '{"entities":[],"relations":[]}' }] }],
    ]);
    expect(memory.meta?.server_log).toMatchObject({ error_lines: 1, errors: ["Server disconnected."] });
    expect(fs.meta?.server_log).toMatchObject({ error_lines: 0 });
  });

  it("a log that starts mid-session (rotated) is a session marked partial_start, with no agent", async () => {
    const [t] = trajectories(await read("mcp-server-weather.rotated.log")) as [Trajectory];
    expect(summary(t).map(([method, id]) => [method, id])).toEqual([["tools/call", 41]]);
    expect(t.meta?.server_log).toMatchObject({ partial_start: true, session: 1 });
    expect(t.meta?.agent).toBeUndefined();
  });

  describe("a log whose last line, a message, was cut while Claude Desktop wrote it (cut-last-line.ts)", () => {
    const lines = readFileSync(join(DIR, "mcp-server-weather.log"), "utf8").trimEnd().split("\n");
    const readText = (text: string) => {
      const file = join(tempDir("lwm-mcp-log-cut-"), "mcp-server-weather.log");
      writeFileSync(file, text);
      return collect(mcpServerLogReader.read(file, OPTIONS));
    };

    it("its session is read without it, with meta.truncated_line; the earlier session is as before", async () => {
      const cutText = (lines[23] as string).slice(0, 120);
      const before = await readText(`${lines.slice(0, 23).join("\n")}\n`);
      const items = await readText(`${lines.slice(0, 23).join("\n")}\n${cutText}`);
      const [first, second] = trajectories(items) as [Trajectory, Trajectory];
      const [firstBefore, secondBefore] = trajectories(before) as [Trajectory, Trajectory];
      expect(items.map((item) => item.kind)).toEqual(["trajectory", "trajectory"]);
      expect({ ...first, source: undefined }).toEqual({ ...firstBefore, source: undefined });
      expect(summary(second).map(([method, id]) => [method, id])).toEqual([
        ["initialize", 0],
        ["tools/call", 1],
      ]);
      expect(second.turns).toEqual(secondBefore.turns);
      expect(second.id).toBe(secondBefore.id);
      expect(second.meta).toEqual({ ...secondBefore.meta, truncated_line: { line: 24, bytes: Buffer.byteLength(cutText) } });
    });

    it("negative control: a cut message that would start its session (no message of it before) is still quarantined", async () => {
      const items = await readText(`${lines.slice(0, 18).join("\n")}\n${(lines[18] as string).slice(0, 120)}`);
      expect(items.map((item) => item.kind)).toEqual(["trajectory", "quarantine"]);
      const entry = items[1]?.kind === "quarantine" ? items[1].entry : undefined;
      expect(entry?.source.line).toBe(19);
      expect(entry?.reason).toMatch(/^server "weather" session 2, line 19: invalid JSON after "Message from …:": /);
    });
  });

  // Negative control for the cut-last-line rule: line 4 is cut, and lines follow it.
  it("a session with a cut message or a non-JSON-RPC message is quarantined (line named); the other server's session is kept", async () => {
    const items = await read("hostile-cut-message.log");
    expect(items.map((item) => item.kind)).toEqual(["quarantine", "quarantine", "trajectory"]);
    const [cut, notRpc, git] = items;
    if (cut?.kind !== "quarantine" || notRpc?.kind !== "quarantine" || git?.kind !== "trajectory") throw new Error("kinds");
    expect(cut.entry.source.line).toBe(4);
    expect(cut.entry.reason).toMatch(/^server "filesystem" session 1, line 4: invalid JSON after "Message from …:": /);
    expect(notRpc.entry.source.line).toBe(6);
    expect(notRpc.entry.field).toBe("jsonrpc");
    expect(notRpc.entry.reason).toBe(
      'server "memory" session 1, line 6: "Message from server" is not a JSON-RPC 2.0 message (no "jsonrpc": "2.0")',
    );
    expect(summary(git.trajectory).map(([method, id]) => [method, id])).toEqual([["tools/call", 5]]);
  });

  it("a line over the size limit is its own quarantine entry, counted in its session", async () => {
    const items = await read("mcp-server-weather.log", { maxLineBytes: 280 });
    const quarantined = items.filter((item) => item.kind === "quarantine");
    expect(quarantined.map((item) => item.kind === "quarantine" && item.entry.source.line)).toEqual([8]);
    const [first] = trajectories(items) as [Trajectory];
    expect(first.meta?.server_log).toMatchObject({ oversized_lines: 1 });
    // The tools/list reply was the line lost: its request stays, unanswered.
    expect(first.turns[1]?.meta).toEqual({ method: "tools/list", unanswered: true });
  });
});

describe("Claude Desktop logs: detection", () => {
  const own = globSync("*.log", { cwd: DIR, absolute: true });

  it("sniffs every fixture log, and no existing reader claims one", async () => {
    expect(own.length).toBe(4);
    for (const file of own) {
      const head = await readHead(file);
      expect(mcpServerLogReader.sniff(head, file), file).toBe(true);
      expect(READERS.find((reader) => reader.sniff(head, file))?.name, file).toBe("mcp-server-log");
    }
  });

  it("a log whose first line is the server's own stderr is still voted in from its next lines", () => {
    const head = `Starting weather server v1.4\n${["a", "b"].map((x) => `2025-07-20T13:44:16.100Z [weather] [info] Initializing server ${x}`).join("\n")}\n`;
    expect(mcpServerLogReader.sniff(head, "mcp-server-weather.log")).toBe(false);
    expect(mcpServerLogReader.sniff(head.slice(head.indexOf("\n") + 1), "mcp-server-weather.log")).toBe(true);
  });

  it("does not claim the other readers' fixtures or the demo data", async () => {
    const files = globSync(["data/demo/**/*", "test/fixtures/**/*"], {
      cwd: ROOT,
      absolute: true,
      onlyFiles: true,
      ignore: ["**/*.md", "test/fixtures/handmade/mcp-server-log/**"],
    });
    expect(files.length).toBeGreaterThan(60);
    for (const file of files) expect(mcpServerLogReader.sniff(await readHead(file), file), file).toBe(false);
  });
});

describeThirdParty("Claude Desktop logs: the shared MCP samples stay mcp-jsonrpc's", () => {
  it("claims none of ../shared/fixtures/real/mcp/", async () => {
    const files = globSync(["**/*.txtar", "**/*.json"], { cwd: thirdParty("mcp"), absolute: true });
    expect(files.length).toBeGreaterThan(10);
    for (const file of files) expect(mcpServerLogReader.sniff(await readHead(file), file), file).toBe(false);
  });
});

describe("Claude Desktop logs: a file with no session", () => {
  it("bare-CR line ends (one long line) or stderr only: one quarantine entry, not nothing", async () => {
    const dir = tempDir("lwm-mcp-log-cr-");
    const text = readFileSync(join(DIR, "mcp-server-weather.log"), "utf8");
    writeFileSync(join(dir, "cr.log"), text.replace(/\r?\n/g, "\r"));
    writeFileSync(join(dir, "stderr.log"), 'Traceback (most recent call last):\n  File "server.py", line 1\n');
    for (const name of ["cr.log", "stderr.log"]) {
      const items = await collect(mcpServerLogReader.read(join(dir, name), OPTIONS));
      expect(
        items.map((item) => item.kind),
        name,
      ).toEqual(["quarantine"]);
      expect(items[0]?.kind === "quarantine" && items[0].entry.reason, name).toMatch(/^no MCP session in the file/);
    }
  });
});
