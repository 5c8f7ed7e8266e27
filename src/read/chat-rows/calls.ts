import { parseJsonLine } from "../reader.ts";
import { describeType, FieldError, isRecord } from "../record-helpers.ts";
import type { Call } from "./message.ts";

/**
 * Tool calls as the OpenAI and text dialects write them: an assistant message's `tool_calls` or
 * legacy `function_call`, a ShareGPT `function_call` value, a Hermes `<tool_call>` block (kept as
 * written when it is not JSON); and `parseArguments`, which every dialect uses for a call's arguments.
 */

/** OpenAI `tool_calls` or the legacy `function_call` of an assistant message. */
export function structuredCalls(raw: Record<string, unknown>, field: string): Call[] {
  if (raw.tool_calls !== undefined && raw.tool_calls !== null) {
    if (!Array.isArray(raw.tool_calls)) {
      throw new FieldError(`${field}.tool_calls`, `${field}.tool_calls: expected an array, got ${describeType(raw.tool_calls)}`);
    }
    return raw.tool_calls.map((call, i) => {
      const at = `${field}.tool_calls.${i}`;
      if (!isRecord(call)) throw new FieldError(at, `${at}: expected a tool call object, got ${describeType(call)}`);
      const fn = isRecord(call.function) ? call.function : call;
      if (typeof fn.name !== "string" || fn.name === "") {
        throw new FieldError(`${at}.function.name`, `${at}.function.name: expected a non-empty string, got ${describeType(fn.name)}`);
      }
      return {
        name: fn.name,
        ...(typeof call.id === "string" ? { id: call.id } : {}),
        args: parseArguments(fn.arguments ?? fn.parameters),
      };
    });
  }
  if (raw.function_call !== undefined && raw.function_call !== null) {
    const fn = raw.function_call;
    if (!isRecord(fn) || typeof fn.name !== "string") {
      throw new FieldError(`${field}.function_call`, `${field}.function_call: expected {name, arguments}, got ${describeType(fn)}`);
    }
    return [{ name: fn.name, args: parseArguments(fn.arguments) }];
  }
  return [];
}

/** Arguments as a value: a JSON string parsed, an object as it is, a non-JSON string kept as text. */
export function parseArguments(args: unknown): unknown {
  if (args === undefined || args === null) return {};
  if (typeof args !== "string") return args;
  const parsed = parseJsonLine(args);
  return parsed.ok ? parsed.value : args;
}

/** A ShareGPT `function_call` message's value: one call or a list of calls, as JSON. */
export function shareGptCalls(text: string, field: string): Call[] {
  const parsed = parseJsonLine(text);
  if (!parsed.ok) return [textCall(text)];
  const list = Array.isArray(parsed.value) ? parsed.value : [parsed.value];
  if (list.length === 0) throw new FieldError(field, `${field}: an empty list of calls`);
  return list.map((value) => callFromJson(value) ?? { raw: JSON.stringify(value) });
}

/** A call written as text (a Hermes block): JSON `{name, arguments}`, else the text as written. */
export function textCall(inner: string): Call {
  const text = inner.trim();
  const parsed = parseJsonLine(text);
  const call = parsed.ok ? callFromJson(parsed.value) : undefined;
  if (call) return call;
  const name = /["']name["']\s*:\s*["']([^"']+)["']/.exec(text)?.[1];
  return { raw: text, ...(name ? { name } : {}) };
}

function callFromJson(value: unknown): Call | undefined {
  if (!isRecord(value) || typeof value.name !== "string") return undefined;
  return { name: value.name, args: parseArguments(value.arguments ?? value.parameters) };
}
