import { Readable } from "node:stream";
import type { SourceRef, Trajectory } from "../core/trajectory.ts";
import { openDecompressed } from "../io/open-input.ts";
import { baseName, beside, listFolder, parentOf, sideFolderExists } from "../io/side-files.ts";
import { inferDomain } from "./chat-rows/domain.ts";
import { type Call, type Message, makeMessage } from "./chat-rows/message.ts";
import { quarantine } from "./chat-rows/row-item.ts";
import { rowMeta, systemText } from "./chat-rows/row-meta.ts";
import { StepPairer } from "./chat-rows/step-pairer.ts";
import { specName } from "./chat-rows/tools.ts";
import { readHead } from "./json-array.ts";
import { type JsonKind, type JsonPath, JsonSyntaxError, selectJson } from "./json-select.ts";
import { parseJsonLine, parseSniffedJson, type Reader, type ReaderOptions, type ReadItem } from "./reader.ts";
import { describeType, FieldError, isRecord, jsonObjectLines, jsonTextOr, MAX_JSON_DEPTH, nestsTooDeep } from "./record-helpers.ts";

const FORMAT = "tau2-bench";
/** The folder of a dir-format run's simulation files (tau2 `SIMULATIONS_DIR`). */
const SIMULATIONS_DIR = "simulations";

/*
 * τ²-bench simulation results, as `tau2 run` writes them (sierra-research/tau2-bench,
 * `src/tau2/data_model/simulation.py` Results / SimulationRun, `data_model/message.py`,
 * `orchestrator/orchestrator.py`, `runner/checkpoint.py`):
 *
 * - the monolithic results file (`data/simulations/<timestamp>_<domain>_<agent>_<user>.json`, or
 *   `<save_to>/results.json`): `{timestamp, info, tasks, simulations: [SimulationRun]}`, pydantic's
 *   `model_dump_json(indent=…)`. Streamed with stream-json: `info` and the tasks' tickets are kept,
 *   then one simulation at a time is assembled, read and dropped, so a file of hundreds of MB is
 *   never held whole. A file cut mid-write keeps the simulations before the break; the rest is one
 *   quarantine entry naming the break's byte offset, line and column (a second, validating pass).
 * - the dir format (voice runs' default; `Results.save(format="dir")`): `results.json` holds the
 *   metadata (`info`, `tasks`, `simulation_index`, no `simulations`) and `simulations/<id>.json`
 *   one SimulationRun each. As tau2 tells it (`Results._detect_format`), a results file with a
 *   `simulations/` folder beside it stands for the files in that folder (`expand`); each is read
 *   on its own, with the run's header taken from the results file beside the folder.
 * - SimulationRun objects one per JSONL line or in a JSON array (what scripts dump): each is one
 *   record (no header unless the file sits in a run's `simulations/` folder).
 *
 * One trajectory per simulation run. Messages (`SystemMessage`, `AssistantMessage` /
 * `UserMessage` with `content` and `tool_calls: [{id, name, arguments, requestor}]`,
 * `ToolMessage {id, content, requestor, error}`, a `MultiToolMessage {tool_messages}` unwrapped)
 * are paired as chat-tool-rows pairs chats (src/read/chat-rows/step-pairer.ts): each tool call →
 * the ToolMessage with its id (`error: true` → `turn.meta.is_error`); the agent's and the user's
 * words are context (`turn.meta.dialogue`). The telecom domain's user acts on their own phone
 * (dual control): its tool calls are turns too, marked `turn.meta.requestor: "user"`. A
 * full-duplex (voice) run without `messages` is read from its `ticks` (each tick's agent chunk,
 * agent calls and results, then the user's; consecutive text chunks of one speaker joined), as
 * tau2's `SimulationRun.get_messages` derives them, in tick order.
 *
 * Task: the customer's first message (the agent opens with a fixed greeting, so it is also in the
 * first turn's dialogue), else the task's `ticket` (solo mode). `meta.agent_system`: the domain
 * policy (`info.environment_info.policy`, or the simulation's own `policy`) and the tool
 * signatures when the run saved them (`tool_defs`). Domain (unless set): from the tools, as for
 * chat rows — customer-service function tools are `mcp`. Id: `<domain>/<task_id>/trial-<trial>@<id>`.
 * `meta.outcome`: `reward` (`reward_info.reward`), `success` when the reward is 1 (tau2's
 * `is_successful`), `failure_mode` = the termination reason unless the user or agent stopped;
 * `meta.agent` / `meta.model`: the agent implementation and its LLM; `meta.task_id`,
 * `meta.attempt` (the trial); `meta.tau2_bench`: simulation id, seed, termination reason, reward
 * basis and DB check, costs, duration, the user simulator and its LLM, domain, mode, git commit.
 *
 * Refused (quarantined, with file, element index and field): a simulation that is not an object,
 * without an id, whose messages are not a list of message objects (a call without a name, content
 * that is not text); a simulation with no answered tool call (as chat rows are). Ids decide (tau2
 * replays a run by them, `Environment.set_state`): a ToolMessage whose id answers no open call is
 * counted in `meta.skipped` (`tool_result_without_call`), never given to another call in order.
 * The original τ-bench's results (a JSON array of `{task_id, reward, info, traj, trial}`) stay
 * chat-tool-rows'.
 */
export const tau2BenchReader: Reader = {
  name: FORMAT,
  domain: "from the tools",
  description:
    "τ²-bench `tau2 run` results (Results JSON, dir-format simulations/<id>.json): each simulation's messages, tool_calls → ToolMessages",

  sniff(head) {
    const text = head.replace(/^\uFEFF/, "").trimStart();
    return isResultsHead(text) || isSimulationsHead(text);
  },

  async expand(path: string): Promise<string[] | undefined> {
    // tau2's own rule (Results._detect_format): a `simulations/` folder beside the results file.
    const simulations = beside(parentOf(path), SIMULATIONS_DIR);
    if (!(await sideFolderExists(simulations))) return undefined;
    if (!isResultsHead((await readHead(path, HEADER_HEAD_BYTES)).replace(/^\uFEFF/, "").trimStart())) return undefined;
    const listing = await listFolder(simulations);
    const files = [...listing.files.keys()].filter((name) => SIMULATION_FILE.test(name)).sort();
    return files.length > 0 ? files.map((name) => beside(simulations, name)) : undefined;
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    if (options.range && options.range.start > 0) return;
    const head = (await readHead(path)).replace(/^\uFEFF/, "").trimStart();
    if (isSimulationsHead(head)) yield* readSimulationRecords(path, options);
    else yield* readResults(path, options);
  },
};

/** The head read to tell a results file (its `info` comes first). */
const HEADER_HEAD_BYTES = 8192;
const SIMULATION_FILE = /\.json(\.gz|\.zst)?$/;

/** `{"timestamp": …, "info": {"git_commit": …` — pydantic writes Results' and Info's fields in this order. */
const RESULTS_HEAD =
  /^\{\s*(?:"(?:timestamp|format_version)"\s*:\s*(?:"(?:[^"\\]|\\.)*"|null|-?\d[\d.eE+-]*)\s*,\s*)*"info"\s*:\s*\{\s*"git_commit"\s*:\s*"/;
/** A SimulationRun (or a JSON array or JSONL of them): `{"id": …, "task_id": …,` then its start time and termination reason. */
const SIMULATION_HEAD = /^(?:\[\s*)?\{\s*"id"\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*"task_id"\s*:\s*(?:"(?:[^"\\]|\\.)*"|-?\d+)\s*,/;
/**
 * The same with its keys sorted (`json.dump(…, sort_keys=True)`, `jq -S`): `agent_cost`, the scalar
 * fields before `id` (`duration`, `end_time`), `id`, then `messages` (a list; null in a voice run),
 * which holds the rest back past any head.
 */
const SORTED_SIMULATION_HEAD =
  /^(?:\[\s*)?\{\s*"agent_cost"\s*:\s*(?:null|-?\d[\d.eE+-]*)\s*,(?:\s*"[a-h][a-z_]*"\s*:\s*(?:null|-?\d[\d.eE+-]*|"(?:[^"\\]|\\.)*")\s*,)*\s*"id"\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*"messages"\s*:\s*(?:\[|null)/;

function isResultsHead(text: string): boolean {
  return RESULTS_HEAD.test(text);
}

function isSimulationsHead(text: string): boolean {
  if (SORTED_SIMULATION_HEAD.test(text)) return true;
  if (SIMULATION_HEAD.test(text)) {
    const start = text.slice(0, 4096);
    return /"start_time"\s*:/.test(start) && /"termination_reason"\s*:\s*"/.test(start);
  }
  // Keys in any other order: a first record the head holds whole, told by its fields.
  const line = text.startsWith("[") ? undefined : text.split("\n", 1)[0];
  const parsed = line?.startsWith("{") ? parseSniffedJson(line) : undefined;
  return parsed?.ok === true && isSimulationRun(parsed.value);
}

/** A SimulationRun by its fields, whatever their order: ids, start time, a termination reason, and messages or ticks. */
function isSimulationRun(value: unknown): boolean {
  if (!isRecord(value)) return false;
  const id = (v: unknown) => typeof v === "string" || (typeof v === "number" && Number.isInteger(v));
  return (
    typeof value.id === "string" &&
    id(value.task_id) &&
    typeof value.start_time === "string" &&
    typeof value.termination_reason === "string" &&
    (Array.isArray(value.messages) || Array.isArray(value.ticks))
  );
}

// ---------------------------------------------------------------------------------------------
// The run's header: `info` and the tasks' tickets

interface RunHeader {
  info?: Record<string, unknown>;
  /** Each task's `ticket` (the task as a solo agent is given it), by task id. */
  tickets: Map<string, string>;
}

function takeTicket(header: RunHeader, task: unknown): void {
  if (!isRecord(task) || typeof task.ticket !== "string" || task.ticket.trim() === "") return;
  if (typeof task.id === "string" || typeof task.id === "number") header.tickets.set(String(task.id), task.ticket);
}

const isHeaderPart = (at: JsonPath) =>
  (at.length === 1 && at[0] === "info") || (at.length === 2 && at[0] === "tasks" && typeof at[1] === "number");

/** Headers of dir-format runs read this process (by file and size): each run's is read once, not once per simulation. */
const headers = new Map<string, Promise<RunHeader>>();

/** The header of the run whose `simulations/` folder holds `path`, when the results file is beside the folder. */
async function headerBeside(path: string): Promise<RunHeader | undefined> {
  const folder = parentOf(path);
  if (baseName(folder) !== SIMULATIONS_DIR) return undefined;
  const runDir = parentOf(folder);
  const listing = await listFolder(runDir);
  const names = [...listing.files.keys()].filter((name) => /\.json$/.test(name)).sort();
  // `results.json` first (tau2's name for it in a run folder), then any other results file.
  for (const name of [...names.filter((n) => n === "results.json"), ...names.filter((n) => n !== "results.json")]) {
    const file = beside(runDir, name);
    if (!isResultsHead((await readHead(file, HEADER_HEAD_BYTES)).replace(/^\uFEFF/, "").trimStart())) continue;
    const key = `${file}\u0000${listing.files.get(name)}`;
    let header = headers.get(key);
    if (!header) {
      if (headers.size >= 16) headers.clear();
      header = readHeader(file);
      headers.set(key, header);
    }
    return header;
  }
  return undefined;
}

/** `info` and the tickets of a results file, up to its simulation index or simulations (a side file: what can be read). */
async function readHeader(file: string): Promise<RunHeader> {
  const header: RunHeader = { tickets: new Map() };
  const wanted = (at: JsonPath) =>
    isHeaderPart(at) ||
    (at.length === 2 && at[0] === "simulation_index" && at[1] === 0) ||
    (at.length === 3 && at[0] === "simulations" && at[1] === 0);
  try {
    const { stream } = await openDecompressed(file);
    for await (const { path: at, value } of selectJson(stream, wanted)) {
      if (at[0] === "info") header.info = isRecord(value) ? value : undefined;
      else if (at[0] === "tasks") takeTicket(header, value);
      // The index or the first simulation: the header is over.
      else break;
    }
  } catch {
    // A damaged or unreadable header: the simulation files are read with what it gave.
  }
  return header;
}

// ---------------------------------------------------------------------------------------------
// Reading

/** A results file (`{timestamp, info, tasks, simulations}`), streamed simulation by simulation. */
async function* readResults(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
  const source: SourceRef = { uri: path, format: FORMAT };
  const header: RunHeader = { tickets: new Map() };
  let simulations = 0;
  let indexed = 0;
  let refused = false;
  const wanted = (at: JsonPath, kind: JsonKind) =>
    (at.length === 0 && kind !== "object") ||
    isHeaderPart(at) ||
    (at.length === 1 && at[0] === "simulations" && kind !== "array") ||
    (at.length === 2 && at[0] === "simulations" && typeof at[1] === "number") ||
    (at.length === 3 && at[0] === "simulation_index" && typeof at[1] === "number" && at[2] === "id");
  try {
    const { stream } = await openDecompressed(path);
    for await (const { path: at, value } of selectJson(stream, wanted)) {
      const [key, index] = at;
      if (at.length === 0) {
        yield quarantine(source, {
          reason: `expected a τ²-bench results object ({timestamp, info, tasks, simulations}), got ${describeType(value)}`,
        });
        return;
      }
      if (key === "info") header.info = isRecord(value) ? value : undefined;
      else if (key === "tasks") takeTicket(header, value);
      else if (key === "simulation_index") indexed += 1;
      else if (typeof index === "number") {
        simulations += 1;
        yield simulationItem(value, header, { uri: path, offset: 0, row: index, format: FORMAT }, options, `simulations.${index}`);
      } else if (value !== null) {
        refused = true;
        yield quarantine(source, {
          field: "simulations",
          reason: `simulations: expected a list of simulation runs, got ${describeType(value)}`,
        });
      }
    }
  } catch (err) {
    if (!(err instanceof JsonSyntaxError)) throw err;
    const at = await breakAt(path);
    // The parser fails on the chunk holding the break, dropping what that chunk held before it: the
    // simulations there are read again from the bytes before the break (a file that simply ends).
    if (at) {
      for await (const item of simulationsBefore(path, at.offset, simulations, header, options)) {
        simulations += 1;
        yield item;
      }
    }
    const where = simulations === 0 ? "before its first simulation" : `after simulation ${simulations - 1}`;
    const position = at ? ` at byte ${at.offset} (line ${at.line}, column ${at.column})` : "";
    yield quarantine(
      { uri: path, offset: at?.offset ?? 0, row: simulations, format: FORMAT },
      {
        field: "simulations",
        reason: `the results file breaks ${where}${position} (a file cut mid-write?): ${err.message}; the ${simulations} simulation(s) before it are read, nothing after it`,
      },
    );
    return;
  }
  if (simulations === 0 && !refused) {
    const reason =
      indexed > 0
        ? `the results file holds no simulations: it is a dir-format run's results.json listing ${indexed} in simulation_index, to be read from the ${SIMULATIONS_DIR}/<id>.json files beside it, and none is there`
        : "the results file holds no simulations (a run that finished none): nothing to read";
    yield quarantine(source, { field: "simulations", reason });
  }
}

/** The simulations from index `from` on that lie whole in the first `bytes` bytes of the file. */
async function* simulationsBefore(
  path: string,
  bytes: number,
  from: number,
  header: RunHeader,
  options: ReaderOptions,
): AsyncGenerator<ReadItem> {
  const { stream } = await openDecompressed(path);
  async function* start(): AsyncGenerator<Buffer> {
    let left = bytes;
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      if (left <= 0) break;
      const part = chunk.subarray(0, left);
      left -= part.length;
      yield part;
    }
  }
  const wanted = (at: JsonPath) => at.length === 2 && at[0] === "simulations" && typeof at[1] === "number" && at[1] >= from;
  try {
    for await (const { path: at, value } of selectJson(Readable.from(start()), wanted))
      yield simulationItem(value, header, { uri: path, offset: 0, row: at[1] as number, format: FORMAT }, options, `simulations.${at[1]}`);
  } catch (err) {
    // The bytes end inside a value: what came before it was read.
    if (!(err instanceof JsonSyntaxError)) throw err;
  } finally {
    stream.destroy();
  }
}

/** SimulationRun objects: a dir-format run's `simulations/<id>.json`, or a JSONL file / JSON array of them. */
async function* readSimulationRecords(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
  const header = (await headerBeside(path)) ?? { tickets: new Map() };
  for await (const line of jsonObjectLines(path, options, FORMAT)) {
    if (line.kind === "quarantine") yield line;
    else yield simulationItem(line.record, header, line.source, options, "");
  }
}

/** Where the document stops being JSON: byte offset (of the decompressed content), line and column, from stream-json's verifier. */
async function breakAt(path: string): Promise<{ offset: number; line: number; column: number } | undefined> {
  const { jsonVerifier } = await import("stream-json/core/utils/verifier.js");
  const validate = jsonVerifier() as unknown as (chunk: string | symbol) => unknown;
  let bom = 0;
  let stream: import("node:stream").Readable | undefined;
  try {
    ({ stream } = await openDecompressed(path));
    let first = true;
    // Decoded as latin1, one character per byte: the verifier's offsets are byte offsets.
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      let bytes = chunk;
      if (first && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
        bytes = bytes.subarray(3);
        bom = 3;
      }
      first = false;
      validate(bytes.toString("latin1"));
    }
    validate(Symbol.for("object-stream.none"));
  } catch (err) {
    const { offset, line, pos } = (err ?? {}) as { offset?: unknown; line?: unknown; pos?: unknown };
    if (typeof offset === "number" && typeof line === "number" && typeof pos === "number")
      return { offset: offset + bom, line, column: pos };
  } finally {
    stream?.destroy();
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// One simulation run

const NORMAL_STOPS = new Set(["user_stop", "agent_stop"]);

function simulationItem(raw: unknown, header: RunHeader, source: SourceRef, options: ReaderOptions, prefix: string): ReadItem {
  const at = (name: string) => (prefix === "" ? name : `${prefix}.${name}`);
  const excerptOf = () => jsonTextOr(raw, "").slice(0, 1000);
  if (!isRecord(raw))
    return quarantine(source, {
      ...(prefix ? { field: prefix } : {}),
      reason: `${prefix || "record"}: expected a simulation run object, got ${describeType(raw)}`,
    });
  if (nestsTooDeep(raw))
    return quarantine(source, {
      ...(prefix ? { field: prefix } : {}),
      reason: `${prefix || "record"}: nested deeper than ${MAX_JSON_DEPTH} levels`,
    });
  const simId = typeof raw.id === "number" && Number.isFinite(raw.id) ? String(raw.id) : raw.id;
  if (typeof simId !== "string" || simId.trim() === "")
    return quarantine(
      source,
      { field: at("id"), reason: `${at("id")}: expected the simulation's id (a string), got ${describeType(raw.id)}` },
      excerptOf(),
    );
  const info = header.info ?? {};
  const environment = isRecord(info.environment_info) ? info.environment_info : {};
  const agentInfo = isRecord(info.agent_info) ? info.agent_info : {};
  const userInfo = isRecord(info.user_info) ? info.user_info : {};
  const voice = isRecord(info.audio_native_config) ? info.audio_native_config : {};
  const domainName = stringOf(environment.domain_name);
  const taskId = typeof raw.task_id === "number" && Number.isFinite(raw.task_id) ? String(raw.task_id) : stringOf(raw.task_id);
  const trial = typeof raw.trial === "number" && Number.isFinite(raw.trial) ? raw.trial : undefined;
  const id = `${domainName ?? "tau2"}/${taskId ?? "task"}${trial !== undefined ? `/trial-${trial}` : ""}@${simId}`;
  const fail = (field: string | undefined, reason: string) => quarantine(source, { id, field, reason }, excerptOf());

  let messages: Message[];
  try {
    if (Array.isArray(raw.messages)) messages = messagesOf(raw.messages, at("messages"));
    else if (Array.isArray(raw.ticks)) messages = tickMessages(raw.ticks, at("ticks"));
    else
      return fail(
        at("messages"),
        `${at("messages")}: expected a list of messages (or, for a full-duplex run, ticks), got ${describeType(raw.messages)}`,
      );
  } catch (err) {
    if (!(err instanceof FieldError)) throw err;
    return fail(err.field, err.message);
  }
  const pairer = new StepPairer();
  // Ids decide (tau2 replays a run by them: `Environment.set_state` refuses a mismatch): a ToolMessage
  // whose id answers no open call is counted, never given to another call in order.
  const open = new Set<string>();
  let withIds = false;
  for (const message of messages) {
    for (const call of message.calls) {
      if (call.id === undefined) continue;
      open.add(call.id);
      withIds = true;
    }
    if (message.role === "tool" && message.toolCallId !== undefined && withIds) {
      if (!open.delete(message.toolCallId)) {
        pairer.count("tool_result_without_call");
        continue;
      }
    }
    pairer.add(message);
  }
  pairer.finish();
  const termination = stringOf(raw.termination_reason);
  if (pairer.turns.length === 0) {
    const counts = Object.entries(pairer.skipped)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ");
    const ended = termination ? `; it ended with ${termination}` : "";
    const key = Array.isArray(raw.messages) ? at("messages") : at("ticks");
    return fail(
      key,
      `${key}: no tool call was followed by its result (${messages.length} message(s)${counts ? `, ${counts}` : ""}${ended})`,
    );
  }

  const specs = isRecord(environment.tool_defs) ? Object.values(environment.tool_defs) : [];
  const toolNames = [...specs.map(specName).filter((n): n is string => n !== undefined), ...pairer.calledNames];
  const domain = options.domain ?? inferDomain({}, toolNames, pairer.commands);
  const policy = stringOf(raw.policy) ?? stringOf(environment.policy);
  const agentSystem = systemText(policy !== undefined ? { system: policy } : {}, "messages", pairer.systems, specs);
  const firstWords = messages.find((m) => m.role === "user" && m.calls.length === 0 && m.text.trim() !== "")?.text;
  const task = pairer.task ?? firstWords ?? (taskId !== undefined ? header.tickets.get(taskId) : undefined);

  const rewardInfo = isRecord(raw.reward_info) ? raw.reward_info : {};
  const reward = typeof rewardInfo.reward === "number" && Number.isFinite(rewardInfo.reward) ? rewardInfo.reward : undefined;
  const model = stringOf(agentInfo.llm) ?? stringOf(voice.model);
  const row: Record<string, unknown> = {
    ...(stringOf(agentInfo.implementation) ? { agent: agentInfo.implementation } : {}),
    ...(model ? { model } : {}),
    ...(taskId !== undefined ? { task_id: taskId } : {}),
    ...(trial !== undefined ? { trial } : {}),
    ...(reward !== undefined ? { reward, success: Math.abs(reward - 1) <= 1e-6 } : {}),
    ...(termination && !NORMAL_STOPS.has(termination) ? { failure_mode: termination } : {}),
  };
  const dbCheck = isRecord(rewardInfo.db_check) ? rewardInfo.db_check : {};
  const details: Record<string, unknown> = {
    simulation_id: simId,
    ...(taskId !== undefined ? { task_id: taskId } : {}),
    ...(trial !== undefined ? { trial } : {}),
    ...numberField("seed", raw.seed),
    ...(termination ? { termination_reason: termination } : {}),
    ...(reward !== undefined ? { reward } : {}),
    ...(Array.isArray(rewardInfo.reward_basis) ? { reward_basis: rewardInfo.reward_basis.filter((b) => typeof b === "string") } : {}),
    ...(typeof dbCheck.db_match === "boolean" ? { db_match: dbCheck.db_match } : {}),
    ...numberField("agent_cost", raw.agent_cost),
    ...numberField("user_cost", raw.user_cost),
    ...numberField("duration", raw.duration),
    ...(domainName ? { domain: domainName } : {}),
    ...(stringOf(userInfo.implementation) ? { user: userInfo.implementation } : {}),
    ...(stringOf(userInfo.llm) ? { user_llm: userInfo.llm } : {}),
    ...(stringOf(raw.mode) ? { mode: raw.mode } : {}),
    ...(stringOf(info.git_commit) ? { git_commit: info.git_commit } : {}),
  };
  const meta = { ...rowMeta(row, pairer), ...(agentSystem !== undefined ? { agent_system: agentSystem } : {}), tau2_bench: details };
  const trajectory: Trajectory = {
    id,
    domain,
    source,
    ...(task !== undefined ? { task } : {}),
    turns: pairer.turns,
    meta,
  };
  return { kind: "trajectory", trajectory };
}

function stringOf(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value : undefined;
}

function numberField(key: string, value: unknown): Record<string, number> {
  return typeof value === "number" && Number.isFinite(value) ? { [key]: value } : {};
}

// ---------------------------------------------------------------------------------------------
// Messages

/** τ²-bench messages as the pairer's: a MultiToolMessage is its tool messages; a user's calls stay the user's. */
function messagesOf(list: unknown[], base: string): Message[] {
  const out: Message[] = [];
  for (const [i, raw] of list.entries()) {
    const field = `${base}.${i}`;
    if (!isRecord(raw)) throw new FieldError(field, `${field}: expected a message object, got ${describeType(raw)}`);
    const role = raw.role;
    if (typeof role !== "string")
      throw new FieldError(`${field}.role`, `${field}.role: expected "system", "user", "assistant" or "tool", got ${describeType(role)}`);
    if (role === "tool" && raw.tool_messages !== undefined) {
      if (!Array.isArray(raw.tool_messages))
        throw new FieldError(
          `${field}.tool_messages`,
          `${field}.tool_messages: expected a list of tool messages, got ${describeType(raw.tool_messages)}`,
        );
      for (const [j, message] of raw.tool_messages.entries()) out.push(toolMessage(message, `${field}.tool_messages.${j}`));
      continue;
    }
    if (role === "tool") {
      out.push(toolMessage(raw, field));
      continue;
    }
    const text = textOf(raw.content, `${field}.content`);
    if (role === "assistant" || role === "user")
      out.push(makeMessage(role, text, { calls: callsOf(raw.tool_calls, `${field}.tool_calls`) }));
    // A system message is the agent's; any other role is counted by the pairer.
    else out.push(makeMessage(role, text));
  }
  return out;
}

function toolMessage(raw: unknown, field: string): Message {
  if (!isRecord(raw)) throw new FieldError(field, `${field}: expected a tool message object, got ${describeType(raw)}`);
  const content =
    raw.content === undefined || raw.content === null ? "" : typeof raw.content === "string" ? raw.content : jsonTextOr(raw.content, "");
  const id = typeof raw.id === "string" && raw.id !== "" ? raw.id : undefined;
  return makeMessage("tool", content, {
    results: [content],
    ...(id ? { toolCallId: id } : {}),
    ...(raw.error === true ? { isError: true } : {}),
  });
}

function textOf(content: unknown, field: string): string {
  if (content === undefined || content === null) return "";
  if (typeof content === "string") return content;
  throw new FieldError(field, `${field}: expected a string or null, got ${describeType(content)}`);
}

/** A message's `tool_calls`: `{id, name, arguments, requestor}` each (arguments a dict, or a JSON string of one). */
function callsOf(value: unknown, field: string): Call[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new FieldError(field, `${field}: expected a list of tool calls, got ${describeType(value)}`);
  return value.map((call, i) => {
    const at = `${field}.${i}`;
    if (!isRecord(call)) throw new FieldError(at, `${at}: expected a tool call object, got ${describeType(call)}`);
    if (typeof call.name !== "string" || call.name.trim() === "")
      throw new FieldError(`${at}.name`, `${at}.name: expected the tool's name, got ${describeType(call.name)}`);
    let args: unknown = call.arguments ?? {};
    if (typeof args === "string") {
      const parsed = parseJsonLine(args);
      if (parsed.ok) args = parsed.value;
    }
    return { name: call.name, ...(typeof call.id === "string" && call.id !== "" ? { id: call.id } : {}), args };
  });
}

/**
 * A full-duplex run's ticks as messages (tau2 `Tick.get_all_messages`, in tick order): the agent's
 * chunk and calls, its results, then the user's. Consecutive text chunks of one speaker are one
 * message (joined as tau2's `merge_message_chunks` joins them: a space between utterances).
 */
function tickMessages(ticks: unknown[], base: string): Message[] {
  const out: Message[] = [];
  let last: { message: Message; utterances: string[] } | undefined;
  for (const [i, tick] of ticks.entries()) {
    const field = `${base}.${i}`;
    if (!isRecord(tick)) throw new FieldError(field, `${field}: expected a tick object, got ${describeType(tick)}`);
    for (const [side, role] of [
      ["agent", "assistant"],
      ["user", "user"],
    ] as const) {
      const chunk = tick[`${side}_chunk`];
      if (chunk !== undefined && chunk !== null && !isRecord(chunk))
        throw new FieldError(`${field}.${side}_chunk`, `${field}.${side}_chunk: expected a message object, got ${describeType(chunk)}`);
      const text = isRecord(chunk) ? textOf(chunk.content, `${field}.${side}_chunk.content`) : "";
      const calls = callsOf(tick[`${side}_tool_calls`], `${field}.${side}_tool_calls`);
      const utterances =
        isRecord(chunk) && Array.isArray(chunk.utterance_ids) ? chunk.utterance_ids.filter((u): u is string => typeof u === "string") : [];
      if (calls.length === 0 && text !== "" && last && last.message.role === role && last.message.calls.length === 0) {
        const apart = last.utterances.length > 0 && utterances.length > 0 && !utterances.some((u) => last?.utterances.includes(u));
        last.message.text += `${apart ? " " : ""}${text}`;
        last.utterances = utterances.length > 0 ? utterances : last.utterances;
      } else if (text !== "" || calls.length > 0) {
        const message = makeMessage(role, text, { calls });
        out.push(message);
        last = { message, utterances };
      }
      const results = tick[`${side}_tool_results`];
      if (results === undefined || results === null) continue;
      if (!Array.isArray(results))
        throw new FieldError(
          `${field}.${side}_tool_results`,
          `${field}.${side}_tool_results: expected a list of tool messages, got ${describeType(results)}`,
        );
      for (const [k, result] of results.entries()) {
        out.push(toolMessage(result, `${field}.${side}_tool_results.${k}`));
        last = undefined;
      }
    }
  }
  return out;
}
