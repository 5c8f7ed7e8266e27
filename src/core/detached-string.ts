/**
 * A copy of `text` that does not refer to any other string. V8 cuts a substring of 13 or more
 * characters as a view into the string it was cut from, so a substring kept as a long-lived map
 * key keeps its whole source text (an observation, a rendered chunk: often kilobytes) alive for
 * as long as the map holds it. Keys of caches that outlive a record are stored detached.
 */
export function detachedString(text: string): string {
  return text.length < 13 ? text : Buffer.from(text, "utf8").toString("utf8");
}
