import { existsSync, statSync } from "node:fs";
import { basename, dirname, join, resolve, sep } from "node:path";
import type { QuarantineEntry } from "../core/errors.ts";
import type { SourceRef, Trajectory, Turn } from "../core/trajectory.ts";
import { readWholeText } from "../io/read-whole-text.ts";
import { asciicastReader, type TerminalEvent } from "./asciicast.ts";
import { type Companions, excerpt, parseJsonLine, type Reader, type ReaderOptions, type ReadItem } from "./reader.ts";
import { describeType, isRecord } from "./record-helpers.ts";

const FORMAT = "terminal-bench";

/**
 * terminal-bench run directories, as `tb run` writes them (terminal_bench/harness/harness.py and
 * TrialPaths in terminal_bench/handlers/trial_handler.py):
 *
 *   <run id>/results.json, run_metadata.json, tb.lock, run.log
 *   <run id>/<task id>/<trial name>/results.json          TrialResults
 *                                  /sessions/agent.cast   `asciinema rec --stdin` of the agent's tmux session
 *                                  /sessions/agent.log    the pane's raw output (tmux pipe-pane)
 *                                  /commands.txt          repr() of every keys list sent to tmux, one a line
 *                                  /panes/pre-agent.txt, post-agent.txt, post-test.txt
 *                                  /agent-logs/…          the agent's own logs
 *
 * One trial is one trajectory (domain `terminal`). The reader claims a trial's `results.json`
 * (sniffed by its TrialResults fields) and reads the rest of the folder from there; the other files
 * of a claimed trial that an input glob matches are skipped by `planJob` as its companions, so a
 * glob over the whole run directory reads each trial once. A run's own `results.json` stands for
 * its trials (`planJob` reads theirs instead).
 *
 * Turns come from `agent.cast` through the asciicast reader (keystrokes up to Enter; the harness's
 * own `clear` after it started the recording goes into the initial screen, and the
 * `; tmux wait -S done` it appends to blocking commands is taken off the actions). A cast without
 * keystrokes but with the agent's episode markers ("Episode N: K commands", or Terminus-1's JSON
 * reply) gets its actions from commands.txt, K commands per episode. A trial without a cast
 * (`disable_asciinema` tasks) is one turn: the agent's commands from commands.txt → the pane after
 * the agent (panes/post-agent.txt), the pane before it as the initial observation.
 *
 * `meta.terminal_bench`: task_id, trial_name, is_resolved, failure_mode, parser_results and the
 * tests' passed/failed counts, tokens, timestamps, which files the turns came from, and the run's
 * agent and model when run_metadata.json is beside the task folders.
 */
export const terminalBenchReader: Reader = {
  name: FORMAT,
  description: "terminal-bench `tb run` trials: a trial's results.json with its agent.cast, commands.txt and panes → one trajectory",

  sniff(head) {
    const text = head.replace(/^\uFEFF/, "");
    if (!/^\s*\{/.test(text)) return false;
    const parsed = parseJsonLine(text);
    if (parsed.ok) return isTrialResults(parsed.value) || isRunResults(parsed.value);
    // Longer than the head (a long instruction, a run of many trials): the keys tell.
    const trial = text.search(/"trial_name"\s*:\s*"/);
    const results = text.search(/"results"\s*:\s*\[/);
    if (trial === -1) return false;
    if (results !== -1 && results < trial) return /"is_resolved"\s*:/.test(text) && /"task_id"\s*:\s*"/.test(text);
    return /"task_id"\s*:\s*"/.test(text) && /"instruction"\s*:\s*"/.test(text);
  },

  async companions(path: string): Promise<Companions> {
    const trialDir = dirname(resolve(path));
    const runDir = dirname(dirname(trialDir));
    // The run's own files, only where this is a run directory (its metadata or lock is there).
    const runFiles = RUN_FILES.some((name) => name !== "results.json" && existsSync(join(runDir, name)))
      ? RUN_FILES.map((name) => join(runDir, name))
      : [];
    const read = [path, castOf(trialDir), companionPath(trialDir, "commands.txt"), ...PANES.map((pane) => companionPath(trialDir, pane))];
    const bytes = read.reduce((sum, file) => sum + (file && existsSync(file) ? statSync(file).size : 0), 0);
    return { dirs: [trialDir], files: runFiles, bytes, label: `terminal-bench trial ${basename(trialDir)}` };
  },

  async expand(path: string): Promise<string[] | undefined> {
    const whole = await readWholeText(path, 1 << 30);
    if ("error" in whole) return undefined;
    const parsed = parseJsonLine(whole.text.replace(/^\uFEFF/, ""));
    if (!parsed.ok || !isRunResults(parsed.value)) return undefined;
    // The trial folders are the truth (terminal-bench rebuilds this file from them): those present.
    const runDir = dirname(resolve(path));
    const trials = parsed.value.results
      .map((trial) => join(runDir, String(trial.task_id), String(trial.trial_name), "results.json"))
      .filter((file) => existsSync(file));
    return trials.length > 0 ? [...new Set(trials)].sort() : undefined;
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    const source: SourceRef = { uri: path, format: FORMAT };
    const whole = await readWholeText(path, options.maxLineBytes);
    if ("error" in whole) return yield quarantine(source, undefined, whole.error);
    const parsed = parseJsonLine(whole.text.replace(/^\uFEFF/, ""));
    if (!parsed.ok) return yield quarantine(source, undefined, parsed.reason, undefined, whole.text);
    const results = parsed.value;
    if (isRunResults(results)) {
      const reason = `a terminal-bench run's results.json listing ${results.results.length} trial(s), none of whose folders (<task_id>/<trial_name>/results.json beside it) is here`;
      return yield quarantine(source, undefined, reason);
    }
    if (!isRecord(results)) return yield quarantine(source, undefined, `expected a TrialResults object, got ${describeType(results)}`);
    for (const field of ["trial_name", "task_id", "instruction"] as const) {
      if (typeof results[field] !== "string")
        return yield quarantine(source, undefined, `${field}: expected a string, got ${describeType(results[field])}`, field, whole.text);
    }
    const trial = results as TrialResults;
    const trialDir = dirname(resolve(path));
    const commands = await readCommands(trialDir, options.maxLineBytes);
    const cast = castOf(trialDir, trial.recording_path);
    const domain = options.domain ?? "terminal";
    const built = cast ? await fromCast(cast, trial, commands, options) : await fromPanes(trialDir, trial, commands, options.maxLineBytes);
    if ("reason" in built) return yield quarantine(source, trial.trial_name, built.reason, built.field);
    const meta = await trialMeta(trial, trialDir, built.turnsFrom);
    const trajectory: Trajectory = {
      id: trial.trial_name,
      domain,
      source,
      task: trial.instruction,
      ...(built.initialObservation !== undefined ? { initialObservation: built.initialObservation } : {}),
      turns: built.turns,
      meta: { ...built.meta, terminal_bench: meta },
    };
    yield { kind: "trajectory", trajectory };
  },
};

const RUN_FILES = ["results.json", "run_metadata.json", "tb.lock", "run.log"];
const PANES = ["panes/pre-agent.txt", "panes/post-agent.txt"];
/** What the harness appends to a blocking command (TmuxSession._TMUX_COMPLETION_COMMAND). */
const COMPLETION = /; tmux wait -S done$/;
const ECHOED_COMPLETION = "; tmux wait -S done";

interface TrialResults {
  trial_name: string;
  task_id: string;
  instruction: string;
  is_resolved?: boolean | null;
  failure_mode?: string;
  parser_results?: Record<string, string> | null;
  recording_path?: string | null;
  [key: string]: unknown;
}

function isTrialResults(value: unknown): value is TrialResults {
  return (
    isRecord(value) &&
    typeof value.trial_name === "string" &&
    typeof value.task_id === "string" &&
    typeof value.instruction === "string" &&
    ("is_resolved" in value || "failure_mode" in value || "parser_results" in value)
  );
}

function isRunResults(value: unknown): value is { results: TrialResults[] } & Record<string, unknown> {
  return (
    isRecord(value) &&
    Array.isArray(value.results) &&
    ("accuracy" in value || "n_resolved" in value || "resolved_ids" in value) &&
    value.results.every((trial) => isRecord(trial) && typeof trial.trial_name === "string" && typeof trial.task_id === "string")
  );
}

function quarantine(source: SourceRef, id: string | undefined, reason: string, field?: string, text?: string): ReadItem {
  const entry: QuarantineEntry = {
    source,
    ...(id !== undefined ? { id } : {}),
    stage: "read",
    ...(field !== undefined ? { field } : {}),
    reason,
    ...(text !== undefined ? { excerpt: excerpt(text) } : {}),
  };
  return { kind: "quarantine", entry };
}

/** A trial file, plain or compressed (`.gz`, `.zst`), if present. */
function companionPath(trialDir: string, name: string): string | undefined {
  return [name, `${name}.gz`, `${name}.zst`].map((candidate) => join(trialDir, candidate)).find((file) => existsSync(file));
}

/** The agent's recording: sessions/agent.cast, agent.cast beside results.json, or where recording_path says. */
function castOf(trialDir: string, recordingPath?: string | null): string | undefined {
  const local = companionPath(trialDir, "sessions/agent.cast") ?? companionPath(trialDir, "agent.cast");
  if (local || typeof recordingPath !== "string") return local;
  // recording_path is relative to `tb run --output-path`, the folder above the run's; it is data,
  // so it may only name a recording inside that folder.
  const output = resolve(trialDir, "../../..");
  const fromOutput = resolve(output, recordingPath);
  const inside = fromOutput.startsWith(output + sep) && /\.cast(\.gz|\.zst)?$/.test(fromOutput);
  return inside && existsSync(fromOutput) ? fromOutput : undefined;
}

// ---------------------------------------------------------------------------------------------
// commands.txt

/** One TmuxSession.send_keys call: a str or a list of tmux keys (literal text or key names). */
type Keys = { list: boolean; keys: string[] };

/** commands.txt, parsed; unparseable lines are kept as one literal key. */
async function readCommands(trialDir: string, maxBytes: number): Promise<Keys[] | undefined> {
  const path = companionPath(trialDir, "commands.txt");
  if (!path) return undefined;
  const whole = await readWholeText(path, maxBytes);
  if ("error" in whole) return undefined;
  return whole.text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => parsePyKeys(line) ?? { list: false, keys: [line] });
}

/** Python's repr() of a str or a list of str (the literal forms CPython writes). */
export function parsePyKeys(line: string): Keys | undefined {
  const text = line.trim();
  let at = 0;
  const str = (): string | undefined => {
    const quote = text[at];
    if (quote !== "'" && quote !== '"') return undefined;
    let out = "";
    for (at += 1; at < text.length; at++) {
      const ch = text[at] as string;
      if (ch === quote) {
        at += 1;
        return out;
      }
      if (ch !== "\\") {
        out += ch;
        continue;
      }
      const next = text[++at];
      const hex = (digits: number) => {
        const code = Number.parseInt(text.slice(at + 1, at + 1 + digits), 16);
        at += digits;
        return Number.isNaN(code) ? "" : String.fromCodePoint(code);
      };
      if (next === "n") out += "\n";
      else if (next === "r") out += "\r";
      else if (next === "t") out += "\t";
      else if (next === "a") out += "\u0007";
      else if (next === "b") out += "\b";
      else if (next === "f") out += "\f";
      else if (next === "v") out += "\v";
      else if (next === "0") out += "\u0000";
      else if (next === "x") out += hex(2);
      else if (next === "u") out += hex(4);
      else if (next === "U") out += hex(8);
      else out += next ?? "";
    }
    return undefined;
  };
  if (text.startsWith("[")) {
    const keys: string[] = [];
    at = 1;
    for (;;) {
      while (text[at] === " ") at++;
      if (text[at] === "]") return at === text.length - 1 ? { list: true, keys } : undefined;
      const key = str();
      if (key === undefined) return undefined;
      keys.push(key);
      while (text[at] === " ") at++;
      if (text[at] === ",") at++;
      else if (text[at] !== "]") return undefined;
    }
  }
  const key = str();
  return key !== undefined && at === text.length ? { list: false, keys: [key] } : undefined;
}

const ENTER_KEYS = new Set(["Enter", "C-m", "KPEnter", "C-j", "^M", "^J"]);

/** The text a keys list types, with tmux key names spelled as a person reads them. */
function typed({ list, keys }: Keys): string {
  if (!list) return keys.join("");
  return keys
    .map((key) => {
      if (ENTER_KEYS.has(key)) return "\n";
      if (key === "Tab") return "\t";
      if (key === "Space") return " ";
      if (key === "Escape") return "^[";
      const control = /^C-([a-zA-Z])$/.exec(key);
      if (control) return `^${(control[1] as string).toUpperCase()}`;
      return /^(Up|Down|Left|Right|BSpace|Home|End|PageUp|PageDown|PPage|NPage|Delete|Insert|F\d+)$/.test(key) ? `<${key}>` : key;
    })
    .join("");
}

const isRecordingStart = (entry: Keys) => entry.list && /^asciinema rec\b/.test(entry.keys[0] ?? "");
const isTestRun = (entry: Keys) => entry.list && entry.keys[0] === "bash " && /run-tests\.sh$/.test(entry.keys[1] ?? "");

/**
 * The agent's part of commands.txt: after the harness started the agent session's recording (and
 * cleared the screen), before it started the test session or ran the tests. The harness's own
 * lines are lists (`['asciinema rec --stdin …', 'Enter']`, `['clear', 'Enter']`,
 * `['bash ', '/tests/run-tests.sh', 'Enter']`, `['C-d']`).
 */
function agentCommands(entries: readonly Keys[]): { commands: string[]; harnessClear: boolean } {
  let start = 0;
  let harnessClear = false;
  if (entries[0] && isRecordingStart(entries[0])) {
    start = 1;
    const next = entries[1];
    if (next?.list && next.keys.length === 2 && next.keys[0] === "clear" && next.keys[1] === "Enter") {
      start = 2;
      harnessClear = true;
    }
  }
  const commands: string[] = [];
  for (const entry of entries.slice(start)) {
    if (isRecordingStart(entry) || isTestRun(entry)) break;
    commands.push(typed(entry).replace(/\n+$/, ""));
  }
  return { commands, harnessClear };
}

// ---------------------------------------------------------------------------------------------
// Turns

type Built =
  | { turns: Turn[]; initialObservation?: string; meta: Record<string, unknown>; turnsFrom: string }
  | { reason: string; field?: string };

interface TurnTerminal {
  typing: TerminalEvent[];
  events: TerminalEvent[];
}

/** Turns from the agent's recording, read by the asciicast reader. */
async function fromCast(cast: string, trial: TrialResults, entries: Keys[] | undefined, options: ReaderOptions): Promise<Built> {
  let item: ReadItem | undefined;
  for await (const read of asciicastReader.read(cast, options)) item ??= read;
  const castName = relativeToTrial(cast, trial);
  if (!item) return { reason: `${castName}: the recording gave no trajectory` };
  if (item.kind === "quarantine") {
    const where = item.entry.source.line !== undefined ? ` line ${item.entry.source.line}` : "";
    return {
      reason: `${castName}${where}: ${item.entry.reason}`,
      ...(item.entry.field ? { field: `agent.cast.${item.entry.field}` } : {}),
    };
  }
  if (item.kind !== "trajectory") throw new Error(`${castName}: the asciicast reader yielded a ${item.kind}`);
  const { turns, meta = {} } = item.trajectory;
  const { commands, harnessClear } = agentCommands(entries ?? []);
  const split = meta.split;
  let out = turns;
  if (split === "markers") {
    const fromMarkers = actionsFromEpisodes(turns, commands);
    if (fromMarkers) out = fromMarkers;
  } else if (split === undefined || split === "keystrokes") {
    out = turns.map(withoutCompletion);
    // The harness types `clear` right after starting the recording: the screen it leaves is the start.
    const first = out[0];
    if (first && harnessClear && first.action === "clear" && out.length > 1) {
      const terminal = meta.terminal as { events: TerminalEvent[] } | undefined;
      const turnTerminal = (first.meta as { terminal?: TurnTerminal } | undefined)?.terminal;
      if (terminal && turnTerminal) {
        terminal.events = [...terminal.events, ...turnTerminal.typing, ...turnTerminal.events];
        out = out.slice(1);
      }
    }
  }
  if (out.length === 0) return { reason: `${castName}: the recording holds no turn` };
  return { turns: out, meta, turnsFrom: split === "markers" && out !== turns ? "agent.cast markers + commands.txt" : "agent.cast" };
}

/**
 * A blocking command's turn without the `; tmux wait -S done` the harness appended: off the action,
 * and off the shell's echo of it (an output event that holds the whole suffix), so the rendered
 * screen shows the command the agent sent.
 */
function withoutCompletion(turn: Turn): Turn {
  if (!COMPLETION.test(turn.action)) return turn;
  const terminal = (turn.meta as { terminal?: TurnTerminal } | undefined)?.terminal;
  if (!terminal) return { ...turn, action: turn.action.replace(COMPLETION, "") };
  let removed = false;
  const strip = (events: TerminalEvent[]): TerminalEvent[] =>
    events.map((event): TerminalEvent => {
      if (removed || event[0] !== "o" || !event[1].includes(ECHOED_COMPLETION)) return event;
      removed = true;
      return ["o", event[1].replace(ECHOED_COMPLETION, "")];
    });
  const typing = strip(terminal.typing);
  const events = strip(terminal.events);
  return { ...turn, action: turn.action.replace(COMPLETION, ""), meta: { ...turn.meta, terminal: { ...terminal, typing, events } } };
}

/**
 * An output-only cast with the agent's episode markers: each marker's episode gets its commands
 * from commands.txt — "Episode N: K commands" (Terminus-2) takes the next K, a Terminus-1 marker
 * is the reply's JSON with its `commands[].keystrokes`. Undefined when the markers do not add up.
 */
function actionsFromEpisodes(turns: readonly Turn[], commands: readonly string[]): Turn[] | undefined {
  let next = 0;
  const out: Turn[] = [];
  for (const turn of turns) {
    const counted = /^Episode \d+: (\d+) commands?$/.exec(turn.action);
    let actions: string[];
    if (counted) {
      actions = commands.slice(next, next + Number(counted[1]));
      next += actions.length;
    } else {
      const reply = parseJsonLine(turn.action);
      const listed = reply.ok && isRecord(reply.value) && Array.isArray(reply.value.commands) ? reply.value.commands : undefined;
      if (!listed) return undefined;
      actions = listed.map((command) =>
        isRecord(command) && typeof command.keystrokes === "string" ? command.keystrokes.replace(/\n+$/, "") : "",
      );
      next += actions.length;
    }
    out.push({ ...turn, action: actions.join("\n") });
  }
  return next === commands.length ? out : undefined;
}

/** No recording: one turn, the agent's commands → the pane after the agent. */
async function fromPanes(trialDir: string, trial: TrialResults, entries: Keys[] | undefined, maxBytes: number): Promise<Built> {
  const read = async (name: string) => {
    const path = companionPath(trialDir, name);
    if (!path) return undefined;
    const whole = await readWholeText(path, maxBytes);
    return "error" in whole ? undefined : whole.text;
  };
  const before = await read("panes/pre-agent.txt");
  const after = await read("panes/post-agent.txt");
  if (after === undefined)
    return {
      reason: `trial ${trial.trial_name} has no sessions/agent.cast and no panes/post-agent.txt: nothing shows what the agent's commands did`,
    };
  if (!entries)
    return { reason: `trial ${trial.trial_name} has no sessions/agent.cast and no commands.txt: the agent's actions are unknown` };
  const { commands } = agentCommands(entries);
  if (commands.length === 0) return { reason: `trial ${trial.trial_name}: commands.txt holds no command of the agent` };
  // capture-pane -S - holds the whole history: what was there before the agent is not its doing.
  const initial = before?.trimEnd();
  const rest = initial && after.startsWith(initial) ? after.slice(initial.length).replace(/^[ \t]*\n?/, "") : after;
  // The harness's completion signal on blocking commands is not the agent's doing either.
  const observation = rest.replace(/; tmux wait -S done$/gm, "");
  return {
    turns: [{ action: commands.join("\n"), observation: observation.trimEnd() }],
    ...(initial ? { initialObservation: initial } : {}),
    meta: {},
    turnsFrom: "commands.txt + panes",
  };
}

function relativeToTrial(path: string, trial: TrialResults): string {
  const at = path.lastIndexOf(`${trial.trial_name}/`);
  return at === -1 ? basename(path) : path.slice(at + trial.trial_name.length + 1);
}

/** `meta.terminal_bench`. */
async function trialMeta(trial: TrialResults, trialDir: string, turnsFrom: string): Promise<Record<string, unknown>> {
  const statuses = isRecord(trial.parser_results) ? Object.values(trial.parser_results) : [];
  const copy = (names: string[]) =>
    Object.fromEntries(names.filter((name) => trial[name] !== undefined && trial[name] !== null).map((name) => [name, trial[name]]));
  const meta: Record<string, unknown> = {
    task_id: trial.task_id,
    trial_name: trial.trial_name,
    is_resolved: trial.is_resolved ?? null,
    failure_mode: trial.failure_mode ?? null,
    parser_results: trial.parser_results ?? null,
    tests: {
      total: statuses.length,
      passed: statuses.filter((status) => status === "passed").length,
      failed: statuses.filter((status) => status !== "passed").length,
    },
    turns_from: turnsFrom,
    ...copy([
      "id",
      "total_input_tokens",
      "total_output_tokens",
      "n_commands",
      "trial_started_at",
      "trial_ended_at",
      "agent_started_at",
      "agent_ended_at",
      "test_started_at",
      "test_ended_at",
    ]),
  };
  const runMetadata = join(dirname(dirname(trialDir)), "run_metadata.json");
  if (existsSync(runMetadata)) {
    const whole = await readWholeText(runMetadata, 16 << 20);
    const parsed = "error" in whole ? undefined : parseJsonLine(whole.text);
    if (parsed?.ok && isRecord(parsed.value)) {
      const run = parsed.value;
      for (const [from, to] of [
        ["run_id", "run_id"],
        ["agent_name", "agent"],
        ["model_name", "model"],
        ["dataset_name", "dataset"],
        ["dataset_version", "dataset_version"],
      ] as const) {
        if (typeof run[from] === "string") meta[to] = run[from];
      }
    }
  }
  return meta;
}
