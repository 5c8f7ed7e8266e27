import { createHash } from "node:crypto";
import { join } from "node:path";
import type * as Arrow from "apache-arrow";
import { stringify } from "yaml";
import { controlRows, controlsHeadline, shareOutcome, synthesisShareRows } from "../controls/describe-controls.ts";
import { arrow } from "../io/arrow.ts";
import { writeTextFile } from "../io/json-file.ts";
import type { MixtureSummary } from "../mixture/mixture-summary.ts";
import { type PiiSummary, piiHeadline } from "../normalize/pii/pii-summary.ts";
import { PII_KINDS } from "../normalize/pii/types.ts";
import {
  type ControlsSummary,
  type CurationSummary,
  type FilterStage,
  layoutColumns,
  type Manifest,
  type ShardLayout,
} from "../output/manifest.ts";
import type { FiltersSummary, ScoringSummary, SelectionSummary } from "../output/selection-summary.ts";
import { SPLITS } from "../output/split-assignment.ts";
import type { FitTotals } from "../output/task-totals.ts";
import type { PackingSummary } from "../pack/packing-summary.ts";
import { packedSchema, shardSchema } from "./arrow-batch.ts";

/** What the dataset card says; built from a CPT or an SFT manifest. */
export interface CardInput {
  kind: "cpt" | "sft";
  layout: ShardLayout;
  tokenizer: { name: string; vocab_sha256: string; source?: string };
  template: { source: string; sha256: string };
  maskPolicy: string;
  configSha256: string;
  shards: readonly { path: string; split?: string; rows: number; bytes: number }[];
  /** Per split: samples, tokens, loss tokens. */
  splits: Record<string, { samples: number; tokens: number; loss_tokens: number }>;
  /** Per domain: samples (or prompts kept), tokens, loss tokens. */
  domains: Record<string, { samples: number; tokens: number; loss_tokens: number }>;
  /** With `fit` (records split or truncated to fit, pieces left out) where the job records it. */
  packing: (PackingSummary & { fit?: FitTotals }) | null;
  /** Extra `configs:` entries (the turn-stats table, the SFT candidates table). */
  extraConfigs: { name: string; path: string; about: string }[];
  /** Corpus curation (dedup, decontamination), when the run had it. */
  curation?: CurationSummary;
  /** The config's record filters, per filter. */
  filters?: FiltersSummary;
  /** Selection (keep_fraction, max_per, caps). */
  selection?: SelectionSummary;
  /** Model scorers: identity and counts. */
  scoring?: ScoringSummary;
  /** The CPT mixture: per source, its factor and trained tokens before and after weighting. */
  mixture?: MixtureSummary;
  /** Controls: the edge cases found and the instructions written. */
  controls?: ControlsSummary;
  /** Personal data replaced with placeholders (normalize.pii). */
  pii?: PiiSummary;
}

const COLUMN_DOCS: Record<string, string> = {
  id: "trajectory or document id (SFT: `<trajectory id>#<turn>`, the predicted turn; a mixture's repeat: `<id>#copy<N>`)",
  domain: "`mcp`, `search`, `terminal`, `swe`, `android`, `web` or `os`; `text` for a text document",
  source: "`file:line` (or `file@offset`, `file#row=N`) of the source record",
  mixture_source: "the mixture source the record belongs to (`inputs[].source`, else its domain, `knowledge` for text)",
  input_ids: "token ids of the rendered conversation",
  loss_mask: "1 where the token carries the loss, aligned with `input_ids`",
  loss_weight: "the token's weight in the loss (`mask.weights`), aligned with `input_ids`: > 0 exactly where `loss_mask` is 1, 0 elsewhere",
  num_tokens: "`len(input_ids)`",
  num_loss_tokens: "`sum(loss_mask)`",
  num_turns: "(action, observation) turns in the sample",
  task_id: "the task or instance the trajectory attempts, as its source names it (null when it names none)",
  attempt: "which attempt at the task it is (trial name, attempt number), as its source names it",
  agent: "the agent (harness) that produced it, e.g. `claude-code`, `terminus-2`",
  model: "the model that drove the agent",
  outcome: "`resolved` / `unresolved` (SWE resolution), else `success` / `failure`; null when the source records no outcome",
  reward: "the verifier's reward, when recorded",
  failure_mode: "how the run failed (an exception type, an exit status), when recorded",
  messages: "the text form: role, content and a per-message `loss` flag (as ms-swift reads it)",
  position_ids: "position of each token inside its document: restarts at 0 at every document",
  cu_seqlens: "document boundaries, `[0, len₁, len₁+len₂, …, num_tokens]` (FlashAttention varlen form)",
  document_ids: "id of each packed document, in row order",
  document_parts: "piece of its record each document is (0, or 0, 1, … when a long record was split at turns)",
  document_domains: "domain of each packed document",
  document_sources: "mixture source of each packed document",
  num_documents: "documents packed into the row",
  control_kind:
    "`instructed` (the system message states the edge cases the trajectory shows), `uninstructed`, `counterfactual` (normal turns told to behave normally) or `none` (no edge case found)",
  control_instruction: "the control instruction in the system message (empty when none)",
  controls: "the edge cases found: label, turn (0-based) and the evidence span [start, end) in that turn's observation, in code points",
};

/** Hugging Face `features` for an Arrow field (the YAML form `datasets` reads from a card). */
function feature(field: Arrow.Field): Record<string, unknown> {
  const type = field.type;
  if (arrow.DataType.isList(type)) {
    const item = (type as Arrow.List).children[0] as Arrow.Field;
    if (arrow.DataType.isStruct(item.type)) return { name: field.name, list: (item.type as Arrow.Struct).children.map(feature) };
    return { name: field.name, list: dtype(item.type) };
  }
  return { name: field.name, dtype: dtype(type) };
}

function dtype(type: Arrow.DataType): string {
  if (arrow.DataType.isUtf8(type)) return "string";
  if (arrow.DataType.isBool(type)) return "bool";
  if (arrow.DataType.isFloat(type)) return (type as Arrow.Float).precision === arrow.Precision.SINGLE ? "float32" : "float64";
  if (arrow.DataType.isInt(type)) return `${(type as Arrow.Int).isSigned ? "int" : "uint"}${(type as Arrow.Int).bitWidth}`;
  throw new Error(`no Hugging Face dtype for Arrow type ${type}`);
}

export function cardSchema(layout: ShardLayout): Arrow.Schema {
  return layout.pack ? packedSchema(layout.loss_weight === true) : shardSchema(layoutColumns(layout));
}

/** The YAML header: `configs` with data_files per split, and the default config's features. */
function metadata(input: CardInput, schema: Arrow.Schema): Record<string, unknown> {
  const present = SPLITS.filter((split) => input.shards.some((shard) => (shard.split ?? "train") === split));
  return {
    tags: ["lwm-data", "world-model", input.kind === "cpt" ? "continued-pretraining" : "sft"],
    configs: [
      {
        config_name: "default",
        default: true,
        data_files: present.map((split) => ({ split, path: `data/${split}-*.parquet` })),
      },
      ...input.extraConfigs.map((extra) => ({ config_name: extra.name, data_files: [{ split: "train", path: extra.path }] })),
    ],
    dataset_info: {
      config_name: "default",
      // Features only: `datasets` wants in-memory byte sizes with split sizes, which we do not know.
      features: schema.fields.map(feature),
    },
  };
}

function table(header: string[], rows: (string | number)[][]): string {
  const line = (cells: (string | number)[]) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

function maskProse(input: CardInput): string {
  if (input.kind === "sft") {
    return "The loss is on the answer only — `<think>…</think>` and `<predicted_observation>…</predicted_observation>` with the end-of-turn token — never on the system prompt, the history or the action.";
  }
  const policy =
    input.maskPolicy === "turn-stats"
      ? "each observation turn was classified from its turn-level statistics (overlap with the action, novelty, Jaccard similarity, length ratio, novelty against the history) and kept with its class's keep ratio (the `default` config's `loss_mask`; the `turn_stats` config has every turn's statistics, class and decision)"
      : "every observation carries the loss";
  const weights = input.layout.loss_weight
    ? " Each trained token also has a weight, `loss_weight` (from the config's `mask.weights`: per class, domain, edge-case label and turn statistic): the weighted loss is `sum(loss_weight * token_loss) / sum(loss_weight)` over the batch (or divided by the trained tokens, as the trainer normalizes)."
    : "";
  return `The model learns to predict what the environment returns: loss only on observation tokens (with their end-of-turn token), never on the system prompt, the actions or the template scaffolding. Mask policy \`${input.maskPolicy}\`: ${policy}. For training, \`labels = input_ids\` where \`loss_mask == 1\`, else \`-100\`.${weights}`;
}

function packingProse(packing: PackingSummary & { fit?: FitTotals }): string {
  return [
    `Rows are packed (${packing.strategy}) to at most ${packing.seq_len} tokens: ${packing.documents} documents in ${packing.rows} rows, efficiency ${(packing.efficiency * 100).toFixed(1)}% (padding every row to ${packing.seq_len} would be ${(packing.padding_share * 100).toFixed(1)}% padding). Rows are not padded.`,
    "Keep documents apart with varlen attention: `cu_seqlens` for FlashAttention's `flash_attn_varlen_func`, or `position_ids` (restarting at 0 per document) for trainers that derive boundaries from them (transformers' `DataCollatorWithFlattening` convention).",
    `Records longer than ${packing.seq_len} tokens: \`${packing.overlong}\`.`,
    ...(packing.fit ? [fitProse(packing.fit)] : []),
  ]
    .filter((sentence) => sentence !== "")
    .join(" ");
}

/** What fitting records to rows did, so a reader of the card knows what is not in the rows (manifest `packing.fit`). */
function fitProse(fit: FitTotals): string {
  const parts = [
    fit.split_records > 0 ? `${fit.split_records} record(s) were split at turns (${fit.split_pieces} pieces written)` : "",
    fit.truncated_records > 0 ? `${fit.truncated_records} record(s) were truncated by ${fit.truncated_tokens} tokens in all` : "",
    fit.untrained_pieces_dropped ? `${fit.untrained_pieces_dropped} split piece(s) that train no token were left out` : "",
  ].filter((part) => part !== "");
  return parts.length === 0 ? "" : `To fit: ${parts.join("; ")} (\`manifest.json\` \`packing.fit\`).`;
}

const FILTER_STAGES: FilterStage[] = ["exact", "near", "decontaminate"];

/** What curation removed, per stage with its setting, the clusters and the benchmarks: the card's "Curation" section. */
function curationProse(curation: CurationSummary): string {
  const { settings } = curation;
  const decon = settings.decontaminate;
  const removed = (stage: FilterStage) => curation.by_stage[stage] ?? 0;
  const masking = decon.action === "mask";
  const turns = decon.min_turns === 1 ? "a turn shares" : `${decon.min_turns} turns (or all of a shorter episode's) each share`;
  const deconRule = `${turns} at least ${Number((decon.min_overlap * 100).toFixed(2))}% of ${decon.min_turns === 1 ? "its" : "their"} ${decon.ngram}-word n-grams with one benchmark episode (n-grams found in more than ${decon.max_episode_frequency} episodes are ignored)`;
  const rows: (string | number)[][] = [
    [
      "exact",
      "trajectories whose turns equal an earlier one's once volatile values (timestamps, pids, temp names, ports) are canonicalized",
      settings.exact ? removed("exact") : "off",
    ],
    [
      "near",
      `near copies: MinHash over ${settings.ngram}-word shingles, LSH with ${settings.bands} bands × ${settings.rows} rows (two trajectories of Jaccard similarity ${settings.threshold.toFixed(2)} are candidates half of the time; a candidate is joined when its signatures agree on ≥ ${settings.min_similarity ?? 0}; clusters joined transitively)`,
      settings.near ? removed("near") : "off",
    ],
    [
      "decontaminate",
      masking
        ? `the matching turns of trajectories where ${deconRule}: kept as context, their loss masked`
        : `trajectories where ${deconRule}`,
      decon.benchmarks.length === 0
        ? "off"
        : masking
          ? `${curation.masked.turns} turns masked in ${curation.masked.records} records`
          : removed("decontaminate"),
    ],
  ];
  const parts = [
    `The corpus was curated as a whole before tokenizing (across every input file of the job): ${curation.filtered} records were removed. Each is listed in \`filtered/*.jsonl\` with the stage that removed it, the reason, and what it matched — the record kept in its place, or the benchmark item.`,
    table(["stage", "what it removes", "removed"], rows),
  ];
  if (settings.exact || settings.near) {
    const { clusters } = curation;
    parts.push(
      `Duplicates formed ${clusters.count} clusters of ${clusters.records} records (the largest ${clusters.largest}); the first record of each cluster in input order was kept.`,
    );
  }
  if (decon.benchmarks.length > 0)
    parts.push(
      `Decontaminated against:\n${decon.benchmarks.map((b) => `- \`${b.path}\` (${b.format}, ${b.episodes} episode${b.episodes === 1 ? "" : "s"})`).join("\n")}`,
    );
  const domains = Object.keys(curation.by_domain).sort();
  if (curation.filtered > 0 && domains.length > 0)
    parts.push(
      table(
        ["domain", ...FILTER_STAGES],
        domains.map((domain) => [domain, ...FILTER_STAGES.map((stage) => curation.by_domain[domain]?.[stage] ?? 0)]),
      ),
    );
  return parts.join("\n\n");
}

const percent = (value: number): string => `${(100 * value).toFixed(1)}%`;

/** The card's "Filters and selection" section: records each filter and selection rule dropped, and the caps. */
function filteringProse(filters: FiltersSummary | undefined, selection: SelectionSummary | undefined): string {
  const parts = [
    "Records were dropped by the config's filters (in order; the first that fails a record drops it), then by selection over the whole corpus (`keep_fraction`, then `max_per`, then caps). Each is listed in `filtered/*.jsonl` with stage `filter` or `selection`, the rule and the reason (the facts that decided it).",
  ];
  const rows: (string | number)[][] = [
    ...Object.entries(filters?.by_rule ?? {}).map(([name, n]): (string | number)[] => ["filter", `\`${name}\``, n]),
    ...(selection ? Object.entries(selection.dropped).map(([rule, n]): (string | number)[] => ["selection", `\`${rule}\``, n]) : []),
  ];
  if (rows.length > 0) parts.push(table(["stage", "rule", "dropped"], rows));
  if (selection) {
    parts.push(`Selection decided over ${selection.records} records and kept ${selection.kept}.`);
    if (selection.caps.length > 0)
      parts.push(
        table(
          ["cap", "max share", "of", "dropped", "note"],
          selection.caps.map((cap) => [
            `\`${cap.key}\``,
            percent(cap.max_share),
            cap.of,
            cap.dropped,
            cap.balanced ? "could not be met: groups balanced to the smallest" : "",
          ]),
        ),
      );
  }
  return parts.join("\n\n");
}

/** The card's "Model scoring" section: each scorer's model, rubric and counts. */
function scoringProse(scoring: ScoringSummary): string {
  const rows = Object.values(scoring).map((s) => [
    `\`${s.name}\``,
    s.model ? `\`${s.model}\`` : "",
    s.scope ?? "",
    s.rubric_sha256 ? `\`${s.rubric_sha256.slice(0, 12)}\`` : "",
    s.records,
    s.ok,
    s.malformed,
    s.failed,
    s.requests,
    s.prompt_tokens + s.completion_tokens,
  ]);
  return [
    "Trajectories were scored by a model against a rubric (an OpenAI-compatible endpoint); a score is a shard column and the filter input `scores.<name>`. A malformed or failed answer scores null.",
    table(["scorer", "model", "scope", "rubric sha256", "records", "ok", "malformed", "failed", "requests", "tokens"], rows),
  ].join("\n\n");
}

/** How the sampling factors were set: none, the config's factors, or derived from target shares. */
function mixtureSettingsProse(mixture: MixtureSummary): string {
  const { settings } = mixture;
  const weights = Object.entries(settings.sources);
  const draw = `A record of a source with factor f is written ⌊f⌋ times and once more with probability f − ⌊f⌋ (a factor below 1 keeps that share of the records), each copy decided by a seeded hash of (seed ${settings.seed}, record id, copy).`;
  if (weights.length === 0)
    return "No mixture weights were set: every source has factor 1 and every record is written once. The output's trained tokens per mixture source (`inputs[].source`, else the record's domain, `knowledge` for text documents):";
  const named = weights.map(([name, w]) => `\`${name}\` ${"share" in w ? `share ${percent(w.share)}` : `factor ${w.factor}`}`).join(", ");
  const how = weights.some(([, w]) => "share" in w)
    ? `The factors were derived from target shares of the trained (loss) tokens (${named}): each source's trained tokens were counted first, then a source with a share got factor share × ${mixture.total_loss_tokens ?? "?"} total trained tokens (\`total_tokens: ${settings.total_tokens}\`) / its own trained tokens, at most \`max_factor\` ${settings.max_factor}; sources without a share keep their configured factor, else 1`
    : `The config set sampling factors (${named}); sources it does not name keep factor 1`;
  return `The output is a mixture of sources (\`inputs[].source\`, else the record's domain, \`knowledge\` for text documents), each kept with a sampling factor. ${how}. ${draw}`;
}

/** The card's "Mixture" section: per source, its factor and trained tokens and share before and after weighting. */
function mixtureProse(mixture: MixtureSummary, packed: boolean, statsTable: boolean): string {
  const sources = Object.entries(mixture.sources);
  const domains = (s: MixtureSummary["sources"][string]) =>
    Object.keys(s.domains)
      .map((domain) => `\`${domain}\``)
      .join(", ");
  const column = `Each row's source is in its \`${packed ? "document_sources" : "mixture_source"}\` column.`;
  if (Object.keys(mixture.settings.sources).length === 0)
    return [
      mixtureSettingsProse(mixture),
      table(
        ["source", "domains", "trained tokens", "share"],
        sources.map(([name, s]) => [`\`${name}\``, domains(s), s.loss_tokens_out, percent(s.share)]),
      ),
      `Trained tokens are loss tokens; shares are of the output's trained tokens. ${column}`,
    ].join("\n\n");
  const dropped = mixture.dropped_records;
  return [
    mixtureSettingsProse(mixture),
    table(
      ["source", "domains", "factor", "target share", "trained tokens before", "trained tokens after", "share before", "share after"],
      sources.map(([name, s]) => [
        `\`${name}\``,
        domains(s),
        s.factor.toFixed(3),
        s.target_share !== undefined ? percent(s.target_share) : "–",
        s.loss_tokens,
        s.loss_tokens_out,
        percent(s.share_before),
        percent(s.share),
      ]),
    ),
    `Trained tokens are loss tokens; "before" counts one copy of every record (factor 1 for all), "after" every copy written; shares are of the output's trained tokens. ${column}`,
    `${dropped} record${dropped === 1 ? " was" : "s were"} drawn out (a factor below 1 drew no copy of ${dropped === 1 ? "it" : "them"}): counted in \`manifest.json\` (\`counts.dropped_by_mixture\`), not written. A repeat is a row of its own with id \`<id>#copy<N>\` (N = 1, 2, …; the first copy keeps the record's id), in the same split as the record. The Splits and Domains tables count a record once in \`samples\` and every copy in the tokens${statsTable ? "; the `turn_stats` table lists each record's turns once" : ""}.`,
  ].join("\n\n");
}

/** The dataset card (`README.md` with Hugging Face YAML metadata) for an output folder. */
export function datasetCard(input: CardInput): string {
  const schema = cardSchema(input.layout);
  const header = stringify(metadata(input, schema), { lineWidth: 0 });
  const splitRows = Object.entries(input.splits).map(([split, t]) => [split, t.samples, t.tokens, t.loss_tokens]);
  const domainRows = Object.entries(input.domains).map(([domain, t]) => [domain, t.samples, t.tokens, t.loss_tokens]);
  const title = input.kind === "cpt" ? "World-model trajectories (CPT)" : "World-model thinking traces (SFT)";
  const sections = [
    `# ${title}`,
    "Made by lwm-data from agent trajectories: each sample is an agent's interaction with an environment (terminal, search engine, MCP server, code repository, web page, Android app or desktop), rendered with the model's chat template — system prompt, then the agent's action as the user turn and the environment's observation as the assistant turn — and tokenized with the trainer's tokenizer.",
    "## Loading",
    [
      "```python",
      "import datasets",
      `ds = datasets.load_dataset("<this folder or repo>")  # splits: ${Object.keys(input.splits).join(", ")}`,
      "```",
    ].join("\n"),
    "## Columns",
    table(
      ["column", "type", "meaning"],
      schema.fields.map((f) => [`\`${f.name}\``, `\`${String(f.type)}\``, COLUMN_DOCS[f.name] ?? ""]),
    ),
    "## Loss mask",
    maskProse(input),
    ...(input.packing ? ["## Packing", packingProse(input.packing)] : []),
    ...(input.curation ? ["## Curation", curationProse(input.curation)] : []),
    ...(input.filters || input.selection ? ["## Filters and selection", filteringProse(input.filters, input.selection)] : []),
    ...(input.scoring ? ["## Model scoring", scoringProse(input.scoring)] : []),
    "## Tokenizer and template",
    `Tokenizer \`${input.tokenizer.name}\`${input.tokenizer.source ? ` (${input.tokenizer.source})` : ""}, vocabulary sha256 \`${input.tokenizer.vocab_sha256}\`; chat template ${input.template.source}, sha256 \`${input.template.sha256}\`. Config sha256 \`${input.configSha256}\`. Every shard carries the same values in its \`lwm_data\` Parquet metadata.`,
    "## Splits",
    "Split by a seeded hash of the trajectory id: a trajectory (every sample or piece made from it) is in one split only.",
    table(["split", "samples", "tokens", "loss tokens"], splitRows),
    "## Domains",
    table(["domain", "samples", "tokens", "loss tokens"], domainRows),
    ...(input.mixture
      ? [
          "## Mixture",
          mixtureProse(
            input.mixture,
            input.layout.pack !== null,
            input.extraConfigs.some((extra) => extra.name === "turn_stats"),
          ),
        ]
      : []),
    ...(input.controls ? ["## Controls", controlsProse(input.controls)] : []),
    ...(input.pii ? ["## Personal data", piiProse(input.pii)] : []),
    ...(input.extraConfigs.length > 0
      ? ["## Other tables", input.extraConfigs.map((extra) => `- \`${extra.name}\` (\`${extra.path}\`): ${extra.about}`).join("\n")]
      : []),
    "`manifest.json` lists every file with its sha256, rows and tokens; `lwm-data verify <folder>` checks them.",
  ];
  return `---\n${header}---\n\n${sections.join("\n\n")}\n`;
}

function controlsProse(controls: ControlsSummary): string {
  const rows = controlRows(controls).map(({ label, total, byDomain }) => [
    `\`${label}\``,
    total,
    byDomain.map(([domain, n]) => `${domain} ${n}`).join(", "),
  ]);
  return [
    `Edge cases (rate limits, pagination, permission errors, crashes, error pages, …) were detected per turn by per-domain rules. ${controlsHeadline(controls)}. Each row records them in \`controls\` (label, turn, evidence span), its instruction in \`control_instruction\` and what it is in \`control_kind\`, so a trainer can filter or ablate; the instruction is also in the rendered system message under "Environment behaviour".`,
    rows.length > 0 ? table(["label", "labels", "by domain"], rows) : "No edge case was found.",
    ...synthesisProse(controls),
  ].join("\n\n");
}

/** With controls.synthesis target shares: the realised mix per domain and kind (docs/controls.md "Mix control"). */
function synthesisProse(controls: ControlsSummary): string[] {
  if (controls.synthesis_shares === undefined) return [];
  const pct = (share: number) => `${(share * 100).toFixed(1)}%`;
  const rows = synthesisShareRows(controls).map((r) => [
    r.domain,
    `\`${r.kind}\``,
    pct(r.target),
    pct(r.realised),
    r.natural,
    r.synthesized,
    r.eligible,
    r.samples,
    shareOutcome(r),
  ]);
  const rejected = Object.entries(controls.synthesis_rejected ?? {})
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([reason, n]) => `${reason} ${n}`);
  return [
    "Edge cases on demand: per domain, the share of samples whose instruction states each kind was brought to its target by synthesizing that edge case on normal turns (`control_kind` `synthesized`, `<id>#synth-<kind>-<turn>`); each synthesized observation was labelled with the kind by the same detectors and checked to change nothing else. " +
      `Rejected synthesis attempts: ${rejected.join(", ") || "none"}.`,
    rows.length > 0
      ? table(["domain", "kind", "target", "realised", "natural", "synthesized", "eligible", "samples", "outcome"], rows)
      : "No targeted kind in the written domains.",
  ];
}

function piiProse(pii: PiiSummary): string {
  const domains = Object.keys(pii.replaced);
  const kinds = [...new Set(domains.flatMap((d) => Object.keys(pii.replaced[d] ?? {})))].sort();
  const rows = domains.map((d) => [d, pii.records[d] ?? 0, ...kinds.map((k) => pii.replaced[d]?.[k] ?? 0)]);
  const on = PII_KINDS.filter((k) => pii.settings.kinds[k]);
  return [
    `Personal data was replaced before anything was written with typed placeholders numbered per value within a record (\`<EMAIL_1>\` is the same address in every turn; a new record starts again at 1). Kinds: ${on.map((k) => `\`${k}\``).join(", ") || "none at the top level"}${Object.keys(pii.settings.domains).length > 0 ? ", with per-domain overrides" : ""}; private and documentation-range IPs: ${pii.settings.ip.private} / ${pii.settings.ip.documentation}. ${piiHeadline(pii)}. Detection is by rules and checksums: what they miss stays in the text.`,
    rows.length > 0 ? table(["domain", "records", ...kinds], rows) : "",
  ]
    .filter((part) => part !== "")
    .join("\n\n");
}

/** The card of a CPT output, from its manifest. */
export function cardForManifest(manifest: Manifest): CardInput {
  return {
    kind: "cpt",
    layout: manifest.layout,
    tokenizer: manifest.tokenizer,
    template: manifest.template,
    maskPolicy: manifest.mask_policy,
    configSha256: manifest.config_sha256,
    shards: manifest.shards,
    splits: manifest.splits,
    domains: manifest.domains,
    packing: manifest.packing,
    extraConfigs:
      manifest.masking.stats_files.length > 0
        ? [
            {
              name: "turn_stats",
              path: "stats/*.parquet",
              about: "one row per turn: the statistics, the class and the masking decision",
            },
          ]
        : [],
    ...(manifest.curation ? { curation: manifest.curation } : {}),
    ...(manifest.filters ? { filters: manifest.filters } : {}),
    ...(manifest.selection ? { selection: manifest.selection } : {}),
    ...(manifest.scoring ? { scoring: manifest.scoring } : {}),
    ...(manifest.mixture ? { mixture: manifest.mixture } : {}),
    ...(manifest.controls ? { controls: manifest.controls } : {}),
    ...(manifest.pii ? { pii: manifest.pii } : {}),
  };
}

/** The card's place in an output folder (the Hub shows it as the dataset's page). */
export const DATASET_CARD_FILE = "README.md";

/** Writes `README.md`; returns its manifest entry (the card is checked like any other output file). */
export async function writeDatasetCard(outputDir: string, input: CardInput): Promise<{ path: string; bytes: number; sha256: string }> {
  const text = datasetCard(input);
  // Ranks may finalize at once (the same bytes).
  await writeTextFile(join(outputDir, DATASET_CARD_FILE), text, { concurrentWriters: true });
  return { path: DATASET_CARD_FILE, bytes: Buffer.byteLength(text), sha256: createHash("sha256").update(text).digest("hex") };
}
