import type { QuarantineEntry } from "../core/errors.ts";
import type { SourceRef, Trajectory, Turn } from "../core/trajectory.ts";
import { readWholeText } from "../io/read-whole-text.ts";
import { baseName, beside, parentOf, sideFileExists, sideFileSize } from "../io/side-files.ts";
import { asciicastReader, type SentCommand, splitSentWhole, type TerminalEvent } from "./asciicast.ts";
import { type Companions, excerpt, parseJsonLine, parseSniffedJson, type Reader, type ReaderOptions, type ReadItem } from "./reader.ts";
import { describeType, isRecord } from "./record-helpers.ts";
import { findEcho, splitCommands, visibleText } from "./terminal-stream.ts";

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
 * agent and model when run_metadata.json is beside the task folders. The keys every reader shares:
 * `meta.outcome` {resolved: is_resolved, failure_mode unless "unset"/"none"}, `meta.task_id`,
 * `meta.attempt` (trial_name), `meta.agent` / `meta.model` (run_metadata.json's agent_name /
 * model_name) — each only where the files record it.
 *
 * Side files (cast, commands.txt, panes, run_metadata.json, the trial folders a run's results.json
 * lists) are found through src/io/side-files.ts, so a run folder reads the same on a disk, in a
 * bucket (`s3://`) and on the Hub (`hf://`).
 */
export const terminalBenchReader: Reader = {
  name: FORMAT,
  domain: "terminal",
  description: "terminal-bench `tb run` trials: a trial's results.json with its agent.cast, commands.txt and panes → one trajectory",

  sniff(head) {
    const text = head.replace(/^\uFEFF/, "");
    if (!/^\s*\{/.test(text)) return false;
    const parsed = parseSniffedJson(text);
    if (parsed.ok) return isTrialResults(parsed.value) || isRunResults(parsed.value);
    // Longer than the head (a long instruction, a run of many trials): the keys tell.
    const trial = text.search(/"trial_name"\s*:\s*"/);
    const results = text.search(/"results"\s*:\s*\[/);
    if (trial === -1) return false;
    if (results !== -1 && results < trial) return /"is_resolved"\s*:/.test(text) && /"task_id"\s*:\s*"/.test(text);
    return /"task_id"\s*:\s*"/.test(text) && /"instruction"\s*:\s*"/.test(text);
  },

  async companions(path: string): Promise<Companions> {
    // Side files are found through src/io/side-files.ts: the same on a disk, in a bucket, on the Hub.
    const trialDir = parentOf(path);
    const runDir = parentOf(parentOf(trialDir));
    // The run's own files, only where this is a run directory (its metadata or lock is there).
    const markers = await Promise.all(
      RUN_FILES.filter((name) => name !== "results.json").map((name) => sideFileExists(beside(runDir, name))),
    );
    const runFiles = markers.some(Boolean) ? RUN_FILES.map((name) => beside(runDir, name)) : [];
    const read = [
      path,
      await castOf(trialDir),
      await companionPath(trialDir, "commands.txt"),
      ...(await Promise.all(PANES.map((pane) => companionPath(trialDir, pane)))),
    ];
    const sizes = await Promise.all(read.map(async (file) => (file ? ((await sideFileSize(file)) ?? 0) : 0)));
    const bytes = sizes.reduce((sum, size) => sum + size, 0);
    return { dirs: [trialDir], files: runFiles, bytes, label: `terminal-bench trial ${baseName(trialDir)}` };
  },

  async expand(path: string): Promise<string[] | undefined> {
    const whole = await readWholeText(path, 1 << 30);
    if ("error" in whole) return undefined;
    const parsed = parseJsonLine(whole.text.replace(/^\uFEFF/, ""));
    if (!parsed.ok || !isRunResults(parsed.value)) return undefined;
    // The trial folders are the truth (terminal-bench rebuilds this file from them): those present.
    const runDir = parentOf(path);
    const listed = parsed.value.results.map((trial) => beside(runDir, String(trial.task_id), String(trial.trial_name), "results.json"));
    const present = await Promise.all(listed.map((file) => sideFileExists(file)));
    const trials = listed.filter((_, i) => present[i]);
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
    const trialDir = parentOf(path);
    const commands = await readCommands(trialDir, options.maxLineBytes);
    const cast = await castOf(trialDir, trial.recording_path);
    const domain = options.domain ?? "terminal";
    const built = cast ? await fromCast(cast, trial, commands, options) : await fromPanes(trialDir, trial, commands, options.maxLineBytes);
    if ("reason" in built) return yield quarantine(source, trial.trial_name, built.reason, built.field);
    const run = await runMetadata(trialDir);
    const meta = trialMeta(trial, run, built.turnsFrom);
    if (built.harnessTurns) meta.harness_turns = built.harnessTurns;
    const trajectory: Trajectory = {
      id: trial.trial_name,
      domain,
      source,
      task: trial.instruction,
      ...(built.initialObservation !== undefined ? { initialObservation: built.initialObservation } : {}),
      turns: built.turns,
      meta: { ...built.meta, ...provenance(trial, run), terminal_bench: meta },
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
async function companionPath(trialDir: string, name: string): Promise<string | undefined> {
  const candidates = [name, `${name}.gz`, `${name}.zst`].map((candidate) => beside(trialDir, candidate));
  const present = await Promise.all(candidates.map((file) => sideFileExists(file)));
  return candidates.find((_, i) => present[i]);
}

/** The agent's recording: sessions/agent.cast, agent.cast beside results.json, or where recording_path says. */
async function castOf(trialDir: string, recordingPath?: string | null): Promise<string | undefined> {
  const local = (await companionPath(trialDir, "sessions/agent.cast")) ?? (await companionPath(trialDir, "agent.cast"));
  if (local || typeof recordingPath !== "string") return local;
  // recording_path is relative to `tb run --output-path`, the folder above the run's; it is data,
  // so it may only name a recording inside that folder (`beside` never leaves a bucket or repo).
  const output = beside(trialDir, "..", "..", "..");
  const fromOutput = beside(output, recordingPath);
  const below = fromOutput.length > output.length + 1 && fromOutput.startsWith(output) && /[/\\]/.test(fromOutput[output.length] ?? "");
  const inside = below && /\.cast(\.gz|\.zst)?$/.test(fromOutput);
  return inside && (await sideFileExists(fromOutput)) ? fromOutput : undefined;
}

// ---------------------------------------------------------------------------------------------
// commands.txt

/** One TmuxSession.send_keys call: a str or a list of tmux keys (literal text or key names). */
type Keys = { list: boolean; keys: string[] };

/** commands.txt, parsed; unparseable lines are kept as one literal key. */
async function readCommands(trialDir: string, maxBytes: number): Promise<Keys[] | undefined> {
  const path = await companionPath(trialDir, "commands.txt");
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
const isTestRun = (entry: Keys) => /^bash\s+\S*run-tests\.sh\b/.test(typed(entry));
/** AbstractInstalledAgent's set-up: `source /installed-agent/setup-env.sh`, the install script. */
const isInstall = (entry: Keys) => entry.keys.some((key) => key.includes("/installed-agent/"));
/** Keys only, no text: `C-d` ending a recording, a lone Enter. */
const isControlOnly = (entry: Keys) => entry.list && entry.keys.every((key) => ENTER_KEYS.has(key) || /^(C|M)-\w$/.test(key));
/** A command line the harness types, recognized without commands.txt. */
export const HARNESS_ACTION = /\/installed-agent\/|^asciinema rec\b|^bash\s+\S*run-tests\.sh\b|^tmux wait -S done$/;

/** One send_keys call, with who sent it. */
interface SentKeys {
  text: string;
  harness: boolean;
}

/**
 * Who sent each line of commands.txt. The harness (terminal_bench/terminal/tmux_session.py,
 * harness.py, AbstractInstalledAgent) sends lists: `['asciinema rec --stdin …', 'Enter']` and the
 * `['clear', 'Enter']` after it, `['source /installed-agent/setup-env.sh', 'Enter']`, the install
 * script, then an installed agent's own command line (`['claude … -p …', 'Enter']`: the agent
 * runs inside it and never types into the terminal), the test run `['bash ', '/tests/run-tests.sh',
 * 'Enter']` and `['C-d']`. Everything else is the agent's keystrokes (Terminus sends strings).
 */
export function classifyCommands(entries: readonly Keys[]): SentKeys[] {
  let installed = false;
  return entries.map((entry, i) => {
    const text = typed(entry).replace(/\n+$/, "");
    const afterRecording = i > 0 && isRecordingStart(entries[i - 1] as Keys);
    const clear =
      afterRecording && entry.list && entry.keys.length === 2 && entry.keys[0] === "clear" && ENTER_KEYS.has(entry.keys[1] ?? "");
    if (isInstall(entry)) installed = true;
    const harness =
      isRecordingStart(entry) || clear || isTestRun(entry) || isInstall(entry) || isControlOnly(entry) || (installed && entry.list);
    return { text, harness };
  });
}

/**
 * The agent's commands in commands.txt (one per command a shell runs) and the harness's command
 * lines typed into the agent's session, in order: up to the test session's recording start (the
 * recording starts themselves are typed before the recording, so they are not in it).
 */
function agentCommands(entries: readonly Keys[]): { commands: string[]; harness: string[] } {
  const commands: string[] = [];
  const harness: string[] = [];
  let recordings = 0;
  classifyCommands(entries).forEach((sent, i) => {
    const entry = entries[i] as Keys;
    if (isRecordingStart(entry)) recordings += 1;
    if (recordings > 1 || isRecordingStart(entry)) return;
    if (sent.harness) {
      if (!isControlOnly(entry)) harness.push(sent.text.replace(COMPLETION, ""));
    } else commands.push(...splitCommands(sent.text.replace(COMPLETION, "")));
  });
  return { commands, harness };
}

/** `meta.read_filter` of a trial in which the agent never typed. */
function harnessOnly(trial: TrialResults, harness: readonly string[]): { stage: string; reason: string } {
  const what =
    harness.length > 0
      ? `: ${harness.length} command line(s), all sent by the harness (recording, set-up, install, agent launch, tests)`
      : "";
  return {
    stage: "harness-only",
    reason: `terminal-bench trial ${trial.trial_name}: the agent never typed into the terminal${what}; nothing in it is the agent's action`,
  };
}

// ---------------------------------------------------------------------------------------------
// Turns

type Built =
  | { turns: Turn[]; initialObservation?: string; meta: Record<string, unknown>; turnsFrom: string; harnessTurns?: number }
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
  if (item.kind !== "trajectory") throw new Error(`${castName}: the recording read as a ${item.kind}`);
  const { turns, meta = {} } = item.trajectory;
  const { commands, harness } = agentCommands(entries ?? []);
  const split = meta.split;
  let out = turns;
  let harnessTurns = 0;
  if (split === "markers") {
    const fromMarkers = actionsFromEpisodes(turns, commands);
    if (fromMarkers) out = fromMarkers;
  } else if (split === undefined || split === "keystrokes") {
    const separated = withoutHarness(turns.map(withoutCompletion), harness, meta.terminal as { events: TerminalEvent[] } | undefined);
    out = separated.turns;
    harnessTurns = separated.harness;
  }
  const turnsFrom = split === "markers" && out !== turns ? "agent.cast markers + commands.txt" : "agent.cast";
  if (out.length === 0 && harnessTurns > 0)
    return { turns: turns.map(withoutCompletion), meta: { ...meta, read_filter: harnessOnly(trial, harness) }, turnsFrom };
  if (out.length === 0) return { reason: `${castName}: the recording holds no turn` };
  return { turns: out, meta, turnsFrom, ...(harnessTurns > 0 ? { harnessTurns } : {}) };
}

/**
 * The harness's command lines taken out of the agent's turns (`classifyCommands`: matched in order
 * against commands.txt's harness lines, or by `HARNESS_ACTION` without it). They are context, not
 * actions: before the agent's first command they are part of the initial screen; between two of
 * its commands they are replayed as the next one's typing (the screen stays right, nothing is
 * observed); after its last command (the tests, the end of the recording) they are left out.
 */
function withoutHarness(
  turns: readonly Turn[],
  harness: readonly string[],
  recording: { events: TerminalEvent[] } | undefined,
): { turns: Turn[]; harness: number } {
  let next = 0;
  const isHarness = (action: string) => {
    if (harness[next] === action) {
      next += 1;
      return true;
    }
    return HARNESS_ACTION.test(action);
  };
  const out: Turn[] = [];
  let held: TerminalEvent[] = [];
  let count = 0;
  for (const turn of turns) {
    const terminal = (turn.meta as { terminal?: TurnTerminal } | undefined)?.terminal;
    if (isHarness(turn.action)) {
      count += 1;
      const replay = terminal ? [...terminal.typing, ...terminal.events] : [];
      if (out.length === 0 && recording) recording.events.push(...replay);
      else held.push(...replay);
      continue;
    }
    if (held.length > 0 && terminal) {
      out.push({ ...turn, meta: { ...turn.meta, terminal: { ...terminal, typing: [...held, ...terminal.typing] } } });
      held = [];
    } else out.push(turn);
  }
  return { turns: out, harness: count };
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
 * is the reply's JSON with its `commands[].keystrokes`. Each command is a turn of its own, its
 * echo in the episode's output its typing (`splitSentWhole`); an episode without commands stays
 * one turn. Undefined when the markers do not add up.
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
      actions = actions.flatMap((action) => splitCommands(action.replace(COMPLETION, "")));
    }
    const terminal = (turn.meta as { terminal?: TurnTerminal & { cols: number; rows: number } } | undefined)?.terminal;
    if (actions.length === 0 || !terminal) {
      out.push(turn);
      continue;
    }
    const batch: SentCommand[] = actions.map((action, i) => ({
      turn: {
        action,
        observation: "",
        meta: { ...turn.meta, terminal: { ...terminal, typing: i === 0 ? [...terminal.typing] : [], events: [] } },
      },
      sent: action,
      atStart: i === 0,
    }));
    (batch.at(-1) as SentCommand).turn.meta.terminal.events.push(...terminal.events);
    splitSentWhole(batch);
    out.push(...batch.map((sent) => sent.turn));
  }
  return next === commands.length ? out : undefined;
}

/**
 * No recording: the agent's commands, each found in the pane after the agent (panes/post-agent.txt,
 * `capture-pane -S -`) by its echo after the prompt (`findEcho`); a turn per command, observing
 * the pane's lines after its echo up to the next command's (ending with the prompt, as a recorded
 * turn does). The pane before the agent is the initial observation. When an echo is not there
 * (scrolled out of the history, cleared), one turn: all the commands → the pane, echo lines removed.
 */
async function fromPanes(trialDir: string, trial: TrialResults, entries: Keys[] | undefined, maxBytes: number): Promise<Built> {
  const read = async (name: string) => {
    const path = await companionPath(trialDir, name);
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
  const { commands, harness } = agentCommands(entries);
  // capture-pane -S - holds the whole history: what was there before the agent is not its doing.
  const initial = before?.trimEnd();
  // The prompt line the agent's first command was typed on stays: its echo is found after the prompt.
  const promptLine = initial?.split("\n").at(-1) ?? "";
  const rest = (initial && after.startsWith(initial) ? after.slice(initial.length - promptLine.length) : after).replace(/\s+$/, "");
  const common = { ...(initial ? { initialObservation: initial } : {}), turnsFrom: "commands.txt + panes" };
  if (commands.length === 0)
    return { turns: [{ action: harness.join("\n"), observation: rest }], meta: { read_filter: harnessOnly(trial, harness) }, ...common };
  const view = visibleText([rest]);
  const echoes: [number, number][] = [];
  let from = 0;
  for (const command of commands) {
    // The harness appends its completion signal to blocking commands: the pane shows it.
    const echo = findEcho(view, `${command}${ECHOED_COMPLETION}`, from, false) ?? findEcho(view, command, from, false);
    if (!echo) break;
    echoes.push(echo);
    from = echo[1];
  }
  if (echoes.length === commands.length) {
    const turns = commands.map((action, i) => {
      const end = echoes[i + 1]?.[0] ?? view.text.length;
      return { action, observation: view.text.slice((echoes[i] as [number, number])[1] + 1, end).replace(/\s+$/, "") };
    });
    return { turns, meta: {}, ...common };
  }
  const echoed = new Set(commands.flatMap((command) => [command, `${command}${ECHOED_COMPLETION}`]));
  const observation = rest
    .split("\n")
    .filter((line) => ![...echoed].some((command) => line.endsWith(command) && PROMPT_END.test(line.slice(0, -command.length))))
    .join("\n")
    .replace(/; tmux wait -S done$/gm, "");
  return { turns: [{ action: commands.join("\n"), observation: observation.trimEnd() }], meta: {}, ...common };
}

const PROMPT_END = /[$#%>] ?$/;

function relativeToTrial(path: string, trial: TrialResults): string {
  const at = path.lastIndexOf(`${trial.trial_name}/`);
  return at === -1 ? baseName(path) : path.slice(at + trial.trial_name.length + 1);
}

/** The run's run_metadata.json (RunMetadata), when the trial sits in a run folder that has one. */
async function runMetadata(trialDir: string): Promise<Record<string, unknown> | undefined> {
  const path = beside(parentOf(parentOf(trialDir)), "run_metadata.json");
  if (!(await sideFileExists(path))) return undefined;
  const whole = await readWholeText(path, 16 << 20);
  const parsed = "error" in whole ? undefined : parseJsonLine(whole.text.replace(/^\uFEFF/, ""));
  return parsed?.ok && isRecord(parsed.value) ? parsed.value : undefined;
}

/**
 * The keys every reader shares (issue 34): `outcome` {resolved: is_resolved, failure_mode unless
 * the harness left it "unset" or "none"}, `task_id`, `attempt` (trial_name), and the run's
 * `agent` (agent_name) and `model` (model_name). Only what the files record.
 */
function provenance(trial: TrialResults, run: Record<string, unknown> | undefined): Record<string, unknown> {
  const outcome: Record<string, unknown> = {};
  if (typeof trial.is_resolved === "boolean") outcome.resolved = trial.is_resolved;
  if (typeof trial.failure_mode === "string" && !NO_FAILURE.has(trial.failure_mode)) outcome.failure_mode = trial.failure_mode;
  return {
    ...(Object.keys(outcome).length > 0 ? { outcome } : {}),
    ...(typeof run?.agent_name === "string" ? { agent: run.agent_name } : {}),
    ...(typeof run?.model_name === "string" ? { model: run.model_name } : {}),
    task_id: trial.task_id,
    attempt: trial.trial_name,
  };
}

/** FailureMode values that say no failure was recorded (terminal_bench/harness/models.py). */
const NO_FAILURE = new Set(["unset", "none"]);

/** `meta.terminal_bench`. */
function trialMeta(trial: TrialResults, run: Record<string, unknown> | undefined, turnsFrom: string): Record<string, unknown> {
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
  if (run) {
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
  return meta;
}
