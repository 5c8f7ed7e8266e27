import type { SourceRef } from "../core/trajectory.ts";
import { quarantine, rowItem } from "./chat-rows/row-item.ts";
import { messageList, replyMessage } from "./langsmith/messages.ts";
import { dottedParts, parseTime, type RunWhere, type TraceRun, traceItem, tracesOf } from "./langsmith/run-trace.ts";
import { sniffRecords } from "./langsmith/sniff.ts";
import { withThinking } from "./otel-traces.ts";
import { type Reader, type ReaderOptions, type ReadItem, recordLines } from "./reader.ts";
import { contentId, describeType, FieldError, isRecord } from "./record-helpers.ts";
import { describeRecord, emptyFile, traceRecords } from "./trace/record-loop.ts";

const FORMAT = "langsmith-runs";

/*
 * Agent traces exported from LangSmith (LangChain's tracing platform): its runs, the spans of a
 * trace, as the Run data format describes them (`id`, `name`, `run_type` — `llm`, `chat_model`,
 * `tool`, `chain`, `retriever`, `prompt`, `parser`, `embedding` —, `start_time`, `end_time`,
 * `inputs`, `outputs`, `error`, `parent_run_id`, `trace_id`, `dotted_order`, `extra`, `tags`,
 * `session_id`, `reference_example_id`), one record of the file being:
 *
 * - a run, one per line as `client.list_runs()` dumps write them (`run.dict()` / `run.json()`, the
 *   LangSmith CLI's JSONL export), or an element of a JSON array of them; a run read with
 *   `load_child_runs=True` carries its descendants in `child_runs`, read too;
 * - the `/runs/query` API's answer, `{"runs": [run, …], "cursors": …}`;
 * - a dataset example (`{"id", "dataset_id", "inputs", "outputs", "source_run_id", …}`): a chat
 *   example's messages (`inputs.messages` or a "chat" dataset's `inputs.input`, and the reply in
 *   `outputs`) are one trajectory of their own.
 *
 * A whole-file reader: runs are grouped by trace (`trace_id`, else the root id `dotted_order`
 * starts with, else the root reached through `parent_run_id`) across the file; memory is bounded
 * by the file, each line or element by `input.max_line_bytes`. One trace = one trajectory, id = the
 * trace id, read by src/read/langsmith/run-trace.ts: runs in start order (`start_time`, else the
 * time `dotted_order` ends with; ties by `dotted_order`; neither: file order), each `tool` run a call
 * and its result, model calls (`llm` / `chat_model`: LangChain's `inputs.messages` and
 * `outputs.generations`, or OpenAI / Anthropic / LangChain-v1 messages) the task, thinking and
 * final answer (src/read/langsmith/messages.ts). A tool run inside a tool run is its detail.
 *
 * Quarantined, naming the line or element and the field: a record that is none of these, or a run
 * whose field has the wrong type (`id`, `run_type`, `trace_id`, `parent_run_id`, `dotted_order`,
 * `start_time`, `inputs`, `outputs`, `error`, `child_runs`); per trace: one with no tool call
 * answered by its result (neither a tool run with an output or error, nor a model call or chain
 * whose messages hold one).
 */
export const langsmithRunsReader: Reader = {
  name: FORMAT,
  domain: "from the tools",
  description:
    "LangSmith runs (client.list_runs() dumps, the /runs/query answer, child_runs trees; JSONL or a JSON array) and chat dataset examples; one trace per trajectory",

  sniff(head) {
    return sniffRecords(head, {
      record: isLangSmithRecord,
      element: isRun,
      // A run's own fields come before its inputs and outputs.
      cut: (window) => CUT_RUN_TYPE.test(window) && /(?<!\\)"id"\s*:\s*"/.test(window) && CUT_RUN_KEY.test(window),
    });
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    const { range, ...whole } = options;
    if (range && range.start > 0) return;
    const runs: TraceRun[] = [];
    const file = yield* traceRecords<TraceRun[]>(recordLines(path, whole, FORMAT), {
      namesField: true,
      read(value, record) {
        if (isRecord(value) && isExample(value)) return { item: exampleItem(value, record.source, record.text, options) };
        const found = recordRuns(value, record.where, runs.length);
        if (found) return { contents: found };
        return {
          item: record.fail(
            undefined,
            `expected a LangSmith run ({"id", "run_type", "start_time", "inputs", "outputs", …}), a {"runs": [...]} answer or a dataset example ({"dataset_id", "inputs", "outputs"}), got ${describeRecord(value)}`,
          ),
        };
      },
      keep: (found) => runs.push(...found),
    });
    for (const [traceId, list] of tracesOf(runs)) yield traceItem(traceId, list, { format: FORMAT, path, options: whole });
    // Records that hold no run at all (`{"runs": []}`; a dataset example is no such record): nothing to read, said once for the file.
    if (runs.length === 0 && file.fine > 0 && file.fine === file.records)
      yield emptyFile(path, FORMAT, "runs", `the file's ${file.fine} record(s) hold no runs`);
  },
};

const RUN_TYPES = new Set(["llm", "chat_model", "tool", "chain", "retriever", "prompt", "parser", "embedding"]);
const CUT_RUN_TYPE = /(?<!\\)"run_type"\s*:\s*"(llm|chat_model|tool|chain|retriever|prompt|parser|embedding)"/;
const CUT_RUN_KEY = /(?<!\\)"(start_time|trace_id|dotted_order|parent_run_id)"\s*:/;

/** A run as LangSmith writes one: an id, a known `run_type`, and a field only runs have. */
function isRun(value: unknown): value is Record<string, unknown> {
  return (
    isRecord(value) &&
    typeof value.id === "string" &&
    typeof value.run_type === "string" &&
    RUN_TYPES.has(value.run_type) &&
    ("start_time" in value || "trace_id" in value || "dotted_order" in value || "parent_run_id" in value)
  );
}

/** A dataset example: `dataset_id`, `inputs` and `outputs` (and no run type). */
function isExample(value: Record<string, unknown>): boolean {
  return typeof value.dataset_id === "string" && isRecord(value.inputs) && "outputs" in value && !("run_type" in value);
}

/** What the sniff claims as one JSON line. */
function isLangSmithRecord(value: unknown): boolean {
  if (isRun(value)) return true;
  const list = Array.isArray(value) ? value : isRecord(value) && !isExample(value) && Array.isArray(value.runs) ? value.runs : undefined;
  // A list whose first runs include a damaged one is still theirs: the reader quarantines that one.
  if (list) return list.slice(0, 8).every(isRecord) && list.slice(0, 8).some(isRun);
  return isRecord(value) && isExample(value);
}

/** The runs of one record (a run and its `child_runs`, a list of runs, a `{"runs": […]}` answer); undefined when it is none. */
function recordRuns(value: Record<string, unknown> | unknown[], where: RunWhere, order: number): TraceRun[] | undefined {
  const list = (items: unknown[], prefix: string): TraceRun[] => {
    const out: TraceRun[] = [];
    for (const [i, item] of items.entries()) {
      if (!isRecord(item)) throw new FieldError(`${prefix}${i}`, `expected a run object, got ${describeType(item)}`);
      out.push(...runTree(item, `${prefix}${i}.`, where, order + out.length));
    }
    return out;
  };
  if (Array.isArray(value)) return value.some(isRun) ? list(value, "") : undefined;
  if (Array.isArray(value.runs) && !("run_type" in value)) return list(value.runs, "runs.");
  if (!("run_type" in value)) return undefined;
  return runTree(value, "", where, order);
}

/** A run and its descendants (`child_runs`, as `read_run(load_child_runs=True)` nests them), parents first. */
function runTree(root: Record<string, unknown>, at: string, where: RunWhere, order: number): TraceRun[] {
  const out: TraceRun[] = [];
  const stack: { raw: Record<string, unknown>; at: string; parent?: TraceRun }[] = [{ raw: root, at }];
  for (let next = stack.pop(); next; next = stack.pop()) {
    const run = parseRun(next.raw, next.at, where, order + out.length, next.parent);
    out.push(run);
    const children = next.raw.child_runs;
    if (children === undefined || children === null) continue;
    if (!Array.isArray(children)) throw new FieldError(`${next.at}child_runs`, `expected an array of runs, got ${describeType(children)}`);
    for (let i = children.length - 1; i >= 0; i -= 1) {
      const child = children[i];
      if (!isRecord(child)) throw new FieldError(`${next.at}child_runs.${i}`, `expected a run object, got ${describeType(child)}`);
      stack.push({ raw: child, at: `${next.at}child_runs.${i}.`, parent: run });
    }
  }
  return out;
}

function stringField(raw: Record<string, unknown>, name: string, at: string): string | undefined {
  const value = raw[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw new FieldError(`${at}${name}`, `expected a string, got ${describeType(value)}`);
  return value.trim() === "" ? undefined : value;
}

function objectField(raw: Record<string, unknown>, name: string, at: string): Record<string, unknown> | undefined {
  const value = raw[name];
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value)) throw new FieldError(`${at}${name}`, `expected an object, got ${describeType(value)}`);
  return value;
}

function firstString(...values: unknown[]): string | undefined {
  return values.find((value): value is string => typeof value === "string" && value.trim() !== "");
}

function parseRun(raw: Record<string, unknown>, at: string, where: RunWhere, order: number, parent?: TraceRun): TraceRun {
  const id = raw.id;
  if (typeof id !== "string" || id.trim() === "")
    throw new FieldError(`${at}id`, `expected a non-empty id string, got ${describeType(id)}`);
  const runType = raw.run_type;
  if (typeof runType !== "string")
    throw new FieldError(`${at}run_type`, `expected a string (llm, chat_model, tool, chain, …), got ${describeType(runType)}`);
  const dotted = stringField(raw, "dotted_order", at);
  const fromDotted = dotted !== undefined ? dottedParts(dotted) : {};
  const parentId = stringField(raw, "parent_run_id", at) ?? parent?.id;
  const traceId = stringField(raw, "trace_id", at) ?? fromDotted.rootId ?? parent?.traceId ?? (parentId === undefined ? id : undefined);
  const inputs = objectField(raw, "inputs", at);
  const outputs = objectField(raw, "outputs", at);
  const error = stringField(raw, "error", at);
  let start = fromDotted.start;
  if (raw.start_time !== undefined && raw.start_time !== null) {
    start = parseTime(raw.start_time);
    if (start === undefined)
      throw new FieldError(
        `${at}start_time`,
        `expected an ISO 8601 time or epoch number, got ${typeof raw.start_time === "string" ? JSON.stringify(raw.start_time.slice(0, 40)) : describeType(raw.start_time)}`,
      );
  }
  const extra = isRecord(raw.extra) ? raw.extra : {};
  const metadata = isRecord(extra.metadata) ? extra.metadata : {};
  const invocation = isRecord(extra.invocation_params) ? extra.invocation_params : {};
  const kind = runType === "tool" ? "tool" : runType === "llm" || runType === "chat_model" ? "llm" : "other";
  const serialized = isRecord(raw.serialized) ? raw.serialized : {};
  const name = firstString(raw.name, serialized.name) ?? "";
  const llmOutput = isRecord(outputs?.llm_output) ? outputs.llm_output : {};
  const model =
    kind === "llm"
      ? firstString(metadata.ls_model_name, invocation.model, invocation.model_name, inputs?.model, llmOutput.model_name, outputs?.model)
      : undefined;
  const offered = Array.isArray(invocation.tools) ? invocation.tools : Array.isArray(invocation.functions) ? invocation.functions : [];
  const tools = kind === "llm" && offered.length === 0 ? messageList(inputs).tools : offered;
  const conversationId = firstString(metadata.thread_id, metadata.conversation_id, metadata.session_id);
  const project = firstString(raw.session_id);
  const example = firstString(raw.reference_example_id);
  return {
    id,
    ...(traceId !== undefined ? { traceId } : {}),
    ...(parentId !== undefined ? { parentId } : {}),
    kind,
    name,
    ...(start !== undefined ? { start } : {}),
    ...(dotted !== undefined ? { dotted } : {}),
    order,
    inputs: inputs ?? {},
    outputs,
    ...(error !== undefined ? { error } : {}),
    where,
    ...(model !== undefined ? { model } : {}),
    tools,
    ...(conversationId !== undefined ? { conversationId } : {}),
    ...(project !== undefined || example !== undefined
      ? { meta: { ...(project !== undefined ? { project_id: project } : {}), ...(example !== undefined ? { example_id: example } : {}) } }
      : {}),
  };
}

/** A dataset example: its input messages and the reply in its outputs, as one chat row. */
function exampleItem(example: Record<string, unknown>, source: SourceRef, text: string, options: ReaderOptions): ReadItem {
  const id = firstString(example.id) ?? contentId("langsmith-example", text);
  const input = messageList(example.inputs);
  const reply = replyMessage(example.outputs);
  const messages = [...input.messages, ...(reply ? [reply] : [])];
  if (!messages.some((m) => m.role === "tool")) {
    const keys = Object.keys(example.inputs as Record<string, unknown>)
      .slice(0, 8)
      .join(", ");
    return quarantine(
      source,
      {
        id,
        field: "inputs",
        reason: `a dataset example whose messages hold no tool call answered by its result (inputs has keys ${keys || "none"})`,
      },
      text,
    );
  }
  const inputs = example.inputs as Record<string, unknown>;
  const tools = input.tools.length > 0 ? input.tools : Array.isArray(inputs.tools) ? inputs.tools : [];
  const row = { id, messages, ...(tools.length > 0 ? { tools } : {}) };
  const item = rowItem(row, source, text, options);
  if (item.kind !== "trajectory") return item;
  const { trajectory } = item;
  const meta: Record<string, unknown> = {
    ...trajectory.meta,
    dataset_id: example.dataset_id,
    ...(firstString(example.source_run_id) !== undefined ? { source_run_id: example.source_run_id } : {}),
  };
  return { kind: "trajectory", trajectory: { ...trajectory, turns: trajectory.turns.map(withThinking), meta } };
}
