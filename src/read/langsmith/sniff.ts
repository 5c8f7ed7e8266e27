import { arrayElementsInHead } from "../json-array.ts";
import { firstLine, parseSniffedJson } from "../reader.ts";
import { isRecord } from "../record-helpers.ts";

/**
 * What a trace-export format claims: a record (a JSON line or a whole document), an element of a
 * JSON array (the array is claimed when its first elements are objects and one is such an element),
 * the start of a record longer than the head.
 */
export interface Claims {
  record(value: unknown): boolean;
  element(value: unknown): boolean;
  cut(window: string): boolean;
}

/**
 * A sniff for JSON exports read whole: the first line as a record; else a pretty-printed array
 * (its first elements in the head) or document (the head parsed whole), claimed whole so that a
 * later reader's sniff (chat-tool-rows', which looks for message keys) does not take it; else the
 * first 16 KiB of a record longer than the head, by its keys.
 */
export function sniffRecords(head: string, claims: Claims): boolean {
  const text = head.replace(/^\uFEFF/, "");
  const line = firstLine(text).trim();
  if (!/^[[{]/.test(line)) return false;
  if (line !== "{" && line !== "[") {
    const parsed = parseSniffedJson(line);
    if (parsed.ok) return claims.record(parsed.value);
  }
  const start = text.trimStart();
  if (start.startsWith("[")) {
    const { elements } = arrayElementsInHead(start, 8);
    // (One damaged element among them does not hand the file to another reader: its reader quarantines it.)
    if (elements.length > 0) return elements.every(isRecord) && elements.some(claims.element);
  } else if (line === "{") {
    const whole = parseSniffedJson(start);
    if (whole.ok) return claims.record(whole.value);
  }
  return claims.cut(start.slice(0, 16384));
}
