import type { Turn } from "../../core/trajectory.ts";
import { parseJsonLine } from "../reader.ts";
import type { Call } from "./message.ts";
import { shellCommand } from "./tools.ts";

/**
 * One assistant step (its calls, their results, the thought, reasoning and dialogue around them)
 * as a turn: a call rendered as its shell command or `{name, arguments}`, several calls and results
 * numbered `[call i/N]` / `[result i/N]`, and the step's context in `turn.meta`.
 */

export interface Step {
  calls: Call[];
  results: (string | undefined)[];
  /** Results that are errors (`is_error`), by call index. */
  errors: boolean[];
  thought: string[];
  reasoning: string[];
  dialogue: { role: string; text: string }[];
  /** Who made the calls when it was not the agent (τ²-bench's user acting on their own device). */
  requestor?: "user";
}

function renderCall(call: Call): string {
  if (call.raw !== undefined) return call.raw;
  return shellCommand(call) ?? JSON.stringify({ name: call.name, arguments: call.args ?? {} });
}

function isJsonContainer(text: string): boolean {
  const trimmed = text.trim();
  if (!/^[[{]/.test(trimmed)) return false;
  return parseJsonLine(trimmed).ok;
}

export function stepTurn(step: Step): Turn {
  const n = step.calls.length;
  const actions = step.calls.map(renderCall);
  const results = step.results.map((r) => r ?? "[no result]");
  const action = n === 1 ? (actions[0] as string) : actions.map((a, i) => `[call ${i + 1}/${n}]\n${a}`).join("\n");
  const observation = n === 1 ? (results[0] as string) : results.map((r, i) => `[result ${i + 1}/${n}]\n${r}`).join("\n");
  const names = step.calls.map((c) => c.name ?? "");
  const meta: Record<string, unknown> = n === 1 ? { tool: names[0] } : { tools: names, parallel_calls: n };
  const answered = step.results.filter((r): r is string => r !== undefined);
  // One JSON result of a function tool (not shell output, which stays as printed).
  if (n === 1 && shellCommand(step.calls[0] as Call) === undefined && answered.every(isJsonContainer)) {
    meta.observation_format = "json";
  }
  // A failed call, as the other readers keep it: `is_error`, and which results when the calls were parallel.
  const failed = step.calls.flatMap((_, i) => (step.errors[i] === true ? [i + 1] : []));
  if (failed.length > 0) meta.is_error = true;
  if (failed.length > 0 && n > 1) meta.error_results = failed;
  if (step.thought.length > 0) meta.agent_thought = step.thought.join("\n\n");
  if (step.reasoning.length > 0) meta.agent_reasoning = step.reasoning.join("\n\n");
  if (step.dialogue.length > 0) meta.dialogue = step.dialogue;
  if (step.requestor !== undefined) meta.requestor = step.requestor;
  return { action, observation, meta };
}
