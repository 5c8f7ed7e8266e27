import { isRecord } from "../record-helpers.ts";
import type { Call } from "./message.ts";

/**
 * Agents that write their command as a fenced code block at the end of a reply and get its output
 * back as the next user message, with no tool-calling API: SWE-agent's chat transcripts as the Hub
 * ships them (nebius/SWE-agent-trajectories: roles `system` / `user` / `ai`, the text in `text`,
 * the system prompt in `system_prompt`), where every observation ends in SWE-agent's state footer
 * "(Open file: …)\n(Current directory: …)\nbash-$". SWE-agent runs the reply's last code block
 * (its ThoughtActionParser); the text before it is the thought.
 */

/** SWE-agent's next-step template ends every observation with the shell's state and prompt. */
// (One whitespace run before the prompt: two adjacent `\s*` would backtrack quadratically on a long blank run.)
const STATE_FOOTER = /\(Current directory: [^\n)]*\)\s*(?:bash-\$\s*)?$/;
// Every fenced block: an opening fence with an optional info string, the body, a closing fence.
const FENCED_BLOCK = /```[^\n`]*\n([\s\S]*?)\n?```/g;
const ASSISTANT_ROLES = new Set(["ai", "assistant", "gpt", "model"]);

/** The text of a message in this dialect: `content`, else `text` (SWE-agent exports). */
function textOf(message: Record<string, unknown>): string {
  const text = message.content ?? message.text ?? message.value;
  return typeof text === "string" ? text : "";
}

/**
 * Whether a conversation is such a transcript: no tool roles or structured calls (those rows are
 * read as tool calls), an assistant reply with a fenced block, and a user message after a reply
 * that ends in SWE-agent's state footer (so a chat that merely quotes code is not taken for one).
 */
export function isFencedCommandChat(messages: readonly unknown[]): boolean {
  // The footer check first: it is cheap and fails for almost every chat row, which then skips
  // scanning each reply for fenced blocks.
  let replied = false;
  let observed = false;
  for (const message of messages) {
    if (!isRecord(message)) return false;
    if (message.tool_calls !== undefined && message.tool_calls !== null) return false;
    const role = String(message.role ?? message.from).toLowerCase();
    if (ASSISTANT_ROLES.has(role)) replied = true;
    else if (role === "user" || role === "human") {
      if (replied && !observed && STATE_FOOTER.test(textOf(message))) observed = true;
    } else if (role !== "system") return false;
  }
  if (!observed) return false;
  return messages.some(
    (message) =>
      isRecord(message) &&
      ASSISTANT_ROLES.has(String(message.role ?? message.from).toLowerCase()) &&
      fencedCommand(textOf(message)) !== undefined,
  );
}

/** A reply's last fenced code block as its command, and the text before the block as its thought. */
export function fencedCommand(text: string): { thought: string; command: string } | undefined {
  let last: RegExpExecArray | undefined;
  for (const match of text.matchAll(FENCED_BLOCK)) last = match;
  const command = last?.[1]?.trim();
  if (!last || !command) return undefined;
  return { thought: text.slice(0, last.index).trim(), command };
}

/** The command as a shell call (its action is the command itself). */
export function shellCall(command: string): Call {
  return { name: "bash", args: { command } };
}
