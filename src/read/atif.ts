import type { QuarantineEntry } from "../core/errors.ts";
import type { SourceRef, Trajectory } from "../core/trajectory.ts";
import { inputSize } from "../io/input-bytes.ts";
import { openDecompressed } from "../io/open-input.ts";
import { baseName, beside, parentOf, sideFileExists, sideFileSize, sideFolderExists } from "../io/side-files.ts";
import { checkStep, describeJson, type Header, optionalString, type Problem, type Step } from "./atif/step-fields.ts";
import { buildTurns } from "./atif/terminal-turns.ts";
import { episodeDirs, harborTrialDir, inferDomain, outcomeFiles, type TrialContext, trajectoryMeta, trialContext } from "./atif/trial.ts";
import { isJsonValueLine, LAYOUT_HEAD_BYTES, readHead } from "./json-array.ts";
import { type JsonKind, type JsonPath, JsonSyntaxError, selectJson } from "./json-select.ts";
import type { Companions, Reader, ReaderOptions, ReadItem } from "./reader.ts";
import { contentId, describeType, isRecord, jsonObjectLines } from "./record-helpers.ts";

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

/** `trajectory_id`, else `session_id`, else a hash of the file name; Harbor's segment files get their suffix. */
function documentId(header: Header, path: string): string {
  // Without ids (v1.7 allows it): the file's last three path parts, the same locally and in a bucket.
  const base = header.trajectoryId ?? header.sessionId ?? contentId("atif", path.split(/[\\/]/).slice(-3).join("/"));
  const segment = /^trajectory\.(cont-\d+|summarization-[\w.-]+?)\.json(\.gz|\.zst)?$/.exec(baseName(path));
  return segment && !base.endsWith(`/${segment[1]}`) ? `${base}/${segment[1]}` : base;
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
