/**
 * Rule-based counterfactual observations for shells (terminal and swe, issue 37 item 1): what a
 * command prints when the environment fails it in one of four ways whose text is fixed by the
 * tools themselves (bash, coreutils' strerror messages), keeping the rest of the observation
 * (the pane's earlier screen, the command's echo, the prompt line, an agent harness's wrapper).
 *
 * A rule only takes a simple command (one program and plain words: no pipe, list, substitution or
 * quoting) so the error line can name exactly what it fails on.
 */
import { freshOutputStart } from "../detectors/terminal.ts";
import type { SynthesisRule, SynthesisTurn } from "./synthesis-rule.ts";

/** One program and its plain arguments, with at most one `> file` / `>> file` redirect at the end. */
const SIMPLE_COMMAND = /^([A-Za-z_][\w.+-]{0,40})((?:[ \t]+[\w./:=@%+,-]{1,200}){0,8})(?:[ \t]+(>>?)[ \t]*([\w./-]{1,200}))?[ \t]*$/;

interface SimpleCommand {
  program: string;
  args: string[];
  /** The file a trailing redirect writes, if any. */
  redirect?: string;
}

export function simpleCommand(command: string): SimpleCommand | undefined {
  const m = SIMPLE_COMMAND.exec(command.trim());
  if (!m) return undefined;
  const args = (m[2] ?? "")
    .trim()
    .split(/[ \t]+/)
    .filter((arg) => arg !== "");
  return { program: m[1] as string, args, ...(m[4] ? { redirect: m[4] } : {}) };
}

/** Programs that read the files named by their arguments (coreutils and friends). */
const FILE_READERS = new Set(["cat", "head", "tail", "wc", "sort", "uniq", "grep", "less", "more", "md5sum", "sha256sum", "stat", "file"]);
/** Bash builtins: their write errors name the builtin (`bash: echo: write error: …`). */
const BUILTIN_WRITERS = new Set(["echo", "printf"]);

/**
 * The one file a command names (not an option, not a grep pattern): undefined for none or several
 * (`wc a b` would still print `a`'s count, so its output is not fixed by one error line).
 */
function fileArgument(command: SimpleCommand): string | undefined {
  const operands = command.args.filter((arg) => !arg.startsWith("-"));
  const files = command.program === "grep" ? operands.slice(1) : operands;
  const file = files.length === 1 ? files[0] : undefined;
  return file !== undefined && /[A-Za-z0-9]/.test(file) ? file : undefined;
}

/** The file a reader command's error would name. */
function readFile(turn: SynthesisTurn): string | undefined {
  const command = parsed(turn);
  const file = command && FILE_READERS.has(command.program) ? fileArgument(command) : undefined;
  return file?.split("/").pop();
}

/** A plain `ls` (no long format): it shows names, not whether a file is readable. */
const namesOnlyListing = (action: string): boolean => /^ls(?:[ \t]+(?:-[A-Za-kmo-z1]+|[^-\s]\S*))*[ \t]*$/.test(commandOf(action) ?? "");

/** A missing file must not have been named before: listed, read, written. */
function missingContradiction(turn: SynthesisTurn): string | undefined {
  const file = readFile(turn);
  if (file === undefined) return undefined;
  const at = (turn.earlier ?? []).findIndex((t) => t.action.includes(file) || t.observation.includes(file));
  return at === -1 ? undefined : `turn ${at} names ${file}`;
}

/** An unreadable file must not have been read, or shown with its mode, before; a plain `ls` listing it is fine. */
function unreadableContradiction(turn: SynthesisTurn): string | undefined {
  const file = readFile(turn);
  if (file === undefined) return undefined;
  const at = (turn.earlier ?? []).findIndex(
    (t) => t.action.includes(file) || (t.observation.includes(file) && !namesOnlyListing(t.action)),
  );
  return at === -1 ? undefined : `turn ${at} reads or lists ${file} with its mode`;
}

/** The command an action runs, for the shell rules: plain text, or a mini-swe-agent / SWE-agent bash block. */
export function commandOf(action: string): string | undefined {
  const fenced = /^```(?:bash|sh)?\n([\s\S]*?)\n```$/.exec(action.trim());
  const tool = /^<function=(?:bash|execute_bash)>\s*<parameter=command>([\s\S]*?)<\/parameter>\s*<\/function>$/.exec(action.trim());
  const text = (fenced ? fenced[1] : tool ? tool[1] : action)?.trim() ?? "";
  return text.includes("\n") ? undefined : text;
}

// ---------------------------------------------------------------------------------------------
// Where the new text goes: a shell observation's frame

/** An observation split into what stays (before: earlier screen and echo; after: prompt) and this command's own output. */
export interface ShellFrame {
  before: string;
  output: string;
  after: string;
  /** Rewraps new output (an agent harness's wrapper, with its exit status). */
  wrap(output: string, exitCode: number): string;
}

/** A prompt line as a shell prints it: `user@host:~/dir$`, `root@box:/app#`, `$`, `>>>`-free. */
const PROMPT_LINE = /^[^\n]{0,120}[$#%>][ \t]?$/;
const MINI_SWE = /^<returncode>(-?\d+)<\/returncode>\n<output>\n([\s\S]*?)<\/output>\s*$/;
const EXIT_CODE_TRAILER = /\n?\[(?:Command finished with exit code|The command completed with exit code) -?\d+\.?\]\s*$/;

export function shellFrame(turn: SynthesisTurn, plainOutput = false): ShellFrame | undefined {
  const observation = turn.observation;
  const mini = MINI_SWE.exec(observation);
  if (mini) {
    return {
      before: "",
      output: mini[2] ?? "",
      after: "",
      wrap: (output, exitCode) => `<returncode>${exitCode}</returncode>\n<output>\n${output}</output>`,
    };
  }
  const trailer = EXIT_CODE_TRAILER.exec(observation);
  if (trailer) {
    const body = observation.slice(0, trailer.index);
    const marker = trailer[0].includes("Command finished") ? "Command finished with exit code" : "The command completed with exit code";
    return {
      before: "",
      output: body,
      after: "",
      wrap: (output, exitCode) => `${output.replace(/\n$/, "")}\n[${marker} ${exitCode}${marker.startsWith("The") ? "." : ""}]`,
    };
  }
  // An agent harness's plain output (SWE-agent, OpenHands, SWE-smith): the command's output is the observation.
  if (plainOutput) return { before: "", output: observation, after: "", wrap: (output) => output };
  // A terminal screen: keep the earlier screen (and this command's echo line) and the final prompt.
  const start = freshOutputStart(observation, turn.previousObservation, turn.action);
  const fresh = observation.slice(start);
  let echoEnd = 0;
  const command = commandOf(turn.action);
  const firstLineEnd = fresh.indexOf("\n");
  const firstLine = firstLineEnd === -1 ? "" : fresh.slice(0, firstLineEnd).trimEnd();
  // The echo: a prompt followed by the command (`demo@lwm:~/work$ ls`), not output that names it.
  if (command && firstLine.endsWith(command) && /[$#%>][ \t]*$/.test(firstLine.slice(0, -command.length))) echoEnd = firstLineEnd + 1;
  const lastNewline = fresh.trimEnd().lastIndexOf("\n");
  const lastLine = fresh.trimEnd().slice(lastNewline + 1);
  // Without a prompt at the end the command has not returned (a full-screen program, keystrokes
  // into one): no shell error could be shown there.
  if (!PROMPT_LINE.test(lastLine) || lastNewline + 1 < echoEnd) return undefined;
  const promptStart = lastNewline + 1;
  return {
    before: observation.slice(0, start) + fresh.slice(0, echoEnd),
    output: fresh.slice(echoEnd, Math.max(echoEnd, promptStart)),
    after: fresh.slice(promptStart),
    wrap: (output) => output,
  };
}

function framed(turn: SynthesisTurn, errorLine: string, exitCode: number): string | undefined {
  const frame = shellFrame(turn, turn.plainOutput === true);
  if (frame === undefined) return undefined;
  const output = `${errorLine}\n`;
  return frame.before + frame.wrap(output, exitCode) + frame.after;
}

// ---------------------------------------------------------------------------------------------
// The rules

const parsed = (turn: SynthesisTurn): SimpleCommand | undefined => {
  const command = commandOf(turn.action);
  return command === undefined ? undefined : simpleCommand(command);
};

/** A write that the full disk refuses: a redirect, or a copy/download/write of a file. */
const diskFull: SynthesisRule = {
  name: "shell-disk-full",
  kind: "disk_full",
  observe(turn) {
    const command = parsed(turn);
    if (command === undefined) return undefined;
    if (command.redirect !== undefined) {
      const who = BUILTIN_WRITERS.has(command.program) ? `bash: ${command.program}` : command.program;
      return framed(turn, `${who}: write error: No space left on device`, 1);
    }
    if ((command.program === "cp" || command.program === "mv") && command.args.filter((a) => !a.startsWith("-")).length === 2) {
      const target = command.args.filter((a) => !a.startsWith("-"))[1] as string;
      return framed(turn, `${command.program}: error writing '${target}': No space left on device`, 1);
    }
    // `git clone <repository> <dir>`: git's own message when it cannot create the work tree.
    if (command.program === "git" && command.args[0] === "clone") {
      const operands = command.args.slice(1).filter((a) => !a.startsWith("-"));
      if (operands.length !== 2) return undefined;
      return framed(turn, `fatal: could not create work tree dir '${operands[1]}': No space left on device`, 128);
    }
    if (command.program === "touch" || command.program === "mkdir") {
      const target = fileArgument(command);
      if (target === undefined) return undefined;
      const what = command.program === "touch" ? `cannot touch '${target}'` : `cannot create directory '${target}'`;
      return framed(turn, `${command.program}: ${what}: No space left on device`, 1);
    }
    return undefined;
  },
};

/** A file the command reads is not readable by the agent's user. */
const permissionDenied: SynthesisRule = {
  name: "shell-permission-denied",
  kind: "permission_denied",
  contradiction: unreadableContradiction,
  observe(turn) {
    const command = parsed(turn);
    if (command === undefined || command.redirect !== undefined || !FILE_READERS.has(command.program)) return undefined;
    const file = fileArgument(command);
    if (file === undefined) return undefined;
    return framed(turn, `${command.program}: ${file}: Permission denied`, command.program === "grep" ? 2 : 1);
  },
};

/** A file the command reads does not exist. */
const missingFile: SynthesisRule = {
  name: "shell-missing-file",
  kind: "not_found",
  contradiction: missingContradiction,
  observe(turn) {
    const command = parsed(turn);
    if (command === undefined || command.redirect !== undefined || !FILE_READERS.has(command.program)) return undefined;
    const file = fileArgument(command);
    if (file === undefined) return undefined;
    return framed(turn, `${command.program}: ${file}: No such file or directory`, command.program === "grep" ? 2 : 1);
  },
};

/**
 * Programs every shell environment has (builtins, coreutils, the editors and interpreters an
 * agent's harness itself relies on): "command not found" for them would teach an impossible world.
 */
const BASE_PROGRAMS = new Set(
  (
    "cd echo printf export exit true false pwd set unset source alias type test read kill wait history clear reset " +
    "ls cat head tail wc sort uniq cut tr tee cp mv rm mkdir rmdir touch ln chmod chown stat date sleep env id whoami " +
    "uname hostname df du stty tty basename dirname realpath readlink find xargs grep egrep fgrep sed awk diff cmp " +
    "less more vi vim nano bash sh git python python3 q submit"
  ).split(" "),
);

/** The program is not installed: bash's own message, exit status 127. */
const commandNotFound: SynthesisRule = {
  name: "shell-command-not-found",
  kind: "not_found",
  observe(turn) {
    const command = parsed(turn);
    if (command === undefined || BASE_PROGRAMS.has(command.program)) return undefined;
    return framed(turn, `bash: ${command.program}: command not found`, 127);
  },
};

export const SHELL_RULES: readonly SynthesisRule[] = [diskFull, permissionDenied, missingFile, commandNotFound];

// ---------------------------------------------------------------------------------------------
// swe: a test run that fails

/** unittest's verbose per-test line: `test_mean (test_stats.MeanTest.test_mean) ... ok`. */
const UNITTEST_OK = /^(test\w*) \(([\w.]+)\) \.\.\. ok$/m;
const UNITTEST_SUMMARY = /^(-{20,}\nRan (\d+) tests? in [\d.]+s\n\n)OK$/m;

/**
 * The passing line of a test that failed in an earlier run of the suite (the fix did not hold),
 * so the failure is one the history makes plausible; undefined when none did.
 */
function failingAgain(output: string, turn: SynthesisTurn): RegExpExecArray | null {
  const failedBefore = new Set<string>();
  for (const t of turn.earlier ?? [])
    for (const m of t.observation.matchAll(/^(test\w*) \(([\w.]+)\) \.\.\. (?:FAIL|ERROR)$/gm)) failedBefore.add(m[2] as string);
  for (const m of output.matchAll(new RegExp(UNITTEST_OK.source, "gm"))) if (failedBefore.has(m[2] as string)) return m as RegExpExecArray;
  return null;
}

/**
 * A passing `unittest -v` run made to fail one test (one that failed in an earlier run, else its
 * first): that test's line says FAIL, its FAIL
 * block (header and AssertionError; the assertion's own text is not known, so none is invented)
 * comes before the summary, and the summary says `FAILED (failures=1)`; exit status 1.
 */
const unittestFailure: SynthesisRule = {
  name: "swe-unittest-failure",
  kind: "test_failure",
  observe(turn) {
    if (!/\bunittest\b/.test(turn.action)) return undefined;
    const frame = shellFrame(turn, turn.plainOutput === true);
    if (frame === undefined) return undefined;
    const ok = failingAgain(frame.output, turn) ?? UNITTEST_OK.exec(frame.output);
    const summary = UNITTEST_SUMMARY.exec(frame.output);
    if (!ok || !summary || summary.index < ok.index) return undefined;
    const [line, name, id] = ok;
    const rule = "=".repeat(70);
    const dash = "-".repeat(70);
    const block = `${rule}\nFAIL: ${name} (${id})\n${dash}\nAssertionError\n\n`;
    let output = frame.output.slice(0, ok.index) + line.replace(/ ok$/, " FAIL") + frame.output.slice(ok.index + line.length);
    const at = UNITTEST_SUMMARY.exec(output);
    if (!at) return undefined;
    output = `${output.slice(0, at.index)}${block}${at[1]}FAILED (failures=1)${output.slice(at.index + at[0].length)}`;
    return frame.before + frame.wrap(output, 1) + frame.after;
  },
};

export const SWE_RULES: readonly SynthesisRule[] = [unittestFailure, ...SHELL_RULES];
