/** JSON-RPC error objects, read with a tiny scanner of a JSON object's members. */
import { type Facts, type Hit, hit, isSpace, matchesOf } from "./spans.ts";

export interface JsonMember {
  key: string;
  keyStart: number;
  valueStart: number;
  valueEnd: number;
}

function skipWs(text: string, i: number): number {
  let j = i;
  while (j < text.length && isSpace(text.charCodeAt(j))) j++;
  return j;
}

function skipString(text: string, i: number, limit: number): number {
  // text[i] === '"'
  let j = i + 1;
  while (j < limit) {
    const c = text.charCodeAt(j);
    if (c === 92) j += 2;
    else if (c === 34) return j + 1;
    else j++;
  }
  return -1;
}

function skipValue(text: string, i: number, limit: number): number {
  const c = text[i];
  if (c === '"') return skipString(text, i, limit);
  if (c === "{" || c === "[") {
    let depth = 0;
    let j = i;
    while (j < limit) {
      const d = text[j];
      if (d === '"') {
        j = skipString(text, j, limit);
        if (j === -1) return -1;
        continue;
      }
      if (d === "{" || d === "[") depth++;
      else if (d === "}" || d === "]") {
        depth--;
        if (depth === 0) return j + 1;
      }
      j++;
    }
    return -1;
  }
  let j = i;
  while (j < limit && !/[,}\]\s]/.test(text[j] ?? "")) j++;
  return j === i ? -1 : j;
}

/** The members of the JSON object whose `{` is at `open` (scanning at most `maxChars`); undefined if it is not well-formed there. */
export function jsonMembers(text: string, open: number, maxChars = 16_384): JsonMember[] | undefined {
  const limit = Math.min(text.length, open + maxChars);
  const members: JsonMember[] = [];
  let i = skipWs(text, open + 1);
  while (i < limit) {
    const c = text[i];
    if (c === "}") return members;
    if (c === ",") {
      i = skipWs(text, i + 1);
      continue;
    }
    if (c !== '"') return undefined;
    const keyEnd = skipString(text, i, limit);
    if (keyEnd === -1) return undefined;
    const key = text.slice(i + 1, keyEnd - 1);
    let j = skipWs(text, keyEnd);
    if (text[j] !== ":") return undefined;
    j = skipWs(text, j + 1);
    const valueEnd = skipValue(text, j, limit);
    if (valueEnd === -1) return undefined;
    members.push({ key, keyStart: i, valueStart: j, valueEnd });
    i = skipWs(text, valueEnd);
  }
  return undefined;
}

const JSON_ERROR_OBJECT = /"error"[ \t\r\n]*:[ \t\r\n]*\{/g;

/** A JSON string literal's content when it has no escapes (so the fact is the evidence's own text), else undefined. */
export function plainJsonString(literal: string): string | undefined {
  if (literal.length < 2 || literal[0] !== '"' || literal[literal.length - 1] !== '"') return undefined;
  const content = literal.slice(1, -1);
  return content.includes("\\") || content.trim() === "" ? undefined : content;
}

export interface ErrorObject {
  hits: Hit[];
  /** Where the error's message value lies, for rules that look inside the message (timeouts, missing files). */
  message?: [number, number];
}

/**
 * JSON-RPC error objects (`"error": {"code": -32602, "message": "…"}`): rpc_error with the code,
 * the span running from the code to the message. An error object whose code is an HTTP status
 * (Google APIs: `{"error": {"code": 429, …}}`) is left to jsonHttpErrors.
 */
export function jsonRpcErrors(text: string): ErrorObject[] {
  if (!text.includes('"error"')) return [];
  const out: ErrorObject[] = [];
  for (const m of matchesOf(JSON_ERROR_OBJECT, text)) {
    const members = jsonMembers(text, m.index + m[0].length - 1);
    if (!members) continue;
    const code = members.find((member) => member.key === "code");
    if (!code) continue;
    const codeText = text.slice(code.valueStart, code.valueEnd);
    if (!/^-?\d+$/.test(codeText)) continue;
    const value = Number(codeText);
    if (value >= 400 && value <= 599) continue;
    const message = members.find((member) => member.key === "message");
    const start = Math.min(code.keyStart, message?.keyStart ?? code.keyStart);
    const end = Math.max(code.valueEnd, message?.valueEnd ?? code.valueEnd);
    const facts: Facts = { code: value };
    const messageText = message ? plainJsonString(text.slice(message.valueStart, message.valueEnd)) : undefined;
    if (messageText !== undefined) facts.message = messageText;
    out.push({
      hits: [hit("rpc_error", text, start, end, facts)],
      message: message ? [message.valueStart, message.valueEnd] : undefined,
    });
  }
  return out;
}
