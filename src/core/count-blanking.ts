/** A number standing alone (`line 42`, `30s`, `after 5000 ms`), not one inside a name (`UTF-16`, `gpt-4o`, `x86_64`, `sha256`). */
const COUNT = /(?<![\p{L}\p{N}_]-?)\d+/gu;

/**
 * A reason with its counts blanked (`#`), so that the same cause said with other numbers counts
 * once in a report (the run's top quarantine reasons, a teacher's failure kinds), while numbers
 * that are part of a name stay: "UTF-16 text" is not "UTF-# text", "gpt-4o" not "gpt-#o".
 */
export function blankCounts(text: string): string {
  return text.replace(COUNT, "#");
}
