/** Shell observations (terminal, swe): what the action ran decides which rules apply to what it printed. */
import { compileErrors, pythonTracebacks, stackTraces, testFailures } from "./code-errors.ts";
import { htmlErrorTitles, httpStatusLines, httpStatusPhrases, jsonHttpErrors, rateLimitPhrases } from "./http.ts";
import { diskFull, exitStatuses, harnessTimeouts, killed, notFound, permissionDenied, timeouts } from "./os-errors.ts";
import { type Hit, lineStartAt } from "./spans.ts";

/** Programs and agent tools whose output is a file's (or a diff's, a search's) content: its text is data, not events. */
const VIEWERS = new Set([
  "cat",
  "tac",
  "head",
  "tail",
  "less",
  "more",
  "nl",
  "bat",
  "batcat",
  "sed",
  "awk",
  "gawk",
  "cut",
  "grep",
  "egrep",
  "fgrep",
  "zgrep",
  "rg",
  "ag",
  "ack",
  "diff",
  "xxd",
  "hexdump",
  "od",
  "strings",
  "jq",
  "yq",
  "view",
  "vim",
  "vi",
  "nvim",
  "nano",
  "emacs",
  "zcat",
  // SWE-agent and OpenHands (agentskills) file tools
  "open",
  "goto",
  "scroll_up",
  "scroll_down",
  "search_file",
  "search_dir",
  "find_file",
  "create",
  "edit",
  "insert",
  "submit",
  "str_replace_editor",
  "open_file",
  "goto_line",
  "edit_file_by_replace",
  "append_file",
  "insert_content_at_line",
]);
const GIT_VIEWERS = new Set(["diff", "show", "log", "blame", "grep", "cat-file"]);
const SHELL_TOOLS = new Set(["bash", "execute_bash", "shell", "run", "run_command", "terminal", "cmd"]);
const NETWORK_CLIENTS = new Set(["curl", "wget", "http", "https", "httpie", "xh", "gh", "aws", "gcloud"]);
const FILE_VIEW_OBSERVATION = /^\s*\[File: |Here's the result of running `cat -n`|\(this is the beginning of the file\)/;

export interface ShellCommand {
  /** The program of the command whose output the observation is (the last command of a chain, the first of its pipeline). */
  program: string;
  /** Whether the observation shows a file's content (a viewer, an editor tool, a diff) rather than a run's output. */
  fileView: boolean;
  /** Whether the program is an HTTP client (curl, wget, gh, …): JSON status members in its output are responses. */
  network: boolean;
}

/** The command an action ran: shell text, SWE-smith `<function=bash>` XML, OpenHands JSON, or an agent tool call. */
export function shellCommand(action: string, observation: string): ShellCommand {
  const viewObservation = FILE_VIEW_OBSERVATION.test(observation.slice(0, 400));
  let command = action;
  const fn = /^\s*<function=([\w.-]+)>/.exec(action);
  if (fn) {
    const name = fn[1] ?? "";
    if (!SHELL_TOOLS.has(name)) return { program: name, fileView: true, network: false };
    command = /<parameter=command>([\s\S]*?)(?:<\/parameter>|$)/.exec(action)?.[1] ?? "";
  } else if (/^\s*\{\s*"action"\s*:\s*"(?:read|edit|write)"/.test(action)) {
    return { program: "file_editor", fileView: true, network: false };
  }
  const call = /^\s*([A-Za-z_]\w*)\(/.exec(command);
  if (call && VIEWERS.has(call[1] ?? "")) return { program: call[1] ?? "", fileView: true, network: false };
  const segments = command.split(/&&|\|\||;|\n/);
  let last = "";
  for (let i = segments.length - 1; i >= 0; i--) {
    const segment = (segments[i] ?? "").trim();
    if (segment !== "") {
      last = segment;
      break;
    }
  }
  const head = (last.split("|")[0] ?? "")
    .trim()
    .replace(/^[({]\s*/, "")
    .replace(/^(?:\w+=\S*\s+)+/, "")
    .replace(/^(?:sudo|time|command|exec|nohup|env)\s+(?:-\S+\s+)*/, "")
    .replace(/^timeout\s+(?:-\S+\s+)*\S+\s+/, "");
  const words = head.split(/\s+/);
  const program = (words[0] ?? "").replace(/^.*\//, "");
  let fileView = viewObservation || VIEWERS.has(program);
  if (program === "git") {
    const sub = words.slice(1).find((w) => !w.startsWith("-") && !/^(?:\.|\/)/.test(w));
    if (sub && GIT_VIEWERS.has(sub)) fileView = true;
  }
  return { program, fileView, network: NETWORK_CLIENTS.has(program) };
}

/** In a file view, only the viewer's own complaints count: `cat: x: No such file or directory`, `sed: can't read x: …`. */
function viewerErrors(text: string, program: string): Hit[] {
  if (program === "" || !/^[\w.-]+$/.test(program)) return [];
  const prefix = `${program}:`;
  return [...notFound(text), ...permissionDenied(text)].filter((h) => text.startsWith(prefix, lineStartAt(text, h.start)));
}

/**
 * A test runner's report (`FAILED (failures=2)`, `2 failed, 3 passed`) prints each failing test's
 * traceback (an AssertionError, or an error the test hit): the run is a test failure, not a crashed
 * program, so those tracebacks are no label of their own. A bare AssertionError with no runner
 * summary (a script's assert) still counts as a traceback.
 */
function withoutTestReportTracebacks(text: string, tracebacks: Hit[], tests: readonly Hit[]): Hit[] {
  const runnerReport = tests.some((test) => !text.startsWith("AssertionError", test.start));
  return runnerReport ? [] : tracebacks;
}

/**
 * The rules for a shell's output (terminal and swe): exit statuses and harness timeouts always;
 * for a file view (cat, sed -n, an editor tool, git diff, grep) only the viewer's own errors;
 * otherwise the OS errors, stack traces, compiler and test failures, HTTP status lines and
 * rate-limit messages, and, after an HTTP client, JSON status members.
 */
export function shellHits(action: string, text: string): Hit[] {
  const command = shellCommand(action, text);
  const out: Hit[] = [...exitStatuses(text, action, !command.fileView), ...harnessTimeouts(text)];
  if (command.fileView) {
    out.push(...viewerErrors(text, command.program));
    return out;
  }
  const tests = testFailures(text);
  out.push(
    ...notFound(text),
    ...permissionDenied(text),
    ...diskFull(text),
    ...timeouts(text),
    ...killed(text),
    ...withoutTestReportTracebacks(text, pythonTracebacks(text), tests),
    ...stackTraces(text),
    ...compileErrors(text),
    ...tests,
    ...httpStatusLines(text),
    ...httpStatusPhrases(text),
    ...rateLimitPhrases(text),
  );
  if (command.network) out.push(...jsonHttpErrors(text), ...htmlErrorTitles(text));
  return out;
}
