import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { ChatRequest } from "../../src/sft/teacher/chat-types.ts";

/** A chat-completions request body as the fake server received it. */
export interface FakeChatRequest extends ChatRequest {
  model: string;
}

/**
 * What the script answers: choices' contents (HTTP 200), whole assistant messages (a reasoning
 * parser's `reasoning_content` beside `content`, say), or an HTTP error.
 */
export type FakeReply =
  | { contents: string[]; finishReason?: string }
  | { messages: Record<string, unknown>[]; finishReason?: string }
  | { status: number; body: string };

export interface FakeOpenAiServer {
  /** The API root, `http://127.0.0.1:<port>/v1`. */
  url: string;
  /** Every request received, in arrival order (each retry counts). */
  requests: FakeChatRequest[];
  /** The Authorization headers seen. */
  authorizations: Set<string>;
  close(): Promise<void>;
}

/**
 * A local OpenAI-compatible `/v1/chat/completions` server for tests, answering each request with
 * `script(request)`; it counts every request, so a test can tell which prompts (and seeds) were
 * paid for. Used as the teacher and, separately, as the judge.
 */
export async function startFakeOpenAi(script: (request: FakeChatRequest) => FakeReply | Promise<FakeReply>): Promise<FakeOpenAiServer> {
  const requests: FakeChatRequest[] = [];
  const authorizations = new Set<string>();
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    let raw = "";
    for await (const chunk of req) raw += chunk;
    if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
      res.writeHead(404).end("not found");
      return;
    }
    const request = JSON.parse(raw) as FakeChatRequest;
    requests.push(request);
    authorizations.add(String(req.headers.authorization));
    const reply = await script(request);
    if ("status" in reply) {
      res.writeHead(reply.status, { "content-type": "application/json" }).end(reply.body);
      return;
    }
    res.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({
        id: `cmpl-${requests.length}`,
        object: "chat.completion",
        model: request.model,
        choices: ("contents" in reply ? reply.contents.map((content) => ({ content })) : reply.messages).map((message, index) => ({
          index,
          message: { role: "assistant", ...message },
          finish_reason: reply.finishReason ?? "stop",
        })),
        usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    authorizations,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A judge reply: the five scores (1-5) as a JSON object, fenced as judges often answer. */
export function judgeReply(scores: { format: number; factuality: number; consistency: number; realism: number; quality: number }): string {
  return `Scores:\n\`\`\`json\n${JSON.stringify(scores)}\n\`\`\``;
}
