import { createHash } from "node:crypto";
import type { Domain, Turn } from "../core/trajectory.ts";
import { openDecompressed } from "../io/open-input.ts";
import { readLines } from "../io/read-lines.ts";
import { excerpt, type Reader, type ReaderOptions, type ReadItem } from "./reader.ts";

const FORMAT = "aider-history";

/*
 * aider's chat history (`.aider.chat.history.md` in the repository root), as aider/io.py writes it
 * (`append_chat_history`): every run appends `# aider chat started at YYYY-MM-DD HH:MM:SS`; the
 * user's input as `#### <line>  ` lines (`user_input`); aider's own messages, warnings, errors and
 * questions with their answers as `> <line>  ` blockquotes (`tool_output` / `tool_warning` /
 * `tool_error` / `confirm_ask`, each line ending in two spaces); the model's replies as plain
 * Markdown between them (`ai_output`). A history file holds many runs: one run = one record.
 *
 * The environment is the repository and its shell:
 * - **Action**: (1) the edits of one model reply that aider went on to apply: its SEARCH/REPLACE
 *   blocks (`path` line, `<<<<<<< SEARCH` … `=======` … `>>>>>>> REPLACE`, the `diff`,
 *   `diff-fenced` and `editor-diff` formats) or unified-diff fences (`udiff`), each as written
 *   under its file name, in reply order; a reply that aider reports applying but whose edits are
 *   in neither form (the `whole` format) is the action as written, with no thinking of its own (`turn.meta.edit_format:
 *   "unparsed"`). (2) each shell command aider ran (`> Running <cmd>`): one turn per command.
 * - **Observation**: what aider reported back. For edits, its lines after the reply up to the
 *   shell-command section (`Applied edit to <file>`, `Create new file?`, the edit-format error and
 *   the blocks that failed to match, the commit, lint output, test notes). For a command, the
 *   lines after its `Running` line (older aider echoed the output there). Recent aider prints a
 *   command's output to the terminal only, so the history has none: the observation then reads
 *   `[output not recorded in the chat history]` (`turn.meta.output_recorded: false`, with
 *   `output_added_to_chat` / `output_lines` from aider's "Added N lines of output to the chat"),
 *   or `[no output]` when aider did not offer to add any (a command that printed nothing).
 *   `Tokens: … sent, … received` cost lines are bookkeeping, taken off and counted.
 * - **Thinking**: the reply's own prose (edit blocks taken out) on the turn it led to; replies
 *   that led to no action (answers, `/ask`) go to the next turn's `meta.assistant_messages`.
 * - **Task**: the run's first user message that is a request (not a `/add`-style command; the text
 *   of `/code`, `/architect`, `/context` counts; `/ask` questions do not). Later user messages: `turn.meta.user_messages` of the
 *   next turn. Commands the user ran himself (`/run`, `!`) are context, not the agent's actions.
 * - **Id**: `aider-<start time>-<first 12 hex of the run's sha256>` (history files all share one
 *   name, so the path cannot tell them apart). **Domain**: `swe` (a repository), or `--domain`.
 * - **Meta**: `agent: "aider"`, `model` / `edit_format` / `weak_model` (aider's `Main model:` /
 *   `Model:` line), `version` (`Aider vX`), `git_repo`, `started_at`, `commits`, `skipped` counts.
 *   aider records no outcome.
 *
 * A run in which nothing reached the repository or the shell (start-up lines, `/add`, a
 * KeyboardInterrupt, a chat without edits) is well-formed but has nothing to train on: it is
 * yielded with no turns and `meta.read_filter = {stage: "no-environment-interaction", reason}`
 * (the reason says what it held), so the runner counts it in `filtered/`. A line over
 * `input.max_line_bytes` quarantines its run.
 */

const HEADER = /^# aider chat started at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\s*$/;
/** aider ends every line it writes itself with two spaces (`linebreak=True`). */
const USER_LINE = /^####(?: (.*?))? {2}$/;
const AIDER_LINE = /^>(?: (.*?))? {2}$/;
const CONFIRM = /\(Y\)es\/\(N\)o.*\[[^\]]*\]: ?\S*$/;
const SEARCH = /^<{5,9} SEARCH\s*$/;
const REPLACE = /^>{5,9} REPLACE\s*$/;
const FENCE = /^\s*(`{3,}|~{3,})(.*)$/;
const EDIT_REPORT =
  /^(Applied edit to |Did not apply edit to |The LLM did not conform to the edit format|# \d+ SEARCH\/REPLACE blocks? failed to match|Create new file\?|Allow edits to file|Skipping edits to )/;
const SHELL_QUESTION = /^Run shell commands?\? /;
const RUNNING = /^Running (.+)$/;
const ADD_OUTPUT = /^Add command output to the chat\? /;
const ADDED_LINES = /^Added (\d+) lines? of output to the chat\.?$/;
const TOKENS = /^Tokens: .* sent, .* received/;
/** User commands whose text is a request to the model. */
const PROMPT_COMMAND = /^\/(code|architect|context)\s+(\S[\s\S]*)$/;

export const aiderHistoryReader: Reader = {
  name: FORMAT,
  domain: "swe",
  description:
    "aider chat history (.aider.chat.history.md): one run per '# aider chat started at'; edits and shell commands → aider's reports",

  sniff(head, path) {
    const lines = head.replace(/^\uFEFF/, "").split("\n");
    const first = lines.find((line) => line.trim() !== "")?.replace(/\r$/, "");
    if (first === undefined) return false;
    if (HEADER.test(first)) return true;
    // A history cut before its first header: only under aider's file name.
    return /\.aider\.chat\.history\.md(\.(gz|zst|zstd))?$/i.test(path) && (USER_LINE.test(first) || AIDER_LINE.test(first));
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    const { stream } = await openDecompressed(path);
    let run: RunLines = { lines: [], startLine: 1, startedAt: undefined, oversized: undefined };
    let runs = 0;
    let sawText = false;
    for await (const line of readLines(stream, options.maxLineBytes)) {
      if (line.oversizedBytes !== undefined || line.text.trim() !== "") sawText = true;
      const text = line.text.replace(/\r$/, "").replace(line.lineNo === 1 ? /^\uFEFF/ : /$^/, "");
      const header = line.oversizedBytes === undefined ? HEADER.exec(text) : null;
      if (header) {
        if (run.lines.some((l) => l.text.trim() !== "") || run.startedAt !== undefined) {
          runs += 1;
          yield runItem(path, run, options.domain);
        }
        run = { lines: [], startLine: line.lineNo, startedAt: header[1], oversized: undefined };
        continue;
      }
      if (line.oversizedBytes !== undefined)
        run.oversized ??= { line: line.lineNo, bytes: line.oversizedBytes, limit: options.maxLineBytes };
      run.lines.push({ text, lineNo: line.lineNo });
    }
    if (run.lines.some((l) => l.text.trim() !== "") || run.startedAt !== undefined) {
      runs += 1;
      yield runItem(path, run, options.domain);
    }
    // Text that held no run at all (e.g. old Mac line ends, so no line starts a header): the file is one quarantine entry.
    if (runs === 0 && sawText)
      yield {
        kind: "quarantine",
        entry: {
          source: { uri: path, line: 1, format: FORMAT },
          stage: "read",
          reason: "no aider run in the file: no '# aider chat started at' header and no '#### ' or '> ' line at a line start",
        },
      };
  },
};

interface SourceLine {
  text: string;
  lineNo: number;
}

interface RunLines {
  lines: SourceLine[];
  /** The header's line (1 for text before the first header). */
  startLine: number;
  startedAt: string | undefined;
  oversized: { line: number; bytes: number; limit: number } | undefined;
}

type Block =
  | { kind: "user"; text: string; line: number }
  | { kind: "aider"; lines: string[]; line: number }
  | { kind: "assistant"; text: string; line: number };

/** Splits a run into user messages, aider's blockquote groups and the model's replies. */
function blocks(lines: readonly SourceLine[]): Block[] {
  const out: Block[] = [];
  let fence: string | undefined;
  let inEdit = false;
  const last = () => out[out.length - 1];
  for (const { text, lineNo } of lines) {
    const inReply = last()?.kind === "assistant";
    const guarded = inReply && (fence !== undefined || inEdit);
    const user = guarded ? null : USER_LINE.exec(text);
    const aider = guarded || user ? null : AIDER_LINE.exec(text);
    if (user) {
      const previous = last();
      const content = user[1] ?? "";
      if (previous?.kind === "user" && previous.line + countLines(previous.text) === lineNo) previous.text += `\n${content}`;
      else out.push({ kind: "user", text: content, line: lineNo });
      continue;
    }
    if (aider) {
      const previous = last();
      if (previous?.kind === "aider") previous.lines.push(aider[1] ?? "");
      else out.push({ kind: "aider", lines: [aider[1] ?? ""], line: lineNo });
      continue;
    }
    if (text.trim() === "" && !inReply) continue;
    const previous = last();
    if (previous?.kind === "assistant") previous.text += `\n${text}`;
    else {
      out.push({ kind: "assistant", text, line: lineNo });
      fence = undefined;
      inEdit = false;
    }
    // Inside a code fence or an edit block a line is the reply's, whatever it looks like.
    if (SEARCH.test(text)) inEdit = true;
    else if (REPLACE.test(text)) inEdit = false;
    else if (!inEdit) {
      const mark = FENCE.exec(text)?.[1];
      if (mark !== undefined) {
        if (fence === undefined) fence = mark;
        else if (mark[0] === fence[0] && mark.length >= fence.length && FENCE.exec(text)?.[2]?.trim() === "") fence = undefined;
      }
    }
  }
  for (const block of out) if (block.kind === "assistant") block.text = block.text.replace(/\s+$/, "");
  return out;
}

function countLines(text: string): number {
  return text.split("\n").length;
}

interface Edit {
  file: string;
  text: string;
}

interface Reply {
  edits: Edit[];
  prose: string;
  text: string;
}

/** The SEARCH/REPLACE blocks and unified-diff fences of a reply, and its prose without them. */
function parseReply(text: string): Reply {
  const lines = text.split("\n");
  const edits: Edit[] = [];
  const prose: string[] = [];
  let lastFile: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (SEARCH.test(line)) {
      let end = i + 1;
      while (end < lines.length && !REPLACE.test(lines[end] as string)) end++;
      const body = lines.slice(i, Math.min(end + 1, lines.length));
      const named = fileBefore(prose);
      const file = named?.file ?? lastFile ?? "?";
      if (named) prose.splice(named.index);
      // diff-fenced: the fence opens above the name.
      if (FENCE.test(prose[prose.length - 1] ?? "") && FENCE.exec(prose[prose.length - 1] as string)?.[2]?.trim() !== "") prose.pop();
      lastFile = file;
      edits.push({ file, text: `${file}\n${body.join("\n")}` });
      i = end;
      // The fence around the block closes after it.
      if (FENCE.test(lines[i + 1] ?? "") && FENCE.exec(lines[i + 1] as string)?.[2]?.trim() === "") i++;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence && /^diff\b/.test(fence[2]?.trim() ?? "")) {
      let end = i + 1;
      while (end < lines.length && !(FENCE.exec(lines[end] as string)?.[1] === fence[1])) end++;
      const body = lines.slice(i + 1, end);
      const plus = body.find((l) => l.startsWith("+++ "));
      if (body.some((l) => l.startsWith("@@")) && plus) {
        const file = plus.slice(4).replace(/^b\//, "").trim();
        edits.push({ file, text: body.join("\n") });
        i = end;
        continue;
      }
    }
    prose.push(line);
  }
  const joined = dropEmptyFences(prose)
    .join("\n")
    .replace(/\n{3,}/g, "\n\n");
  return { edits, prose: joined.trim(), text };
}

/** The file name line of a SEARCH block: above it, or above the fence that opens it. */
function fileBefore(prose: string[]): { file: string; index: number } | undefined {
  let index = prose.length - 1;
  let fenceSeen = false;
  for (let steps = 0; index >= 0 && steps < 3; steps++, index--) {
    const line = (prose[index] as string).trim();
    if (line === "") continue;
    if (FENCE.test(line)) {
      if (fenceSeen) return undefined;
      fenceSeen = true;
      continue;
    }
    const file = line.replace(/^[#*`\s]+|[*`:\s]+$/g, "");
    if (file === "" || /\s{2,}/.test(file) || file.length > 300) return undefined;
    // Remove the name (and a fence opened between it and the block).
    return { file, index };
  }
  return undefined;
}

/** ```python / ``` pairs with nothing between them (left where edit blocks were taken out). */
function dropEmptyFences(lines: string[]): string[] {
  const out: string[] = [];
  for (const line of lines) {
    const previous = out[out.length - 1];
    if (previous !== undefined && FENCE.test(previous) && FENCE.test(line) && FENCE.exec(line)?.[2]?.trim() === "") {
      out.pop();
      continue;
    }
    out.push(line);
  }
  return out;
}

interface RunMeta {
  model?: string;
  edit_format?: string;
  weak_model?: string;
  version?: string;
  git_repo?: string;
}

const SETUP_LINES: readonly [RegExp, (m: RegExpExecArray, meta: RunMeta) => void][] = [
  [/^Aider v(\S+)/, (m, meta) => (meta.version ??= m[1])],
  [
    /^(?:Main model|Model): (\S+)(?: (?:with|using) (\S+) edit format)?/,
    (m, meta) => {
      meta.model ??= m[1];
      if (m[2]) meta.edit_format ??= m[2];
    },
  ],
  [/^Weak model: (\S+)/, (m, meta) => (meta.weak_model ??= m[1])],
  [/^Git repo: (.+?)(?: with [\d,]+ files)?$/, (m, meta) => (meta.git_repo ??= m[1])],
];

class RunBuilder {
  readonly turns: Turn[] = [];
  readonly skipped: Record<string, number> = {};
  readonly meta: RunMeta = {};
  task: string | undefined;
  commits = 0;
  private userMessages: string[] = [];
  private assistantMessages: string[] = [];
  private reply: Reply | undefined;
  private replyUsed = false;
  private userCommands = 0;
  private interrupted = false;

  user(text: string): void {
    this.settleReply();
    if (CONFIRM.test(text)) return; // a group answer aider logs as user input
    const prompt = text.startsWith("/") ? PROMPT_COMMAND.exec(text)?.[2] : text === "<blank>" ? undefined : text;
    if (text.startsWith("/") && prompt === undefined) this.userCommands += 1;
    if (this.task === undefined && prompt !== undefined && prompt.trim() !== "") this.task = prompt.trim();
    else this.userMessages.push(text);
  }

  assistant(text: string): void {
    this.settleReply();
    this.reply = parseReply(text);
    this.replyUsed = false;
  }

  aider(raw: readonly string[]): void {
    const lines: string[] = [];
    for (const line of raw) {
      if (TOKENS.test(line)) this.count("token_report");
      else lines.push(line);
      for (const [pattern, take] of SETUP_LINES) {
        const match = pattern.exec(line);
        if (match) take(match, this.meta);
      }
      if (/^Commit [0-9a-f]{7,40} /.test(line)) this.commits += 1;
      if (/KeyboardInterrupt/.test(line)) this.interrupted = true;
    }
    // Where the shell section starts: the command lines aider shows above its question.
    let shellStart = lines.findIndex((line) => SHELL_QUESTION.test(line));
    if (shellStart === -1) shellStart = lines.findIndex((line) => RUNNING.test(line));
    if (shellStart === -1) shellStart = lines.length;
    else {
      const commands = new Set<string>();
      for (const fence of this.reply?.text.matchAll(/^\s*(`{3,}|~{3,})[^\n]*\n([\s\S]*?)^\s*\1\s*$/gm) ?? [])
        for (const l of (fence[2] ?? "").split("\n")) if (l.trim() !== "") commands.add(l.trim());
      while (shellStart > 0 && commands.has((lines[shellStart - 1] as string).trim())) shellStart--;
    }
    const editPart = lines.slice(0, shellStart);
    const reply = this.reply;
    if (reply && !this.replyUsed && editPart.some((line) => EDIT_REPORT.test(line))) {
      const unparsed = reply.edits.length === 0;
      const action = unparsed ? reply.text : reply.edits.map((edit) => edit.text).join("\n\n");
      const files = [...new Set(reply.edits.map((edit) => edit.file))];
      this.push(
        { action, observation: trimBlank(editPart).join("\n") },
        unparsed ? undefined : reply.prose,
        unparsed ? { kind: "edit", edit_format: "unparsed" } : { kind: "edit", files, edits: reply.edits.length },
      );
    } else if (editPart.some((line) => line.trim() !== "")) this.count(reply && !this.replyUsed ? "unmatched_report" : "aider_notice");
    this.shell(lines.slice(shellStart));
  }

  private shell(lines: readonly string[]): void {
    const runs: number[] = [];
    lines.forEach((line, i) => {
      if (RUNNING.test(line)) runs.push(i);
      else if (SHELL_QUESTION.test(line) && /: n\S*$/i.test(line)) this.count("declined_command");
    });
    if (runs.length === 0) return;
    const ask = lines.findIndex((line) => ADD_OUTPUT.test(line));
    const added = lines.map((line) => ADDED_LINES.exec(line)).find((m) => m !== null);
    const addedToChat = ask !== -1 && /: y\S*$/i.test(lines[ask] as string);
    runs.forEach((start, k) => {
      const command = (RUNNING.exec(lines[start] as string) as RegExpExecArray)[1] as string;
      const next = runs[k + 1] ?? (ask === -1 ? lines.length : ask);
      const output = trimBlank(lines.slice(start + 1, Math.max(start + 1, next)));
      const meta: Record<string, unknown> = { kind: "shell" };
      let observation: string;
      if (output.length > 0) observation = output.join("\n");
      else if (ask === -1) observation = "[no output]";
      else {
        observation = "[output not recorded in the chat history]";
        meta.output_recorded = false;
        meta.output_added_to_chat = addedToChat;
        if (added && runs.length === 1) meta.output_lines = Number(added[1]);
      }
      this.push({ action: command, observation }, this.reply && !this.replyUsed ? this.reply.prose : undefined, meta);
    });
  }

  private push(turn: Turn, thinking: string | undefined, meta: Record<string, unknown>): void {
    if (thinking !== undefined && thinking !== "") turn.thinking = thinking;
    if (this.reply) this.replyUsed = true;
    if (this.userMessages.length > 0) meta.user_messages = this.userMessages;
    if (this.assistantMessages.length > 0) meta.assistant_messages = this.assistantMessages;
    this.userMessages = [];
    this.assistantMessages = [];
    turn.meta = meta;
    this.turns.push(turn);
  }

  /** A reply that led to no action is context for the next turn. */
  private settleReply(): void {
    if (this.reply && !this.replyUsed) {
      if (this.reply.edits.length > 0) this.count("edits_not_applied");
      else this.count("assistant_reply");
      this.assistantMessages.push(this.reply.text);
    }
    this.reply = undefined;
  }

  finish(): void {
    this.settleReply();
  }

  describe(): string {
    const parts: string[] = [];
    if (this.task !== undefined) parts.push(`the request ${JSON.stringify(excerpt(this.task))}`);
    if (this.userCommands > 0) parts.push(`${this.userCommands} user command(s) such as /add`);
    for (const [key, n] of Object.entries(this.skipped)) parts.push(`${n} ${key}`);
    if (this.interrupted) parts.push("a KeyboardInterrupt");
    return parts.length > 0 ? parts.join(", ") : "start-up lines only";
  }

  private count(what: string): void {
    this.skipped[what] = (this.skipped[what] ?? 0) + 1;
  }
}

function trimBlank(lines: readonly string[]): string[] {
  let start = 0;
  let end = lines.length;
  while (start < end && (lines[start] as string).trim() === "") start++;
  while (end > start && (lines[end - 1] as string).trim() === "") end--;
  return lines.slice(start, end);
}

function runItem(path: string, run: RunLines, domain: Domain | undefined): ReadItem {
  const hash = createHash("sha256");
  hash.update(`${run.startedAt ?? ""}\n`);
  for (const line of run.lines) hash.update(`${line.text}\n`);
  const stamp = run.startedAt?.replace(/[-: ]/g, "").replace(/^(\d{8})(\d{6})$/, "$1T$2");
  const id = `aider-${stamp ?? "unstarted"}-${hash.digest("hex").slice(0, 12)}`;
  const source = { uri: path, line: run.startLine, format: FORMAT };
  if (run.oversized) {
    const { line, bytes, limit } = run.oversized;
    const reason = `line ${line} is ${bytes} bytes, over the ${limit}-byte limit (input.max_line_bytes)`;
    return { kind: "quarantine", entry: { source: { ...source, line }, id, stage: "read", reason } };
  }
  const builder = new RunBuilder();
  for (const block of blocks(run.lines)) {
    if (block.kind === "user") builder.user(block.text);
    else if (block.kind === "assistant") builder.assistant(block.text);
    else builder.aider(block.lines);
  }
  builder.finish();
  const meta: Record<string, unknown> = { agent: "aider", ...builder.meta };
  if (builder.turns.length === 0) {
    // Well-formed, but nothing reached the repository or the shell: filtered with its reason, not quarantined.
    const when = run.startedAt !== undefined ? `the aider run started at ${run.startedAt}` : "the text before the file's first run header";
    meta.read_filter = {
      stage: "no-environment-interaction",
      reason: `no environment interaction in ${when} (no edit applied, no shell command run): ${builder.describe()}`,
    };
  }
  if (run.startedAt !== undefined) meta.started_at = run.startedAt;
  if (builder.commits > 0) meta.commits = builder.commits;
  if (Object.keys(builder.skipped).length > 0) meta.skipped = builder.skipped;
  return {
    kind: "trajectory",
    trajectory: {
      id,
      domain: domain ?? "swe",
      source,
      ...(builder.task !== undefined ? { task: builder.task } : {}),
      turns: builder.turns,
      meta,
    },
  };
}
