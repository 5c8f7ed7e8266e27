/**
 * The reader's own message shape, whatever the row's dialect: a `Message` with its role, text,
 * tool `Call`s and tool results, the role names of every dialect mapped onto it (ROLE_ALIASES,
 * TOOL_ROLES, CALL_ROLES). Every dialect module builds these; the step pairer reads them. A
 * problem with one field of a row is a `FieldError` (src/read/record-helpers.ts), which quarantines the row.
 */

/** One tool call: its name and id when known, its arguments parsed, or its text as written. */
export interface Call {
  name?: string;
  id?: string;
  args?: unknown;
  /** A call that could not be parsed (a Hermes block in Python-dict quoting): the action as written. */
  raw?: string;
}

/**
 * A message in one shape whatever the row's dialect. Besides the chat roles, `reasoning` (a
 * Responses reasoning item: context for the next assistant message) and `other` (an element that
 * is no message of the interaction, counted under `skipped`).
 */
export interface Message {
  role: string;
  text: string;
  calls: Call[];
  /** A tool message's results (several `<tool_response>` blocks in one Hermes message). */
  results: string[];
  toolCallId?: string;
  /** A tool message whose result is an error (Anthropic `tool_result.is_error`, an `is_error` / `error` field beside the result). */
  isError?: boolean;
  /**
   * A tool message saying its call never ran (Amp's `cancelled`, `rejected-by-user`): the call is
   * taken out of its step and counted under this name, never answered by the next user message.
   */
  notRun?: string;
  /** The function a result answers, where the message names it and no id (Qwen-Agent's role `function` + `name`). */
  toolName?: string;
  reasoning?: string;
  /** What the message held that is left out, counted in `meta.skipped`. */
  skipped?: string[];
}

export const ROLE_ALIASES: Record<string, string> = {
  human: "user",
  user: "user",
  gpt: "assistant",
  assistant: "assistant",
  model: "assistant",
  chatgpt: "assistant",
  // SWE-agent transcripts as nebius/SWE-agent-trajectories exports them.
  ai: "assistant",
  system: "system",
  // OpenAI's newer name for the system message.
  developer: "system",
};
/** Roles whose message is a tool result. */
export const TOOL_ROLES = new Set(["tool", "function", "observation", "ipython", "tool_response", "function_response"]);
/** ShareGPT roles whose message is a call (its value a JSON call or list of calls). */
export const CALL_ROLES = new Set(["function_call", "tool_call"]);

export function makeMessage(role: string, text: string, extra: Partial<Message> = {}): Message {
  return { role, text, calls: [], results: [], ...extra };
}
