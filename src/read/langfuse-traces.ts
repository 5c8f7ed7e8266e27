import { messageList } from "./langsmith/messages.ts";
import { parseTime, type RunWhere, type TraceInfo, type TraceRun, traceItem, tracesOf } from "./langsmith/run-trace.ts";
import { sniffRecords } from "./langsmith/sniff.ts";
import { parseJsonLine, type Reader, type ReaderOptions, type ReadItem, recordLines } from "./reader.ts";
import { describeType, FieldError, isRecord } from "./record-helpers.ts";
import { describeRecord, emptyFile, traceRecords } from "./trace/record-loop.ts";

const FORMAT = "langfuse-traces";

/*
 * Agent traces exported from Langfuse, through its public API or the SDKs' `api` clients:
 *
 * - observations (`GET /api/public/observations`, `{"data": [observation, …], "meta": {…}}`, or
 *   one per line / in a JSON array): `{id, traceId, type, name, startTime, endTime,
 *   parentObservationId, input, output, model, level, statusMessage, …}`, `type` one of SPAN,
 *   GENERATION, EVENT, AGENT, TOOL, CHAIN, RETRIEVER, EVALUATOR, EMBEDDING, GUARDRAIL (snake_case
 *   names — `trace_id`, `start_time`, `parent_observation_id`, `status_message` — read too);
 * - traces with their observations nested (`GET /api/public/traces/{traceId}`: `{id, timestamp,
 *   name, input, output, sessionId, userId, htmlPath, observations: [observation, …], scores}`).
 *   The list answer (`GET /api/public/traces`) names observations by id only: refused, saying so.
 *
 * Read as LangSmith runs are (src/read/langsmith/run-trace.ts): a whole-file reader grouping the
 * observations by `traceId`; one trace = one trajectory, id = the trace id. TOOL observations are
 * the calls (`input` the arguments, LangChain's `str(tool_input)` included; `output` the result,
 * a LangChain ToolMessage's content), GENERATION observations the model calls (`input` a message
 * list or `{messages, tools}`; the tool specs Langfuse's LangChain handler appends as `{role:
 * "tool", content: spec}` are the offered tools), `level: ERROR` with its `statusMessage` a failed
 * call (`turn.meta.is_error`). A trace without TOOL observations (an OpenAI client traced alone,
 * tools as plain SPANs) is read from its fullest generation, or from the trace's own input and
 * output, when their messages hold a tool call answered by its result. Meta: `agent` (the trace's
 * name, else the root observation's), `model`, `conversation_id` (the trace's `sessionId`), `runs`.
 */
export const langfuseTracesReader: Reader = {
  name: FORMAT,
  domain: "from the tools",
  description:
    "Langfuse observations (GET /api/public/observations, JSONL or a JSON array) and traces with their observations nested; one trace per trajectory",

  sniff(head) {
    return sniffRecords(head, {
      record: isLangfuseRecord,
      element: (value) => isObservation(value) || isTrace(value),
      // An observation's own fields, or a trace's UI path.
      cut: (window) =>
        (CUT_TYPE.test(window) && /(?<!\\)"traceId"\s*:\s*"/.test(window) && /(?<!\\)"startTime"\s*:/.test(window)) ||
        /(?<!\\)"htmlPath"\s*:\s*"\/project\/[^"]*\/traces\//.test(window),
    });
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    const { range, ...whole } = options;
    if (range && range.start > 0) return;
    const runs: TraceRun[] = [];
    const infos = new Map<string, TraceInfo>();
    const file = yield* traceRecords<Contents>(recordLines(path, whole, FORMAT), {
      namesField: true,
      read(value, record) {
        const found = recordContents(value, record.where, runs.length);
        if (found) return { contents: found };
        return {
          item: record.fail(
            undefined,
            `expected a Langfuse observation ({"id", "traceId", "type", "startTime", "input", "output", …}) or a trace with its observations ({"id", "timestamp", "observations": [...]}), got ${describeRecord(value)}`,
          ),
        };
      },
      keep(found) {
        runs.push(...found.runs);
        for (const info of found.traces) if (!infos.has(info.id)) infos.set(info.id, info);
      },
    });
    const traces = tracesOf(runs);
    // A trace record with no observations is read from its own input and output.
    for (const id of infos.keys()) if (!traces.has(id)) traces.set(id, []);
    for (const [traceId, list] of traces) yield traceItem(traceId, list, { format: FORMAT, path, options: whole }, infos.get(traceId));
    if (traces.size === 0 && file.fine > 0 && file.fine === file.records)
      yield emptyFile(path, FORMAT, "observations", `the file's ${file.fine} record(s) hold no observations`);
  },
};

const OBSERVATION_TYPES = new Set([
  "SPAN",
  "GENERATION",
  "EVENT",
  "AGENT",
  "TOOL",
  "CHAIN",
  "RETRIEVER",
  "EVALUATOR",
  "EMBEDDING",
  "GUARDRAIL",
]);
const CUT_TYPE = /(?<!\\)"type"\s*:\s*"(SPAN|GENERATION|EVENT|AGENT|TOOL|CHAIN|RETRIEVER|EVALUATOR|EMBEDDING|GUARDRAIL)"/;

/** An observation as Langfuse's API writes one: an id, a known type, its trace and start time. */
function isObservation(value: unknown): value is Record<string, unknown> {
  return (
    isRecord(value) &&
    typeof value.id === "string" &&
    typeof value.type === "string" &&
    OBSERVATION_TYPES.has(value.type) &&
    typeof (value.traceId ?? value.trace_id) === "string" &&
    ("startTime" in value || "start_time" in value)
  );
}

/** What the sniff claims as one record: an observation, a trace, a list of them or an API page of them (`{"data": [...]}`). */
function isLangfuseRecord(value: unknown): boolean {
  const list = Array.isArray(value) ? value : isRecord(value) && Array.isArray(value.data) ? value.data : undefined;
  // A list whose first elements include a damaged one is still theirs: the reader quarantines that one.
  if (list) return list.slice(0, 8).every(isRecord) && list.slice(0, 8).some((v) => isObservation(v) || isTrace(v));
  return isObservation(value) || isTrace(value);
}

/** A trace as `GET /api/public/traces[/{id}]` answers: an id, a timestamp, its observations (and its UI path, latency, cost). */
function isTrace(value: unknown): value is Record<string, unknown> {
  return (
    isRecord(value) &&
    typeof value.id === "string" &&
    typeof value.timestamp === "string" &&
    Array.isArray(value.observations) &&
    ("htmlPath" in value || "latency" in value || "totalCost" in value || value.observations.some(isObservation))
  );
}

interface Contents {
  runs: TraceRun[];
  traces: (TraceInfo & { id: string })[];
}

/** The observations (and trace records) of one record; undefined when it is neither. */
function recordContents(value: Record<string, unknown> | unknown[], where: RunWhere, order: number): Contents | undefined {
  const out: Contents = { runs: [], traces: [] };
  const items = (list: unknown[], prefix: string) => {
    for (const [i, item] of list.entries()) {
      if (!isRecord(item)) throw new FieldError(`${prefix}${i}`, `expected an observation or a trace object, got ${describeType(item)}`);
      one(item, `${prefix}${i}.`);
    }
  };
  const one = (record: Record<string, unknown>, at: string) => {
    if (Array.isArray(record.observations) && !("type" in record)) {
      const trace = traceRecord(record, at, where, order + out.runs.length);
      out.runs.push(...trace.runs);
      out.traces.push(trace.info);
    } else out.runs.push(observation(record, at, where, order + out.runs.length));
  };
  if (Array.isArray(value)) {
    if (!value.some((v) => isObservation(v) || isTrace(v))) return undefined;
    items(value, "");
  } else if (Array.isArray(value.data) && !("type" in value) && !("observations" in value)) {
    // An API answer page read as one record (`{"data": [...], "meta": {...}}`).
    if (!value.data.some((v) => isObservation(v) || isTrace(v))) return undefined;
    items(value.data, "data.");
  } else if (Array.isArray(value.observations) || ("type" in value && ("traceId" in value || "trace_id" in value || "startTime" in value)))
    one(value, "");
  else return undefined;
  return out;
}

function stringField(raw: Record<string, unknown>, names: string[], at: string): string | undefined {
  for (const name of names) {
    const value = raw[name];
    if (value === undefined || value === null) continue;
    if (typeof value !== "string") throw new FieldError(`${at}${name}`, `expected a string, got ${describeType(value)}`);
    return value.trim() === "" ? undefined : value;
  }
  return undefined;
}

/** A trace record: its observations, and what it says of itself. */
function traceRecord(
  raw: Record<string, unknown>,
  at: string,
  where: RunWhere,
  order: number,
): { runs: TraceRun[]; info: TraceInfo & { id: string } } {
  const id = raw.id;
  if (typeof id !== "string" || id.trim() === "")
    throw new FieldError(`${at}id`, `expected a non-empty trace id string, got ${describeType(id)}`);
  const list = raw.observations as unknown[];
  const byId = list.filter((item) => typeof item === "string").length;
  if (byId > 0 && byId === list.length)
    throw new FieldError(
      `${at}observations`,
      `the trace lists its ${byId} observation(s) by id only (as GET /api/public/traces answers); export each trace with GET /api/public/traces/{traceId}, which nests its observations whole`,
    );
  const runs: TraceRun[] = [];
  for (const [i, item] of list.entries()) {
    if (typeof item === "string") continue;
    if (!isRecord(item)) throw new FieldError(`${at}observations.${i}`, `expected an observation object, got ${describeType(item)}`);
    runs.push(observation(item, `${at}observations.${i}.`, where, order + runs.length, id));
  }
  const name = stringField(raw, ["name"], at);
  const session = stringField(raw, ["sessionId", "session_id"], at);
  return {
    runs,
    info: {
      id,
      ...(name !== undefined ? { name } : {}),
      ...(raw.input !== undefined && raw.input !== null ? { input: jsonValue(raw.input) } : {}),
      ...(raw.output !== undefined && raw.output !== null ? { output: jsonValue(raw.output) } : {}),
      ...(session !== undefined ? { conversationId: session } : {}),
      where,
    },
  };
}

/** A JSON document kept as text (some SDKs send a generation's input as a JSON string): the value it holds. */
function jsonValue(value: unknown): unknown {
  if (typeof value !== "string" || !/^\s*[[{]/.test(value)) return value;
  const parsed = parseJsonLine(value.trim());
  return parsed.ok ? parsed.value : value;
}

function observation(raw: Record<string, unknown>, at: string, where: RunWhere, order: number, trace?: string): TraceRun {
  const id = raw.id;
  if (typeof id !== "string" || id.trim() === "")
    throw new FieldError(`${at}id`, `expected a non-empty id string, got ${describeType(id)}`);
  const type = raw.type;
  if (typeof type !== "string")
    throw new FieldError(`${at}type`, `expected an observation type string (GENERATION, TOOL, SPAN, …), got ${describeType(type)}`);
  const traceId = stringField(raw, ["traceId", "trace_id"], at) ?? trace;
  const parentId = stringField(raw, ["parentObservationId", "parent_observation_id"], at);
  const startRaw = raw.startTime ?? raw.start_time;
  let start: number | undefined;
  if (startRaw !== undefined && startRaw !== null) {
    start = parseTime(startRaw);
    if (start === undefined)
      throw new FieldError(
        `${at}${"startTime" in raw ? "startTime" : "start_time"}`,
        `expected an ISO 8601 time, got ${typeof startRaw === "string" ? JSON.stringify(startRaw.slice(0, 40)) : describeType(startRaw)}`,
      );
  }
  const level = stringField(raw, ["level"], at);
  const status = stringField(raw, ["statusMessage", "status_message"], at);
  const kind = type.toUpperCase() === "TOOL" ? "tool" : type.toUpperCase() === "GENERATION" ? "llm" : "other";
  const input = raw.input === null ? undefined : kind === "tool" ? raw.input : jsonValue(raw.input);
  const output = raw.output === null ? undefined : kind === "tool" ? raw.output : jsonValue(raw.output);
  const model = stringField(raw, ["model"], at);
  const name = typeof raw.name === "string" ? raw.name : "";
  const offered = kind === "llm" ? messageList(input).tools : [];
  return {
    id,
    ...(traceId !== undefined ? { traceId } : {}),
    ...(parentId !== undefined ? { parentId } : {}),
    kind,
    name,
    ...(start !== undefined ? { start } : {}),
    order,
    inputs: input,
    outputs: output,
    ...(level?.toUpperCase() === "ERROR" ? { error: status ?? "[error]" } : {}),
    where,
    ...(model !== undefined && kind === "llm" ? { model } : {}),
    tools: offered,
  };
}
