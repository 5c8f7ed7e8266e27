/**
 * MCP transcripts in the layout of data/demo/mcp.jsonl.gz: each action a pretty-printed
 * JSON-RPC 2.0 request, each observation the server's reply (initialize, tools/list, then
 * tools/call results with `content[]`, sometimes `structuredContent`, and -32602 errors).
 */
import type { CanonicalRecord, DomainParams } from "../params.ts";
import type { Rng } from "../random.ts";
import { identifier, isoDate, paragraph, sentence, techWord, word, words } from "../text.ts";

const json = (value: unknown) => JSON.stringify(value, null, 2);

interface Tool {
  name: string;
  description: string;
  args: string[];
}

function tools(rng: Rng): Tool[] {
  return Array.from({ length: rng.int(1, 3) }, () => ({
    name: `${word(rng)}_${techWord(rng)}`,
    description: sentence(rng, 3, 9),
    args: Array.from({ length: rng.int(1, 2) }, () => word(rng)),
  }));
}

/** A tool result's text of about `chars` characters: prose, rows, or a short status. */
function resultText(rng: Rng, chars: number): string {
  if (chars < 60) return rng.pick(["OK", "done", `created ${word(rng)} #${rng.int(1, 9999)}`, "no results"]);
  const kind = rng.weighted([
    ["prose", 2],
    ["rows", 2],
    ["kv", 1],
  ] as const);
  let text = "";
  while (text.length < chars) {
    if (kind === "prose") text += `${paragraph(rng, 2)}\n`;
    else if (kind === "rows") text += `${rng.int(1, 99999)}\t${identifier(rng)}\t${isoDate(rng)}\t${words(rng, 2)}\n`;
    else text += `${identifier(rng)}: ${rng.int(0, 1000)}\n`;
  }
  return text.slice(0, chars).trimEnd();
}

export function mcpTrajectory(rng: Rng, id: string, p: DomainParams): CanonicalRecord {
  const server = tools(rng);
  const n = rng.quantiles(p.turns);
  const turns: CanonicalRecord["turns"] = [];
  for (let i = 0; i < n; i++) {
    const rpcId = i + 1;
    const request = (method: string, params?: unknown) => json({ jsonrpc: "2.0", id: rpcId, method, ...(params ? { params } : {}) });
    const reply = (result: unknown) => json({ jsonrpc: "2.0", id: rpcId, result });
    if (i === 0 && n > 2) {
      const clientInfo = { name: rng.pick(["ExampleClient", "claude-desktop", "cursor"]), version: "1.0.0" };
      turns.push({
        action: request("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo }),
        observation: reply({
          capabilities: { logging: {}, tools: { listChanged: true } },
          protocolVersion: "2025-06-18",
          serverInfo: { name: `${techWord(rng)}-server`, version: "v1.0.0" },
        }),
      });
      continue;
    }
    if (i === 1 && n > 2) {
      const listed = server.map((t) => ({
        name: t.name,
        description: t.description,
        inputSchema: {
          type: "object",
          required: t.args.slice(0, 1),
          properties: Object.fromEntries(t.args.map((a) => [a, { type: "string" }])),
        },
      }));
      turns.push({ action: request("tools/list"), observation: reply({ tools: listed }) });
      continue;
    }
    if (rng.chance(0.3)) {
      // Listing and reading calls: short requests, short (often empty) replies, as in the conformance transcripts.
      const uri = `file:///${word(rng)}/${techWord(rng)}.txt`;
      const kind = rng.pick(["resources/list", "prompts/list", "resources/read", "ping"]);
      const result =
        kind === "resources/read"
          ? { contents: [{ uri, mimeType: "text/plain", text: sentence(rng, 3, 12) }] }
          : kind === "ping"
            ? {}
            : { [kind.split("/")[0] as string]: rng.chance(0.6) ? [] : [{ uri, name: word(rng) }] };
      turns.push({ action: request(kind, kind === "resources/read" ? { uri } : undefined), observation: reply(result) });
      continue;
    }
    const tool = rng.pick(server);
    const args = Object.fromEntries(tool.args.map((a) => [a, rng.chance(0.3) ? rng.int(0, 500) : words(rng, rng.int(1, 2))]));
    const action = request("tools/call", { name: tool.name, arguments: args });
    const chars = Math.max(0, rng.quantiles(p.observation) - 110); // the JSON-RPC envelope is ~110 chars
    const observation = rng.weighted([
      [reply({ content: [{ type: "text", text: resultText(rng, chars) }], isError: false }), 6],
      // Tools that answer with their input (greet, echo, set): the Echo class of the masking rules.
      [reply({ content: [{ type: "text", text: `${tool.name}: ${Object.values(args).join(" ")}` }] }), 2],
      // Structured results repeat their text form as an object: realistic in-reply repetition.
      [reply({ content: [{ type: "text", text: json(args) }], structuredContent: args }), 2],
      [
        json({
          jsonrpc: "2.0",
          id: rpcId,
          error: { code: -32602, message: `invalid params: missing required argument "${tool.args[0]}"` },
        }),
        1,
      ],
    ]);
    turns.push({ action, observation });
  }
  const taskChars = rng.quantiles(p.task);
  return {
    id,
    domain: "mcp",
    ...(taskChars >= 20 ? { task: paragraph(rng, Math.max(1, Math.round(taskChars / 90))) } : {}),
    turns,
    meta: { generator: "lwm-data bench/synthetic", transport: "stdio" },
  };
}
