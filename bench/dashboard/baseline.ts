/**
 * The benchmark's named baseline: the dashboard's aggregations computed the obvious way without
 * DuckDB. Every stats file is read with parquet-wasm (`readParquet` of the needed columns, in its
 * default batches of 1,024 rows → Arrow IPC → apache-arrow `tableFromIPC`) and its rows looped
 * over in JavaScript, on one thread:
 *   - per domain × class: turns, kept, observation tokens, kept observation tokens, mean keep
 *     ratio (src/dashboard/stats-queries.ts `classRows`);
 *   - per domain, the 5 histograms with the same bins (stats-queries.ts `histograms`).
 * The result has the dashboard's own shapes (ClassRow, HistogramBin), so the benchmark can check
 * that both did the same work before it compares their times.
 */
import { readFileSync } from "node:fs";
import { tableFromIPC } from "apache-arrow";
import { readParquet } from "parquet-wasm";
import { type ClassRow, HISTOGRAM_STATS, type HistogramBin } from "../../src/dashboard/dashboard-data.ts";

// The bins of src/dashboard/stats-queries.ts (not exported there): shares in 40 bins of 0.025,
// the length ratio on log10 from 10^-2 to 10^4 in tenths, out-of-range values in the end bins.
const SHARE_BINS = 40;
const RATIO_LOG_MIN = -2;
const RATIO_LOG_MAX = 4;
const RATIO_BINS = (RATIO_LOG_MAX - RATIO_LOG_MIN) * 10;
const BINS = Math.max(SHARE_BINS, RATIO_BINS);

/** The columns the aggregations need (DuckDB reads only these too). */
const COLUMNS = ["domain", "class", "kept", "keep_ratio", "obs_tokens", "overlap", "novelty", "jaccard", "length_ratio", "history_novelty"];

const shareBin = (x: number) => Math.min(Math.floor(x * SHARE_BINS), SHARE_BINS - 1);
const ratioBin = (r: number) => Math.min(Math.max(Math.floor((Math.log10(Math.max(r, 1e-9)) - RATIO_LOG_MIN) * 10), 0), RATIO_BINS - 1);

/** A ClassRow being summed: the keep ratios' sum, divided into configuredKeep at the end. */
type ClassAccumulator = Omit<ClassRow, "configuredKeep"> & { keepRatioSum: number };

/** Per domain: turns and observation tokens per (stat, bin), stat-major. */
interface DomainHistograms {
  turns: Float64Array;
  obsTokens: Float64Array;
}

export interface BaselineResult {
  classes: ClassRow[];
  histograms: HistogramBin[];
  rows: number;
  /** Seconds reading: file → parquet-wasm → Arrow IPC → apache-arrow Table. */
  readS: number;
  /** Seconds in the JavaScript loop over the rows. */
  loopS: number;
}

export function baselineAggregations(files: readonly string[]): BaselineResult {
  const classes = new Map<string, ClassAccumulator>();
  const perDomain = new Map<string, DomainHistograms>();
  let rows = 0;
  let readS = 0;
  let loopS = 0;
  for (const file of files) {
    const readStart = performance.now();
    const table = tableFromIPC(readParquet(readFileSync(file), { columns: COLUMNS }).intoIPCStream());
    const loopStart = performance.now();
    readS += (loopStart - readStart) / 1000;
    for (const batch of table.batches) {
      const column = (name: string) => {
        const vector = batch.getChild(name);
        if (!vector) throw new Error(`${file}: no column ${name}`);
        return vector;
      };
      const domainCol = column("domain");
      const classCol = column("class");
      const keptCol = column("kept");
      const keepRatio = column("keep_ratio").toArray() as Float64Array;
      const obsTokens = column("obs_tokens").toArray() as Int32Array;
      const shares = [column("overlap"), column("novelty"), column("jaccard"), column("history_novelty")].map(
        (v) => v.toArray() as Float64Array,
      );
      const lengthRatio = column("length_ratio").toArray() as Float64Array;
      // Stat positions in HISTOGRAM_STATS order: overlap, novelty, jaccard, length_ratio, history_novelty.
      const shareSlots = [0, 1, 2, 4];
      for (let i = 0; i < batch.numRows; i++) {
        const domain = domainCol.get(i) as string;
        const cls = classCol.get(i) as string;
        const kept = keptCol.get(i) === true;
        const obs = obsTokens[i] as number;
        const key = `${domain}\u0000${cls}`;
        let acc = classes.get(key);
        if (!acc) {
          acc = { domain, class: cls, turns: 0, kept: 0, obsTokens: 0, keptObsTokens: 0, keepRatioSum: 0 };
          classes.set(key, acc);
        }
        acc.turns += 1;
        acc.obsTokens += obs;
        acc.keepRatioSum += keepRatio[i] as number;
        if (kept) {
          acc.kept += 1;
          acc.keptObsTokens += obs;
        }
        let hist = perDomain.get(domain);
        if (!hist) {
          hist = { turns: new Float64Array(HISTOGRAM_STATS.length * BINS), obsTokens: new Float64Array(HISTOGRAM_STATS.length * BINS) };
          perDomain.set(domain, hist);
        }
        for (let s = 0; s < shares.length; s++) {
          const slot = (shareSlots[s] as number) * BINS + shareBin((shares[s] as Float64Array)[i] as number);
          hist.turns[slot] = (hist.turns[slot] as number) + 1;
          hist.obsTokens[slot] = (hist.obsTokens[slot] as number) + obs;
        }
        const slot = 3 * BINS + ratioBin(lengthRatio[i] as number);
        hist.turns[slot] = (hist.turns[slot] as number) + 1;
        hist.obsTokens[slot] = (hist.obsTokens[slot] as number) + obs;
      }
      rows += batch.numRows;
    }
    loopS += (performance.now() - loopStart) / 1000;
  }

  const byKey = <T extends { domain: string }>(a: T, b: T, second: (t: T) => string) =>
    a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : second(a) < second(b) ? -1 : second(a) > second(b) ? 1 : 0;
  const classRows: ClassRow[] = [...classes.values()]
    .map((c) => ({
      domain: c.domain,
      class: c.class,
      turns: c.turns,
      kept: c.kept,
      obsTokens: c.obsTokens,
      keptObsTokens: c.keptObsTokens,
      configuredKeep: c.keepRatioSum / c.turns,
    }))
    .sort((a, b) => byKey(a, b, (r) => r.class));
  const histograms: HistogramBin[] = [];
  for (const [domain, hist] of [...perDomain.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    for (const [s, stat] of HISTOGRAM_STATS.entries())
      for (let bin = 0; bin < BINS; bin++) {
        const turns = hist.turns[s * BINS + bin] as number;
        if (turns === 0) continue;
        const [x1, x2] =
          stat === "length_ratio"
            ? [10 ** (RATIO_LOG_MIN + bin / 10), 10 ** (RATIO_LOG_MIN + (bin + 1) / 10)]
            : [bin / SHARE_BINS, (bin + 1) / SHARE_BINS];
        histograms.push({ domain, stat, x1, x2, turns, obsTokens: hist.obsTokens[s * BINS + bin] as number });
      }
  return { classes: classRows, histograms, rows, readS, loopS };
}

/**
 * Differences between the dashboard's rows and the baseline's (empty when they agree): counts
 * and token sums exactly, the mean keep ratio to 1e-9 (float sums in another order).
 */
export function differences(
  duck: { classes: readonly ClassRow[]; histograms: readonly HistogramBin[] },
  base: { classes: readonly ClassRow[]; histograms: readonly HistogramBin[] },
): string[] {
  const out: string[] = [];
  const classKey = (r: ClassRow) => `${r.domain}/${r.class}`;
  const baseClasses = new Map(base.classes.map((r) => [classKey(r), r]));
  for (const d of duck.classes) {
    const b = baseClasses.get(classKey(d));
    baseClasses.delete(classKey(d));
    if (!b) out.push(`class row ${classKey(d)}: in DuckDB's rows only`);
    else if (
      d.turns !== b.turns ||
      d.kept !== b.kept ||
      d.obsTokens !== b.obsTokens ||
      d.keptObsTokens !== b.keptObsTokens ||
      Math.abs(d.configuredKeep - b.configuredKeep) > 1e-9
    )
      out.push(`class row ${classKey(d)}: DuckDB ${JSON.stringify(d)} vs baseline ${JSON.stringify(b)}`);
  }
  for (const key of baseClasses.keys()) out.push(`class row ${key}: in the baseline's rows only`);

  const binKey = (h: HistogramBin) => `${h.domain}/${h.stat}/${h.x1}`;
  const baseBins = new Map(base.histograms.map((h) => [binKey(h), h]));
  for (const d of duck.histograms) {
    const b = baseBins.get(binKey(d));
    baseBins.delete(binKey(d));
    if (!b || d.turns !== b.turns || d.obsTokens !== b.obsTokens)
      out.push(
        `histogram bin ${binKey(d)}: DuckDB ${d.turns} turns / ${d.obsTokens} obs tokens vs baseline ${b ? `${b.turns} / ${b.obsTokens}` : "none"}`,
      );
  }
  for (const key of baseBins.keys()) out.push(`histogram bin ${key}: in the baseline's bins only`);
  return out;
}
