import type { ChatCall, ChatMessage } from "../otel/messages.ts";

/*
 * The chat a trace with tool steps shows, whatever the tracer (OpenTelemetry spans in
 * src/read/otel-traces.ts, LangSmith runs and Langfuse observations in src/read/langsmith/run-trace.ts):
 * the first model call's system messages, each later user message, each reply's text and reasoning,
 * and each tool step as a call (after the reply before it) and its result. A step inside a tool
 * step is that tool's own work: counted, not read.
 */

/** The calls the model asked for: by id, and those of its last reply no tool step has answered yet (a reader takes them out as it answers them). */
export interface AskedCalls {
  byId: Map<string, ChatCall>;
  unanswered: ChatCall[];
}

/** A tool step as the call it answers (id set) and its result. */
export interface ToolAnswer {
  call: ChatCall & { id: string };
  result: string;
  isError: boolean;
}

/** A model step: its system messages, all the user messages it was sent, and its reply. */
export interface ModelTurn {
  system: string[];
  users: string[];
  reply?: { content: string; reasoning_content?: string; tool_calls?: ChatCall[] };
}

export interface ConversationSteps<S> {
  kind(step: S): "tool" | "model" | undefined;
  insideTool(step: S): boolean;
  /** What a tool step and a model step inside a tool step are counted as. */
  nested: { tool: string; model: string };
  /** A tool step's call and result, or what it is counted as when it is none. */
  toolAnswer(step: S, asked: AskedCalls): ToolAnswer | string;
  modelTurn(step: S): ModelTurn;
  count(what: string): void;
}

export function conversation<S>(steps: Iterable<S>, read: ConversationSteps<S>): ChatMessage[] {
  const messages: ChatMessage[] = [];
  let users = 0;
  let started = false;
  let pending: ChatMessage | undefined;
  const flush = () => {
    if (pending && (pending.content.trim() !== "" || pending.reasoning_content)) messages.push(pending);
    pending = undefined;
  };
  const asked: AskedCalls = { byId: new Map(), unanswered: [] };
  for (const step of steps) {
    const kind = read.kind(step);
    if (kind === undefined) continue;
    if (read.insideTool(step)) {
      read.count(read.nested[kind]);
      continue;
    }
    if (kind === "tool") {
      const answer = read.toolAnswer(step, asked);
      if (typeof answer === "string") {
        read.count(answer);
        continue;
      }
      const reply = pending ?? { role: "assistant", content: "" };
      pending = undefined;
      messages.push({ ...reply, role: "assistant", tool_calls: [answer.call] });
      messages.push({ role: "tool", tool_call_id: answer.call.id, content: answer.result, ...(answer.isError ? { is_error: true } : {}) });
      continue;
    }
    const turn = read.modelTurn(step);
    // The agent's instructions, from its first model call.
    if (!started) {
      started = true;
      for (const content of turn.system) messages.push({ role: "system", content });
    }
    if (turn.users.length > users) {
      flush();
      for (const content of turn.users.slice(users)) messages.push({ role: "user", content });
      users = turn.users.length;
    }
    const { reply } = turn;
    if (!reply) continue;
    flush();
    asked.unanswered = [...(reply.tool_calls ?? [])];
    for (const call of asked.unanswered) if (call.id !== undefined) asked.byId.set(call.id, call);
    pending = {
      role: "assistant",
      content: reply.content,
      ...(reply.reasoning_content ? { reasoning_content: reply.reasoning_content } : {}),
    };
  }
  flush();
  return messages;
}
