/**
 * Labelled PII corpora (test/fixtures/pii/*.txt): documents separated by `=== <domain> <name> ===`
 * lines, personal data marked `⟦kind|value⟧`. Parsing and scoring shared by the PII suites.
 */

export interface LabelledSpan {
  kind: string;
  start: number;
  end: number;
}

export interface LabelledDocument {
  name: string;
  /** The document with its marks removed: what a detector sees. */
  text: string;
  spans: LabelledSpan[];
}

export function parseLabelledCorpus(raw: string): LabelledDocument[] {
  const docs: LabelledDocument[] = [];
  const parts = raw.split(/^=== (.+) ===\n/m).slice(1);
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const name = parts[i] as string;
    const body = parts[i + 1] as string;
    let text = "";
    const spans: LabelledSpan[] = [];
    let at = 0;
    for (const m of body.matchAll(/⟦(\w+)\|([^⟧]+)⟧/g)) {
      text += body.slice(at, m.index);
      spans.push({ kind: m[1] as string, start: text.length, end: text.length + (m[2] as string).length });
      text += m[2];
      at = m.index + m[0].length;
    }
    text += body.slice(at);
    docs.push({ name, text, spans });
  }
  return docs;
}

export interface KindScore {
  tp: number;
  fp: number;
  fn: number;
  precision: number;
  recall: number;
}

/**
 * Exact-span precision and recall per kind of `find` on `docs`, for the kinds in `kinds` (a
 * finding or label of another kind is ignored), and every error as a readable line.
 */
export function scoreCorpus(
  docs: readonly LabelledDocument[],
  kinds: readonly string[],
  find: (text: string) => readonly LabelledSpan[],
): { report: Record<string, KindScore>; errors: string[] } {
  const tally = Object.fromEntries(kinds.map((k) => [k, { tp: 0, fp: 0, fn: 0 }]));
  const errors: string[] = [];
  const same = (a: LabelledSpan, b: LabelledSpan) => a.kind === b.kind && a.start === b.start && a.end === b.end;
  for (const doc of docs) {
    const found = find(doc.text).filter((f) => kinds.includes(f.kind));
    const labelled = doc.spans.filter((s) => kinds.includes(s.kind));
    for (const f of found) {
      const t = tally[f.kind] as { tp: number; fp: number };
      if (labelled.some((s) => same(s, f))) t.tp++;
      else {
        t.fp++;
        errors.push(`${doc.name}: false positive ${f.kind} ${JSON.stringify(doc.text.slice(f.start, f.end))}`);
      }
    }
    for (const s of labelled)
      if (!found.some((f) => same(s, f))) {
        (tally[s.kind] as { fn: number }).fn++;
        errors.push(`${doc.name}: missed ${s.kind} ${JSON.stringify(doc.text.slice(s.start, s.end))}`);
      }
  }
  const report = Object.fromEntries(
    Object.entries(tally).map(([kind, { tp, fp, fn }]) => [
      kind,
      { tp, fp, fn, precision: tp / (tp + fp || 1), recall: tp / (tp + fn || 1) },
    ]),
  );
  return { report, errors };
}
