import type { Domain, SourceRef, Turn } from "../core/trajectory.ts";
import { ChatTurnPairer, messageText } from "./chat-turns.ts";
import type { JsonKind, JsonPath, SelectedValue } from "./json-select.ts";
import type { Reader, ReaderOptions, ReadItem } from "./reader.ts";
import { describeType as describe, fileStem, isRecord } from "./record-helpers.ts";
import { attemptId, forEachSelectedHashed } from "./swe-attempt.ts";

const FORMAT = "swe-agent-traj";

/**
 * SWE-agent `.traj` files: one JSON object per file, one trajectory per file.
 *
 * Both schema generations carry the same `trajectory[]` of steps `{action, observation, thought,
 * response, state, execution_time?}`; only `state` (a JSON string in 0.x, an object in 1.x) and
 * `history[]` differ (1.x adds `message_type` and OpenAI `tool_calls`). Turns come from
 * `trajectory[]` in both: `action` is the command the environment ran (for function calling, the
 * tool call rendered as the ACI command) and `observation` the raw output, where `history[]`
 * holds the model's view of it, wrapped in prompt templates ("(Open file: …)", demonstrations).
 * Only files without steps (1.x demonstrations such as `function_calling_simple.traj`) fall back
 * to `history[]`: each assistant message's `action` paired with the tool/user message after it.
 *
 * Task: the first user message of `history[]` that is not a demonstration (the instance prompt
 * with the issue text), else `replay_config.problem_statement.text`.
 *
 * Instance and attempt: `meta.task_id` is the instance id in `replay_config.problem_statement.id`,
 * else the file name without `.traj` (SWE-agent writes `<instance_id>/<instance_id>.traj`, so
 * every run of an instance writes a file of the same name). The id is that instance id plus a hash
 * of the file's content (`<instance>-<16 hex digits of sha256>`, src/read/swe-attempt.ts): two runs
 * are two records, and one file has one id wherever it lives and however it is compressed. A
 * quarantined file is named by its instance id alone. Meta: `agent: "swe-agent"`, `model`
 * (`replay_config.agent.model.name`, 1.x; 0.x files and `info.model_stats` record no model name),
 * `exit_status` (`info.exit_status`), and an exit that is not a submission (`submitted`, or
 * `submitted (exit_cost)` etc. when SWE-agent autosubmitted at a limit) as `outcome.failure_mode`
 * (`exit_cost`, `exit_context`, `exit_format`, `exit_error`, `exit_forfeit`, `skipped`…); the file
 * records no verdict and no attempt number. The file is streamed (stream-json); `history[]` is
 * folded message by message and never held whole.
 */
export const sweAgentTrajReader: Reader = {
  name: FORMAT,
  domain: "swe",
  description: "SWE-agent .traj JSON (0.x `state` strings and 1.x `message_type`/tool_calls), one trajectory per file",

  sniff(head) {
    if (!/^\uFEFF?\s*\{/.test(head) || /"trajectory_format"\s*:/.test(head)) return false;
    // The shape, not the key: `trajectory` holds steps ({action, observation, thought, response,
    // state}); a `trajectory` of chat messages (SWE-rebench rows) or of anything else is not SWE-agent.
    if (/"trajectory"\s*:\s*\[\s*\{/.test(head)) return STEP_START.test(head);
    if (/"trajectory"\s*:\s*\[\s*\]/.test(head)) return /"(history|replay_config|info)"\s*:/.test(head);
    return /"history"\s*:\s*\[\s*\{\s*"role"\s*:/.test(head);
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    const source: SourceRef = { uri: path, format: FORMAT };
    const document = new TrajDocument();
    const parsed = await forEachSelectedHashed(path, wanted, (selected) => document.take(selected));
    const instance = document.instanceId(fileStem(path, /(\.traj)?(\.json)?$/i));
    if (!parsed.ok) {
      yield { kind: "quarantine", entry: { source, id: instance, stage: "read", reason: parsed.reason } };
      return;
    }
    yield document.finish(source, instance, attemptId(instance, parsed.digest), options.domain ?? "swe");
  },
};

/** The first step of `trajectory[]` opens with one of a SWE-agent step's keys. */
const STEP_START =
  /"trajectory"\s*:\s*\[\s*\{\s*"(action|observation|thought|response|state|execution_time|query|messages|extra_info)"\s*:/;

const STREAMED_ARRAYS = new Set(["trajectory", "history"]);

/** The parts of a `.traj` the reader needs; everything else (model stats, patches) is skipped unparsed. */
function wanted(path: JsonPath, kind: JsonKind): boolean {
  const [key, second, third] = path;
  if (path.length === 0) return kind !== "object"; // selected only to report it
  if (typeof key !== "string") return false;
  if (path.length === 1) {
    if (STREAMED_ARRAYS.has(key)) return kind !== "array"; // a wrong type, to report
    // 1.x keeps the replay config as an object (walked into below), older files as a JSON string.
    return key === "environment" || (key === "replay_config" && kind === "scalar");
  }
  if (path.length === 2) return (STREAMED_ARRAYS.has(key) && typeof second === "number") || (key === "info" && second === "exit_status");
  if (path.length === 4)
    return kind === "scalar" && key === "replay_config" && second === "agent" && third === "model" && path[3] === "name";
  return path.length === 3 && key === "replay_config" && second === "problem_statement" && third !== undefined && kind !== "object";
}

interface Problem {
  field?: string;
  reason: string;
}

/** Folds the selected values of one `.traj`, in document order, into a trajectory. */
class TrajDocument {
  private readonly steps: Turn[] = [];
  private readonly history = new ChatTurnPairer();
  /** Steps of `trajectory[]` with a null or missing action or observation, by kind. */
  private readonly stepsSkipped: Record<string, number> = {};
  private hasMessageTypes = false;
  private problem: Problem | undefined;
  private environment: string | undefined;
  private exitStatus: string | undefined;
  private problemStatement: Record<string, unknown> = {};
  private model: string | undefined;

  /** The instance id the replay config names, else `stem` (the file name). */
  instanceId(stem: string): string {
    const id = this.problemStatement.id;
    return typeof id === "string" && id !== "" ? id : stem;
  }

  take({ path, value }: SelectedValue): void {
    if (this.problem) return;
    const [key, index] = path;
    if (path.length === 0) this.problem = { reason: `a .traj file holds one JSON object, not ${describe(value)}` };
    else if (typeof index === "number" && key === "trajectory") this.problem = this.takeStep(value, index);
    else if (typeof index === "number" && key === "history") this.problem = this.takeMessage(value, index);
    else if (key === "trajectory" || key === "history")
      this.problem = { field: key, reason: `${key}: expected an array, got ${describe(value)}` };
    else if (key === "environment" && typeof value === "string") this.environment = value;
    else if (key === "info" && typeof value === "string") this.exitStatus = value;
    else if (key === "replay_config") this.takeReplayConfig(path, value);
  }

  finish(source: SourceRef, instance: string, id: string, domain: Domain): ReadItem {
    if (this.problem) return { kind: "quarantine", entry: { source, id: instance, stage: "read", ...this.problem } };
    this.history.finish();
    const fromTrajectory = this.steps.length > 0;
    const turns = fromTrajectory ? this.steps : this.history.turns;
    if (turns.length === 0) {
      const reason = "no (action, observation) turns: trajectory[] has no steps and history[] no answered actions";
      return { kind: "quarantine", entry: { source, id: instance, stage: "read", field: "trajectory", reason } };
    }
    const statement = this.problemStatement.text;
    const task = this.history.task ?? (typeof statement === "string" ? statement : undefined);
    const meta: Record<string, unknown> = {
      turns_from: fromTrajectory ? "trajectory" : "history",
      schema: this.hasMessageTypes ? "message_type" : "legacy",
      agent: "swe-agent",
      task_id: instance,
    };
    if (this.model !== undefined) meta.model = this.model;
    if (this.environment !== undefined) meta.environment = this.environment;
    if (this.exitStatus !== undefined) meta.exit_status = this.exitStatus;
    // A submission (also one SWE-agent made itself at a limit, "submitted (exit_cost)") carries no
    // verdict of its own; any other exit is how the run failed.
    if (this.exitStatus !== undefined && this.exitStatus !== "" && !/^submitted\b/.test(this.exitStatus))
      meta.outcome = { failure_mode: this.exitStatus };
    // Counts of history messages that are not turns; only meaningful when history gave the turns.
    if (!fromTrajectory && Object.keys(this.history.skipped).length > 0) meta.skipped = this.history.skipped;
    if (fromTrajectory && Object.keys(this.stepsSkipped).length > 0) meta.skipped = this.stepsSkipped;
    return { kind: "trajectory", trajectory: { id, domain, source, ...(task !== undefined ? { task } : {}), turns, meta } };
  }

  /** Adds one step as a turn, or says what is wrong with it. */
  private takeStep(value: unknown, index: number): Problem | undefined {
    const field = `trajectory.${index}`;
    if (!isRecord(value)) return { field, reason: `${field}: expected a step object, got ${describe(value)}` };
    for (const name of ["action", "observation"] as const) {
      // A step that crashed before its command ran or returned (null or missing) is no turn, but
      // the file's other steps still are: it is counted in `meta.skipped`, not quarantined.
      if (value[name] === null || value[name] === undefined) {
        const reason = name === "action" ? "step_without_action" : "step_without_observation";
        this.stepsSkipped[reason] = (this.stepsSkipped[reason] ?? 0) + 1;
        return undefined;
      }
      if (typeof value[name] !== "string")
        return { field: `${field}.${name}`, reason: `${field}.${name}: expected a string, got ${describe(value[name])}` };
    }
    const meta: Record<string, unknown> = {};
    if (typeof value.thought === "string" && value.thought.trim() !== "") meta.agent_thought = value.thought;
    if (value.state !== undefined) meta.state = parseState(value.state);
    if (typeof value.execution_time === "number") meta.execution_time = value.execution_time;
    const turn: Turn = { action: value.action as string, observation: value.observation as string };
    this.steps.push(Object.keys(meta).length > 0 ? { ...turn, meta } : turn);
    return undefined;
  }

  /** Feeds one history message to the pairer (task, fallback turns), or says what is wrong with it. */
  private takeMessage(value: unknown, index: number): Problem | undefined {
    const field = `history.${index}`;
    if (!isRecord(value) || typeof value.role !== "string")
      return { field: `${field}.role`, reason: `${field}: expected a message with a string role` };
    const text = messageText(value.content);
    if (text === undefined)
      return { field: `${field}.content`, reason: `${field}.content: expected a string or text parts, got ${describe(value.content)}` };
    if (typeof value.message_type === "string") this.hasMessageTypes = true;
    if (value.is_demo === true) {
      // Demonstrations are example trajectories shown to the model, not this run.
      this.history.count("demonstration_message");
      return undefined;
    }
    const thought = typeof value.thought === "string" && value.thought.trim() !== "" ? value.thought : undefined;
    const actions =
      value.role === "assistant" && typeof value.action === "string" ? [{ action: value.action, ...(thought ? { thought } : {}) }] : [];
    this.history.add(value.role, text, actions);
    return undefined;
  }

  private takeReplayConfig(path: JsonPath, value: unknown): void {
    if (path.length === 4) {
      if (typeof value === "string" && value !== "") this.model = value;
      return;
    }
    if (path.length === 3 && typeof path[2] === "string") {
      this.problemStatement[path[2]] = value;
      return;
    }
    // Older 1.x files store the replay config as a JSON string.
    if (typeof value !== "string") return;
    try {
      const config = JSON.parse(value) as { problem_statement?: unknown; agent?: unknown };
      if (isRecord(config.problem_statement)) this.problemStatement = config.problem_statement;
      const model = isRecord(config.agent) && isRecord(config.agent.model) ? config.agent.model.name : undefined;
      if (typeof model === "string" && model !== "") this.model = model;
    } catch {
      // An unreadable replay config only loses the instance id and model; the file name stands in.
    }
  }
}

/** 0.x stores the environment state as a JSON string, 1.x as an object; both become an object. */
function parseState(state: unknown): unknown {
  if (typeof state !== "string") return state;
  try {
    return JSON.parse(state);
  } catch {
    return state;
  }
}
