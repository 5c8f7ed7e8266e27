import { describeJson as describeJsonValue, describeType, isRecord, MAX_JSON_DEPTH, nestsTooDeep } from "../record-helpers.ts";

/**
 * The parts of an ATIF document the reader checks and keeps: a step (its message, tool calls and
 * observation results) and the root fields, each checked field by field, or the first problem.
 */

export interface Problem {
  field: string;
  reason: string;
}

export interface ToolCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

export interface Result {
  callId: string | undefined;
  text: string;
  subagents: unknown[] | undefined;
}

/** What a step leaves once checked: only the parts the turns need. */
export interface Step {
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

/** One step, checked: the parts the turns need, or the first problem. */
export function checkStep(index: number, raw: unknown): Step | Problem {
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

export interface Header {
  version: string;
  sessionId: string | undefined;
  trajectoryId: string | undefined;
  agent: Record<string, unknown>;
  finalMetrics: Record<string, unknown> | undefined;
  notes: string | undefined;
  extra: Record<string, unknown> | undefined;
  continued: string | undefined;
}

export function optionalString(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** A field's value for a reason, at most 80 characters; a value nested too deep to write is named by its type. */
export function describeJson(value: unknown): string {
  if (value === undefined) return "nothing";
  const text = describeJsonValue(value);
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
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
