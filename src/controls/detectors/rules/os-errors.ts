/**
 * Operating-system errors as shells and programs print them (strerror texts): missing files and
 * commands, permission denied, full disks, timeouts, kills, and non-zero exit statuses.
 */
import { type Facts, type Hit, hit, lineHit, lineSpanAt, matchesOf, ruleHits, toInt } from "./spans.ts";

const NOT_FOUND_RULES: RegExp[] = [
  // `cat: x: No such file or directory`, `python: can't open file 'x': [Errno 2] No such file or directory`, `FileNotFoundError: …`
  /^[^\s:][^:\r\n]{0,200}:[^\r\n]{0,400}?\bNo such file or directory\b[^\r\n]{0,300}/gm,
  // Node: `Error: ENOENT: no such file or directory, open '/x'`
  /\bENOENT: no such file or directory[^\r\n"]{0,300}/g,
  // bash: `bash: foo: command not found`, `bash: line 1: foo: command not found`, `foo: command not found`
  /^[^\s:][^\r\n]{0,200}?: command not found\r?$/gm,
  // zsh: `zsh: command not found: foo`
  /^zsh: command not found: [^\r\n]{1,200}/gm,
  // dash: `/bin/sh: 1: foo: not found`
  /^(?:\/bin\/)?(?:sh|dash|bash)(?:: \d+| line \d+)?: [^\r\n]{1,200}?: not found\r?$/gm,
  // zsh's cd: `cd: no such file or directory: x`
  /^(?:[^\s:]{1,40}: )?cd: no such file or directory: [^\r\n]{1,300}/gm,
  // cmd.exe
  /^'[^'\r\n]{1,200}' is not recognized as an internal or external command[^\r\n]{0,100}/gm,
];
const NOT_FOUND_GATE = /No such file|no such file|not found|not recognized/;
const COMMAND_NOT_FOUND = /(?:^|: )(?:line \d+: )?([^\s:]{1,200}): (?:command )?not found\s*$|command not found: (\S{1,200})/;
/** The quoted path inside a message part (`cannot access 'x'` → `x`), else the part itself. */
function quotedPath(part: string | undefined): string | undefined {
  if (part === undefined) return undefined;
  return /['‘"]([^'‘’"\r\n]{1,200})['’"]/.exec(part)?.[1] ?? part;
}

const MISSING_PATH =
  /: ([^:\r\n]{1,200}): No such file or directory|[Nn]o such file or directory(?::|,) (?:open |stat |scandir |lstat )?'([^'\r\n]{1,200})'/;

/** Missing files, directories and commands, as shells and programs report them. */
export function notFound(text: string): Hit[] {
  return ruleHits(text, NOT_FOUND_GATE, NOT_FOUND_RULES, "not_found", (evidence): Facts | undefined => {
    const command = COMMAND_NOT_FOUND.exec(evidence);
    if (command && (command[1] ?? command[2])) return { command: (command[1] ?? command[2]) as string };
    const path = MISSING_PATH.exec(evidence);
    return (path?.[1] ?? path?.[2]) ? { path: quotedPath(path[1] ?? path[2]) as string } : undefined;
  });
}

const PERMISSION_RULES: RegExp[] = [
  /^[^\s:][^:\r\n]{0,200}:[^\r\n]{0,400}?\b(?:Permission denied|Operation not permitted)\b[^\r\n]{0,300}/gm,
  /\bEACCES: permission denied[^\r\n"]{0,300}/g,
  /\bEPERM: operation not permitted[^\r\n"]{0,300}/g,
  /^sudo: [^\r\n]{0,200}?(?:is not in the sudoers file|a password is required|a terminal is required)[^\r\n]{0,100}/gm,
];
const PERMISSION_GATE = /Permission denied|Operation not permitted|EACCES|EPERM|sudo: /;

const DENIED_PATH =
  /(?:^|: )([^:\r\n]{1,200}): (?:Permission denied|Operation not permitted)|(?:Permission denied|permission denied|operation not permitted)(?::|,) (?:open |mkdir |unlink |scandir |access )?'([^'\r\n]{1,200})'/;

/** Permission errors (EACCES/EPERM strerror texts, sudo refusals); facts.path when the message names it. */
export function permissionDenied(text: string): Hit[] {
  return ruleHits(text, PERMISSION_GATE, PERMISSION_RULES, "permission_denied", (evidence) => {
    const path = DENIED_PATH.exec(evidence);
    const value = quotedPath(path?.[2] ?? path?.[1]);
    return value ? { path: value } : undefined;
  });
}

const DISK_FULL =
  /\b(?:No space left on device|Disk quota exceeded|There is not enough space on the disk|database or disk is full|ENOSPC)\b/g;

/** A full disk or exhausted quota (ENOSPC, EDQUOT, SQLite's SQLITE_FULL); the evidence is the message line. */
export function diskFull(text: string): Hit[] {
  if (!/space|quota|disk is full|ENOSPC/.test(text)) return [];
  const out: Hit[] = [];
  for (const m of matchesOf(DISK_FULL, text)) out.push(lineHit("disk_full", text, m.index));
  return out;
}

/** Timeout wordings of programs, libraries and the OS (ETIMEDOUT, curl 28, requests' ReadTimeout, Go deadlines, pytest-timeout). */
const TIMEOUT_RULES: RegExp[] = [
  /\b(?:[Oo]peration|[Cc]onnection|[Rr]ead|[Ww]rite|[Rr]equest|[Cc]ommand|[Ee]xecution|[Hh]andshake|[Ss]ocket|[Cc]onnect|[Pp]rocess|[Qq]uery|[Ss]ession|[Ll]ock|[Ss]ubprocess) (?:has )?timed out\b/g,
  /\btimed out after \d/g,
  /\bTIMED OUT\b/g,
  /^(?:[\w]{1,40}\.){0,4}(?:TimeoutError|TimeoutExpired|ReadTimeout(?:Error)?|ConnectTimeout(?:Error)?|ConnectionTimeout|Timeout)(?::[^\r\n]{0,300})?\r?$/gm,
  /\bETIMEDOUT\b/g,
  /\bcontext deadline exceeded\b/g,
  /^(?:E[ \t]+)?Failed: Timeout >[\d.]+s/gm,
  /^Timeout: command '[^\r\n]{1,300}' timed out/gm,
];
const TIMEOUT_GATE = /timed out|TIMED OUT|Timeout|ETIMEDOUT|deadline exceeded/;

const TIMEOUT_SECONDS =
  /\btimeout=(\d{1,7})(?:\.0+)?\b(?!\.\d)|(?:\bafter|\btimeout of|>)[ \t]*\(?(\d{1,7})(?:\.0+)?[ \t]*(?:s|secs?|seconds?)\b/i;

/** A timeout's message line, with facts.seconds when the line states the limit in whole seconds. */
export function timeoutHit(text: string, index: number): Hit {
  const [s, e] = lineSpanAt(text, index);
  const seconds = TIMEOUT_SECONDS.exec(text.slice(s, e));
  const value = seconds?.[1] ?? seconds?.[2];
  return hit("timeout", text, s, e, value ? { seconds: toInt(value) } : undefined);
}

/** Timeouts reported by programs and libraries; the evidence is the message line. */
export function timeouts(text: string): Hit[] {
  if (!TIMEOUT_GATE.test(text)) return [];
  const out: Hit[] = [];
  for (const re of TIMEOUT_RULES) for (const m of matchesOf(re, text)) out.push(timeoutHit(text, m.index));
  return out;
}

/** Timeouts an agent harness reports about the command it ran (mini-swe-agent, SWE-agent, OpenHands). */
const HARNESS_TIMEOUT_RULES: RegExp[] = [
  /\btimed out and (?:has been|was) (?:killed|terminated)\b/g,
  /\bEXECUTION TIMED OUT\b/g,
  /\bcommand took too long to (?:execute|run|complete)\b/gi,
  /\[Command timed out after [^\r\n\]]{1,100}/g,
  /\bhas no new output after \d+ seconds\b/g,
];

export function harnessTimeouts(text: string): Hit[] {
  if (!/timed out|TIMED OUT|too long|no new output/i.test(text)) return [];
  const out: Hit[] = [];
  for (const re of HARNESS_TIMEOUT_RULES) for (const m of matchesOf(re, text)) out.push(timeoutHit(text, m.index));
  return out;
}

/** SIGKILL: bash's `Killed` lines, OOM-killer messages, Go's `signal: killed`, Kubernetes' OOMKilled. */
const KILLED_RULES: RegExp[] = [
  /^[ \t]*(?:\[\d+\][+-]?[ \t]+)?Killed(?:[ \t]+[^\r\n]{0,200})?\r?$/gm,
  /\b\d+ Killed[ \t]+[^\r\n]{1,200}/g,
  /\b(?:Out of memory: Kill(?:ed)? process|OOMKilled|oom-kill(?:er)?|signal: killed|SIGKILL|killed by signal 9|terminated by signal (?:9|SIGKILL)|received signal 9)\b/g,
];

export function killed(text: string): Hit[] {
  if (!/Killed|killed|SIGKILL|oom-kill|signal 9/.test(text)) return [];
  const out: Hit[] = [];
  for (const re of KILLED_RULES) {
    for (const m of matchesOf(re, text)) {
      const [s, e] = lineSpanAt(text, m.index);
      out.push(hit("killed", text, s, e, text.slice(s, e).includes("SIGKILL") ? { signal: "SIGKILL" } : undefined));
    }
  }
  return out;
}

/** Exit statuses an agent harness appends to a command's output (mini-swe-agent, OpenHands, SWE-agent's marker). */
const HARNESS_EXIT_RULES: RegExp[] = [
  /<returncode>(-?\d+)<\/returncode>/g,
  /\[(?:The )?[Cc]ommand(?: -?\d+)? (?:finished|completed) with exit code (-?\d+)\.?\]/g,
  /\[exit code (-?\d+), no output\]/g,
  /\/\/\/PROCESS-DONE:(-?\d+):PROCESS-DONE\/\/\//g,
];
/** Exit statuses shells, runners and tool JSON print; in a file's content they are data, so these count only outside file views. */
const PRINTED_EXIT_RULES: RegExp[] = [
  /^[ \t]*\[?(?:[Ee]xit|EXIT)[ _]?(?:[Cc]ode|[Ss]tatus|CODE|STATUS)[:= ]+(-?\d+)\]?[ \t]*\r?$/gm,
  /^(?:Process|Command|Program) (?:exited|finished|terminated|failed) with (?:exit )?(?:code|status) (-?\d+)\b[^\r\n]{0,100}/gm,
  /\\?"(?:returncode|return_code|exit_?code|exitCode|exit_?status|exitStatus)\\?"[ \t]*:[ \t]*(-?\d+)/g,
  /^exit status (\d+)\r?$/gm,
];
const EXIT_GATE = /returncode|exit|Exit|EXIT|PROCESS-DONE|return_code/;
const TIMEOUT_COMMAND = /(?:^|[\s;&|(])timeout(?:\s+-\S+)*\s+\d/;
/**
 * Non-zero exit statuses (`printed`: also those a program prints, not only the harness's); 137
 * (128 + SIGKILL) is also `killed`, and 124 is also `timeout` when the action ran GNU `timeout`
 * (its exit status for a command that ran out of time).
 */
export function exitStatuses(text: string, action: string, printed = true): Hit[] {
  if (!EXIT_GATE.test(text)) return [];
  const out: Hit[] = [];
  for (const re of printed ? [...HARNESS_EXIT_RULES, ...PRINTED_EXIT_RULES] : HARNESS_EXIT_RULES) {
    for (const m of matchesOf(re, text)) {
      const code = toInt(m[1] ?? "0");
      if (code === 0 || Number.isNaN(code)) continue;
      const start = m.index;
      const end = m.index + m[0].length;
      out.push(hit("nonzero_exit", text, start, end, { exit_code: code }));
      if (code === 137) out.push(hit("killed", text, start, end, { exit_code: code }));
      if (code === 124 && TIMEOUT_COMMAND.test(action)) out.push(hit("timeout", text, start, end, { exit_code: code }));
    }
  }
  return out;
}
