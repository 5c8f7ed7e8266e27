import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import type { ChatMessage } from "../../src/sft/teacher/chat-types.ts";

/** A chat-completions request as the server received it. */
export interface ScoreServerRequest {
  model: string;
  messages: ChatMessage[];
  n: number;
  temperature?: number;
  max_tokens?: number;
}

/**
 * One answer: a 200 with the assistant's content, an HTTP error (headers such as Retry-After
 * allowed), or the connection dropped without a response. `delayMs` holds the reply back first.
 */
export type ScoreServerReply =
  | { content: string; finishReason?: string; delayMs?: number }
  | { status: number; body?: string; headers?: Record<string, string>; delayMs?: number }
  | { drop: true; delayMs?: number };

export interface FakeScoreServer {
  /** The API root, `http://127.0.0.1:<port>/v1`. */
  url: string;
  /** Every request, in arrival order; each retry counts. */
  requests: ScoreServerRequest[];
  /** Requests per user prompt so far (so a script can fail a prompt's first attempts only). */
  attempts: Map<string, number>;
  /** Most requests in flight at once. */
  maxInFlight: number;
  close(): Promise<void>;
}

/**
 * A local OpenAI-compatible `/v1/chat/completions` endpoint for the scoring tests: each request
 * is answered by `script(request, attempt)`, `attempt` counting from 1 per user prompt. Unlike
 * fake-openai-server.ts it can send headers (429 with Retry-After), stall and drop connections.
 */
export async function startFakeScoreServer(
  script: (request: ScoreServerRequest, attempt: number, prompt: string) => ScoreServerReply | Promise<ScoreServerReply>,
): Promise<FakeScoreServer> {
  const state = { requests: [] as ScoreServerRequest[], attempts: new Map<string, number>(), maxInFlight: 0, inFlight: 0 };
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    let raw = "";
    for await (const chunk of req) raw += chunk;
    if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: `no route ${req.url}` } }));
      return;
    }
    const request = JSON.parse(raw) as ScoreServerRequest;
    state.requests.push(request);
    const prompt = request.messages.at(-1)?.content ?? "";
    const attempt = (state.attempts.get(prompt) ?? 0) + 1;
    state.attempts.set(prompt, attempt);
    state.inFlight += 1;
    state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
    try {
      const reply = await script(request, attempt, prompt);
      if (reply.delayMs) await sleep(reply.delayMs);
      if (res.destroyed) return;
      if ("drop" in reply) {
        req.socket.destroy();
        return;
      }
      if ("status" in reply) {
        res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers }).end(reply.body ?? "");
        return;
      }
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          id: `cmpl-${state.requests.length}`,
          object: "chat.completion",
          model: request.model,
          choices: [{ index: 0, message: { role: "assistant", content: reply.content }, finish_reason: reply.finishReason ?? "stop" }],
          usage: { prompt_tokens: Math.ceil(raw.length / 4), completion_tokens: Math.ceil(reply.content.length / 4) },
        }),
      );
    } finally {
      state.inFlight -= 1;
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    get requests() {
      return state.requests;
    },
    get attempts() {
      return state.attempts;
    },
    get maxInFlight() {
      return state.maxInFlight;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
