import type { Turn } from "../../core/trajectory.ts";
import { canonicalJson } from "../../normalize/json-canonical.ts";
import { type Header, optionalString, type Problem, type Result, type Step, type ToolCall } from "./step-fields.ts";

/**
 * Checked ATIF steps as turns: tool calls rendered as actions, Terminus' keystrokes split into the
 * commands they submit, and a terminal observation cut at each command's echo.
 */

/** Harness control: the environment does not run these. */
const CONTROL_TOOLS = new Set(["mark_task_complete", "task_complete", "finish", "done", "think", "task_tracker"]);
export const SHELL_TOOLS = new Set([
  "bash",
  "bash_command",
  "execute_bash",
  "execute_command",
  "run_command",
  "run_shell_command",
  "shell",
  "terminal",
  "exec",
  "exec_command",
  "local_shell",
  "run",
]);
export const BROWSER_TOOL =
  /^(browser_|playwright_|puppeteer_)|^(navigate|goto|go_to|click|double_click|hover|fill|type_text|select_option|scroll|screenshot|waitfor|wait_for|press_key|go_back|go_forward|open_url)$/i;
export const SEARCH_TOOL = /(^|_)(web_?search|search|google|bing|brave|serper|tavily|exa)(_|$)/i;

/** How a tool call is shown as an action. */
type Rendered = { kind: "keystrokes"; commands: string[] } | { kind: "command"; text: string } | { kind: "call"; text: string };

const TMUX_KEY =
  /^(C-[a-zA-Z]|M-[a-zA-Z]|Enter|C-m|Escape|Tab|BSpace|Space|Up|Down|Left|Right|Home|End|PageUp|PageDown|PPage|NPage|Delete|Insert|F\d{1,2})$/;

function renderCall(call: ToolCall): Rendered {
  const { args } = call;
  if (typeof args.keystrokes === "string") {
    const keys = args.keystrokes;
    if (TMUX_KEY.test(keys)) {
      const control = /^C-([a-zA-Z])$/.exec(keys);
      return { kind: "keystrokes", commands: [control ? `^${(control[1] as string).toUpperCase()}` : `<${keys}>`] };
    }
    return { kind: "keystrokes", commands: splitSubmitted(keys) };
  }
  const name = call.name.toLowerCase();
  if (SHELL_TOOLS.has(name)) {
    const command = args.command ?? args.cmd;
    if (typeof command === "string") return { kind: "command", text: command };
    // Codex-style argv: ["bash", "-lc", "script"].
    if (Array.isArray(command) && command.every((part) => typeof part === "string")) {
      const argv = command as string[];
      const script =
        argv.length === 3 && /(^|\/)(ba|z)?sh$/.test(argv[0] as string) && /^-l?c$/.test(argv[1] as string) ? argv[2] : undefined;
      return { kind: "command", text: script ?? argv.join(" ") };
    }
  }
  const text = JSON.stringify({ name: call.name, arguments: args });
  return { kind: "call", text: canonicalJson(text) ?? text };
}

/**
 * The commands a keystroke string submits, each without its Enter: it is cut at a newline only
 * where the shell would run what came before — not inside quotes, a `\` continuation, a heredoc's
 * body, or an open `(`, `{`, `if`/`for`/`while`/`case` block. Text after the last Enter (typed, not
 * submitted) is its own last command. An empty string (a wait) gives no command.
 */
export function splitSubmitted(keys: string): string[] {
  const commands: string[] = [];
  let start = 0;
  let quote: "'" | '"' | "`" | undefined;
  let depth = 0;
  let heredocs: { word: string; strip: boolean }[] = [];
  let word = "";
  const keywordsOpen = new Set(["if", "for", "while", "until", "case", "select"]);
  const keywordsClose = new Set(["fi", "done", "esac"]);
  const endWord = () => {
    if (keywordsOpen.has(word)) depth += 1;
    else if (keywordsClose.has(word) && depth > 0) depth -= 1;
    word = "";
  };
  let lineStart = 0;
  for (let i = 0; i < keys.length; i++) {
    const ch = keys[i] as string;
    if (quote) {
      if (ch === "\\" && quote !== "'") i++;
      else if (ch === quote) quote = undefined;
      continue;
    }
    if (ch === "\\") {
      endWord();
      i++; // the escaped character, a newline included (a continuation)
      continue;
    }
    if (ch === "'" || ch === '"' || ch === "`") {
      endWord();
      quote = ch;
      continue;
    }
    if (ch === "#" && (i === lineStart || /\s/.test(keys[i - 1] as string)) && word === "") {
      const end = keys.indexOf("\n", i);
      i = (end === -1 ? keys.length : end) - 1;
      continue;
    }
    if (ch === "<" && keys[i + 1] === "<" && keys[i + 2] !== "<") {
      endWord();
      const match = /^<<(-?)\s*(['"]?)([\w.-]+)\2/.exec(keys.slice(i));
      if (match) {
        heredocs.push({ word: match[3] as string, strip: match[1] === "-" });
        i += match[0].length - 1;
        continue;
      }
    }
    if (/[\w-]/.test(ch)) {
      word += ch;
      continue;
    }
    endWord();
    if (ch === "(" || ch === "{") depth += 1;
    else if ((ch === ")" || ch === "}") && depth > 0) depth -= 1;
    if (ch !== "\n") continue;
    // A heredoc's body runs to its word alone on a line.
    let at = i + 1;
    for (const doc of heredocs) {
      for (;;) {
        const end = keys.indexOf("\n", at);
        const line = keys.slice(at, end === -1 ? keys.length : end);
        at = end === -1 ? keys.length : end + 1;
        if ((doc.strip ? line.replace(/^\t+/, "") : line) === doc.word || end === -1) break;
      }
    }
    heredocs = [];
    i = at - 1;
    lineStart = at;
    if (depth === 0) {
      const command = keys.slice(start, i).replace(/\n+$/, "");
      if (command.trim() !== "") commands.push(command);
      start = i + 1;
    }
  }
  const rest = keys.slice(start).replace(/\n+$/, "");
  if (rest.trim() !== "") commands.push(rest);
  return commands;
}

export interface Built {
  turns: Turn[];
  system: string | undefined;
  task: string | undefined;
  initialObservation: string | undefined;
  toolNames: string[];
  skipped: Record<string, number>;
  model: string | undefined;
}

const TERMINUS_TASK = /^([\s\S]*?)\n*Task Description:\n([\s\S]*?)\n+Current terminal state:\n(?:Current Terminal Screen:\n)?([\s\S]*)$/;

export function buildTurns(steps: readonly Step[], header: Header): Built | Problem {
  const turns: Turn[] = [];
  const skipped: Record<string, number> = {};
  const skip = (what: string, n = 1) => {
    skipped[what] = (skipped[what] ?? 0) + n;
  };
  const systems: string[] = [];
  const toolNames = new Set<string>();
  let task: string | undefined;
  let initialObservation: string | undefined;
  let preamble: string | undefined;
  let started = false;
  let model: string | undefined;
  for (const step of steps) {
    if (step.copied) {
      skip("copied_context_step");
      continue;
    }
    if (step.source === "system") {
      if (!started && task === undefined) systems.push(step.message);
      else skip("system_step");
      continue;
    }
    if (step.source === "user") {
      if (task === undefined && !started) {
        const terminus = TERMINUS_TASK.exec(step.message);
        if (terminus) {
          preamble = (terminus[1] as string).trim() || undefined;
          task = (terminus[2] as string).trim();
          const screen = (terminus[3] as string).replace(/\s+$/, "");
          if (screen.trim() !== "") initialObservation = screen;
        } else task = step.message;
      } else skip("user_step");
      continue;
    }
    started = true;
    model ??= step.modelName;
    for (const call of step.calls) toolNames.add(call.name);
    const made = stepTurns(step, skip, turns);
    turns.push(...made);
  }
  // A command that printed nothing (and whose next prompt was not captured): the openhands reader's `[no output]`.
  for (const turn of turns)
    if (turn.observation.trim() === "" && (turn.meta as { atif?: { keystrokes?: boolean } })?.atif?.keystrokes)
      turn.observation = "[no output]";
  if (turns.length === 0) {
    const what = Object.keys(skipped).length > 0 ? ` (${JSON.stringify(skipped)})` : "";
    return { field: "steps", reason: `steps: no agent tool call with an observation${what}: nothing the environment did` };
  }
  const system = [...systems, ...(preamble ? [preamble] : [])].join("\n\n");
  return {
    turns,
    system: system.trim() !== "" ? system : undefined,
    task,
    initialObservation,
    toolNames: [...toolNames],
    skipped,
    model: optionalString(header.agent.model_name) ?? model,
  };
}

/** The turns of one agent step (`previous`, the turns so far, only gets a wait's output appended). */
function stepTurns(step: Step, skip: (what: string, n?: number) => void, previous: Turn[]): Turn[] {
  if (step.calls.length === 0) {
    skip("agent_step_without_tool_calls");
    return [];
  }
  const thinking = [step.reasoning, step.message].filter((text): text is string => text !== undefined && text.trim() !== "").join("\n\n");
  const stepMeta: Record<string, unknown> = { step_id: step.stepId };
  if (step.timestamp !== undefined) stepMeta.timestamp = step.timestamp;
  if (step.modelName !== undefined) stepMeta.model_name = step.modelName;
  const metrics = step.metrics ? smallMetrics(step.metrics) : undefined;
  const linked = new Map<string, Result[]>();
  const unlinked: Result[] = [];
  for (const result of step.results) {
    if (result.callId === undefined) unlinked.push(result);
    else linked.set(result.callId, [...(linked.get(result.callId) ?? []), result]);
  }
  const control = step.calls.filter((call) => CONTROL_TOOLS.has(call.name));
  if (control.length > 0) skip("control_call", control.length);
  const made: Turn[] = [];
  const push = (turn: Turn) => {
    if (made.length === 0) {
      if (thinking !== "") turn.thinking = thinking;
      if (metrics) (turn.meta as { atif: Record<string, unknown> }).atif.metrics = metrics;
    }
    made.push(turn);
  };
  /** Calls answered by `results`: keystrokes cut at their echoes, anything else one turn. */
  const answer = (calls: readonly ToolCall[], results: readonly Result[]) => {
    const text = results.map((result) => result.text).join("\n");
    const meta = callMeta(stepMeta, calls, results);
    const rendered = calls.map(renderCall);
    if (!rendered.every((r) => r.kind === "keystrokes")) {
      const action = rendered.map((r) => (r.kind === "keystrokes" ? r.commands.join("\n") : r.text)).join("\n");
      push({ action, observation: text, meta });
      return;
    }
    const commands = rendered.flatMap((r) => (r.kind === "keystrokes" ? r.commands : []));
    const waits = rendered.filter((r) => r.kind === "keystrokes" && r.commands.length === 0).length;
    if (waits > 0) skip("wait", waits);
    const framed = unframe(text);
    if (framed.framing.length > 0) meta.atif.framing = framed.framing;
    if (commands.length === 0) {
      appendWait(made.length > 0 ? made : previous, framed.output);
      return;
    }
    const split = splitAtEchoes(framed.output, commands, framed.screen);
    if (split.unmatched > 0) skip("echo_not_found", split.unmatched);
    meta.atif.keystrokes = true;
    for (const [i, part] of split.turns.entries()) {
      const own = i === 0 ? meta : { atif: { step_id: step.stepId, tool_call_ids: meta.atif.tool_call_ids, command: i, keystrokes: true } };
      push({ action: part.action, observation: part.observation, meta: own });
    }
  };
  const waiting: ToolCall[] = [];
  for (const call of step.calls) {
    if (CONTROL_TOOLS.has(call.name)) continue;
    const own = linked.get(call.id);
    if (own) answer([call], own);
    else waiting.push(call);
  }
  if (waiting.length > 0 && unlinked.length > 0) answer(waiting, unlinked);
  else if (waiting.length > 0) skip("call_without_observation", waiting.length);
  else if (unlinked.length > 0 && control.length === 0) skip("result_without_call", unlinked.length);
  return made;
}

/** A wait's output goes to the turn before it (this step's, else the step's before). */
function appendWait(turns: Turn[], output: string): void {
  const last = turns.at(-1);
  const text = output.replace(/^\r?\n/, "").replace(/(\r?\n[ \t]*)+$/, "");
  if (!last || text.trim() === "") return;
  last.observation = last.observation === "" ? text : `${last.observation}\n${text}`;
}

function callMeta(
  stepMeta: Record<string, unknown>,
  calls: readonly ToolCall[],
  results: readonly Result[],
): { atif: Record<string, unknown> } {
  const meta: Record<string, unknown> = {
    ...stepMeta,
    tool_call_ids: calls.map((call) => call.id),
    function_names: [...new Set(calls.map((call) => call.name))],
  };
  const subagents = results.flatMap((result) => result.subagents ?? []);
  if (subagents.length > 0) meta.subagent_trajectory_ref = subagents;
  return { atif: meta };
}

function smallMetrics(metrics: Record<string, unknown>): Record<string, unknown> | undefined {
  const keys = ["prompt_tokens", "completion_tokens", "cached_tokens", "cost_usd"];
  const kept = Object.fromEntries(keys.filter((key) => typeof metrics[key] === "number").map((key) => [key, metrics[key]]));
  return Object.keys(kept).length > 0 ? kept : undefined;
}

/**
 * Terminus' framing of a terminal observation, taken off the output: warnings about the agent's
 * reply, `Current terminal state:`, `New Terminal Output:` / `Current Terminal Screen:` (a whole
 * screen, `screen`), and the confirmation question after a task_complete.
 */
export function unframe(text: string): { output: string; framing: string[]; screen: boolean } {
  const framing: string[] = [];
  let rest = text;
  const warnings =
    /^Previous response had (?:warnings|parsing errors):\n[\s\S]*?\n\n(?=(?:Current terminal state:|New Terminal Output:|Current Terminal Screen:))/.exec(
      rest,
    );
  if (warnings) {
    framing.push(warnings[0].trim());
    rest = rest.slice(warnings[0].length);
  }
  if (rest.startsWith("Current terminal state:\n")) {
    framing.push("Current terminal state:");
    rest = rest.slice("Current terminal state:\n".length);
  }
  let screen = false;
  const header = /^(New Terminal Output:|Current Terminal Screen:)\n/.exec(rest);
  if (header) {
    framing.push(header[1] as string);
    screen = header[1] === "Current Terminal Screen:";
    rest = rest.slice(header[0].length);
  }
  const confirm = /\n*Are you sure you want to mark the task as complete\?[\s\S]*$/.exec(rest);
  if (confirm && header) {
    framing.push(confirm[0].trim());
    rest = rest.slice(0, confirm.index);
  }
  return { output: header ? rest.replace(/^\n/, "") : rest, framing, screen };
}

/** The end of `command`'s echo when it starts at `at` in `output`: wraps and `> ` continuation prompts allowed. */
function echoEnd(output: string, at: number, command: string): number | undefined {
  let k = at;
  for (let i = 0; i < command.length; ) {
    const want = command[i] as string;
    const got = output[k];
    if (got === undefined) return undefined;
    if (got === want) {
      i++;
      k++;
      if (want === "\n" && output.startsWith("> ", k)) k += 2;
    } else if (got === "\n" || got === "\r")
      k++; // the terminal wrapped the line
    else return undefined;
  }
  if (output.startsWith("; tmux wait -S done", k)) k += "; tmux wait -S done".length;
  return k === output.length || output[k] === "\n" || output[k] === "\r" ? k : undefined;
}

const PROMPT_END = /(?:[$#%>❯»] ?|^)$/;

/** Where `command`'s echo starts, searching backwards from `before`: after a prompt, or at a line start. */
function findEcho(output: string, command: string, before: number): { start: number; end: number } | undefined {
  const head = command.slice(0, Math.min(command.length, 8)).split("\n")[0] as string;
  if (head === "") return undefined;
  for (let at = output.lastIndexOf(head, before - 1); at !== -1; at = at === 0 ? -1 : output.lastIndexOf(head, at - 1)) {
    const lineStart = output.lastIndexOf("\n", at - 1) + 1;
    if (!PROMPT_END.test(output.slice(lineStart, at))) continue;
    const end = echoEnd(output, at, command);
    if (end !== undefined && end <= before) return { start: at, end };
  }
  return undefined;
}

/**
 * One turn per command, cut at the commands' echoes (see the reader's comment in ../atif.ts).
 * `screen` output (a whole screen) drops what precedes the first echo: the agent saw it before.
 */
export function splitAtEchoes(
  output: string,
  commands: readonly string[],
  screen: boolean,
): { turns: { action: string; observation: string }[]; unmatched: number } {
  const echoes: ({ start: number; end: number } | undefined)[] = new Array(commands.length).fill(undefined);
  let limit = output.length;
  for (let i = commands.length - 1; i >= 0; i--) {
    const found = findEcho(output, commands[i] as string, limit);
    if (found) {
      echoes[i] = found;
      limit = found.start;
    }
  }
  // The line break ending the echo goes, and blank rows at the end (a screen's padding), not a prompt's space.
  const tidy = (text: string) => text.replace(/^\r?\n/, "").replace(/(\r?\n[ \t]*)+$/, "");
  const firstFound = echoes.findIndex((echo) => echo !== undefined);
  if (firstFound === -1) return { turns: [{ action: commands.join("\n"), observation: tidy(output) }], unmatched: commands.length };
  // Before the first echo's line: output that came after the agent last looked (a whole screen: seen before).
  const before = (echoes[firstFound] as { start: number }).start;
  const lead = screen ? "" : output.slice(0, output.lastIndexOf("\n", before - 1) + 1).replace(/\s+$/, "");
  const turns: { action: string; observation: string }[] = [];
  let unmatched = 0;
  let pending: string[] = [];
  for (const [i, command] of commands.entries()) {
    const echo = echoes[i];
    if (!echo) {
      unmatched += 1;
      const last = turns.at(-1);
      if (last) last.action += `\n${command}`;
      else pending.push(command);
      continue;
    }
    const next = echoes.slice(i + 1).find((e) => e !== undefined);
    const observation = tidy(output.slice(echo.end, next ? next.start : output.length));
    const withLead = turns.length === 0 && lead !== "" ? `${lead}\n${observation}` : observation;
    turns.push({ action: [...pending, command].join("\n"), observation: withLead });
    pending = [];
  }
  return { turns, unmatched };
}
