import type { DottedOverride } from "../config/dotted-overrides.ts";
import type { MeanInterval } from "./confidence.ts";
import type { ProxyResult } from "./run-ablation.ts";
import type { Vary } from "./variants.ts";

export interface VariantReport {
  name: string;
  set: DottedOverride[];
  dir: string;
  /** Held-out loss over seeds. */
  loss: MeanInterval;
  /** Held-out loss on the informative observations alone (not Echo, not Boilerplate), and its paired difference. */
  informative_loss: MeanInterval;
  informative_difference: MeanInterval | null;
  /** Loss on the AgentWorldBench-layout rows of the held-out turns (each turn once), and its paired difference; absent without rows. */
  awb_loss?: MeanInterval;
  awb_difference?: MeanInterval | null;
  /**
   * Loss on the held-out observations seen once in the corpus, and its paired difference; null when
   * there are none (every held-out observation repeats) or the subset could not be built; absent in older reports.
   */
  seen_once_loss?: MeanInterval | null;
  seen_once_difference?: MeanInterval | null;
  /** Loss minus the baseline's, paired by seed; null for the baseline itself. */
  difference: MeanInterval | null;
  /** Mean over seeds of the loss weight the proxy model trained on (tokens, for 0/1 masks). */
  trained_weight: number;
  runs: ProxyResult[];
}

export interface AblationReport {
  config: string;
  command: { varies: Vary[]; seeds: number; tokens: number; model: string };
  trainer: Record<string, unknown>;
  eval: {
    dir: string;
    split: string;
    labels: string;
    informative: { dir: string; labels: string };
    /** Absent in reports written before the AgentWorldBench evaluation. */
    agentworldbench?: { dir: string; rows: number; refused: number; scoring: string };
    /** The seen-once subset (src/ablate/seen-once.ts): N and its tokens, or why there is none; absent in older reports. */
    seen_once?: SeenOnceEval;
  };
  common_overrides: DottedOverride[];
  baseline: string;
  variants: VariantReport[];
}

export type SeenOnceEval =
  | { dir: string; counts_dir: string; observations: number; tokens: number; labels: string }
  | { unavailable: string };

/** The header sentence on the seen-once columns: how many tokens they score, or why they are n/a. */
function seenOnceSentence(seenOnce: SeenOnceEval): string {
  if ("unavailable" in seenOnce) return ` Seen-once observations: n/a, ${seenOnce.unavailable}.`;
  if (seenOnce.tokens === 0)
    return ` Seen-once observations: n/a, every held-out observation occurs more than once among the corpus's ${seenOnce.observations} observations.`;
  return ` Seen-once: the ${seenOnce.tokens} held-out observation tokens whose observation occurs once among the corpus's ${seenOnce.observations} observations (the others a model can have memorised).`;
}

const fixed = (value: number) => value.toFixed(4);
const interval = (m: MeanInterval) => (m.low === null || m.high === null ? "(1 seed: no CI)" : `[${fixed(m.low)}, ${fixed(m.high)}]`);
const signed = (value: number) => `${value >= 0 ? "+" : ""}${fixed(value)}`;
const withInterval = (m: MeanInterval) => `${fixed(m.mean)} ${interval(m)}`;
const difference = (m: MeanInterval | null) => (m ? `${signed(m.mean)} ${interval(m)}` : "—");
/** A seen-once cell: n/a where the subset is empty or missing, "—" for the baseline's Δ. */
const seenOnceCells = (variant: VariantReport, isBaseline: boolean) =>
  variant.seen_once_loss
    ? [withInterval(variant.seen_once_loss), difference(variant.seen_once_difference ?? null)]
    : ["n/a", isBaseline ? "—" : "n/a"];

/** The table `lwm-data ablate` prints and writes to DIR/ablate.md. */
export function ablationMarkdown(report: AblationReport): string {
  const first = report.variants[0]?.runs[0];
  const awb = report.variants.every((variant) => variant.awb_loss !== undefined);
  const seenOnce = report.eval.seen_once;
  const lines = [
    `Held-out loss of a ${report.command.model} proxy model trained on ${report.command.tokens} tokens of each variant, ${report.command.seeds} seed(s); evaluated on ${first?.eval_tokens ?? "?"} observation tokens of the baseline's validation split (every observation labelled), and on the ${first?.eval_subset_tokens ?? "?"} of them in informative turns (neither Echo nor Boilerplate).${awb ? ` AgentWorldBench: the same held-out turns as ${first?.awb_rows ?? "?"} AgentWorldBench-layout rows, each row's expected observation scored alone and every row weighing the same (the mean of per-turn losses).` : ""}${seenOnce ? seenOnceSentence(seenOnce) : ""}`,
    "",
    `| variant | seeds | held-out loss [95% CI] | Δ vs baseline [95% CI] | informative obs: loss [95% CI] | informative obs: Δ [95% CI] |${awb ? " AgentWorldBench turns: loss [95% CI] | AgentWorldBench turns: Δ [95% CI] |" : ""}${seenOnce ? " seen-once obs: loss [95% CI] | seen-once obs: Δ [95% CI] |" : ""} trained tokens (weight) |`,
    `|---|---:|---|---|---|---|${awb ? "---|---|" : ""}${seenOnce ? "---|---|" : ""}---:|`,
    ...report.variants
      .map((variant) =>
        [
          variant.name + (variant.name === report.baseline ? " (baseline)" : ""),
          String(variant.loss.n),
          withInterval(variant.loss),
          difference(variant.difference),
          withInterval(variant.informative_loss),
          difference(variant.informative_difference),
          ...(awb && variant.awb_loss ? [withInterval(variant.awb_loss), difference(variant.awb_difference ?? null)] : []),
          ...(seenOnce ? seenOnceCells(variant, variant.name === report.baseline) : []),
          variant.trained_weight.toFixed(0),
        ].join(" | "),
      )
      .map((row) => `| ${row} |`),
    "",
    "Lower is better. Δ is paired by seed (same init and order); a CI that excludes 0 is a difference at the 95% level.",
    "",
  ];
  return lines.join("\n");
}
