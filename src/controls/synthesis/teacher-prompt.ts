/**
 * What the synthesis teacher is asked (docs/controls.md "Teacher syntheses"): the turn's action and
 * the observation the environment really returned, and the edge case to show instead. The real
 * observation is in the prompt so the answer can keep what the edge case does not change (the
 * prompt line, the JSON-RPC id, the screen under a dialog); the verifier checks that it did.
 */

import type { Domain, Trajectory } from "../../core/trajectory.ts";
import type { ChatMessage } from "../../sft/teacher/chat-types.ts";
import { visibleAnswer } from "../../sft/teacher/teacher-answer.ts";
import type { ControlLabelName } from "../control-label.ts";

/** What each edge case is, in words a teacher can act on (one sentence, no instruction template). */
export const KIND_WORDS: Readonly<Record<ControlLabelName, string>> = {
  rate_limit: "the service refuses the request because the caller sent too many requests (HTTP 429, a rate-limit error)",
  http_error: "the server fails with an HTTP 5xx error (500, 502, 503)",
  rpc_error: "the server answers with a JSON-RPC error object instead of a result",
  pagination: "the result is only the first page of a longer list, with a cursor or page marker for the next page",
  empty_result: "the query succeeds but returns no results",
  permission_denied: "the operation is refused with a permission error",
  disk_full: "writing fails because the disk is full (No space left on device)",
  timeout: "the operation times out before it completes",
  killed: "the process is killed (out of memory, SIGKILL)",
  not_found: "a file, command or resource the action needs does not exist",
  nonzero_exit: "the command fails with a non-zero exit status",
  traceback: "the program crashes with an uncaught exception and its traceback",
  compile_error: "compilation fails with a compiler error",
  test_failure: "a test in the run fails",
  app_not_responding: "the application stops responding and the system shows its not-responding dialog",
  app_crash: "the application crashes and the system shows its crash dialog",
  permission_prompt: "the system asks the user to grant the application a permission",
  error_page: "the page fails to load and the browser shows an error page",
  modal_dialog: "a modal dialog opens over the screen",
};

const SYSTEM = [
  "You simulate the environment an AI agent acts in. You are shown one step: the agent's action and the observation the environment returned.",
  "Write the observation the environment would have returned for the same action if the edge case named below had happened instead.",
  "Keep everything the edge case does not change exactly as it was: the shell prompt and the echoed command, ids and version fields, the page or screen under a dialog, the query.",
  "Use the tools' own error messages. Answer with the observation text only: no commentary, no code fences, no mention of simulation.",
].join(" ");

/** At most this much of an earlier observation is shown (context, not something to keep). */
const CONTEXT_CHARS = 1500;

const block = (title: string, text: string) => `${title}:\n<<<\n${text}\n>>>`;
const clipped = (text: string) => (text.length > CONTEXT_CHARS ? `${text.slice(0, CONTEXT_CHARS)}\n[…]` : text);

/** The messages for one turn and kind: the domain, the edge case, the previous step for context, the action and the real observation. */
export function teacherMessages(trajectory: Trajectory, turn: number, kind: ControlLabelName): ChatMessage[] {
  const step = trajectory.turns[turn] as Trajectory["turns"][number];
  const previous = turn > 0 ? trajectory.turns[turn - 1] : undefined;
  const parts = [
    `ENVIRONMENT: ${domainWords(trajectory.domain)}`,
    `EDGE CASE: ${kind} — ${KIND_WORDS[kind]}`,
    ...(previous ? [block("PREVIOUS ACTION", clipped(previous.action)), block("PREVIOUS OBSERVATION", clipped(previous.observation))] : []),
    block("ACTION", step.action),
    block("OBSERVATION AS IT WAS", step.observation),
    "Write the observation under the edge case.",
  ];
  return [
    { role: "system", content: SYSTEM },
    { role: "user", content: parts.join("\n\n") },
  ];
}

function domainWords(domain: Domain): string {
  switch (domain) {
    case "terminal":
      return "terminal (a shell; the observation is the terminal screen)";
    case "swe":
      return "software-engineering agent harness (the observation is the command's output)";
    case "mcp":
      return "MCP server (the observation is a JSON-RPC 2.0 response)";
    case "search":
      return "search API (the observation is the API's response)";
    case "web":
      return "web browser (the observation is the page's accessibility tree)";
    case "android":
      return "Android device (the observation is the view hierarchy)";
    case "os":
      return "desktop (the observation is the accessibility tree)";
  }
}

/**
 * The observation in an answer: its visible part (a thinking model's block dropped), one fence
 * around the whole answer removed (teachers add them although told not to), and the original
 * observation's trailing whitespace (a prompt's space after `$`, which chat answers lose).
 * Undefined when empty.
 */
export function answerObservation(answer: string, original: string): string | undefined {
  let text = visibleAnswer(answer).replace(/^\n+/, "").replace(/\s+$/, "");
  const fenced = /^```[\w-]*\n([\s\S]*?)\n```$/.exec(text);
  if (fenced) text = (fenced[1] ?? "").replace(/\s+$/, "");
  if (text.trim() === "") return undefined;
  return text + (/\s*$/.exec(original)?.[0] ?? "");
}
