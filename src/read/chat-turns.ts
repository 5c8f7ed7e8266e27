import type { Turn } from "../core/trajectory.ts";

/** One command the agent issued in an assistant message, with the reasoning around it. */
export interface ChatAction {
  action: string;
  thought?: string;
}

/**
 * The text of a chat message's `content`: a string, `null` (a tool-calling reply with no text), or
 * OpenAI-style parts of which the `text` ones are joined by newlines. `undefined` when it is none
 * of these, so the caller can quarantine the record.
 */
export function messageText(content: unknown): string | undefined {
  if (typeof content === "string") return content;
  if (content === null) return "";
  if (!Array.isArray(content)) return undefined;
  const texts: string[] = [];
  for (const part of content) {
    if (typeof part === "string") texts.push(part);
    else if (typeof part === "object" && part !== null && typeof (part as { text?: unknown }).text === "string")
      texts.push((part as { text: string }).text);
  }
  return texts.join("\n");
}

/**
 * Turns a chat transcript (system, user task, then assistant / observation messages) into
 * (action, observation) turns, one message at a time so a streamed transcript is never held whole.
 *
 * - The first user message before any assistant message is the task.
 * - An assistant message opens its actions; the following `user` / `tool` messages are their
 *   observations, in order.
 * - Everything that does not become a turn is counted in `skipped` (never dropped silently): an
 *   assistant message without a parsable action (the harness answers it with a format error, not
 *   environment output), that answer, actions that never got an observation, and unknown roles.
 *   System messages are the agent's prompt, not part of the interaction, and are left out.
 */
export class ChatTurnPairer {
  readonly turns: Turn[] = [];
  readonly skipped: Record<string, number> = {};
  task: string | undefined;
  private pending: ChatAction[] = [];
  private sawAssistant = false;

  add(role: string, text: string, actions: readonly ChatAction[] = []): void {
    if (role === "system") return;
    if (role === "assistant") {
      this.flushUnobserved();
      this.sawAssistant = true;
      if (actions.length === 0) this.count("assistant_without_action");
      this.pending = [...actions];
      return;
    }
    if (role === "user" || role === "tool") {
      if (!this.sawAssistant && this.task === undefined && role === "user") {
        this.task = text;
        return;
      }
      const action = this.pending.shift();
      if (!action) {
        this.count("message_without_action");
        return;
      }
      const meta = action.thought ? { agent_thought: action.thought } : undefined;
      this.turns.push({ action: action.action, observation: text, ...(meta ? { meta } : {}) });
      return;
    }
    this.count(`${role}_message`);
  }

  /** Closes the transcript: actions still waiting for an observation are counted. */
  finish(): void {
    this.flushUnobserved();
  }

  count(what: string, n = 1): void {
    this.skipped[what] = (this.skipped[what] ?? 0) + n;
  }

  private flushUnobserved(): void {
    if (this.pending.length > 0) this.count("action_without_observation", this.pending.length);
    this.pending = [];
  }
}
