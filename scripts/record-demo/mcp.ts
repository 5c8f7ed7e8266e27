/**
 * Records the MCP demo data: runs the MCP reference server "everything" (npm
 * @modelcontextprotocol/server-everything, stdio transport) once per scripted session, drives it
 * with newline-delimited JSON-RPC and writes what crossed the pipe to data/demo/mcp/:
 *
 *   everything-tools.jsonl                    wire log of the tools session ({direction, message} lines)
 *   everything-tools.txtar                    the same session in the go-sdk conformance txtar layout
 *   everything.jsonl.gz                       both sessions as canonical lwm-data records (gzip)
 *   everything-agentworldbench.jsonl          the resources/prompts session as AgentWorldBench rows
 *
 * Run: npx node scripts/record-demo/mcp.ts   (or npm run record:demo -- mcp)
 */
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { DEMO_DIR, freshWorkdir, ROOT, writeDemoFile } from "./common.ts";
import { agentWorldBenchRows, canonicalJsonl, canonicalRecord, type RecordedSession, txtar, wireJsonl } from "./mcp-formats.ts";
import { answerServerRequests, type McpSession, playSession, SESSIONS } from "./mcp-sessions.ts";
import { McpStdioClient } from "./mcp-stdio-client.ts";

const SERVER_PACKAGE = join(ROOT, "node_modules/@modelcontextprotocol/server-everything");

/**
 * An integer id beyond 2^53 on purpose (JavaScript numbers cannot hold it): the AgentWorldBench
 * reader must keep it exact.
 */
const AGENTWORLDBENCH_ID = 14_502_100_000_000_000_123n;

async function record(session: McpSession): Promise<RecordedSession> {
  const scratch = freshWorkdir("mcp");
  // A fixed, minimal environment: nothing of the recording machine's shell reaches the server.
  const env = { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: scratch, LANG: "C.UTF-8", TZ: "UTC", NODE_ENV: "production" };
  const client = new McpStdioClient(
    { command: process.execPath, args: [join(SERVER_PACKAGE, "dist/index.js"), "stdio"], cwd: scratch, env },
    answerServerRequests(scratch),
  );
  try {
    await playSession(client, session, scratch);
  } finally {
    await client.close();
  }
  console.log(`  ${session.name}: ${client.exchanges.length} requests, ${client.wire.length} messages`);
  return { session, wire: client.wire, exchanges: client.exchanges };
}

const serverVersion = (JSON.parse(readFileSync(join(SERVER_PACKAGE, "package.json"), "utf8")) as { version: string }).version;
// One server at a time: the sessions share the scratch folder.
const recorded: RecordedSession[] = [];
for (const session of SESSIONS) recorded.push(await record(session));
const [tools, browse] = recorded;
if (!tools || !browse) throw new Error("expected two MCP sessions");

rmSync(join(DEMO_DIR, "mcp"), { recursive: true, force: true });
writeDemoFile("mcp/everything-tools.jsonl", wireJsonl(tools));
writeDemoFile("mcp/everything-tools.txtar", txtar(tools));
// zlib writes no time and no file name in the gzip header: the same records give the same bytes.
writeDemoFile(
  "mcp/everything.jsonl.gz",
  gzipSync(canonicalJsonl([canonicalRecord(tools, serverVersion), canonicalRecord(browse, serverVersion)])),
);
const systemPrompt = readFileSync(join(ROOT, "configs/system-prompts/mcp.md"), "utf8").trim();
writeDemoFile("mcp/everything-agentworldbench.jsonl", agentWorldBenchRows(browse, systemPrompt, AGENTWORLDBENCH_ID));
