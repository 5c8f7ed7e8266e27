import type { ControlExample, ControlLabelRow, ControlsData, EvidencePiece } from "./dashboard-data.ts";
import { type DuckSession, num, type Row, sqlStringList } from "./duckdb-session.ts";
import type { RunOutput } from "./run-output.ts";

/** Code points of an observation shown on each side of the evidence (the rest is counted). */
const CONTEXT_CODE_POINTS = 240;

/** Whether the run's stats table has the `labels` column (outputs written before controls do not). */
async function hasLabelsColumn(db: DuckSession, run: RunOutput): Promise<boolean> {
  const [row] = await db.rows(
    `SELECT count(*) AS n FROM information_schema.columns WHERE table_name = '${run.turnsView}' AND column_name = 'labels'`,
  );
  return num(row?.n) > 0;
}

/** One row per (turn, label) the turn shows, however often it shows it. */
const labelledTurns = (run: RunOutput) =>
  `SELECT DISTINCT id, domain, turn_index, class, kept, label FROM (
     SELECT id, domain, turn_index, class, kept, unnest(labels) AS label FROM ${run.turnsView} WHERE len(labels) > 0)`;

/** Per (domain, label): turns with it, and those kept, from the stats table. */
async function labelTurns(db: DuckSession, run: RunOutput): Promise<Map<string, { turns: number; kept: number }>> {
  const rows = await db.rows(`
    SELECT domain, label, count(*) AS turns, count(*) FILTER (WHERE kept) AS kept
    FROM (${labelledTurns(run)}) GROUP BY ALL`);
  return new Map(rows.map((r) => [`${r.domain}\u0000${r.label}`, { turns: num(r.turns), kept: num(r.kept) }]));
}

/**
 * Up to `perGroup` labelled turns per (domain, label), in the example browser's stable order (md5
 * of id and turn, spread over the run and the same on every machine).
 */
async function sampleLabelled(db: DuckSession, run: RunOutput, perGroup: number): Promise<Row[]> {
  return db.rows(`
    SELECT * FROM (
      SELECT *, row_number() OVER (PARTITION BY domain, label ORDER BY md5(id || ':' || turn_index)) AS rank_in_group
      FROM (${labelledTurns(run)})
    ) WHERE rank_in_group <= ${Math.max(0, Math.floor(perGroup))} ORDER BY label, domain, rank_in_group`);
}

interface ShardControls {
  kind: string;
  instruction: string;
  controls: { label: string; turn: number; start: number; end: number }[];
  messages?: { role: string; content: string }[];
}

/** The controls columns (and messages, when the shards carry them) of the given samples. */
async function readControls(db: DuckSession, run: RunOutput, ids: readonly string[]): Promise<Map<string, ShardControls>> {
  const found = new Map<string, ShardControls>();
  if (ids.length === 0 || run.shardFiles.length === 0 || !run.manifest.layout?.controls) return found;
  const messages = run.manifest.layout.include_messages ? ", messages" : "";
  const rows = await db.rows(
    `SELECT id, control_kind, control_instruction, controls${messages} FROM ${run.shardsView} WHERE list_contains(${sqlStringList(ids)}, id)`,
  );
  for (const r of rows)
    found.set(String(r.id), {
      kind: String(r.control_kind),
      instruction: String(r.control_instruction ?? ""),
      controls: (r.controls as ShardControls["controls"]).map((c) => ({ ...c, turn: num(c.turn), start: num(c.start), end: num(c.end) })),
      ...(r.messages ? { messages: r.messages as ShardControls["messages"] } : {}),
    });
  return found;
}

/**
 * The observation around the evidence spans (code points, as the shards' `controls` count them):
 * overlapping spans merged, each one piece, with the text between and up to CONTEXT_CODE_POINTS
 * on either side.
 */
function excerpt(observation: string, spans: readonly { start: number; end: number }[]): NonNullable<ControlExample["observation"]> {
  const points = Array.from(observation);
  const merged: { start: number; end: number }[] = [];
  for (const span of [...spans].sort((p, q) => p.start - q.start)) {
    const last = merged[merged.length - 1];
    if (last && span.start <= last.end) last.end = Math.max(last.end, span.end);
    else merged.push({ start: span.start, end: span.end });
  }
  const from = Math.max(0, (merged[0]?.start ?? 0) - CONTEXT_CODE_POINTS);
  const to = Math.min(points.length, (merged[merged.length - 1]?.end ?? 0) + CONTEXT_CODE_POINTS);
  const pieces: EvidencePiece[] = [];
  let at = from;
  for (const span of merged) {
    if (span.start > at) pieces.push({ text: points.slice(at, span.start).join("") });
    pieces.push({ text: points.slice(span.start, span.end).join(""), evidence: span });
    at = span.end;
  }
  if (to > at) pieces.push({ text: points.slice(at, to).join("") });
  return { pieces, omittedBefore: from, omittedAfter: points.length - to };
}

function toControlExample(r: Row, sample: ShardControls | undefined): ControlExample {
  const turnIndex = num(r.turn_index);
  const label = String(r.label);
  const example: ControlExample = {
    label,
    domain: String(r.domain),
    id: String(r.id),
    turnIndex,
    class: String(r.class),
    kept: r.kept === true,
    kind: sample?.kind ?? "",
    instruction: sample?.instruction ?? "",
    sampleLabels: (sample?.controls ?? []).map((c) => `${c.label} (turn ${c.turn})`),
  };
  if (!sample) return { ...example, note: "no shard row has this id with controls columns" };
  const spans = sample.controls.filter((c) => c.turn === turnIndex && c.label === label);
  // The observation of turn N is the assistant message 2 + 2N (system, then action and observation per turn).
  const message = sample.messages?.[2 + 2 * turnIndex];
  if (!sample.messages) return { ...example, note: "the shards carry no messages (output.include_messages is off)" };
  if (message?.role !== "assistant" || spans.length === 0)
    return { ...example, note: "the turn's observation or evidence cannot be placed in this sample" };
  return { ...example, observation: excerpt(message.content, spans) };
}

/**
 * The Controls panel's data: the manifest's controls block, turns per label from the stats table's
 * `labels` column (when it has one), and up to `perGroup` examples per (domain, label) with their
 * instruction and evidence read from the shards. Undefined for a manifest without the block.
 */
export async function controlsData(db: DuckSession, run: RunOutput, perGroup: number): Promise<ControlsData | undefined> {
  const controls = run.manifest.controls;
  if (!controls) return undefined;
  const withLabels = await hasLabelsColumn(db, run);
  const turns = withLabels ? await labelTurns(db, run) : undefined;
  const labels: ControlLabelRow[] = Object.entries(controls.labels)
    .sort(([a], [b]) => a.localeCompare(b))
    .flatMap(([domain, counts]) =>
      Object.entries(counts)
        .sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
        .map(([label, count]) => {
          const t = turns?.get(`${domain}\u0000${label}`);
          return { domain, label, count, ...(turns ? { turns: t?.turns ?? 0, keptTurns: t?.kept ?? 0 } : {}) };
        }),
    );
  const sampled = withLabels ? await sampleLabelled(db, run, perGroup) : [];
  const samples = await readControls(db, run, [...new Set(sampled.map((r) => String(r.id)))]);
  return {
    share: controls.share,
    counterfactualShare: controls.counterfactual_share,
    seed: controls.seed,
    labelled: controls.labelled,
    instructed: controls.instructed,
    counterfactual: controls.counterfactual,
    labels,
    examples: sampled.map((r) => toControlExample(r, samples.get(String(r.id)))),
    ...(controls.synthesis_eligible || controls.synthesis_asked || controls.synthesized ? { synthesis: synthesisRows(controls) } : {}),
  };
}

/**
 * With controls.synthesis: per (domain, kind) the syntheses written against what they were written
 * from — the trajectories a verified synthesis existed for (`synthesis_eligible`, the mix control's
 * manifests) or, in manifests from before it, the trajectories drawn for one (`synthesis_asked`) —
 * in name order; rejections by reason (as `describe` lists them).
 */
function synthesisRows(controls: NonNullable<RunOutput["manifest"]["controls"]>): NonNullable<ControlsData["synthesis"]> {
  const byName = <T>([a]: [string, T], [b]: [string, T]) => (a < b ? -1 : a > b ? 1 : 0);
  const basis = controls.synthesis_eligible ? "eligible" : "asked";
  const from = controls.synthesis_eligible ?? controls.synthesis_asked ?? {};
  const written = controls.synthesized ?? {};
  const domains = [...new Set([...Object.keys(from), ...Object.keys(written)])].sort();
  return {
    basis,
    rows: domains.flatMap((domain) =>
      [...new Set([...Object.keys(from[domain] ?? {}), ...Object.keys(written[domain] ?? {})])]
        .sort()
        .map((kind) => ({ domain, kind, asked: from[domain]?.[kind] ?? 0, written: written[domain]?.[kind] ?? 0 })),
    ),
    rejected: Object.entries(controls.synthesis_rejected ?? {})
      .sort(byName)
      .map(([reason, count]) => ({ reason, count })),
    ...(controls.synthesis_shares
      ? {
          shares: Object.entries(controls.synthesis_shares)
            .sort(byName)
            .flatMap(([domain, kinds]) =>
              Object.entries(kinds)
                .sort(byName)
                .map(([kind, share]) => ({ domain, kind, ...share })),
            ),
        }
      : {}),
  };
}
