/**
 * Software-engineering agents (SWE-agent, mini-swe-agent, OpenHands, SWE-smith): a shell's output
 * plus what the agent harness itself reports. The shell rules of rules/shell.ts apply (a file view
 * — `cat`, `sed -n`, `open`, `str_replace_editor view`, `git diff` — only contributes the viewer's
 * own errors); the harness messages below apply always:
 *
 * - compile_error: the edit tool's lint refusal, `Your proposed edit has introduced new syntax
 *   error(s)` (SWE-agent, OpenHands), evidenced by its `- E999 SyntaxError: …` line when shown;
 * - not_found: `File x not found`, `Directory x not found` (SWE-agent), `The path x does not
 *   exist` (str_replace_editor, OpenHands);
 * - empty_result: `No matches found for "x" in /dir` (SWE-agent's find_file / search_dir).
 */
import type { DetectorTurn, DomainDetector } from "../control-label.ts";
import { shellHits } from "./rules/shell.ts";
import { type Hit, hit, matchesOf } from "./rules/spans.ts";

const LINT_REFUSAL = /^\[?Your proposed edit has introduced new syntax error\(s\)[^\r\n]{0,200}/m;
const LINT_LINE = /^- (E\d{3,4}) [^\r\n]{1,300}/m;
const HARNESS_NOT_FOUND: RegExp[] = [
  /^(?:Error: )?(?:File|Directory) ['"]?[^\r\n'"]{1,300}?['"]? not found\.?\r?$/gm,
  /\bThe path [^\r\n ]{1,300} does not exist\b[^\r\n]{0,100}/g,
];
const HARNESS_EMPTY = /^(?:No matches found for [^\r\n]{1,300}|Found 0 matches\b[^\r\n]{0,200})/gm;

function harnessHits(text: string): Hit[] {
  const out: Hit[] = [];
  const lint = LINT_REFUSAL.exec(text);
  if (lint) {
    const after = text.slice(lint.index, lint.index + 1200);
    const line = LINT_LINE.exec(after);
    if (line)
      out.push(hit("compile_error", text, lint.index + line.index, lint.index + line.index + line[0].length, { lint_code: line[1] ?? "" }));
    else out.push(hit("compile_error", text, lint.index, lint.index + lint[0].length));
  }
  if (/not found|does not exist/.test(text)) {
    for (const re of HARNESS_NOT_FOUND)
      for (const m of matchesOf(re, text)) out.push(hit("not_found", text, m.index, m.index + m[0].length));
  }
  if (/No matches found|Found 0 matches/.test(text)) {
    for (const m of matchesOf(HARNESS_EMPTY, text)) out.push(hit("empty_result", text, m.index, m.index + m[0].length));
  }
  return out;
}

export const sweDetector: DomainDetector = {
  domain: "swe",
  detect(turn: DetectorTurn) {
    return [...shellHits(turn.action, turn.observation), ...harnessHits(turn.observation)];
  },
};
