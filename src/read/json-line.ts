/** The two texts parseSniffedJson was last asked about, the latest first. */
const sniffed: { text: string; result: ReturnType<typeof parseJsonLine> }[] = [];

/**
 * parseJsonLine for sniffs. Format detection asks every reader's sniff about the same head, and
 * ~25 of them parse its first line, or the head whole (a pretty-printed document): the last two
 * texts' results are kept, so each is parsed once per file, not once per sniff (one entry was not
 * enough: sniffs asking for the line and for the head in turn evicted each other). The value is
 * shared between them: a sniff reads it and never changes it. (Readers parse their records with
 * parseJsonLine, whose every value is their own.)
 */
export function parseSniffedJson(text: string): ReturnType<typeof parseJsonLine> {
  if (sniffed[0]?.text === text) return sniffed[0].result;
  if (sniffed[1]?.text === text) sniffed.reverse();
  else {
    sniffed.unshift({ text, result: parseJsonLine(text) });
    if (sniffed.length > 2) sniffed.pop();
  }
  return (sniffed[0] as (typeof sniffed)[number]).result;
}

/** Parses one JSON line, or explains why it is not JSON. */
export function parseJsonLine(text: string): { ok: true; value: unknown } | { ok: false; reason: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return { ok: false, reason: `invalid JSON: ${(err as Error).message}` };
  }
}
