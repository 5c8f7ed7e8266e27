import type { SourceRef } from "../core/trajectory.ts";
import { openDecompressed } from "../io/open-input.ts";
import { quarantine, rowItem } from "./chat-rows/row-item.ts";
import { isZipInput, readEvalArchive } from "./inspect-eval.ts";
import { JsonSyntaxError, selectJson } from "./json-select.ts";
import type { Reader, ReaderOptions, ReadItem } from "./reader.ts";
import { describeType, isRecord, MAX_JSON_DEPTH, nestsTooDeep } from "./record-helpers.ts";

const FORMAT = "inspect-log";

/*
 * Inspect AI eval logs in the JSON log format (`logs/<time>_<task>_<id>.json`, UKGovernmentBEIS/
 * inspect_ai `src/inspect_ai/log/_log.py` EvalLog: `{version, status, eval, plan, results, stats,
 * error?, samples: [EvalSample]}`), streamed sample by sample: each sample (each epoch) is one
 * trajectory. A sample's `messages` are Inspect ChatMessages (`model/_chat_message.py`): system,
 * user, assistant (`content` a string or content parts — `text`, `reasoning`, `image` —, and
 * `tool_calls: [{id, function, arguments}]`) and tool (`tool_call_id`, `function`, `content`,
 * `error: {type, message}`). Strings condensed into the sample's `attachments`
 * (`attachment://<hash>`) are put back first.
 *
 * The messages are read as chat-tool-rows reads OpenAI messages (src/read/chat-rows/): each
 * assistant step's calls → their tool results (a shell tool's command as the action, any other
 * call `{"name", "arguments"}`); a tool `error` → `turn.meta.is_error` (its message the result when
 * the content is empty); reasoning parts → `turn.meta.agent_reasoning`; the system message and the
 * tools go to `meta.agent_system`. Task: the first user message. Id:
 * `<eval.task>/<sample id>/epoch-<epoch>@<eval.eval_id or run_id>`; `meta.task_id` = the sample id,
 * `meta.attempt` = the epoch, `meta.model` = `eval.model`, `meta.agent` = `inspect_ai`,
 * `meta.outcome`: the first score's value (`C` / `I`, a boolean, or a number: `reward`, with
 * `success` for 0/1), the sample's `error` → `failure_mode`. A sample with no answered call is
 * quarantined (as chat-tool-rows quarantines a chat). The `.eval` log (a zip archive) gives the same
 * records, one sample entry at a time (src/read/inspect-eval.ts); detection tells it by the entry
 * names in its central directory (src/read/registry.ts `detectFormat`).
 */
export const inspectLogReader: Reader = {
  name: FORMAT,
  domain: "from the tools",
  description: "Inspect AI eval logs (.json EvalLog or .eval zip): each sample's messages, tool_calls → tool messages",

  sniff(head) {
    return /^\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:\s*"(started|success|cancelled|error)"\s*,\s*"eval"\s*:\s*\{/.test(
      head.replace(/^\uFEFF/, "").trimStart(),
    );
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    if (options.range && options.range.start > 0) return;
    // The `.eval` log: a zip archive, read entry by entry (src/read/inspect-eval.ts).
    if (await isZipInput(path)) return yield* readEvalArchive(path, options, FORMAT, sampleItem);
    const source: SourceRef = { uri: path, format: FORMAT };
    let evalSpec: Record<string, unknown> = {};
    let index = 0;
    try {
      const { stream } = await openDecompressed(path);
      for await (const { path: at, value } of selectJson(
        stream,
        (p) => (p.length === 1 && p[0] === "eval") || (p.length === 2 && p[0] === "samples" && typeof p[1] === "number"),
      )) {
        if (at[0] === "eval") {
          if (isRecord(value)) evalSpec = value;
          continue;
        }
        const sampleSource: SourceRef = { ...source, offset: 0, row: at[1] as number };
        index += 1;
        yield sampleItem(value, evalSpec, sampleSource, options, `samples.${at[1]}`);
      }
    } catch (err) {
      if (!(err instanceof JsonSyntaxError)) throw err;
      yield quarantine(source, { reason: `not an Inspect AI eval log${index > 0 ? ` after sample ${index - 1}` : ""}: ${err.message}` });
      return;
    }
    if (index === 0)
      yield quarantine(source, {
        field: "samples",
        reason: "the eval log holds no samples (a log written with --no-log-samples, or a header only): nothing to read",
      });
  },
};

function sampleItem(raw: unknown, evalSpec: Record<string, unknown>, source: SourceRef, options: ReaderOptions, where: string): ReadItem {
  if (!isRecord(raw)) return quarantine(source, { field: where, reason: `${where}: expected a sample object, got ${describeType(raw)}` });
  if (nestsTooDeep(raw)) return quarantine(source, { field: where, reason: `${where}: nested deeper than ${MAX_JSON_DEPTH} levels` });
  const sample = withAttachments(raw, isRecord(raw.attachments) ? raw.attachments : {}) as Record<string, unknown>;
  const epoch = typeof sample.epoch === "number" ? sample.epoch : 1;
  const run = evalSpec.eval_id ?? evalSpec.run_id;
  const id = `${String(evalSpec.task ?? "inspect")}/${String(sample.id)}/epoch-${epoch}${typeof run === "string" ? `@${run}` : ""}`;
  if (!Array.isArray(sample.messages))
    return quarantine(source, {
      id,
      field: `${where}.messages`,
      reason: `${where}.messages: expected an array of chat messages, got ${describeType(sample.messages)}`,
    });
  const messages = sample.messages.map(openAiMessage);
  const row: Record<string, unknown> = {
    id,
    messages,
    agent: "inspect_ai",
    ...(typeof evalSpec.model === "string" ? { model: evalSpec.model } : {}),
    ...(sample.id !== undefined && sample.id !== null ? { task_id: String(sample.id) } : {}),
    attempt: epoch,
    ...outcomeOf(sample),
  };
  const item = rowItem(row, source, JSON.stringify(row), options, `${where}: `);
  if (item.kind !== "trajectory") return item;
  const meta = { ...item.trajectory.meta, ...(typeof evalSpec.task === "string" ? { inspect_task: evalSpec.task } : {}) };
  return { kind: "trajectory", trajectory: { ...item.trajectory, source: { ...source, format: FORMAT }, meta } };
}

/** Strings `attachment://<hash>` replaced by the sample's attachment text. */
function withAttachments(value: unknown, attachments: Record<string, unknown>): unknown {
  if (typeof value === "string") {
    const match = /^attachment:\/\/([0-9a-f]+)$/.exec(value);
    const text = match ? attachments[match[1] as string] : undefined;
    return typeof text === "string" ? text : value;
  }
  if (Array.isArray(value)) return value.map((item) => withAttachments(item, attachments));
  if (isRecord(value)) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) if (key !== "attachments") out[key] = withAttachments(item, attachments);
    return out;
  }
  return value;
}

/** An Inspect ChatMessage in OpenAI's shape: calls as `{id, function: {name, arguments}}`, reasoning parts as `reasoning_content`. */
function openAiMessage(message: unknown): unknown {
  if (!isRecord(message)) return message;
  const out: Record<string, unknown> = { ...message };
  if (Array.isArray(message.content)) {
    const reasoning = message.content.flatMap((part) =>
      isRecord(part) && part.type === "reasoning" && typeof part.reasoning === "string" && part.redacted !== true ? [part.reasoning] : [],
    );
    out.content = message.content.filter((part) => !(isRecord(part) && part.type === "reasoning"));
    if (reasoning.length > 0) out.reasoning_content = reasoning.join("\n\n");
  }
  if (Array.isArray(message.tool_calls))
    out.tool_calls = message.tool_calls.map((call) =>
      isRecord(call) && typeof call.function === "string"
        ? { id: call.id, type: "function", function: { name: call.function, arguments: call.arguments ?? {} } }
        : call,
    );
  return out;
}

/** The first score's value as an outcome, and the sample's error as its failure. */
function outcomeOf(sample: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const scores = isRecord(sample.scores) ? Object.values(sample.scores) : [];
  const value = isRecord(scores[0]) ? scores[0].value : undefined;
  if (value === "C" || value === "I") out.success = value === "C";
  else if (typeof value === "boolean") out.success = value;
  else if (typeof value === "number" && Number.isFinite(value)) {
    out.reward = value;
    if (value === 0 || value === 1) out.success = value === 1;
  }
  const error = isRecord(sample.error) ? sample.error.message : sample.error;
  if (typeof error === "string" && error !== "") out.failure_mode = error;
  return out;
}
