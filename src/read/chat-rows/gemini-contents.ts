import { describeType, FieldError, isRecord } from "../record-helpers.ts";
import { parseArguments } from "./calls.ts";
import { type Call, type Message, makeMessage } from "./message.ts";

/**
 * Google Gemini API `contents` (generateContent requests as logged, Vertex AI supervised-tuning
 * rows, the request of a batch-prediction line): a list of `{role, parts}`, role `user` or `model`
 * (`function` / `tool` in older logs for the turn that returns results). A model turn's
 * `functionCall` parts `{name, args, id?}` are its calls, its `text` parts its text, `thought: true`
 * text parts its thinking; the next turn's `functionResponse` parts `{name, response, id?}` are the
 * results, matched by `id`, else by name, else in order. `systemInstruction` (`{parts}`, or a
 * string) is the agent's system text, `tools[].functionDeclarations` the tool specs. Built-in
 * code execution parts (`executableCode`, `codeExecutionResult`: run by the API) are counted.
 */

/** One element of a row's `contents`, kept for normalizeMessage (conversation.ts hands these over). */
export class GeminiContent {
  readonly raw: unknown;
  constructor(raw: unknown) {
    this.raw = raw;
  }
}

/**
 * A Gemini `contents` list: records that each hold `parts` (a role is optional in a single-turn
 * request), at least one of them a list (a malformed one is then named when read).
 */
export function isGeminiContents(value: unknown): value is unknown[] {
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((c) => isRecord(c) && "parts" in c) &&
    value.some((c) => isRecord(c) && Array.isArray(c.parts))
  );
}

const part = (p: unknown, camel: string, snake: string): unknown => (isRecord(p) ? (p[camel] ?? p[snake]) : undefined);

/** Whether a Gemini `contents` list uses tools: a `functionCall` or `functionResponse` part. */
export function hasGeminiToolParts(contents: readonly unknown[]): boolean {
  return contents.some(
    (c) =>
      isRecord(c) &&
      Array.isArray(c.parts) &&
      c.parts.some((p) => isRecord(part(p, "functionCall", "function_call")) || isRecord(part(p, "functionResponse", "function_response"))),
  );
}

/** A row's Gemini conversation (`contents`), each element wrapped for normalizeMessage; undefined when it has none. */
export function geminiConversation(row: Record<string, unknown>): { key: string; value: unknown[]; fields: string[] } | undefined {
  if (!isGeminiContents(row.contents)) return undefined;
  const contents = row.contents;
  return { key: "contents", value: contents.map((c) => new GeminiContent(c)), fields: contents.map((_, i) => `contents.${i}`) };
}

/** The Gemini function declarations of a row's `tools` (`[{functionDeclarations: […]}, …]`), flattened. */
export function geminiDeclarations(tools: readonly unknown[]): unknown[] | undefined {
  const declared = tools.filter((t) => isRecord(t) && Array.isArray(part(t, "functionDeclarations", "function_declarations")));
  if (declared.length === 0) return undefined;
  return tools.flatMap((t) => {
    const list = part(t, "functionDeclarations", "function_declarations");
    // A built-in tool (`googleSearch`, `codeExecution`, …) stays as written.
    return Array.isArray(list) ? list : [t];
  });
}

/** A row's `systemInstruction` (`system_instruction`) text: its text parts, or a string. */
export function geminiSystem(row: Record<string, unknown>): string | undefined {
  const value = row.systemInstruction ?? row.system_instruction;
  if (typeof value === "string") return value.trim() !== "" ? value : undefined;
  if (!isRecord(value) || !Array.isArray(value.parts)) return undefined;
  const text = value.parts
    .flatMap((p) => (isRecord(p) && typeof p.text === "string" ? [p.text] : []))
    .join("\n")
    .trim();
  return text !== "" ? text : undefined;
}

/**
 * A function's `response` as the result text: the value of a lone `output` / `result` / `content`
 * string, else the object's JSON text; a response holding only an `error` is a failed call.
 */
function responseText(response: unknown, at: string): { text: string; isError: boolean } {
  if (typeof response === "string") return { text: response, isError: false };
  if (response === undefined || response === null) return { text: "", isError: false };
  if (!isRecord(response)) throw new FieldError(at, `${at}: expected a JSON object, got ${describeType(response)}`);
  const keys = Object.keys(response);
  const only = keys.length === 1 ? (keys[0] as string) : undefined;
  const value = only !== undefined ? response[only] : undefined;
  if (only === "error") return { text: typeof value === "string" ? value : JSON.stringify(value), isError: true };
  if ((only === "output" || only === "result" || only === "content") && typeof value === "string") return { text: value, isError: false };
  return { text: JSON.stringify(response), isError: false };
}

/** A media part (`inlineData` / `fileData` with a MIME type) as `[image]`, `[audio]`, `[video]` or `[file]`. */
function mediaText(p: Record<string, unknown>): string | undefined {
  const media = part(p, "inlineData", "inline_data") ?? part(p, "fileData", "file_data");
  if (!isRecord(media)) return undefined;
  const mime = media.mimeType ?? media.mime_type;
  const kind = typeof mime === "string" ? mime.split("/")[0] : undefined;
  return `[${kind === "image" || kind === "audio" || kind === "video" ? kind : "file"}]`;
}

const GEMINI_ROLES: Record<string, "user" | "assistant" | "tool"> = { user: "user", model: "assistant", function: "tool", tool: "tool" };

/** One Gemini content as messages: a model turn is one assistant message; a user turn is a tool message per functionResponse, then its text. */
export function geminiMessages(raw: unknown, field: string): Message[] {
  if (!isRecord(raw)) throw new FieldError(field, `${field}: expected a content object {role, parts}, got ${describeType(raw)}`);
  if (raw.role !== undefined && typeof raw.role !== "string")
    throw new FieldError(`${field}.role`, `${field}.role: expected a string, got ${describeType(raw.role)}`);
  const roleName = typeof raw.role === "string" && raw.role !== "" ? raw.role.toLowerCase() : "user";
  const role = GEMINI_ROLES[roleName];
  if (role === undefined) return [makeMessage("other", "", { skipped: [`${roleName}_message`] })];
  if (!Array.isArray(raw.parts))
    throw new FieldError(`${field}.parts`, `${field}.parts: expected a list of parts, got ${describeType(raw.parts)}`);
  const texts: string[] = [];
  const thoughts: string[] = [];
  const calls: Call[] = [];
  const results: Message[] = [];
  const skipped: string[] = [];
  for (const [i, p] of raw.parts.entries()) {
    const at = `${field}.parts.${i}`;
    if (!isRecord(p)) throw new FieldError(at, `${at}: expected a part object, got ${describeType(p)}`);
    const call = part(p, "functionCall", "function_call");
    const response = part(p, "functionResponse", "function_response");
    if (call !== undefined) {
      const key = "functionCall" in p ? "functionCall" : "function_call";
      if (!isRecord(call) || typeof call.name !== "string" || call.name === "")
        throw new FieldError(
          `${at}.${key}.name`,
          `${at}.${key}.name: expected a non-empty string, got ${describeType(isRecord(call) ? call.name : call)}`,
        );
      calls.push({
        name: call.name,
        ...(typeof call.id === "string" && call.id !== "" ? { id: call.id } : {}),
        args: parseArguments(call.args ?? {}),
      });
    } else if (response !== undefined) {
      const key = "functionResponse" in p ? "functionResponse" : "function_response";
      if (!isRecord(response) || typeof response.name !== "string" || response.name === "")
        throw new FieldError(
          `${at}.${key}.name`,
          `${at}.${key}.name: expected a non-empty string, got ${describeType(isRecord(response) ? response.name : response)}`,
        );
      const { text, isError } = responseText(response.response, `${at}.${key}.response`);
      const id = typeof response.id === "string" && response.id !== "" ? response.id : undefined;
      results.push(
        makeMessage("tool", text, {
          results: [text],
          ...(id !== undefined ? { toolCallId: id } : {}),
          toolName: response.name,
          ...(isError ? { isError } : {}),
        }),
      );
    } else if (typeof p.text === "string") {
      (p.thought === true ? thoughts : texts).push(p.text);
    } else if (part(p, "executableCode", "executable_code") !== undefined) skipped.push("executable_code_part");
    else if (part(p, "codeExecutionResult", "code_execution_result") !== undefined) skipped.push("code_execution_result_part");
    else {
      const media = mediaText(p);
      if (media !== undefined) texts.push(media);
    }
  }
  const text = texts.join("\n");
  const extra: Partial<Message> = {
    ...(thoughts.length > 0 ? { reasoning: thoughts.map((t) => t.trim()).join("\n\n") } : {}),
    ...(skipped.length > 0 ? { skipped } : {}),
  };
  if (role === "assistant") return [makeMessage("assistant", text, { calls, ...extra })];
  // A function call in a user turn is no call of the model's: counted.
  if (calls.length > 0) extra.skipped = [...(extra.skipped ?? []), ...calls.map(() => "function_call_outside_model_turn")];
  const messages = [...results];
  if (text.trim() !== "") messages.push(role === "tool" ? makeMessage("tool", text, { results: [text] }) : makeMessage("user", text));
  if (messages.length === 0) return [makeMessage("other", "", extra)];
  const first = messages[0] as Message;
  if (extra.skipped) messages[0] = { ...first, skipped: extra.skipped };
  return messages;
}
