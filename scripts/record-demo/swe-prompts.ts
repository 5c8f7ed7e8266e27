/**
 * The prompts each agent layout opens with, written for this demo (the real tools' prompt
 * templates are not copied): a system message saying how to act, and the task with the issue.
 */
import type { RecordedEpisode } from "./swe-session.ts";
import { MINI_SUBMIT_MARKER } from "./swe-session.ts";

const task = (r: RecordedEpisode) =>
  `The repository at ${r.repo} has this issue:\n\n${r.episode.issue}\n\nFix it in the source (the tests are right), check that the tests pass, then submit.`;

/** SWE-agent with function calling: a `bash` tool and a `submit` tool. */
export const sweAgentPrompts = (r: RecordedEpisode) => ({
  system:
    "You are a programmer fixing an issue in a Python repository from a bash shell. Call the `bash` tool with one command at a time, say briefly why before each call, and call `submit` when the fix is done.",
  instance: task(r),
});

/** mini-swe-agent: one fenced command per reply, the marker command to finish. */
export const miniSweAgentPrompts = (r: RecordedEpisode) => ({
  system: [
    "You are a programmer fixing an issue in a Python repository from a bash shell.",
    "Each reply says what you are about to do, then gives exactly one command in a block:",
    "",
    "```mswea_bash_command",
    "the command",
    "```",
    "",
    `To finish, run \`echo ${MINI_SUBMIT_MARKER} && git add -A && git diff --cached\` and nothing else.`,
  ].join("\n"),
  instance: task(r),
});

/** SWE-smith fine-tuning export: tools described in the system message, called in XML. */
export const sweSmithPrompts = (r: RecordedEpisode) => ({
  system: [
    "You are a programmer fixing an issue in a Python repository. You can call these functions:",
    "",
    "bash: runs one bash command in the repository. Parameter: command (string, required).",
    "submit: ends the session and submits the changes. No parameters.",
    "",
    "Call a function by ending your reply with",
    "<function=NAME>",
    "<parameter=PARAMETER>value</parameter>",
    "</function>",
    "and nothing after it; one call per reply.",
  ].join("\n"),
  instance: task(r),
});

/** OpenHands: the user's chat message is the task. */
export const openHandsTask = task;
