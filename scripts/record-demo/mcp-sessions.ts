/**
 * The scripted sessions the MCP recorder plays against the reference server "everything": what a
 * client asks, in which order, and which server-initiated messages it waits for so that they land
 * at the same place in every recording. Only tools with fixed output are called (no random logs,
 * no time-of-day resources, no network).
 */
import type { McpStdioClient, Rpc, ServerRequestHandler } from "./mcp-stdio-client.ts";

export const CLIENT_INFO = { name: "lwm-data-recorder", version: "1.0.0" };
export const PROTOCOL_VERSION = "2025-11-25";

export interface McpSession {
  /** File stem and trajectory id. */
  name: string;
  /** What the session exercises (the txtar comment, the canonical record's task). */
  purpose: string;
  capabilities: Rpc;
  /** How many `notifications/tools/list_changed` the server sends after `initialized` (tools it registers late). */
  lateToolNotifications: number;
  script: (client: McpStdioClient, scratch: string) => Promise<void>;
}

/** The client's answers to server requests: its roots (the scratch folder), nothing else. */
export function answerServerRequests(scratch: string): ServerRequestHandler {
  return (request) =>
    request.method === "roots/list"
      ? { result: { roots: [{ uri: `file://${scratch}`, name: "demo-workspace" }] } }
      : { error: { code: -32601, message: `the recorder does not handle ${String(request.method)}` } };
}

const call = (client: McpStdioClient, name: string, args: Rpc, meta?: Rpc) =>
  client.request("tools/call", { name, arguments: args, ...(meta ? { _meta: meta } : {}) });

/** Handshake, then every request of the session; the server's own messages are awaited where they come. */
async function handshake(client: McpStdioClient, session: McpSession): Promise<void> {
  await client.request("initialize", { protocolVersion: PROTOCOL_VERSION, capabilities: session.capabilities, clientInfo: CLIENT_INFO });
  let lateTools = 0;
  const toolsAnnounced = client.waitForServer(
    `${session.lateToolNotifications} notifications/tools/list_changed`,
    (m) => m.method === "notifications/tools/list_changed" && ++lateTools === session.lateToolNotifications,
  );
  client.notify("notifications/initialized");
  if (session.lateToolNotifications > 0) await toolsAnnounced;
}

export const SESSIONS: McpSession[] = [
  {
    name: "everything-tools",
    purpose: [
      'A client that offers roots talks to the MCP reference server "everything" over stdio:',
      "handshake (the server asks for the client's roots and logs them), tools/list, calls with",
      "plain, structured and annotated results, two calls the server rejects with isError (bad",
      "arguments, unknown tool), one it rejects with a JSON-RPC error (no tool name), a",
      "long-running call with progress notifications, and a ping.",
    ].join("\n"),
    capabilities: { roots: { listChanged: false } },
    lateToolNotifications: 2,
    async script(client) {
      // The server asks for roots 350 ms after `initialized`, then logs what it got.
      const rootsLogged = client.waitForServer("the roots log message", (m) => m.method === "notifications/message");
      await client.waitForServer("roots/list", (m) => m.method === "roots/list");
      await rootsLogged;
      await client.request("tools/list");
      await call(client, "echo", { message: "Hello from the lwm-data recorder" });
      await call(client, "get-sum", { a: 19, b: 23 });
      await call(client, "get-structured-content", { location: "Chicago" });
      await call(client, "get-annotated-message", { messageType: "error", includeImage: false });
      await call(client, "get-sum", { a: 2, b: "two" });
      await call(client, "no-such-tool", {});
      // No tool name at all: the request itself is invalid, answered with a JSON-RPC error.
      await client.request("tools/call", { arguments: { message: "which tool?" } });
      await call(client, "trigger-long-running-operation", { duration: 0.3, steps: 3 }, { progressToken: "op-1" });
      await call(client, "get-roots-list", {});
      await client.request("ping");
    },
  },
  {
    name: "everything-resources-prompts",
    purpose: [
      "A client without capabilities browses the resources and prompts of the MCP reference server",
      '"everything" over stdio: resources/list, resource templates, a read of a resource id the',
      "server refuses, prompts/list and prompts/get (one with a missing required argument),",
      "argument completion, logging/setLevel, a method the server does not know, and a ping.",
    ].join("\n"),
    capabilities: {},
    lateToolNotifications: 1,
    async script(client) {
      await client.request("resources/list");
      await client.request("resources/templates/list");
      await client.request("resources/read", { uri: "demo://resource/dynamic/text/0" });
      await client.request("prompts/list");
      await client.request("prompts/get", { name: "simple-prompt" });
      await client.request("prompts/get", { name: "args-prompt", arguments: { city: "Lyon", state: "Auvergne-Rhône-Alpes" } });
      await client.request("prompts/get", { name: "args-prompt", arguments: { state: "Bretagne" } });
      await client.request("completion/complete", {
        ref: { type: "ref/prompt", name: "resource-prompt" },
        argument: { name: "resourceType", value: "B" },
      });
      await client.request("logging/setLevel", { level: "warning" });
      await client.request("tools/run", { name: "echo" });
      await client.request("ping");
    },
  },
];

/** Plays one session on a connected client. */
export async function playSession(client: McpStdioClient, session: McpSession, scratch: string): Promise<void> {
  await handshake(client, session);
  await session.script(client, scratch);
}
