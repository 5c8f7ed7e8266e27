/**
 * Builds data/demo/ (canonical JSONL, AgentWorldBench JSONL; plain, .gz and .zst) from the real
 * public samples in data/demo/sources/ (provenance and licences in data/demo/PROVENANCE.md).
 * Run: npx node scripts/build-demo-data.ts   — the output is committed; rerunning reproduces it.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync, zstdCompressSync } from "node:zlib";

const root = new URL("../data/demo/", import.meta.url).pathname;
const sources = join(root, "sources");

/** Splits a text of concatenated (pretty-printed) JSON values into values. */
function concatenatedJson(text: string): unknown[] {
  const values: unknown[] = [];
  let buffer = "";
  for (const line of text.split("\n")) {
    buffer += `${line}\n`;
    if (buffer.trim() === "") continue;
    try {
      values.push(JSON.parse(buffer));
      buffer = "";
    } catch {
      // not complete yet
    }
  }
  if (buffer.trim() !== "") throw new Error(`unparsed JSON tail: ${buffer.slice(0, 80)}`);
  return values;
}

/** txtar: `-- name --` sections. */
function txtarSections(text: string): { comment: string; files: Record<string, string> } {
  const parts = text.split(/^-- (.+) --$/m);
  const files: Record<string, string> = {};
  for (let i = 1; i < parts.length; i += 2) files[parts[i] as string] = parts[i + 1] as string;
  return { comment: (parts[0] as string).trim(), files };
}

type Rpc = { id?: number; method?: string; result?: unknown; error?: unknown };

/** MCP conformance transcript → turns: each client request paired with the server reply, in order. */
function mcpTurns(file: string) {
  const { comment, files } = txtarSections(readFileSync(join(sources, file), "utf8"));
  const requests = (concatenatedJson(files.client ?? "") as Rpc[]).filter((m) => m.method !== undefined && m.id !== undefined);
  // Server-initiated messages (a ping, notifications) carry a method; they are not replies.
  const replies = (concatenatedJson(files.server ?? "") as Rpc[]).filter((m) => m.method === undefined);
  if (requests.length !== replies.length) throw new Error(`${file}: ${requests.length} requests vs ${replies.length} replies`);
  const turns = requests.map((request, i) => {
    const reply = replies[i] as Rpc;
    if (reply.id !== request.id) throw new Error(`${file}: request ${i} id ${request.id} answered by id ${reply.id}`);
    return { action: JSON.stringify(request, null, 2), observation: JSON.stringify(reply, null, 2) };
  });
  return { task: comment, turns };
}

/** mini-swe-agent trajectory → task + (bash command → output) turns. */
function miniSweTurns(file: string) {
  const messages = JSON.parse(readFileSync(join(sources, file), "utf8")) as { role: string; content: string }[];
  const task = messages.find((m) => m.role === "user")?.content ?? "";
  const turns = [];
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i] as { role: string; content: string };
    if (message.role !== "assistant") continue;
    const command = /```mswea_bash_command\n([\s\S]*?)\n```/.exec(message.content)?.[1];
    if (command === undefined) throw new Error(`${file}: assistant message ${i} has no command block`);
    const thought = message.content.slice(0, message.content.indexOf("```mswea_bash_command")).trim();
    turns.push({ action: command, observation: messages[i + 1]?.content ?? "", meta: { agent_thought: thought } });
  }
  return { task, turns };
}

const jsonl = (records: unknown[]) => `${records.map((r) => JSON.stringify(r)).join("\n")}\n`;

// swe: mini-swe-agent, as canonical JSONL compressed with zstd.
const swe = ["mini-swe-agent__github_issue.traj.json", "mini-swe-agent__local.traj.json"].map((file) => ({
  id: `mini-swe-agent/${file.replace("mini-swe-agent__", "").replace(".traj.json", "")}`,
  domain: "swe",
  ...miniSweTurns(file),
  meta: { source: `SWE-agent/mini-swe-agent tests/test_data/${file.replace("mini-swe-agent__", "")}` },
}));
writeFileSync(join(root, "swe.jsonl.zst"), zstdCompressSync(jsonl(swe)));

// mcp: go-sdk conformance transcripts, as canonical JSONL compressed with gzip.
const mcp = ["go-sdk__tools.txtar", "go-sdk__lifecycle.txtar"].map((file) => ({
  id: `go-sdk-conformance/${file.replace("go-sdk__", "").replace(".txtar", "")}`,
  domain: "mcp",
  ...mcpTurns(file),
  meta: { source: `modelcontextprotocol/go-sdk mcp/testdata/conformance/server/${file.replace("go-sdk__", "")}` },
}));
writeFileSync(join(root, "mcp.jsonl.gz"), gzipSync(jsonl(mcp), { mtime: 0 } as never));

// search: one Brave web-search call, plain canonical JSONL.
const brave = JSON.parse(readFileSync(join(sources, "brave__brave_web.json"), "utf8")) as { query: { original: string } };
const search = [
  {
    id: "brave-search/hello-world",
    domain: "search",
    task: "Search the web for the given query.",
    turns: [{ action: JSON.stringify({ tool: "brave_web_search", q: brave.query.original }), observation: JSON.stringify(brave, null, 2) }],
    meta: { source: "helmut-hoffer-von-ankershoffen/brave-search-python-client tests/fixtures/web.json" },
  },
];
writeFileSync(join(root, "search.jsonl"), jsonl(search));

// AgentWorldBench layout, built from the go-sdk resources transcript: one row per evaluated turn.
const resources = mcpTurns("go-sdk__resources.txtar");
const systemStr = readFileSync(new URL("../configs/system-prompts/mcp.md", import.meta.url), "utf8").trim();
const prompts = resources.turns.map((t, i) => `### Turn ${i + 1}\n**Action:**\n\`\`\`json\n${t.action}\n\`\`\``);
const responses = resources.turns.map((t) => `**Environment Observation:**\n${t.observation}`);
const rows = resources.turns.map((_, i) => ({
  task: "mcp",
  id: "__ID__",
  prompt: prompts.slice(0, i + 1),
  response: responses.slice(0, i + 1),
  current_prompt: prompts[i],
  system_str: systemStr,
  turn_idx: i + 1,
  total_turns: resources.turns.length,
}));
// An integer id beyond 2^53 on purpose (JavaScript numbers cannot hold it): the reader must keep
// it exact. JSON.stringify cannot write one, so the literal is put in place of a placeholder.
writeFileSync(join(root, "mcp-agentworldbench.jsonl"), jsonl(rows).replaceAll('"id":"__ID__"', '"id":14502100000000000123'));
console.log("demo data written to", root);
