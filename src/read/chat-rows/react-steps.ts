import { isRecord } from "../record-helpers.ts";
import { parseArguments } from "./calls.ts";
import type { Call } from "./message.ts";

/**
 * ToolBench ReAct steps: an assistant text "Thought: … Action: NAME Action Input: {…}" as one call
 * with the thought as its text, and `Action: Finish` as the final answer (a reply with no call).
 */

/**
 * A ToolBench assistant message "Thought: … Action: NAME Action Input: {…}" (the first `Action:`
 * line directly followed by an `Action Input:` line, which runs to the end): one call, the thought
 * its text. `Finish` is ToolBench's closing function, never answered: its `final_answer` (or its
 * input) is the message's text, a reply with no call. Read line by line (no backtracking regex).
 */
export function reactStep(text: string): { text: string; calls: Call[] } | undefined {
  const lines = text.split("\n");
  for (let i = 0; i + 1 < lines.length; i++) {
    const action = /^[ \t]*Action:(.*)$/.exec(lines[i] as string);
    const input = action ? /^[ \t]*Action Input:(.*)$/.exec(lines[i + 1] as string) : null;
    const name = action?.[1]?.trim();
    if (!input || !name) continue;
    const argsText = [input[1], ...lines.slice(i + 2)].join("\n").trim();
    const args = argsText === "" ? {} : parseArguments(argsText);
    if (name === "Finish") {
      const answer = isRecord(args) && typeof args.final_answer === "string" ? args.final_answer : argsText;
      return { text: answer, calls: [] };
    }
    const thought = lines
      .slice(0, i)
      .join("\n")
      .trim()
      .replace(/^Thought:\s*/, "");
    return { text: thought, calls: [{ name, args }] };
  }
  return undefined;
}
