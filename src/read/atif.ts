import type { QuarantineEntry } from "../core/errors.ts";
import type { Domain, SourceRef, Trajectory, Turn } from "../core/trajectory.ts";
import { inputSize } from "../io/input-bytes.ts";
import { openDecompressed } from "../io/open-input.ts";
import { readWholeText } from "../io/read-whole-text.ts";
import { baseName, beside, listFolder, parentOf, sideFileExists, sideFileSize, sideFolderExists } from "../io/side-files.ts";
import { canonicalJson } from "../normalize/json-canonical.ts";
import { isJsonValueLine, LAYOUT_HEAD_BYTES, readHead } from "./json-array.ts";
import { type JsonKind, type JsonPath, JsonSyntaxError, selectJson } from "./json-select.ts";
import type { Companions, Reader, ReaderOptions, ReadItem } from "./reader.ts";
import {
  contentId,
  describeJson as describeJsonValue,
  describeType,
  isRecord,
  jsonObjectLines,
  MAX_JSON_DEPTH,
  nestsTooDeep,
} from "./record-helpers.ts";

const FORMAT = "atif";

/**
 * Harbor's Agent Trajectory Interchange Format (ATIF, RFC 0001, `ATIF-v1.0` … `ATIF-v1.8`): the
 * `agent/trajectory.json` a Harbor / terminal-bench 2.0 trial writes (Terminus-2, and the
 * converters of OpenHands, Claude Code, Codex, mini-swe-agent …), and any other producer's file.
 *
 * One file is one trajectory (plus one per embedded `subagent_trajectories[]` entry, v1.7+). The
 * document is streamed with stream-json, step by step. A file of several trajectories — JSONL, one
 * compact trajectory per line, or a JSON array of them — is read one trajectory at a time (each
 * line or element whole, within `input.max_line_bytes`), its source naming the line or element.
 * Mapping:
 *
 * - **Action**: an agent step's tool call. A terminal call is rendered as the typed command:
 *   Terminus' `arguments.keystrokes` without the trailing newline(s) (the Enter), a keystroke
 *   string that is exactly a tmux key name as `^C` / `<Up>`; a shell tool's `arguments.command`
 *   (`bash`, `execute_bash`, …) verbatim. Any other call is `{"name", "arguments"}` as canonical
 *   JSON. Harness control calls (`mark_task_complete`, `finish`, `done`, `think`, `task_tracker`)
 *   are not environment actions: counted in `meta.skipped`, no turn.
 * - **Observation**: the step's `observation.results` for that call (`source_call_id`), in call
 *   order. Terminus-2 writes one result without `source_call_id` for all the keystrokes of a step:
 *   its framing (`New Terminal Output:`, `Current Terminal Screen:`, `Current terminal state:`,
 *   `Previous response had warnings:` …, the "Are you sure you want to mark the task as complete?"
 *   question) is taken off into `turn.meta.atif`, and the output is split at the shell's echo of
 *   each submitted command (a keystroke string holding several complete command lines is several
 *   commands; a heredoc, a quoted newline or a `\` continuation keeps a command whole). Each
 *   command is one turn whose observation runs from the end of its echo to the next command's
 *   echo, the next prompt included (the asciicast reader's convention: the echo is typing, never
 *   observed). A command whose echo is not found stays with the command before it (one turn, its
 *   lines joined); a step where no echo is found is one turn. A keystroke string that is empty is
 *   a wait: its output is appended to the turn before. A command that printed nothing and showed
 *   no next prompt is observed as `[no output]` (the openhands reader's word for it).
 * - **Thinking**: `reasoning_content`, then `message`, of the agent step, on its first turn.
 *   Agent steps without tool calls (final answers, Terminus' replies that failed to parse, which
 *   the harness answers in `observation`) are not environment turns: counted in `meta.skipped`.
 * - **Task**: the first user step's message. When it is Terminus' prompt (`Task Description:` …
 *   `Current terminal state:` `Current Terminal Screen:`), the task is the description, the
 *   instructions before it go to `meta.agent_system` and the screen to `initialObservation`.
 * - **Agent system text** (`meta.agent_system`): the system steps before the first user or agent step. Later system and user steps
 *   (v1.2 system events, user follow-ups) are counted in `meta.skipped`; so are
 *   `is_copied_context` steps (v1.5: copied from an earlier segment, not to be trained on again).
 * - **Id**: `trajectory_id` (v1.7, per document), else `session_id`; a Harbor continuation or
 *   summarization file (`trajectory.cont-1.json`, `trajectory.summarization-1-summary.json`) gets
 *   its suffix (`<id>/cont-1`), since segments of one run share a `session_id`.
 * - **Domain**: `--domain`, else from the tools called: a terminal tool → `terminal`, or `swe`
 *   when the task is code-repository work (SWE-bench-style `<uploaded_files>` / `<pr_description>`
 *   / "code repository" / `/testbed`, or a Harbor task name from a SWE dataset); browser tools
 *   (`navigate`, `click`, `browser_*` …) → `web`; search tools → `search`; else `terminal`.
 * - **Outcome**: Harbor writes the verifier's reward beside the trajectory:
 *   `<trial>/agent/trajectory.json` with `<trial>/result.json` (`verifier_result.rewards`,
 *   `exception_info`, `task_name`, `trial_name`, `agent_info`) and `<trial>/verifier/reward.txt` or
 *   `reward.json`. `meta.outcome` = {reward, success (reward is 1, for a 0/1 reward), rewards (when
 *   several), failure_mode (`exception_info.exception_type`)}; `meta.task_id` = `task_name`,
 *   `meta.attempt` = `trial_name`, `meta.harbor.side_files` what was read. They are opened as the
 *   input is (a path, or an `s3://` URI). On disk, these files (and the trial's `recording.cast`,
 *   `config.json`, logs, `verifier/` and Terminus' `episode-*` folders) are the file's companions.
 * - `meta.agent` / `agent_version` / `model`: `agent.name` / `version` / `model_name` (else the
 *   first step's `model_name`, else Harbor's `agent_info`); `meta.atif`: schema version, ids,
 *   `final_metrics`, notes, `extra`, tool names, `continued_trajectory_ref`.
 *
 * Quarantined, with the field (`steps.3.step_id`, 0-based like Harbor's validator): a document
 * that is not JSON or not an object, a `schema_version` that is not `ATIF-v1.0` … `ATIF-v1.8`,
 * step ids not sequential from 1, an unknown `source`, and fields of the wrong type; a tool call
 * without `tool_call_id` / `function_name` / object `arguments`, duplicate call ids in a step,
 * a `source_call_id` naming no call of its step. Fields the reader does not use are not checked
 * (Harbor's agent-only fields on other steps, timestamps' format, metrics), so a producer's minor
 * slip does not cost the trajectory.
 */
export const atifReader: Reader = {
  name: FORMAT,
  domain: "from the tools",
  description:
    "Harbor ATIF trajectory.json (ATIF-v1.0…v1.8; terminal-bench 2.0 / Terminus-2 and converters), verifier reward from the trial folder",

  sniff(head) {
    const text = head.replace(/^\uFEFF/, "");
    // A JSON array of trajectories: told by the version (a step's shape alone could be anything's).
    if (/^\s*\[\s*\{/.test(text)) return /"schema_version"\s*:\s*"ATIF-v\d/.test(text);
    if (!/^\s*\{/.test(text)) return false;
    if (/"schema_version"\s*:\s*"ATIF-v\d/.test(text)) return true;
    // The version may follow long steps: the steps' own shape tells.
    return /"steps"\s*:\s*\[\s*\{\s*"step_id"\s*:\s*\d/.test(text) && /"source"\s*:\s*"(system|user|agent)"/.test(text);
  },

  async companions(path: string): Promise<Companions> {
    // Side files are found through src/io/side-files.ts: the same on a disk, in a bucket, on the Hub.
    const trial = await harborTrialDir(path);
    const own = await inputSize(path).catch(() => 0);
    const outcome = trial ? await outcomeFiles(trial) : [];
    const sizes = await Promise.all(outcome.map(async (file) => (await sideFileSize(file)) ?? 0));
    const bytes = sizes.reduce((sum, size) => sum + size, own);
    if (!trial) return { dirs: [], files: [], bytes, label: `ATIF trajectory ${baseName(path)}` };
    const agentDir = parentOf(path);
    const verifier = beside(trial, "verifier");
    const dirs = [...((await sideFolderExists(verifier)) ? [verifier] : []), ...(await episodeDirs(agentDir))];
    const others = [
      beside(trial, "config.json"),
      beside(trial, "trial.log"),
      beside(trial, "exception.txt"),
      beside(agentDir, "recording.cast"),
    ];
    const present = await Promise.all(others.map((file) => sideFileExists(file)));
    const files = [...outcome, ...others.filter((_, i) => present[i])];
    return { dirs, files, bytes, label: `Harbor trial ${baseName(trial)}` };
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    if (await holdsSeveral(path)) {
      yield* readEach(path, options);
      return;
    }
    const source: SourceRef = { uri: path, format: FORMAT };
    const root = new DocumentBuilder("");
    const subagents: { index: number; value: unknown }[] = [];
    const { stream } = await openDecompressed(path);
    try {
      for await (const { path: at, value } of selectJson(stream, wanted)) {
        if (at.length === 0) {
          root.fail("", `expected a JSON object (an ATIF trajectory), got ${describeType(value)}`);
          break;
        }
        const [key, index] = at;
        if (key === "subagent_trajectories" && typeof index === "number") subagents.push({ index, value });
        else if (key === "steps" && typeof index === "number") root.step(index, value);
        else root.field(key as string, value);
        if (root.problem) break;
      }
    } catch (err) {
      if (!(err instanceof JsonSyntaxError)) throw err;
      root.fail("", err.message);
    }
    const context = await trialContext(path);
    const first = root.finish(source, path, options, context);
    yield first;
    if (first.kind !== "trajectory") return;
    for (const { index, value } of subagents) yield subagentItem(index, value, first.trajectory, source, path, options);
  },
};

/**
 * Whether the file holds several trajectories: a JSON array of objects, or JSON lines (a first line
 * that is a whole JSON value, then more). A pretty-printed document, a single compact line and
 * anything else are read as one document (streamed, and quarantined whole when broken).
 */
async function holdsSeveral(path: string): Promise<boolean> {
  const raw = await readHead(path);
  const head = raw.replace(/^\uFEFF/, "").trimStart();
  if (/^\[\s*\{/.test(head)) return true;
  if (!head.startsWith("{")) return false;
  const newline = head.indexOf("\n");
  // One line as long as the head: whether another line follows is read from the file.
  if (newline === -1) return Buffer.byteLength(raw) >= LAYOUT_HEAD_BYTES - 4 && (await textAfterFirstLine(path));
  return isJsonValueLine(head.slice(0, newline)) && head.slice(newline + 1).trim() !== "";
}

/** Whether anything but white space follows the file's first line break. */
async function textAfterFirstLine(path: string): Promise<boolean> {
  const { stream } = await openDecompressed(path);
  let seenBreak = false;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      let at = 0;
      if (!seenBreak) {
        const newline = chunk.indexOf(10);
        if (newline === -1) continue;
        seenBreak = true;
        at = newline + 1;
      }
      for (; at < chunk.length; at++) {
        const byte = chunk[at] as number;
        if (byte !== 10 && byte !== 13 && byte !== 32 && byte !== 9) return true;
      }
    }
  } catch {
    // A damaged file: read as one document, which reports the damage.
  } finally {
    stream.destroy();
  }
  return false;
}

/** Each line (or array element) of a file of trajectories, read as one document. */
async function* readEach(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
  for await (const line of jsonObjectLines(path, options, FORMAT)) {
    if (line.kind === "quarantine") {
      yield line;
      continue;
    }
    const source = line.source;
    const root = new DocumentBuilder("");
    const subagents: { index: number; value: unknown }[] = [];
    for (const [key, value] of Object.entries(line.record)) {
      if (key === "steps" && Array.isArray(value)) for (const [i, step] of value.entries()) root.step(i, step);
      else if (key === "subagent_trajectories" && Array.isArray(value))
        for (const [index, sub] of value.entries()) subagents.push({ index, value: sub });
      else root.field(key, value);
    }
    // Without ids (v1.7 allows it): named by the line's text, so the lines of one file stay apart.
    const first = root.finish(source, path, options, undefined, line.text);
    yield first;
    if (first.kind !== "trajectory") continue;
    for (const { index, value } of subagents) yield subagentItem(index, value, first.trajectory, source, path, options);
  }
}

/** Root fields and each step (and each embedded subagent) are assembled on their own. */
function wanted(path: JsonPath, kind: JsonKind): boolean {
  if (path.length === 0) return kind !== "object";
  const key = path[0];
  if (path.length === 1) return !((key === "steps" || key === "subagent_trajectories") && kind === "array");
  return path.length === 2 && (key === "steps" || key === "subagent_trajectories");
}

/** `ATIF-v1.0` … `ATIF-v1.8`: the versions Harbor's models accept (v1.8 added audio content). */
export const ATIF_VERSIONS = ["1.0", "1.1", "1.2", "1.3", "1.4", "1.5", "1.6", "1.7", "1.8"].map((v) => `ATIF-v${v}`);

// ---------------------------------------------------------------------------------------------
// The document

interface Problem {
  field: string;
  reason: string;
}

interface ToolCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

interface Result {
  callId: string | undefined;
  text: string;
  subagents: unknown[] | undefined;
}

/** What a step leaves once checked: only the parts the turns need. */
interface Step {
  index: number;
  stepId: number;
  source: "system" | "user" | "agent";
  message: string;
  reasoning: string | undefined;
  modelName: string | undefined;
  timestamp: string | undefined;
  copied: boolean;
  calls: ToolCall[];
  results: Result[];
  metrics: Record<string, unknown> | undefined;
}

const SOURCES = new Set(["system", "user", "agent"]);

class DocumentBuilder {
  problem: Problem | undefined;
  readonly fields = new Map<string, unknown>();
  readonly steps: Step[] = [];
  private stepCount = 0;

  /** Names the document inside its file (`subagent_trajectories.0.`) in fields and reasons. */
  readonly prefix: string;

  constructor(prefix: string) {
    this.prefix = prefix;
  }

  /** Records the first problem; `problem.reason` starts with its field, both within this document. */
  report(problem: Problem): void {
    if (this.problem) return;
    const field = `${this.prefix}${problem.field}`.replace(/\.$/, "");
    this.problem = { field, reason: problem.field === "" && this.prefix === "" ? problem.reason : `${this.prefix}${problem.reason}` };
  }

  fail(field: string, reason: string): void {
    this.report({ field, reason: field === "" ? reason : `${field}: ${reason}` });
  }

  field(key: string, value: unknown): void {
    if (key === "steps") this.fail("steps", `expected an array of steps, got ${describeType(value)}`);
    else if (key === "subagent_trajectories") this.fail(key, `expected an array of trajectories, got ${describeType(value)}`);
    else this.fields.set(key, value);
  }

  step(index: number, raw: unknown): void {
    if (this.problem) return;
    this.stepCount += 1;
    const checked = checkStep(index, raw);
    if ("reason" in checked) this.report(checked);
    else this.steps.push(checked);
  }

  /** The checked root fields, or the first problem. */
  header(): Header | Problem {
    const get = (key: string) => this.fields.get(key);
    const fail = (field: string, reason: string): Problem => {
      this.fail(field, reason);
      return this.problem as Problem;
    };
    // A document-level problem (not JSON, not an object) first, then the version, then the steps'.
    if (this.problem && this.problem.field === this.prefix.replace(/\.$/, "")) return this.problem;
    const version = get("schema_version");
    // Not seen: maybe after a step that already failed (the reading stops at the first problem).
    if (version === undefined && this.problem) return this.problem;
    const versionProblem =
      version === undefined
        ? 'required field is missing (e.g. "ATIF-v1.6")'
        : typeof version !== "string" || !ATIF_VERSIONS.includes(version)
          ? `unknown ATIF version ${describeJson(version)}; known: ${ATIF_VERSIONS.join(", ")}`
          : undefined;
    if (versionProblem !== undefined) {
      const where = `${this.prefix}schema_version`;
      return { field: where, reason: `${where}: ${versionProblem}` };
    }
    if (this.problem) return this.problem;
    if (typeof version !== "string") return fail("schema_version", "expected a string");
    const minor = Number(version.slice("ATIF-v1.".length));
    const session = get("session_id");
    if (session === undefined || session === null) {
      // Optional since v1.7 (an embedded subagent inherits its parent's run).
      if (minor < 7 && this.prefix === "")
        return fail("session_id", `required field is missing (optional only since ATIF-v1.7; this is ${version})`);
    } else if (typeof session !== "string") return fail("session_id", `expected a string, got ${describeType(session)}`);
    for (const key of ["trajectory_id", "notes", "continued_trajectory_ref"]) {
      const value = get(key);
      if (value !== undefined && value !== null && typeof value !== "string")
        return fail(key, `expected a string, got ${describeType(value)}`);
    }
    for (const key of ["final_metrics", "extra"]) {
      const value = get(key);
      if (value !== undefined && value !== null && !isRecord(value)) return fail(key, `expected an object, got ${describeType(value)}`);
    }
    const agent = get("agent");
    if (agent === undefined) return fail("agent", "required field is missing ({name, version, model_name?})");
    if (!isRecord(agent)) return fail("agent", `expected an object, got ${describeType(agent)}`);
    for (const key of ["name", "version"]) {
      if (typeof agent[key] !== "string") return fail(`agent.${key}`, `expected a string, got ${describeType(agent[key])}`);
    }
    if (agent.model_name !== undefined && agent.model_name !== null && typeof agent.model_name !== "string")
      return fail("agent.model_name", `expected a string, got ${describeType(agent.model_name)}`);
    if (this.stepCount === 0) return fail("steps", "required field is missing or empty (ATIF needs at least one step)");
    return {
      version,
      sessionId: typeof session === "string" ? session : undefined,
      trajectoryId: optionalString(get("trajectory_id")),
      agent,
      finalMetrics: isRecord(get("final_metrics")) ? (get("final_metrics") as Record<string, unknown>) : undefined,
      notes: optionalString(get("notes")),
      extra: isRecord(get("extra")) ? (get("extra") as Record<string, unknown>) : undefined,
      continued: optionalString(get("continued_trajectory_ref")),
    };
  }

  /** `record`: the text of a trajectory read from a file of several, naming one without ids. */
  finish(source: SourceRef, path: string, options: ReaderOptions, trial: TrialContext | undefined, record?: string): ReadItem {
    const header = this.header();
    const sessionId = this.fields.get("session_id");
    const quarantineId = typeof sessionId === "string" ? sessionId : undefined;
    if ("reason" in header) return quarantine(source, quarantineId, header);
    const id = record === undefined ? documentId(header, path) : (header.trajectoryId ?? header.sessionId ?? contentId("atif", record));
    const built = buildTurns(this.steps, header);
    if ("reason" in built) return quarantine(source, id, built);
    const domain = options.domain ?? inferDomain(built.toolNames, built.task, trial?.taskName);
    // The agent's system text describes the agent, not the environment: kept in meta, so the world
    // model trains with its domain's own system prompt (as for every agent-log reader).
    const meta = { ...trajectoryMeta(header, built, trial), ...(built.system !== undefined ? { agent_system: built.system } : {}) };
    const trajectory: Trajectory = {
      id,
      domain,
      source,
      ...(built.task !== undefined ? { task: built.task } : {}),
      ...(built.initialObservation !== undefined ? { initialObservation: built.initialObservation } : {}),
      turns: built.turns,
      meta,
    };
    return { kind: "trajectory", trajectory };
  }
}

/** One step, checked: the parts the turns need, or the first problem. */
function checkStep(index: number, raw: unknown): Step | Problem {
  const at = `steps.${index}`;
  const fail = (field: string, reason: string): Problem => {
    const where = field ? `${at}.${field}` : at;
    return { field: where, reason: `${where}: ${reason}` };
  };
  if (!isRecord(raw)) return fail("", `expected a step object, got ${describeType(raw)}`);
  if (nestsTooDeep(raw)) return fail("", `nested deeper than ${MAX_JSON_DEPTH} levels`);
  const stepId = raw.step_id;
  if (typeof stepId !== "number" || !Number.isInteger(stepId)) return fail("step_id", `expected an integer, got ${describeJson(stepId)}`);
  if (stepId !== index + 1) return fail("step_id", `expected ${index + 1} (step ids are sequential from 1), got ${stepId}`);
  if (typeof raw.source !== "string" || !SOURCES.has(raw.source))
    return fail("source", `expected "system", "user" or "agent", got ${describeJson(raw.source)}`);
  if (!("message" in raw)) return fail("message", "required field is missing (it may be an empty string)");
  const message = contentText(raw.message, `${at}.message`);
  if (typeof message !== "string") return message;
  for (const name of ["reasoning_content", "model_name", "timestamp"] as const) {
    const value = raw[name];
    if (value !== undefined && value !== null && typeof value !== "string")
      return fail(name, `expected a string, got ${describeType(value)}`);
  }
  if (raw.is_copied_context !== undefined && raw.is_copied_context !== null && typeof raw.is_copied_context !== "boolean")
    return fail("is_copied_context", `expected a boolean, got ${describeType(raw.is_copied_context)}`);
  const calls = toolCalls(raw.tool_calls, at);
  if (!Array.isArray(calls)) return calls;
  const results = observationResults(raw.observation, at, new Set(calls.map((call) => call.id)));
  if (!Array.isArray(results)) return results;
  if (raw.metrics !== undefined && raw.metrics !== null && !isRecord(raw.metrics))
    return fail("metrics", `expected an object, got ${describeType(raw.metrics)}`);
  return {
    index,
    stepId,
    source: raw.source as Step["source"],
    message,
    reasoning: optionalString(raw.reasoning_content),
    modelName: optionalString(raw.model_name),
    timestamp: optionalString(raw.timestamp),
    copied: raw.is_copied_context === true,
    calls,
    results,
    metrics: isRecord(raw.metrics) ? raw.metrics : undefined,
  };
}

interface Header {
  version: string;
  sessionId: string | undefined;
  trajectoryId: string | undefined;
  agent: Record<string, unknown>;
  finalMetrics: Record<string, unknown> | undefined;
  notes: string | undefined;
  extra: Record<string, unknown> | undefined;
  continued: string | undefined;
}

function quarantine(source: SourceRef, id: string | undefined, problem: Problem): ReadItem {
  const entry: QuarantineEntry = {
    source,
    ...(id !== undefined ? { id } : {}),
    stage: "read",
    ...(problem.field !== "" ? { field: problem.field } : {}),
    reason: problem.reason,
  };
  return { kind: "quarantine", entry };
}

function optionalString(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** A field's value for a reason, at most 80 characters; a value nested too deep to write is named by its type. */
function describeJson(value: unknown): string {
  if (value === undefined) return "nothing";
  const text = describeJsonValue(value);
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}

/** `trajectory_id`, else `session_id`, else a hash of the file name; Harbor's segment files get their suffix. */
function documentId(header: Header, path: string): string {
  // Without ids (v1.7 allows it): the file's last three path parts, the same locally and in a bucket.
  const base = header.trajectoryId ?? header.sessionId ?? contentId("atif", path.split(/[\\/]/).slice(-3).join("/"));
  const segment = /^trajectory\.(cont-\d+|summarization-[\w.-]+?)\.json(\.gz|\.zst)?$/.exec(baseName(path));
  return segment && !base.endsWith(`/${segment[1]}`) ? `${base}/${segment[1]}` : base;
}

// ---------------------------------------------------------------------------------------------
// Content, tool calls, observations

/**
 * A message or result `content`: a string, or (v1.6+) content parts — `text` parts verbatim,
 * `image` / `audio` parts (v1.8) as `[image image/png: path]`, joined by newlines.
 */
function contentText(value: unknown, field: string): string | Problem {
  if (typeof value === "string") return value;
  if (!Array.isArray(value))
    return { field, reason: `${field}: expected a string or an array of content parts, got ${describeType(value)}` };
  const texts: string[] = [];
  for (const [i, part] of value.entries()) {
    const at = `${field}.${i}`;
    if (!isRecord(part)) return { field: at, reason: `${at}: expected a content part object, got ${describeType(part)}` };
    if (part.type === "text") {
      if (typeof part.text !== "string")
        return { field: `${at}.text`, reason: `${at}.text: expected a string, got ${describeType(part.text)}` };
      texts.push(part.text);
    } else if (part.type === "image" || part.type === "audio") {
      const media = part.source;
      if (!isRecord(media) || typeof media.path !== "string")
        return { field: `${at}.source`, reason: `${at}.source: a ${part.type} part needs {media_type, path}, got ${describeJson(media)}` };
      const type = typeof media.media_type === "string" ? ` ${media.media_type}` : "";
      texts.push(`[${part.type}${type}: ${media.path}]`);
    } else {
      return { field: `${at}.type`, reason: `${at}.type: expected "text", "image" or "audio", got ${describeJson(part.type)}` };
    }
  }
  return texts.join("\n");
}

function toolCalls(value: unknown, at: string): ToolCall[] | Problem {
  if (value === undefined || value === null) return [];
  const field = `${at}.tool_calls`;
  if (!Array.isArray(value)) return { field, reason: `${field}: expected an array, got ${describeType(value)}` };
  const calls: ToolCall[] = [];
  const seen = new Set<string>();
  for (const [i, call] of value.entries()) {
    const where = `${field}.${i}`;
    if (!isRecord(call)) return { field: where, reason: `${where}: expected a tool call object, got ${describeType(call)}` };
    for (const key of ["tool_call_id", "function_name"]) {
      if (typeof call[key] !== "string")
        return { field: `${where}.${key}`, reason: `${where}.${key}: expected a string, got ${describeType(call[key])}` };
    }
    if (!isRecord(call.arguments))
      return {
        field: `${where}.arguments`,
        reason: `${where}.arguments: expected an object (may be {}), got ${describeType(call.arguments)}`,
      };
    const id = call.tool_call_id as string;
    if (seen.has(id))
      return { field: `${where}.tool_call_id`, reason: `${where}.tool_call_id: ${JSON.stringify(id)} is used twice in the step` };
    seen.add(id);
    calls.push({ id, name: call.function_name as string, args: call.arguments });
  }
  return calls;
}

function observationResults(value: unknown, at: string, callIds: Set<string>): Result[] | Problem {
  if (value === undefined || value === null) return [];
  const field = `${at}.observation`;
  if (!isRecord(value)) return { field, reason: `${field}: expected an object with results[], got ${describeType(value)}` };
  if (!Array.isArray(value.results))
    return { field: `${field}.results`, reason: `${field}.results: expected an array, got ${describeType(value.results)}` };
  const results: Result[] = [];
  for (const [i, result] of value.results.entries()) {
    const where = `${field}.results.${i}`;
    if (!isRecord(result)) return { field: where, reason: `${where}: expected a result object, got ${describeType(result)}` };
    const callId = result.source_call_id;
    if (callId !== undefined && callId !== null) {
      if (typeof callId !== "string")
        return { field: `${where}.source_call_id`, reason: `${where}.source_call_id: expected a string, got ${describeType(callId)}` };
      if (!callIds.has(callId))
        return {
          field: `${where}.source_call_id`,
          reason: `${where}.source_call_id: ${JSON.stringify(callId)} names no tool call of this step`,
        };
    }
    const refs = result.subagent_trajectory_ref;
    if (refs !== undefined && refs !== null && !Array.isArray(refs))
      return {
        field: `${where}.subagent_trajectory_ref`,
        reason: `${where}.subagent_trajectory_ref: expected an array, got ${describeType(refs)}`,
      };
    let text = "";
    if (result.content !== undefined && result.content !== null) {
      const content = contentText(result.content, `${where}.content`);
      if (typeof content !== "string") return content;
      text = content;
    } else if (Array.isArray(refs) && refs.length > 0) {
      text = refs.map(subagentRefText).join("\n");
    }
    results.push({ callId: typeof callId === "string" ? callId : undefined, text, subagents: Array.isArray(refs) ? refs : undefined });
  }
  return results;
}

function subagentRefText(ref: unknown): string {
  if (!isRecord(ref)) return "[subagent trajectory]";
  const name = optionalString(ref.trajectory_id) ?? optionalString(ref.session_id) ?? "?";
  const path = optionalString(ref.trajectory_path);
  return `[subagent trajectory ${name}${path ? `: ${path}` : ""}]`;
}

// ---------------------------------------------------------------------------------------------
// Turns

/** Harness control: the environment does not run these. */
const CONTROL_TOOLS = new Set(["mark_task_complete", "task_complete", "finish", "done", "think", "task_tracker"]);
const SHELL_TOOLS = new Set([
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
const BROWSER_TOOL =
  /^(browser_|playwright_|puppeteer_)|^(navigate|goto|go_to|click|double_click|hover|fill|type_text|select_option|scroll|screenshot|waitfor|wait_for|press_key|go_back|go_forward|open_url)$/i;
const SEARCH_TOOL = /(^|_)(web_?search|search|google|bing|brave|serper|tavily|exa)(_|$)/i;

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

interface Built {
  turns: Turn[];
  system: string | undefined;
  task: string | undefined;
  initialObservation: string | undefined;
  toolNames: string[];
  skipped: Record<string, number>;
  model: string | undefined;
}

const TERMINUS_TASK = /^([\s\S]*?)\n*Task Description:\n([\s\S]*?)\n+Current terminal state:\n(?:Current Terminal Screen:\n)?([\s\S]*)$/;

function buildTurns(steps: readonly Step[], header: Header): Built | Problem {
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
 * One turn per command, cut at the commands' echoes (see the reader's comment). `screen` output
 * (a whole screen) drops what precedes the first echo: the agent saw it before.
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

// ---------------------------------------------------------------------------------------------
// Domain, meta, the Harbor trial around the file

const SWE_TASK = /<uploaded_files>|<pr_description>|<issue_description>|\b(?:uploaded|a) (?:python )?code repository\b|\/testbed\b/i;
const SWE_DATASET = /^(?:[\w.-]+\/)?(?:swe[-_]?(?:bench|gym|smith|rebench|lancer|polybench)|swebench)/i;
const TERMINAL_TOOL = (name: string) => SHELL_TOOLS.has(name.toLowerCase()) || /keystroke|tmux|terminal|shell|bash/i.test(name);

export function inferDomain(toolNames: readonly string[], task: string | undefined, taskName: string | undefined): Domain {
  const swe = (task !== undefined && SWE_TASK.test(task)) || (taskName !== undefined && SWE_DATASET.test(taskName));
  if (toolNames.some(TERMINAL_TOOL)) return swe ? "swe" : "terminal";
  if (toolNames.some((name) => /edit|write_file|create_file|apply_patch|str_replace/i.test(name))) return swe ? "swe" : "terminal";
  if (toolNames.some((name) => BROWSER_TOOL.test(name))) return "web";
  if (toolNames.some((name) => SEARCH_TOOL.test(name))) return "search";
  return swe ? "swe" : "terminal";
}

function trajectoryMeta(header: Header, built: Built, trial: TrialContext | undefined): Record<string, unknown> {
  const { agent } = header;
  const atif: Record<string, unknown> = {
    schema_version: header.version,
    ...(header.sessionId !== undefined ? { session_id: header.sessionId } : {}),
    ...(header.trajectoryId !== undefined ? { trajectory_id: header.trajectoryId } : {}),
    agent: Object.fromEntries(Object.entries(agent).filter(([key]) => key !== "tool_definitions")),
    ...(header.finalMetrics ? { final_metrics: header.finalMetrics } : {}),
    ...(header.notes !== undefined ? { notes: header.notes } : {}),
    ...(header.extra ? { extra: header.extra } : {}),
    ...(header.continued !== undefined ? { continued_trajectory_ref: header.continued } : {}),
    tools: built.toolNames,
  };
  if (Array.isArray(agent.tool_definitions)) {
    atif.tool_definitions = agent.tool_definitions
      .map((tool) => (isRecord(tool) && isRecord(tool.function) ? tool.function.name : isRecord(tool) ? tool.name : undefined))
      .filter((name) => typeof name === "string");
  }
  const model = built.model ?? trial?.model;
  const meta: Record<string, unknown> = {
    agent: agent.name,
    agent_version: agent.version,
    ...(model !== undefined ? { model } : {}),
    ...(trial?.taskName !== undefined ? { task_id: trial.taskName } : {}),
    ...(trial?.trialName !== undefined ? { attempt: trial.trialName } : {}),
    ...(trial?.outcome ? { outcome: trial.outcome } : {}),
    atif,
  };
  if (trial) meta.harbor = { side_files: trial.files };
  if (Object.keys(built.skipped).length > 0) meta.skipped = built.skipped;
  return meta;
}

function subagentItem(
  index: number,
  value: unknown,
  parent: Trajectory,
  source: SourceRef,
  path: string,
  options: ReaderOptions,
): ReadItem {
  const builder = new DocumentBuilder(`subagent_trajectories.${index}.`);
  if (!isRecord(value)) {
    builder.fail("", `expected a trajectory object, got ${describeType(value)}`);
  } else {
    for (const [key, field] of Object.entries(value)) {
      if (key === "steps" && Array.isArray(field)) {
        for (const [i, step] of field.entries()) builder.step(i, step);
      } else if (key === "subagent_trajectories")
        continue; // nested further: read as their parent's own
      else builder.field(key, field);
    }
    if (builder.fields.get("session_id") === undefined && parent.meta?.atif) {
      const session = (parent.meta.atif as Record<string, unknown>).session_id;
      if (typeof session === "string") builder.fields.set("session_id", session);
    }
    const trajectoryId = builder.fields.get("trajectory_id");
    if (typeof trajectoryId !== "string") builder.fail("trajectory_id", "required on an embedded subagent trajectory (ATIF-v1.7)");
  }
  const item = builder.finish(source, path, options, undefined);
  if (item.kind !== "trajectory") return item;
  const own = item.trajectory;
  return {
    kind: "trajectory",
    trajectory: { ...own, id: `${parent.id}/${own.id}`, meta: { ...own.meta, atif_parent: parent.id } },
  };
}

/** `<trial>` when `path` is `<trial>/agent/<file>`: where Harbor writes result.json and verifier/. */
function trialDirOf(path: string): string | undefined {
  const agentDir = parentOf(path);
  return baseName(agentDir) === "agent" ? parentOf(agentDir) : undefined;
}

/** A Harbor trial (for companions): `<trial>/agent/<file>` with result.json or verifier/ beside agent/. */
async function harborTrialDir(path: string): Promise<string | undefined> {
  const trial = trialDirOf(path);
  if (!trial) return undefined;
  const [result, verifier] = await Promise.all([sideFileExists(beside(trial, "result.json")), sideFolderExists(beside(trial, "verifier"))]);
  return result || verifier ? trial : undefined;
}

async function outcomeFiles(trial: string): Promise<string[]> {
  const files = [beside(trial, "result.json"), beside(trial, "verifier", "reward.txt"), beside(trial, "verifier", "reward.json")];
  const present = await Promise.all(files.map((file) => sideFileExists(file)));
  return files.filter((_, i) => present[i]);
}

/** Terminus' `agent/episode-<n>/` folders. */
async function episodeDirs(agentDir: string): Promise<string[]> {
  const { dirs } = await listFolder(agentDir);
  return [...dirs]
    .filter((name) => /^episode-\d+$/.test(name))
    .sort()
    .map((name) => beside(agentDir, name));
}

interface TrialContext {
  taskName: string | undefined;
  trialName: string | undefined;
  model: string | undefined;
  outcome: Record<string, unknown> | undefined;
  /** Which side files were read. */
  files: string[];
}

const RESULT_FIELDS = new Set(["task_name", "trial_name", "verifier_result", "exception_info", "agent_info"]);

/**
 * The trial's result.json (streamed: it can hold the agent's whole message log) and reward files,
 * opened as the input itself is (a local path or an `s3://` URI); a side file that is absent or
 * unreadable gives nothing, never a failure of the trajectory.
 */
async function trialContext(path: string): Promise<TrialContext | undefined> {
  const trial = trialDirOf(path);
  if (!trial) return undefined;
  const files: string[] = [];
  const result: Record<string, unknown> = {};
  try {
    const resultPath = beside(trial, "result.json");
    if (!(await sideFileExists(resultPath))) throw new Error("no result.json");
    const { stream } = await openDecompressed(resultPath);
    const pick = (at: JsonPath, kind: JsonKind) =>
      at.length === 0 ? kind !== "object" : at.length === 1 && RESULT_FIELDS.has(at[0] as string);
    const found: Record<string, unknown> = {};
    for await (const { path: at, value } of selectJson(stream, pick)) if (at.length === 1) found[at[0] as string] = value;
    Object.assign(result, found);
    files.push("result.json");
  } catch {
    // Absent or damaged: no outcome from it.
  }
  let rewards: Record<string, number> | undefined;
  const verifier = result.verifier_result;
  if (isRecord(verifier) && isRecord(verifier.rewards)) rewards = numbers(verifier.rewards);
  if (!rewards) rewards = await rewardFile(trial, files);
  if (files.length === 0) return undefined;
  const outcome: Record<string, unknown> = {};
  if (rewards) {
    const reward = rewards.reward ?? (Object.keys(rewards).length === 1 ? Object.values(rewards)[0] : undefined);
    if (reward !== undefined) {
      outcome.reward = reward;
      if (reward === 0 || reward === 1) outcome.success = reward === 1;
    }
    if (Object.keys(rewards).length > 1) outcome.rewards = rewards;
  }
  const exception = isRecord(result.exception_info) ? result.exception_info : undefined;
  if (exception && typeof exception.exception_type === "string") {
    outcome.failure_mode = exception.exception_type;
    if (typeof exception.exception_message === "string") outcome.failure_message = exception.exception_message.slice(0, 500);
  }
  const info = isRecord(result.agent_info) ? result.agent_info : undefined;
  const modelInfo = info && isRecord(info.model_info) ? info.model_info : undefined;
  const modelName = modelInfo && typeof modelInfo.name === "string" ? modelInfo.name : undefined;
  const provider = modelInfo && typeof modelInfo.provider === "string" ? modelInfo.provider : undefined;
  return {
    taskName: optionalString(result.task_name),
    trialName: optionalString(result.trial_name),
    model: modelName && provider && !modelName.startsWith(`${provider}/`) ? `${provider}/${modelName}` : modelName,
    outcome: Object.keys(outcome).length > 0 ? outcome : undefined,
    files,
  };
}

function numbers(value: Record<string, unknown>): Record<string, number> | undefined {
  const entries = Object.entries(value).filter(
    (entry): entry is [string, number] => typeof entry[1] === "number" && Number.isFinite(entry[1]),
  );
  return entries.length > 0 ? Object.fromEntries(entries) : undefined;
}

const REWARD_FILE_BYTES = 1 << 20;

/** `verifier/reward.txt` (one number) or `verifier/reward.json` ({name: number}), as Harbor's verifier reads them. */
async function rewardFile(trial: string, files: string[]): Promise<Record<string, number> | undefined> {
  const txt = await readWholeText(beside(trial, "verifier", "reward.txt"), REWARD_FILE_BYTES);
  if ("text" in txt) {
    const text = txt.text.trim();
    if (/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(text)) {
      files.push("verifier/reward.txt");
      return { reward: Number(text) };
    }
  }
  const json = await readWholeText(beside(trial, "verifier", "reward.json"), REWARD_FILE_BYTES);
  if ("text" in json) {
    try {
      const parsed: unknown = JSON.parse(json.text);
      const rewards = isRecord(parsed) ? numbers(parsed) : undefined;
      if (rewards) {
        files.push("verifier/reward.json");
        return rewards;
      }
    } catch {
      // Not a reward file Harbor could read either.
    }
  }
  return undefined;
}
