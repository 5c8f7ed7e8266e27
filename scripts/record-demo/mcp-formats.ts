/**
 * Writes a recorded MCP session in the layouts lwm-data reads: the wire log as a
 * `{"direction", "message"}` JSONL stream, the go-sdk conformance txtar, canonical lwm-data
 * records and AgentWorldBench rows. Turns (canonical, AgentWorldBench) come from the client's own
 * request/reply pairs, not from the project's MCP reader, so the reader can be tested against them.
 */

import type { McpSession } from "./mcp-sessions.ts";
import type { Exchange, Rpc, WireMessage } from "./mcp-stdio-client.ts";

export interface RecordedSession {
  session: McpSession;
  wire: WireMessage[];
  exchanges: Exchange[];
}

/**
 * The server's `initialize` result carries its `instructions`: the whole text of a document of
 * the npm package (docs/instructions.md). That file is not ours to copy, so the recording keeps
 * the field with a note of how long it was instead of its text.
 */
export function elideThirdPartyText(message: Rpc): Rpc {
  const result = message.result;
  if (typeof result !== "object" || result === null || !("instructions" in result)) return message;
  const instructions = (result as Rpc).instructions;
  if (typeof instructions !== "string") return message;
  const note = `[${instructions.length} characters of the server package's docs/instructions.md, left out of this recording]`;
  return { ...message, result: { ...(result as Rpc), instructions: note } };
}

const jsonl = (values: unknown[]) => values.map((v) => `${JSON.stringify(v)}\n`).join("");

/** The wire log, one message per line, in the order the messages crossed the pipe. */
export function wireJsonl(recorded: RecordedSession): string {
  return jsonl(recorded.wire.map(({ direction, message }) => ({ direction, message: elideThirdPartyText(message) })));
}

/**
 * go-sdk conformance layout: the purpose as the comment, the server's tools (as tools/list named
 * them) in a `-- tools --` section, then everything the client sent (2-space JSON) and everything the server sent
 * (tab-indented JSON, as the go-sdk golden files print it), each in wire order.
 */
export function txtar(recorded: RecordedSession): string {
  const from = (direction: WireMessage["direction"], indent: string) =>
    recorded.wire
      .filter((w) => w.direction === direction)
      .map((w) => JSON.stringify(elideThirdPartyText(w.message), null, indent))
      .join("\n");
  const listed = recorded.exchanges.find((e) => e.request.method === "tools/list")?.reply.result as { tools?: Rpc[] } | undefined;
  const tools = (listed?.tools ?? []).map((tool) => tool.name);
  const toolsSection = tools.length > 0 ? `-- tools --\n${tools.join("\n")}\n` : "";
  return `${recorded.session.purpose}\n\n${toolsSection}-- client --\n${from("client", "  ")}\n-- server --\n${from("server", "\t")}\n`;
}

interface Turn {
  action: string;
  observation: string;
  meta: { method: unknown };
}

/** One turn per request the client sent, with the reply it got, as 2-space JSON. */
export function turns(recorded: RecordedSession): Turn[] {
  return recorded.exchanges.map(({ request, reply }) => ({
    action: JSON.stringify(request, null, 2),
    observation: JSON.stringify(elideThirdPartyText(reply), null, 2),
    meta: { method: request.method },
  }));
}

/** A canonical lwm-data record of the session (one JSON line). */
export function canonicalRecord(recorded: RecordedSession, serverVersion: string): Rpc {
  return {
    id: `mcp-everything/${recorded.session.name}`,
    domain: "mcp",
    task: recorded.session.purpose,
    turns: turns(recorded),
    meta: { server: `@modelcontextprotocol/server-everything@${serverVersion}`, transport: "stdio" },
  };
}

export const canonicalJsonl = (records: Rpc[]) => jsonl(records);

/**
 * AgentWorldBench rows: one per evaluated turn, each holding the history up to that turn in the
 * benchmark's markup. `id` is written as the given integer literal (it may exceed 2^53, which
 * JSON.stringify cannot write), so readers must keep it exact.
 */
export function agentWorldBenchRows(recorded: RecordedSession, systemPrompt: string, integerId: bigint): string {
  const all = turns(recorded);
  const prompts = all.map((t, i) => `### Turn ${i + 1}\n**Action:**\n\`\`\`json\n${t.action}\n\`\`\``);
  const responses = all.map((t) => `**Environment Observation:**\n${t.observation}`);
  const placeholder = "__INTEGER_ID__";
  const rows = all.map((_, i) => ({
    task: "mcp",
    id: placeholder,
    prompt: prompts.slice(0, i + 1),
    response: responses.slice(0, i + 1),
    current_prompt: prompts[i],
    system_str: systemPrompt,
    turn_idx: i + 1,
    total_turns: all.length,
  }));
  return jsonl(rows).replaceAll(`"id":"${placeholder}"`, `"id":${integerId}`);
}
