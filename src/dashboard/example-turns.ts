import { maskRuns } from "../inspect/mask-view.ts";
import { turnSpans } from "../inspect/turn-notes.ts";
import type { Tokenizer } from "../tokenize/tokenizer.ts";
import type { ExampleTurn, TokenRun, TurnTokens } from "./dashboard-data.ts";
import { type DuckSession, num, type Row, sqlStringList } from "./duckdb-session.ts";
import type { RunOutput } from "./run-output.ts";

/** A turn longer than this many tokens is cut for the page (the rest is counted, not shown). */
const MAX_TURN_TOKENS = 3000;

/** Filters of the example browser; empty strings mean "any". */
export interface ExampleFilter {
  domain?: string;
  class?: string;
  decision?: "kept" | "masked" | "";
  /** Compare mode: only turns whose class or decision differs in the other run. */
  changed?: boolean;
}

/**
 * The columns of an example, plus the other run's class and decision in compare mode (no join
 * otherwise), and a stable order that does not follow file layout: md5 of (id, turn), so a
 * sample is spread over the whole run and the same on every machine.
 */
function exampleSelect(run: RunOutput, other: RunOutput | undefined): string {
  const order = "md5(t.id || ':' || t.turn_index) AS sample_order";
  return other
    ? `SELECT t.*, o.class AS other_class, o.kept AS other_kept, ${order}
       FROM ${run.turnsView} t LEFT JOIN ${other.turnsView} o ON o.id = t.id AND o.turn_index = t.turn_index`
    : `SELECT t.*, NULL::VARCHAR AS other_class, NULL::BOOLEAN AS other_kept, ${order} FROM ${run.turnsView} t`;
}

/**
 * The chosen rows with their record's turn count (to place the turn among the sample's
 * messages), counted for those records only: a window over every turn cost most of the
 * dashboard's time and memory at a million turns (bench/dashboard.bench.ts).
 */
function withRecordTurns(run: RunOutput, chosen: string, orderBy: string): string {
  return `WITH chosen AS (${chosen})
    SELECT chosen.*, r.record_turns FROM chosen JOIN (
      SELECT id, count(*) AS record_turns FROM ${run.turnsView} WHERE id IN (SELECT id FROM chosen) GROUP BY id
    ) r USING (id) ORDER BY ${orderBy}`;
}

function toExample(r: Row): ExampleTurn & { recordTurns: number } {
  const example: ExampleTurn & { recordTurns: number } = {
    id: String(r.id),
    domain: String(r.domain),
    turnIndex: num(r.turn_index),
    class: String(r.class),
    kept: r.kept === true,
    keepRatio: num(r.keep_ratio),
    draw: num(r.draw),
    overlap: num(r.overlap),
    novelty: num(r.novelty),
    jaccard: num(r.jaccard),
    lengthRatio: num(r.length_ratio),
    historyNovelty: num(r.history_novelty),
    actTokens: num(r.act_tokens),
    obsTokens: num(r.obs_tokens),
    recordTurns: num(r.record_turns),
  };
  if (r.other_class !== null && r.other_class !== undefined) example.other = { class: String(r.other_class), kept: r.other_kept === true };
  return example;
}

/** Up to `perGroup` turns of every (domain, class, decision), for the page to embed. */
export async function sampleExamples(
  db: DuckSession,
  run: RunOutput,
  other: RunOutput | undefined,
  perGroup: number,
): Promise<(ExampleTurn & { recordTurns: number })[]> {
  const chosen = `SELECT * FROM (
      SELECT *, row_number() OVER (PARTITION BY domain, class, kept ORDER BY sample_order) AS rank_in_group
      FROM (${exampleSelect(run, other)})
    ) WHERE rank_in_group <= ${Math.max(0, Math.floor(perGroup))}`;
  const rows = await db.rows(withRecordTurns(run, chosen, "domain, class, kept DESC, rank_in_group"));
  return rows.map(toExample);
}

/** One page of turns matching a filter (the live server's example browser). */
export async function queryExamples(
  db: DuckSession,
  run: RunOutput,
  other: RunOutput | undefined,
  filter: ExampleFilter,
  limit: number,
  offset: number,
): Promise<{ total: number; examples: (ExampleTurn & { recordTurns: number })[] }> {
  const where: string[] = ["true"];
  const values: Record<string, string> = {};
  if (filter.domain) {
    where.push("domain = $domain");
    values.domain = filter.domain;
  }
  if (filter.class) {
    where.push("class = $class");
    values.class = filter.class;
  }
  if (filter.decision === "kept") where.push("kept");
  if (filter.decision === "masked") where.push("NOT kept");
  if (filter.changed && other) where.push("other_class IS NOT NULL AND (other_class <> class OR other_kept <> kept)");
  const filtered = `SELECT * FROM (${exampleSelect(run, other)}) WHERE ${where.join(" AND ")}`;
  const [count] = await db.rows(`SELECT count(*) AS n FROM (${filtered})`, values);
  const page = `${filtered} ORDER BY sample_order LIMIT ${Math.floor(limit)} OFFSET ${Math.max(0, Math.floor(offset))}`;
  const rows = await db.rows(withRecordTurns(run, page, "sample_order"), values);
  return { total: num(count?.n), examples: rows.map(toExample) };
}

/** A sample's (or packed document's) ids and mask, and whether it is a piece of a split record. */
interface SampleTokens {
  ids: Int32Array;
  mask: Uint8Array;
  split: boolean;
}

/** Reads the token columns of the given samples from the shards (DuckDB pushes the id filter down). */
async function readSamples(db: DuckSession, run: RunOutput, ids: readonly string[]): Promise<Map<string, SampleTokens>> {
  const found = new Map<string, SampleTokens>();
  if (ids.length === 0 || run.shardFiles.length === 0) return found;
  const idList = sqlStringList(ids);
  if (!run.manifest.layout?.pack) {
    const rows = await db.rows(`SELECT id, input_ids, loss_mask FROM ${run.shardsView} WHERE list_contains(${idList}, id)`);
    for (const r of rows)
      found.set(String(r.id), {
        ids: Int32Array.from(r.input_ids as number[]),
        mask: Uint8Array.from(r.loss_mask as number[]),
        split: false,
      });
    return found;
  }
  // Packed rows: cut each wanted document out of its row by cu_seqlens.
  const rows = await db.rows(
    `SELECT document_ids, document_parts, cu_seqlens, input_ids, loss_mask FROM ${run.shardsView} WHERE list_has_any(document_ids, ${idList})`,
  );
  const wanted = new Set(ids);
  for (const r of rows) {
    const docIds = r.document_ids as string[];
    const parts = r.document_parts as number[];
    const cu = r.cu_seqlens as number[];
    const inputIds = r.input_ids as number[];
    const mask = r.loss_mask as number[];
    for (const [d, id] of docIds.entries()) {
      if (!wanted.has(id)) continue;
      const previous = found.get(id);
      const split = (parts[d] ?? 0) > 0 || previous !== undefined;
      if ((parts[d] ?? 0) === 0)
        found.set(id, {
          ids: Int32Array.from(inputIds.slice(cu[d], cu[d + 1])),
          mask: Uint8Array.from(mask.slice(cu[d], cu[d + 1])),
          split,
        });
      else if (previous) previous.split = true;
      else found.set(id, { ids: new Int32Array(0), mask: new Uint8Array(0), split: true });
    }
  }
  return found;
}

/** A turn's action and observation decoded into runs of one mask bit each, cut at MAX_TURN_TOKENS. */
function turnTokens(tokenizer: Tokenizer, sample: SampleTokens, turnIndex: number, recordTurns: number): TurnTokens | string {
  if (sample.split) return "the record was split to fit the packed rows, so its pieces re-render context turns; see `lwm-data inspect`";
  const spans = turnSpans(tokenizer, sample.ids, recordTurns);
  const span = spans?.[turnIndex];
  if (!span)
    return "the turn's tokens cannot be placed in this sample (the record was truncated to fit a packed row, or its template does not open each message with one special token)";
  const end = Math.min(span.end, span.actionStart + MAX_TURN_TOKENS);
  const runs: TokenRun[] = maskRuns(
    tokenizer,
    sample.ids.subarray(span.actionStart, end),
    sample.mask.subarray(span.actionStart, end),
    new Set([span.observationStart - span.actionStart]),
  ).map((run) => ({
    role: span.actionStart + run.start < span.observationStart ? "action" : "observation",
    trained: run.trained,
    text: run.text,
  }));
  return {
    runs,
    actionTokens: span.observationStart - span.actionStart,
    observationTokens: span.end - span.observationStart,
    omittedTokens: span.end - end,
  };
}

/** Adds each example's tokens (or the reason they cannot be shown), reading the shards once for all. */
export async function attachTokens(
  db: DuckSession,
  run: RunOutput,
  tokenizer: Tokenizer | undefined,
  examples: (ExampleTurn & { recordTurns: number })[],
): Promise<ExampleTurn[]> {
  const samples = tokenizer ? await readSamples(db, run, [...new Set(examples.map((e) => e.id))]) : new Map();
  return examples.map(({ recordTurns, ...example }) => {
    const sample = samples.get(example.id);
    if (!tokenizer) return { ...example, tokensNote: "the run's tokenizer is not available here, so tokens cannot be decoded" };
    if (!sample)
      return { ...example, tokensNote: "no shard row has this id (the record may have been quarantined after its stats were written)" };
    const tokens = turnTokens(tokenizer, sample, example.turnIndex, recordTurns);
    return typeof tokens === "string" ? { ...example, tokensNote: tokens } : { ...example, tokens };
  });
}
