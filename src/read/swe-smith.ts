import type { QuarantineEntry } from "../core/errors.ts";
import type { Domain, SourceRef } from "../core/trajectory.ts";
import { type ChatAction, ChatTurnPairer, messageText } from "./chat-turns.ts";
import { firstLine, parseJsonLine, type Reader, type ReaderOptions, type ReadItem } from "./reader.ts";
import { contentId, describeType, isRecord, jsonObjectLines, lineQuarantine, MAX_JSON_DEPTH, nestsTooDeep } from "./record-helpers.ts";

import { dropObservation } from "./swe-null-observation.ts";

const FORMAT = "swe-smith";

/**
 * SWE-smith fine-tuning JSONL: one trajectory per line, `{instance_id, messages: [{role, content}]}`
 * (SWE-agent runs exported for SFT with the XML tool-call format); `messages` may be a JSON string
 * of the list, as a Hub string column holds it.
 *
 * Turns: each assistant message's `<function=NAME>…</function>` block, verbatim (the first one,
 * as SWE-agent's XML parser executes one call per reply), paired with the next user/tool message,
 * whose `OBSERVATION:\n` export prefix is removed (it is the export template, not tool output).
 * OpenAI `tool_calls` stand in when a reply has no XML block. The text around the block is
 * `turn.meta.agent_thought`. Replies without a call, and a final call with no observation (the
 * closing `submit`), are counted in `meta.skipped`. Task: the first user message.
 *
 * Id: the attempt's own id (`traj_id`, else `id`): SWE-smith ships several attempts per instance.
 * A row without one is named by its `instance_id`, and a later row of the same file with the same
 * instance by the instance id plus a hash of the row: two attempts are two records, never a
 * duplicate id. Else a hash of the line. `meta.task_id` = `instance_id`, `meta.attempt` = `attempt`
 * (or `trial`), `meta.model`, `meta.outcome.resolved` where the row has them. A JSON array of rows
 * is read element by element (src/read/json-array.ts).
 */
export const sweSmithReader: Reader = {
  name: FORMAT,
  domain: "swe",
  description: "SWE-smith fine-tuning JSONL ({instance_id, messages} with <function=…> tool calls), one trajectory per line",

  sniff(head) {
    const line = firstLine(head);
    if (!/^\uFEFF?\s*\{/.test(line) || !/<function=[\w-]+>/.test(line)) return false;
    // `messages` a list, or a JSON string of one (the Hub's string column).
    return /"messages"\s*:\s*\[\s*\{/.test(line) || /"messages"\s*:\s*"\s*\[\s*\{\s*\\"/.test(line);
  },

  async *read(path: string, options: ReaderOptions): AsyncGenerator<ReadItem> {
    const instances = new Set<string>();
    for await (const line of jsonObjectLines(path, options, FORMAT)) {
      if (line.kind === "quarantine") yield line;
      else yield lineItem(line.record, line.source, line.text, options.domain ?? "swe", instances);
    }
  },
};

function ownString(value: unknown): string | undefined {
  if (typeof value === "string" && value !== "") return value;
  return typeof value === "number" && Number.isFinite(value) ? String(value) : undefined;
}

/** The attempt's id (see the reader's comment); `instances` are the instance ids named so far in the file. */
function attemptId(record: Record<string, unknown>, text: string, instances: Set<string>): string {
  const own = ownString(record.traj_id) ?? ownString(record.id);
  if (own !== undefined) return own;
  const instance = ownString(record.instance_id);
  if (instance === undefined) return contentId("swe-smith", text);
  if (!instances.has(instance)) {
    instances.add(instance);
    return instance;
  }
  return contentId(instance, text);
}

/** Outcome and provenance the row records: task_id, attempt, model, outcome.resolved. */
function provenance(record: Record<string, unknown>): Record<string, unknown> {
  const meta: Record<string, unknown> = {};
  const instance = ownString(record.instance_id);
  if (instance !== undefined) meta.task_id = instance;
  const attempt = ownString(record.attempt) ?? ownString(record.trial);
  if (attempt !== undefined) meta.attempt = attempt;
  if (typeof record.model === "string" && record.model !== "") meta.model = record.model;
  if (typeof record.resolved === "boolean") meta.outcome = { resolved: record.resolved };
  return meta;
}

function lineItem(record: Record<string, unknown>, source: SourceRef, text: string, domain: Domain, instances: Set<string>): ReadItem {
  const quarantine = (entry: Omit<QuarantineEntry, "source" | "stage">) => lineQuarantine(source, text, entry);
  const id = attemptId(record, text, instances);
  // `messages` as a JSON string of the list, as a Hub string column holds it.
  let messages = record.messages;
  if (typeof messages === "string") {
    const parsed = parseJsonLine(messages);
    if (!parsed.ok)
      return quarantine({ id, field: "messages", reason: `messages: a string that is not a JSON list of messages (${parsed.reason})` });
    messages = parsed.value;
  }
  if (!Array.isArray(messages)) {
    return quarantine({
      id,
      field: "messages",
      reason: `messages: expected an array (or a JSON string of one), got ${describeType(messages)}`,
    });
  }
  const pairer = new ChatTurnPairer();
  let sawAssistant = false;
  for (const [i, message] of messages.entries()) {
    const field = `messages.${i}`;
    if (!isRecord(message) || typeof message.role !== "string") {
      return quarantine({ id, field: `${field}.role`, reason: `${field}: expected a message with a string role` });
    }
    // Tool calls are written into the action as JSON (assistantActions).
    if (nestsTooDeep(message)) return quarantine({ id, field, reason: `${field}: nested deeper than ${MAX_JSON_DEPTH} levels` });
    if (message.role === "assistant") sawAssistant = true;
    else if ((message.role === "user" || message.role === "tool") && message.content == null && sawAssistant) {
      dropObservation(pairer, message.role);
      continue;
    }
    const content = messageText(message.content);
    if (content === undefined) {
      const reason = `${field}.content: expected a string or text parts, got ${describeType(message.content)}`;
      return quarantine({ id, field: `${field}.content`, reason });
    }
    if (message.role === "assistant") pairer.add("assistant", content, assistantActions(message, content));
    else pairer.add(message.role, message.role === "system" ? content : content.replace(OBSERVATION_PREFIX, ""));
  }
  pairer.finish();
  const { turns, task, skipped } = pairer;
  if (turns.length === 0) return quarantine({ id, field: "messages", reason: "no assistant tool call was followed by an observation" });
  const provenanceMeta = provenance(record);
  const meta =
    Object.keys(skipped).length > 0 || Object.keys(provenanceMeta).length > 0
      ? { ...provenanceMeta, ...(Object.keys(skipped).length > 0 ? { skipped } : {}) }
      : undefined;
  return {
    kind: "trajectory",
    trajectory: { id, domain, source, ...(task !== undefined ? { task } : {}), turns, ...(meta ? { meta } : {}) },
  };
}

const OBSERVATION_PREFIX = /^OBSERVATION:\r?\n/;
const FUNCTION_BLOCK = /<function=[^>\n]+>[\s\S]*?<\/function>/;

function assistantActions(message: Record<string, unknown>, text: string): ChatAction[] {
  const block = FUNCTION_BLOCK.exec(text);
  if (block) {
    const thought = (text.slice(0, block.index) + text.slice(block.index + block[0].length)).trim();
    return [{ action: block[0], ...(thought ? { thought } : {}) }];
  }
  if (!Array.isArray(message.tool_calls) || message.tool_calls.length === 0) return [];
  const thought = text.trim();
  return message.tool_calls.map((call) => {
    const fn = isRecord(call) && isRecord(call.function) ? call.function : {};
    return { action: JSON.stringify({ name: fn.name, arguments: fn.arguments }), ...(thought ? { thought } : {}) };
  });
}
