import type { Domain, SourceRef, Turn } from "../../core/trajectory.ts";
import type { ReadItem } from "../reader.ts";

/**
 * Turns of a coding agent's session log, built in the order the log writes them: the agent's
 * text and thinking, its tool calls (each opened with an id), the results that answer them (by
 * that id, possibly several messages later), and the user's messages. Shared by the session
 * readers whose logs keep calls and results apart (pi, Factory Droid).
 *
 * - A call's `turn.thinking` is the text and thinking since the previous call.
 * - The first user message before any call is the task; later ones are `turn.meta.user_messages`
 *   of the next call.
 * - A call never answered makes no turn; a result with no open call is counted, not read.
 * - The agent's text after its last call is `meta.final_message`.
 */
export class SessionTurns {
  private readonly calls: OpenCall[] = [];
  private readonly open = new Map<string, OpenCall>();
  private readonly skipped: Record<string, number> = {};
  private reasoning: string[] = [];
  private userMessages: string[] = [];
  private task: string | undefined;
  private lastText: string | undefined;

  /** The agent's visible text (its last one, if no call follows, is the final message). */
  text(text: string): void {
    const trimmed = text.trim();
    if (trimmed === "") return;
    this.reasoning.push(trimmed);
    this.lastText = trimmed;
  }

  thinking(text: string): void {
    const trimmed = text.trim();
    if (trimmed !== "") this.reasoning.push(trimmed);
  }

  user(text: string): void {
    const trimmed = text.trim();
    if (trimmed === "") return;
    if (this.task === undefined && this.calls.length === 0) {
      this.task = trimmed;
      return;
    }
    // Text the agent wrote since its last call answered the user, not a call: it leads to no turn.
    if (this.reasoning.length > 0) this.count("assistant_reply");
    this.reasoning = [];
    this.userMessages.push(trimmed);
  }

  /** A tool call; `id` undefined for one that is answered at once (`answer` it through the returned handle). */
  call(id: string | undefined, tool: string, action: string, meta: Record<string, unknown> = {}): OpenCall {
    const turnMeta: Record<string, unknown> = { tool, ...(id !== undefined ? { tool_call_id: id } : {}), ...meta };
    if (this.userMessages.length > 0) turnMeta.user_messages = this.userMessages;
    this.userMessages = [];
    const turn: Turn = { action, observation: "", meta: turnMeta };
    if (this.reasoning.length > 0) turn.thinking = this.reasoning.join("\n\n");
    this.reasoning = [];
    this.lastText = undefined;
    const call: OpenCall = { turn, tool, answered: false };
    this.calls.push(call);
    if (id !== undefined) {
      if (this.open.has(id)) this.count("repeated_call_id");
      this.open.set(id, call);
    }
    return call;
  }

  /** The result of the open call with this id; false (and counted) when no call waits for it. */
  answer(id: string, observation: string, isError: boolean): boolean {
    const call = this.open.get(id);
    if (!call) {
      this.count("result_without_call");
      return false;
    }
    this.open.delete(id);
    answerCall(call, observation, isError);
    return true;
  }

  /** Takes an open call back out (it never ran: the user rejected it), counted as `what`; false when no call has this id. */
  drop(id: string, what: string): boolean {
    const call = this.open.get(id);
    if (!call) return false;
    this.open.delete(id);
    this.calls.splice(this.calls.indexOf(call), 1);
    this.count(what);
    return true;
  }

  count(what: string): void {
    this.skipped[what] = (this.skipped[what] ?? 0) + 1;
  }

  finish(): { task?: string; turns: Turn[]; tools: string[]; finalMessage?: string; skipped: Record<string, number> } {
    const turns: Turn[] = [];
    const tools: string[] = [];
    for (const call of this.calls) {
      if (!call.answered) {
        this.count("call_without_result");
        continue;
      }
      turns.push(call.turn);
      tools.push(call.tool);
    }
    return {
      ...(this.task !== undefined ? { task: this.task } : {}),
      turns,
      tools,
      ...(this.lastText !== undefined ? { finalMessage: this.lastText } : {}),
      skipped: this.skipped,
    };
  }
}

export interface OpenCall {
  turn: Turn;
  tool: string;
  answered: boolean;
}

/** Sets a call's observation (`[no output]` when empty) and its error flag. */
export function answerCall(call: OpenCall, observation: string, isError: boolean): void {
  call.turn.observation = observation.trim() === "" ? "[no output]" : observation;
  if (isError) (call.turn.meta as Record<string, unknown>).is_error = true;
  call.answered = true;
}

/** The names counted, most used first (a tie: code-point order). */
export function byUse(counts: ReadonlyMap<string, number>): string[] {
  return [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([name]) => name);
}

/** The name counted most (a tie: the first in code-point order); undefined when nothing was counted. */
export function mostUsed(counts: ReadonlyMap<string, number>): string | undefined {
  return byUse(counts)[0];
}

/**
 * A session's read item: its trajectory (`meta` with the final message and what was skipped), or,
 * when no call got a result, one quarantine entry saying how many messages it had and what they
 * made instead: `<prefix>no tool call with a result<where> (<n> messages, <skipped>)<note>: a chat without actions`.
 */
export function sessionItem(
  built: ReturnType<SessionTurns["finish"]>,
  session: {
    id: string;
    source: SourceRef;
    domain: Domain;
    meta: Record<string, unknown>;
    messages: number;
    /** The field a quarantine names. */
    field: string;
    prefix?: string;
    where?: string;
    note?: string;
  },
): ReadItem {
  const { id, source } = session;
  if (built.turns.length === 0) {
    const counts = Object.entries(built.skipped).map(([key, n]) => `${n} ${key}`);
    const what = [`${session.messages} messages`, ...counts].join(", ");
    const reason = `${session.prefix ?? ""}no tool call with a result${session.where ?? ""} (${what})${session.note ?? ""}: a chat without actions`;
    return { kind: "quarantine", entry: { source, id, stage: "read", field: session.field, reason } };
  }
  const meta = { ...session.meta };
  if (built.finalMessage !== undefined) meta.final_message = built.finalMessage;
  if (Object.keys(built.skipped).length > 0) meta.skipped = built.skipped;
  return {
    kind: "trajectory",
    trajectory: { id, domain: session.domain, source, ...(built.task !== undefined ? { task: built.task } : {}), turns: built.turns, meta },
  };
}
