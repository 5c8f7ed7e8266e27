import type { Domain, SourceRef, Turn } from "../core/trajectory.ts";
import { openDecompressed } from "../io/open-input.ts";
import { readSideJsonObject, readWholeText } from "../io/read-whole-text.ts";
import { baseName, beside, listFolder, parentOf, sideFileSize } from "../io/side-files.ts";
import { readHeadBytes } from "./head-bytes.ts";
import { type JsonKind, type JsonPath, JsonSyntaxError, selectJson } from "./json-select.ts";
import { isSdkEventHead, readSdkConversation, sdkCompanions } from "./openhands-sdk.ts";
import { type Companions, firstLine, type Reader, type ReaderOptions, type ReadItem } from "./reader.ts";
import {
  contentId,
  describeType,
  fileStem,
  isRecord,
  jsonObjectLines,
  lineQuarantine,
  MAX_JSON_DEPTH,
  nestsTooDeep,
} from "./record-helpers.ts";

const FORMAT = "openhands";

/**
 * OpenHands (formerly OpenDevin) event streams, in two layouts:
 *
 * - a JSON array of events (`tests/runtime/trajs/*.json`, a saved session): one trajectory per
 *   file, streamed event by event with stream-json; id = the file name without `.json`. A JSON
 *   array of output records (below) is streamed record by record, one trajectory each;
 * - JSONL evaluation / resolver output: one trajectory per line, `{instance_id?, instruction?,
 *   history[]}`; `history` holds events (`id`/`cause` linked), the 2024 flat form (args inlined in
 *   the action dict, no ids), or the oldest `[action, observation]` pairs.
 * - a local session folder, as the OpenHands app and CLI (V0) keep one in `~/.openhands/sessions/<sid>/`
 *   (openhands/storage/locations.py): one event per file, `events/<id>.json`, beside `metadata.json`,
 *   `event_cache/` (25-event pages of the same events), `agent_state.pkl`. Any one event file
 *   stands for its session: the `events/` folder's files are read in id order as one stream, id =
 *   the session folder's name, `meta.title` from `metadata.json`; the first event file claims the
 *   session folder, so a plan reads each session once;
 * - a V1 conversation (the OpenHands SDK, CLI and app since late 2025), one event per file too:
 *   src/read/openhands-sdk.ts.
 *
 * A turn is an environment action with its observation: the observation whose `cause` is the
 * action's `id`, or, where events carry no ids, the observation right after the action. The
 * action text is what the runtime executed: `command` for `run`, `code` for `run_ipython`, `url`
 * for `browse`, `browser_actions` for `browse_interactive`, and otherwise the action type and its
 * arguments as JSON (without the agent's `thought` and confirmation bookkeeping). The agent's
 * `thought` becomes `turn.meta.agent_thought`. A command that printed nothing is observed as its
 * exit code, `[exit code 0, no output]` (see `observationText`); the exit code is in
 * `turn.meta.exit_code` in any case.
 *
 * Conversation and control events are not environment interaction and make no turns: `message`
 * (agent ↔ user chat), `system`, `finish`, `think`, `recall`, `change_agent_state`, `delegate`,
 * condensation, and observations that answer no environment action (`agent_state_changed`,
 * `null`, …). Each one is counted in `meta.skipped` (e.g. `message_action: 2`), as is an
 * environment action that never got an observation. A trajectory left without turns is
 * quarantined. Task: the first user `message`, else the record's `instruction`.
 *
 * Instance and attempt (output records): one line per instance and run, so two runs' outputs hold
 * lines of one instance. `meta.task_id` is `instance_id`, else `owner/repo#number` of the
 * resolver's `issue`; the id is that task id plus a hash of the line (`<task>-<16 hex digits of
 * sha256>`; for a JSON array of records, of the record re-serialized), so two attempts are two
 * records and one line has one id wherever it is read; a record naming no task is
 * `openhands-<hash>`. A quarantined record is named by its task id alone. Provenance, only where
 * the record has it: `agent` = `metadata.agent_class`, `model` = `metadata.llm_config.model`,
 * `outcome.resolved` = `test_result.report.resolved` (else `report.resolved`, the evaluation's
 * verdict), `outcome.success` = `success` (the resolver's own verdict), `outcome.failure_mode` =
 * `error` (a non-empty string: the run stopped on it). Output records carry no attempt number.
 * An event array (a saved session) names no instance: id = the file name, no provenance.
 */
export const openHandsReader: Reader = {
  name: FORMAT,
  domain: "swe",
  description: "OpenHands event streams: JSON event arrays and evaluation-output JSONL (action/observation linked by cause)",

  sniff(head) {
    if (/^\uFEFF?\s*\[/.test(head)) {
      return /^\uFEFF?\s*\[\s*\{/.test(head) && /"(action|observation)"\s*:\s*"/.test(head) && /"(source|cause|timestamp)"\s*:/.test(head);
    }
    if (isSessionEventHead(head) || isSdkEventHead(head)) return true;
    const line = firstLine(head);
    if (!/^\uFEFF?\s*\{/.test(line)) return false;
    // Chat transcripts (SWE-agent, SWE-smith) have role-keyed messages, not events.
    if (/"history"\s*:\s*\[\s*\{\s*"role"\s*:/.test(line)) return false;
    const history = /"history"\s*:\s*\[\s*[[{]/.test(line) && /"(action|observation)"\s*:\s*"/.test(line);
    // A long first record may put history past the head; its leading keys still tell.
    const output = /"instruction"\s*:/.test(line) && /"(instance_id|git_patch|test_result|issue)"\s*:/.test(line);
    return history || output;
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    const domain = options.domain ?? "swe";
    if ((await firstSignificantChar(path)) === "[") {
      yield* readJsonArray(path, domain);
      return;
    }
    const head = Buffer.from((await readHeadBytes(path, 4096)).bytes).toString("utf8");
    const whole = !options.range || options.range.start === 0;
    if (isSdkEventHead(head)) {
      if (whole) yield await readSdkConversation(path, options, options.domain);
    } else if (isSessionEventHead(head)) {
      if (whole) yield await readSessionFolder(path, options, domain);
    } else yield* readOutputLines(path, options, domain);
  },

  async companions(path: string): Promise<Companions> {
    const conversation = await sdkCompanions(path);
    if (conversation) return conversation;
    const folder = await sessionEvents(path);
    // Only the first event file stands for its session; any other file covers nothing of its own.
    if (!folder || folder.files[0]?.name !== baseName(path))
      return { dirs: [], files: [], bytes: (await sideFileSize(path)) ?? 0, label: `OpenHands file ${baseName(path)}` };
    const bytes = folder.files.reduce((sum, file) => sum + file.bytes, 0);
    return { dirs: [folder.session], files: [], bytes, label: `OpenHands session ${baseName(folder.session)}` };
  },
};

/** One V0 event as its own file (`events/<id>.json`): an object with a numeric id, a source, and an action or observation type. */
function isSessionEventHead(head: string): boolean {
  const text = head.replace(/^\uFEFF/, "").trimStart();
  return (
    /^\{\s*"id"\s*:\s*\d+\s*,/.test(text) &&
    /"source"\s*:\s*"(user|agent|environment)"/.test(text) &&
    /"(action|observation)"\s*:\s*"[a-z_]+"/.test(text) &&
    /"timestamp"\s*:\s*"/.test(text)
  );
}

/** An `events/<id>.json` file's session: the session folder and its event files in id order; undefined for any other file. */
async function sessionEvents(
  path: string,
): Promise<{ session: string; events: string; files: { name: string; bytes: number }[] } | undefined> {
  if (!EVENT_FILE.test(baseName(path))) return undefined;
  const events = parentOf(path);
  if (baseName(events) !== "events") return undefined;
  const listing = await listFolder(events);
  const files = [...listing.files.entries()]
    .filter(([name]) => EVENT_FILE.test(name))
    .map(([name, bytes]) => ({ name, bytes, id: Number.parseInt(name, 10) }))
    .sort((a, b) => a.id - b.id || (a.name < b.name ? -1 : 1))
    .map(({ name, bytes }) => ({ name, bytes }));
  return { session: parentOf(events), events, files };
}

const EVENT_FILE = /^\d+\.json(?:\.gz|\.zst)?$/;

/** A V0 session folder's events, read in id order as one stream (see the comment at the top). */
async function readSessionFolder(path: string, options: ReaderOptions, domain: Domain): Promise<ReadItem> {
  // The record starts the file it was read by (its session's first event file).
  const source: SourceRef = { uri: path, line: 1, offset: 0, format: FORMAT };
  const folder = await sessionEvents(path);
  const id = folder ? baseName(folder.session) : fileStem(path, /\.json$/i);
  const files = folder ? folder.files.map((file) => beside(folder.events, file.name)) : [path];
  const pairer = new EventPairer();
  for (const file of files) {
    const name = baseName(file);
    const read = await readWholeText(file, options.maxLineBytes);
    if ("error" in read)
      return { kind: "quarantine", entry: { source, id, stage: "read", field: `events/${name}`, reason: `events/${name}: ${read.error}` } };
    let event: unknown;
    try {
      event = JSON.parse(read.text);
    } catch (err) {
      return {
        kind: "quarantine",
        entry: { source, id, stage: "read", field: `events/${name}`, reason: `events/${name}: invalid JSON: ${(err as Error).message}` },
      };
    }
    pairer.add(event, `events/${name}`);
  }
  const metadata = folder ? await readSideJsonObject(beside(folder.session, "metadata.json"), options.maxLineBytes) : undefined;
  const title = typeof metadata?.title === "string" && metadata.title !== "" ? { title: metadata.title } : {};
  return pairer.finish(source, id, domain, undefined, "session-folder", { agent: "openhands", session_id: id, ...title });
}

// Control and conversation actions: the environment does not execute them.
const NON_ENVIRONMENT_ACTIONS = new Set([
  "message",
  "system",
  "finish",
  "reject",
  "think",
  "recall",
  "change_agent_state",
  "delegate",
  "condensation",
  "condensation_request",
  "null",
]);

// Agent-side bookkeeping in action args, not part of what the runtime executes.
const BOOKKEEPING_ARGS = new Set(["thought", "security_risk", "confirmation_state", "is_confirmed", "action_risk", "hidden"]);

/** The parts of an event the pairing needs; tool-call metadata and model responses are dropped. */
type Event =
  | { kind: "action"; type: string; id: unknown; source: unknown; args: Record<string, unknown> }
  | { kind: "observation"; type: string; cause: unknown; content: string; extras: Record<string, unknown> };

interface Problem {
  field?: string;
  reason: string;
}

function toEvent(raw: unknown, field: string): Event | Problem {
  if (!isRecord(raw)) return { field, reason: `${field}: expected an event object, got ${describeType(raw)}` };
  // Action arguments are written into the action as JSON (actionText).
  if (nestsTooDeep(raw)) return { field, reason: `${field}: nested deeper than ${MAX_JSON_DEPTH} levels` };
  if (typeof raw.action === "string") {
    // Since 2024 the arguments are under `args`; before, they sat beside `action`.
    const args = isRecord(raw.args) ? raw.args : Object.fromEntries(Object.entries(raw).filter(([key]) => key !== "action"));
    return { kind: "action", type: raw.action, id: raw.id, source: raw.source, args };
  }
  if (typeof raw.observation === "string") {
    if (typeof raw.content !== "string") {
      return { field: `${field}.content`, reason: `${field}.content: expected a string, got ${describeType(raw.content)}` };
    }
    const extras = isRecord(raw.extras) ? raw.extras : raw;
    return { kind: "observation", type: raw.observation, cause: raw.cause, content: raw.content, extras };
  }
  return { field, reason: `${field}: an event needs an "action" or an "observation" type` };
}

// Actions whose runtime input is one argument, verbatim.
const VERBATIM_ARG = new Map([
  ["run", "command"],
  ["run_ipython", "code"],
  ["browse", "url"],
  ["browse_interactive", "browser_actions"],
]);

/** The text the runtime executed for an action, or a problem when its argument is mistyped. */
function actionText(action: Extract<Event, { kind: "action" }>, field: string): string | Problem {
  const key = VERBATIM_ARG.get(action.type);
  if (key !== undefined) {
    const value = action.args[key];
    return typeof value === "string"
      ? value
      : { field: `${field}.${key}`, reason: `${field}.${key}: expected a string, got ${describeType(value)}` };
  }
  const args = Object.fromEntries(Object.entries(action.args).filter(([name]) => !BOOKKEEPING_ARGS.has(name)));
  return JSON.stringify({ action: action.type, ...args });
}

/** Folds events, in stream order, into turns; every event that is not part of a turn is counted. */
class EventPairer {
  private readonly events: {
    event: Extract<Event, { kind: "action" }>;
    field: string;
    observation?: Extract<Event, { kind: "observation" }>;
  }[] = [];
  private readonly byId = new Map<unknown, number>();
  private readonly skipped: Record<string, number> = {};
  private problem: Problem | undefined;
  private task: string | undefined;
  private count = 0;

  add(raw: unknown, field: string): void {
    if (this.problem) return;
    this.count += 1;
    // An observation without content (null or missing: the runtime crashed before it returned) is
    // no output to learn; it is counted, and its action is left without an observation.
    if (isRecord(raw) && typeof raw.action !== "string" && typeof raw.observation === "string" && raw.content == null) {
      this.skip(`${raw.observation}_observation_without_content`);
      return;
    }
    const event = toEvent(raw, field);
    if (!("kind" in event)) {
      this.problem = event;
      return;
    }
    if (event.kind === "action") {
      if (this.task === undefined && event.type === "message" && (event.source === "user" || event.source === undefined)) {
        const content = event.args.content;
        if (typeof content === "string") this.task = content;
      }
      if (event.id !== undefined && event.id !== null) this.byId.set(event.id, this.events.length);
      this.events.push({ event, field });
      return;
    }
    this.attach(event);
  }

  /**
   * The trajectory `id` with `extraMeta` (provenance), or a quarantine entry named `quarantineId`
   * (the instance, not the attempt; none when undefined).
   */
  finish(
    source: SourceRef,
    id: string,
    domain: Domain,
    fallbackTask: unknown,
    layout: string,
    extraMeta: Record<string, unknown> = {},
    quarantineId: string | undefined = id,
  ): ReadItem {
    const named = quarantineId !== undefined ? { id: quarantineId } : {};
    if (this.problem) return { kind: "quarantine", entry: { source, ...named, stage: "read", ...this.problem } };
    if (this.count === 0) return { kind: "quarantine", entry: { source, ...named, stage: "read", field: "history", reason: "no events" } };
    const turns: Turn[] = [];
    for (const { event, field, observation } of this.events) {
      if (NON_ENVIRONMENT_ACTIONS.has(event.type)) {
        this.skip(`${event.type}_action`);
        if (observation) this.skip(`${observation.type}_observation`);
        continue;
      }
      if (!observation) {
        this.skip("action_without_observation");
        continue;
      }
      const action = actionText(event, field);
      if (typeof action !== "string") return { kind: "quarantine", entry: { source, ...named, stage: "read", ...action } };
      turns.push({ action, observation: observationText(observation), meta: turnMeta(event, observation) });
    }
    if (turns.length === 0) {
      const reason = `no environment action with an observation (events: ${JSON.stringify(this.skipped)})`;
      return { kind: "quarantine", entry: { source, ...named, stage: "read", field: "history", reason } };
    }
    const task = this.task ?? (typeof fallbackTask === "string" ? fallbackTask : undefined);
    const meta: Record<string, unknown> = {
      layout,
      ...(Object.keys(this.skipped).length > 0 ? { skipped: this.skipped } : {}),
      ...extraMeta,
    };
    return { kind: "trajectory", trajectory: { id, domain, source, ...(task !== undefined ? { task } : {}), turns, meta } };
  }

  private attach(observation: Extract<Event, { kind: "observation" }>): void {
    let index: number | undefined;
    if (observation.cause !== undefined && observation.cause !== null) {
      index = this.byId.get(observation.cause);
    } else {
      // Events without ids (2024 output): an observation answers the action just before it.
      const last = this.events.length - 1;
      const previous = this.events[last];
      if (previous && (previous.event.id === undefined || previous.event.id === null) && !previous.observation) index = last;
    }
    const target = index === undefined ? undefined : this.events[index];
    if (target && !target.observation) target.observation = observation;
    else this.skip(`${observation.type}_observation`);
  }

  private skip(what: string): void {
    this.skipped[what] = (this.skipped[what] ?? 0) + 1;
  }
}

/** The exit code a command observation carries: `extras.metadata.exit_code` (since 2024-11), `extras.exit_code` before. */
function exitCodeOf(observation: Extract<Event, { kind: "observation" }>): number | undefined {
  const { extras } = observation;
  const exitCode = isRecord(extras.metadata) ? extras.metadata.exit_code : extras.exit_code;
  return typeof exitCode === "number" ? exitCode : undefined;
}

// Observations of what a shell or a Python kernel ran.
const COMMAND_OBSERVATIONS = new Set(["run", "run_ipython"]);

/**
 * The observation's text: its `content`, or, for a command that printed nothing (empty or blank
 * content), what the run still tells — `[exit code N, no output]`; `[no output, still running]` for
 * OpenHands' exit code -1 (the runtime returned before the command ended: a timeout, a server
 * left running); `[no output]` without an exit code (`run_ipython`). OpenHands itself shows its
 * agent such a run as its exit-code line alone (`[The command completed with exit code 0.]`).
 */
function observationText(observation: Extract<Event, { kind: "observation" }>): string {
  if (observation.content.trim() !== "" || !COMMAND_OBSERVATIONS.has(observation.type)) return observation.content;
  const exitCode = exitCodeOf(observation);
  if (exitCode === undefined) return "[no output]";
  return exitCode === -1 ? "[no output, still running]" : `[exit code ${exitCode}, no output]`;
}

function turnMeta(
  action: Extract<Event, { kind: "action" }>,
  observation: Extract<Event, { kind: "observation" }>,
): Record<string, unknown> {
  const meta: Record<string, unknown> = { action_type: action.type, observation_type: observation.type };
  const thought = action.args.thought;
  if (typeof thought === "string" && thought.trim() !== "") meta.agent_thought = thought;
  const exitCode = exitCodeOf(observation);
  if (exitCode !== undefined) meta.exit_code = exitCode;
  return meta;
}

/**
 * A top-level JSON array: the events of one session, or (when its first element is a record with
 * a `history`) a list of trajectory records, each read like a JSONL line. Streamed element by element.
 */
async function* readJsonArray(path: string, domain: Domain): AsyncGenerator<ReadItem> {
  const source: SourceRef = { uri: path, format: FORMAT };
  const id = fileStem(path, /\.json$/i);
  const { stream } = await openDecompressed(path);
  const wanted = (at: JsonPath, kind: JsonKind) => (at.length === 0 ? kind !== "array" : at.length === 1);
  const events = new EventPairer();
  let records = false;
  try {
    for await (const { path: at, value } of selectJson(stream, wanted)) {
      const index = at[0];
      if (index === undefined) {
        yield { kind: "quarantine", entry: { source, id, stage: "read", reason: `expected a JSON array, got ${describeType(value)}` } };
        return;
      }
      if (index === 0 && isRecord(value) && Array.isArray(value.history)) records = true;
      if (!records) {
        events.add(value, String(index));
        continue;
      }
      if (isRecord(value) && !nestsTooDeep(value)) yield recordItem(value, source, JSON.stringify(value), domain, `${index}.`);
      else {
        const reason = isRecord(value)
          ? `${index}: nested deeper than ${MAX_JSON_DEPTH} levels`
          : `${index}: expected a trajectory record, got ${describeType(value)}`;
        yield { kind: "quarantine", entry: { source, stage: "read", field: String(index), reason } };
      }
    }
  } catch (err) {
    if (!(err instanceof JsonSyntaxError)) throw err;
    // One record per file for an event array; for a record array, the unread rest is one entry.
    yield { kind: "quarantine", entry: { source, ...(records ? {} : { id }), stage: "read", reason: err.message } };
    return;
  }
  if (!records) yield events.finish(source, id, domain, undefined, "event-array");
}

async function* readOutputLines(path: string, options: ReaderOptions, domain: Domain): AsyncGenerator<ReadItem> {
  for await (const line of jsonObjectLines(path, options, FORMAT)) {
    if (line.kind === "quarantine") {
      yield line;
      continue;
    }
    const item = recordItem(line.record, line.source, line.text, domain, "");
    yield item.kind === "quarantine" ? lineQuarantine(line.source, line.text, item.entry) : item;
  }
}

/** One evaluation / resolver output record `{instance_id?, instruction?, history[]}`. */
function recordItem(record: Record<string, unknown>, source: SourceRef, text: string, domain: Domain, fieldPrefix: string): ReadItem {
  const task = taskId(record);
  if (!Array.isArray(record.history)) {
    const reason = `${fieldPrefix}history: expected an array of events, got ${describeType(record.history)}`;
    return {
      kind: "quarantine",
      entry: { source, ...(task !== undefined ? { id: task } : {}), stage: "read", field: `${fieldPrefix}history`, reason },
    };
  }
  const pairer = new EventPairer();
  let pairs = false;
  for (const [i, entry] of record.history.entries()) {
    // The oldest output stores `[action, observation]` pairs; they read as two events in order.
    if (Array.isArray(entry)) {
      pairs = true;
      for (const [j, event] of entry.entries()) pairer.add(event, `${fieldPrefix}history.${i}.${j}`);
    } else pairer.add(entry, `${fieldPrefix}history.${i}`);
  }
  const layout = pairs ? "history-pairs" : "history-events";
  return pairer.finish(source, contentId(task ?? "openhands", text), domain, record.instruction, layout, provenance(record, task), task);
}

/** The instance the record ran: `instance_id`, else the resolver's `owner/repo#number`. */
function taskId(record: Record<string, unknown>): string | undefined {
  const instance = record.instance_id;
  if ((typeof instance === "string" && instance !== "") || (typeof instance === "number" && Number.isFinite(instance)))
    return String(instance);
  const issue = record.issue;
  if (isRecord(issue) && typeof issue.owner === "string" && typeof issue.repo === "string" && issue.number !== undefined) {
    return `${issue.owner}/${issue.repo}#${String(issue.number)}`;
  }
  return undefined;
}

/** What the output record says about the run (see the reader's comment), only what it records. */
function provenance(record: Record<string, unknown>, task: string | undefined): Record<string, unknown> {
  const meta: Record<string, unknown> = {};
  if (task !== undefined) meta.task_id = task;
  const metadata = isRecord(record.metadata) ? record.metadata : {};
  if (typeof metadata.agent_class === "string" && metadata.agent_class !== "") meta.agent = metadata.agent_class;
  const model = isRecord(metadata.llm_config) ? metadata.llm_config.model : undefined;
  if (typeof model === "string" && model !== "") meta.model = model;
  const outcome: Record<string, unknown> = {};
  const testReport = isRecord(record.test_result) && isRecord(record.test_result.report) ? record.test_result.report : undefined;
  const resolved = testReport?.resolved ?? (isRecord(record.report) ? record.report.resolved : undefined);
  if (typeof resolved === "boolean") outcome.resolved = resolved;
  if (typeof record.success === "boolean") outcome.success = record.success;
  if (typeof record.error === "string" && record.error.trim() !== "") outcome.failure_mode = record.error;
  if (Object.keys(outcome).length > 0) meta.outcome = outcome;
  return meta;
}

/** `[` for a JSON array of events; anything else is read as JSONL. */
async function firstSignificantChar(path: string): Promise<string | undefined> {
  const { stream } = await openDecompressed(path);
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      const match = /[^\s\uFEFF]/.exec(chunk.toString("utf8"));
      if (match) return match[0];
    }
    return undefined;
  } finally {
    stream.destroy();
  }
}
