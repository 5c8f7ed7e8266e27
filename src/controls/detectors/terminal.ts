/**
 * Terminal edge cases: a shell's output as a terminal shows it (asciicast screens, tmux pane
 * captures). The shell rules of rules/shell.ts apply to the text this turn added: a pane capture
 * repeats the screen the previous turn left (`cat: missing.txt: No such file or directory` stays
 * on screen for several turns), so when the observation continues the previous one from its prompt
 * line (the prompt, now followed by this turn's command), only that continuation is read.
 */
import type { DetectorTurn, DomainDetector } from "../control-label.ts";
import { shellHits } from "./rules/shell.ts";
import { shifted } from "./rules/spans.ts";

/**
 * Where this turn's own text starts: the line in `observation` that is the previous observation's
 * last line (its prompt) followed by this turn's command, when everything before that line is the
 * end of the previous screen (a pane that kept or scrolled its content). Otherwise 0: the whole
 * observation is new (a recording's per-command output, a cleared screen, a full-screen program).
 */
export function freshOutputStart(observation: string, previous: string | undefined, action: string): number {
  if (previous === undefined) return 0;
  const prev = previous.trimEnd();
  const lastNewline = prev.lastIndexOf("\n");
  const prompt = prev.slice(lastNewline + 1);
  if (prompt.trim() === "") return 0;
  const before = prev.slice(0, lastNewline + 1);
  const command = (action.split("\n")[0] ?? "").trim();
  let from = 0;
  for (let guard = 0; guard < 64; guard++) {
    const at = observation.indexOf(prompt, from);
    if (at === -1) return 0;
    from = at + 1;
    if (at !== 0 && observation.charCodeAt(at - 1) !== 10) continue;
    const lineEnd = observation.indexOf("\n", at);
    const line = observation.slice(at, lineEnd === -1 ? observation.length : lineEnd);
    if (line.length <= prompt.length || (command !== "" && !line.includes(command))) continue;
    if (before.endsWith(observation.slice(0, at))) return at;
  }
  return 0;
}

export const terminalDetector: DomainDetector = {
  domain: "terminal",
  detect(turn: DetectorTurn) {
    const start = freshOutputStart(turn.observation, turn.previousObservation, turn.action);
    return shifted(shellHits(turn.action, turn.observation.slice(start)), start);
  },
};
