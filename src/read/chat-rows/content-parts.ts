import { isRecord } from "../record-helpers.ts";

/**
 * Content parts as text: the text of a tool result given as a string, null, or a list of typed
 * parts (OpenAI / Anthropic) or Qwen-Agent items, media parts standing as `[image]`, `[file]`, …;
 * and a tool message's content, where a JSON value stored as it is becomes its JSON text.
 */

/**
 * A tool result's text: a string; null or absent (empty); a list of content parts, whose text
 * parts are joined by newlines and whose media parts are `[image]`, `[file]`, … (OpenAI / Anthropic
 * typed parts, Qwen-Agent's `{text}` / `{image}` items). Undefined when it is none of these.
 */
export function partsText(content: unknown): string | undefined {
  if (typeof content === "string") return content;
  if (content === null || content === undefined) return "";
  if (!Array.isArray(content)) return undefined;
  const texts: string[] = [];
  for (const part of content) {
    if (typeof part === "string") texts.push(part);
    else if (!isContentPart(part)) return undefined;
    else if (typeof part.text === "string") texts.push(part.text);
    else {
      const kind = typeof part.type === "string" ? part.type : (Object.keys(part)[0] as string);
      texts.push(`[${kind.replace(/^input_/, "").replace(/_url$/, "")}]`);
    }
  }
  return texts.join("\n");
}

const MEDIA_KEYS = new Set(["text", "image", "file", "audio", "video"]);

/** A content part: a typed one (`{type, …}`), or a Qwen-Agent item (one key of text / image / file / audio / video). */
export function isContentPart(part: unknown): part is Record<string, unknown> {
  if (!isRecord(part)) return false;
  if (typeof part.type === "string") return true;
  const keys = Object.keys(part);
  return keys.length === 1 && MEDIA_KEYS.has(keys[0] as string) && typeof part[keys[0] as string] === "string";
}

/**
 * A tool message's content: a string, null (empty) or content parts (partsText); a JSON value
 * stored as it is (an object, or a list of anything but content parts) is its JSON text.
 */
export function resultText(content: unknown): string | undefined {
  if (isRecord(content)) return JSON.stringify(content);
  if (Array.isArray(content) && !content.every((part) => typeof part === "string" || isContentPart(part))) return JSON.stringify(content);
  return partsText(content);
}
