import { z } from "zod";
import { CONTROL_LABELS } from "../controls/control-label.ts";
import { DOMAINS, type Domain } from "../core/trajectory.ts";
import { filtersSchema } from "../filter/filters.ts";
import { LOSS_POLICY_NAMES } from "../mask/loss-policy.ts";
import { RULE_STATS, TURN_CLASSES } from "../mask/turn-classes.ts";
import { PII_KINDS, type PiiKind } from "../normalize/pii/types.ts";
import { scorersSchema } from "../score/score-schema.ts";
import { selectionSchema } from "../select/selection-schema.ts";
import { byteSize } from "./byte-size.ts";

/** How every size key may be written (src/config/byte-size.ts). */
const SIZE_NOTE = "Bytes, or a number and a unit (`8 MiB`, `500 MB`). ";

// Every key's meaning is a runtime description (`.describe` / `.meta`): docs/config.md is generated
// from them (src/config/config-reference.ts, `node scripts/config-reference.ts`), so there is one
// source. `keyName` (metadata only) names a map's key in that reference: `mixture.sources.<name>`.
// Descriptions are Markdown; they never change what parses.

const positiveInt = z.number().int().positive();
const ratio = z.number().min(0).max(1);
const weightFactor = z.number().min(0);
/** `mask.weights`: float per-token loss weights (src/mask/loss-weights.ts). */
const lossWeights = z
  .object({
    enabled: z
      .boolean()
      .describe(
        "Write a `loss_weight` column (list<float32>) beside `loss_mask`, unpacked and packed; off: 0/1 masks only, the output of before.",
      ),
    by_class: z
      .partialRecord(z.enum(TURN_CLASSES), weightFactor)
      .meta({ keyName: "class", description: "Weight factor per turn class, e.g. `Echo: 0.1` (a class not listed: 1)." }),
    by_domain: z
      .partialRecord(z.enum(DOMAINS), weightFactor)
      .meta({ keyName: "domain", description: "Weight factor per domain (not listed: 1)." }),
    by_label: z.partialRecord(z.enum(CONTROL_LABELS), weightFactor).meta({
      keyName: "label",
      description: "Weight factor for a turn whose observation holds this edge case (needs `controls.enabled`; several labels multiply).",
    }),
    by_stat: z
      .array(
        z
          .object({
            stat: z.enum(RULE_STATS).describe("The turn statistic."),
            from: z.number().describe("At or below this value the factor is `low`."),
            to: z.number().describe("At or above this value the factor is `high` (linear between)."),
            low: weightFactor.describe("Factor at `from`."),
            high: weightFactor.describe("Factor at `to`."),
          })
          .strict(),
      )
      .describe("Ramps over turn statistics, e.g. `{ stat: history_novelty, from: 0, to: 1, low: 0.2, high: 1 }`; factors multiply."),
    min: z.number().positive().describe("The product of the factors is clamped to at least this (> 0: a kept turn always trains)."),
    max: z.number().positive().describe("… and at most this."),
  })
  .strict()
  .refine((weights) => weights.min <= weights.max, "mask.weights.min must not exceed mask.weights.max")
  .describe(
    'Float loss weights of the observations the mask keeps (docs/masking.md "Rendering, tokenization and the loss mask"): the product of the class, domain, label and ramp factors. Needs `policy: turn-stats`.',
  );
// A mixture source's name lands in shards, paths-free, so letters, digits, `_`, `-`, `.`.
const sourceName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, "a source name is letters, digits, _, - and .");

export const inputSchema = z
  .object({
    path: z
      .string()
      .min(1)
      .describe(
        "A file, a folder (every file under it) or a glob (`data/**/*.jsonl*`), relative to the config file (`inputs`: to `input.root`); " +
          "or an object location `s3://bucket/key`, `s3://bucket/prefix/`, `s3://bucket/prefix/**/*.jsonl.zst`, or Hub dataset files " +
          '`hf://datasets/<namespace>/<name>[@<revision>]/<path or glob>` (docs/object-storage.md "Object storage and the Hub"). Files are processed in sorted order.',
      ),
    format: z
      .string()
      .default("auto")
      .describe(
        'Reader: `auto` detects it from the content (a vote over the first non-empty lines), or a format of docs/input-formats.md "Input formats" ' +
          "(`canonical-jsonl`, `asciicast`, `terminal-bench`, …); `run --format` sets it for `--input`.",
      ),
    domain: z.enum(DOMAINS).optional().describe("Domain for records whose format does not name one; `run --domain` sets it for `--input`."),
    source: sourceName
      .optional()
      .describe(
        'Mixture source its records belong to (letters, digits, `_`, `-`, `.`); default: a trajectory\'s domain, `knowledge` for text documents (docs/mixtures.md "Mixtures").',
      ),
  })
  .strict();

export const sourceWeightSchema = z
  .union([
    z
      .object({
        factor: z
          .number()
          .min(0)
          .describe("Keep each record F times: 0.5 keeps half, 3 writes three copies, 2.5 two copies and a third for half of the records."),
      })
      .strict(),
    z
      .object({
        share: z
          .number()
          .gt(0)
          .max(1)
          .describe(
            "This share of the output's trained (loss) tokens: a counting pass measures each source and derives its factor (printed, and in the manifest).",
          ),
      })
      .strict(),
  ])
  .describe("A source's weight: a sampling factor, or a target share of the output's trained tokens.");

export const mixtureSchema = z
  .object({
    seed: z
      .number()
      .int()
      .nonnegative()
      .describe("Seed of the keep/copy draw, a sha256 of (seed, id, copy): the same output whatever the workers or ranks."),
    sources: z.record(sourceName, sourceWeightSchema).meta({
      keyName: "name",
      description:
        "Weight per source, `{ factor: F }` or `{ share: S }`; sources not listed keep factor 1. Copies get ids `<id>#copy<N>`, so they land in other buckets and shards than the original.",
    }),
    max_factor: z
      .number()
      .positive()
      .describe(
        "Largest factor a share may derive: a share that needs a source repeated more times is an error naming the source's tokens and the factor it would need.",
      ),
    total_tokens: z
      .union([positiveInt, z.literal("auto")])
      .describe(
        "Trained tokens the shares are of. `auto`: the corpus's own total when every source has a share, else what the fixed-factor sources give ÷ (1 − Σ shares); " +
          "a number fixes it (every source must then have a share).",
      ),
  })
  .strict()
  .describe(
    'CPT mixture (docs/mixtures.md "Mixtures"): how many copies of each source\'s records the output holds. Every input belongs to a source: `inputs[].source`, ' +
      "else the record's domain for trajectories and `knowledge` for text documents.",
  );

/**
 * How the controls' teacher stages (`controls.rephrase`, `controls.synthesis.teacher`) reach and ask
 * their teacher: one shape, spread into both (src/controls/teacher-endpoint.ts reads it).
 */
export const controlsTeacherEndpoint = z.object({
  base_url: z.url().describe("The teacher's OpenAI-compatible endpoint (vLLM, SGLang, a hosted API)."),
  base_url_env: z
    .string()
    .min(1)
    .describe("Environment variable that, when set, replaces `base_url`; where the teacher is served is not part of the job."),
  model: z.string().min(1).describe("Model name sent to the endpoint."),
  api_key_env: z.string().min(1).describe("Environment variable holding the API key (read, never written anywhere); unset: no key."),
  temperature: z.number().min(0).describe("Sampling temperature (each request is seeded by what it asks about, so a rerun asks the same)."),
  max_tokens: positiveInt.describe("Most tokens per answer (a thinking model's thinking included)."),
  concurrency: positiveInt.describe("Requests in flight at once."),
  max_retries: z
    .number()
    .int()
    .nonnegative()
    .describe(
      "Retries with backoff on 408/409/429/5xx, timeouts, refused connections and malformed bodies. A request still failing after them stops the stage " +
        '(nothing written for its task; a rerun asks again only what failed), so the output never depends on which requests happened to fail (docs/controls.md "Teacher failures").',
    ),
  timeout_ms: positiveInt.describe("Per-request timeout, in milliseconds."),
  cache_dir: z
    .string()
    .min(1)
    .describe(
      "On-disk request cache (relative to the job config), shared with the other teacher stages, the SFT teacher and scorers: a rerun sends nothing.",
    ),
});

export const controlsSchema = z
  .object({
    enabled: z
      .boolean()
      .describe(
        "Detect edge cases per turn (labels in the turn stats, the shards and the manifest) and state them as instructions in the system message.",
      ),
    share: ratio.describe(
      "Share of labelled trajectories whose system message states what the environment showed (a seeded draw per trajectory).",
    ),
    counterfactual_share: ratio.describe(
      "Share of labelled trajectories that also give a counterfactual sample `<id>#normal`: the normal turns before the first edge case, told to behave normally.",
    ),
    seed: z.number().int().nonnegative().describe("Seed of both draws, a sha256 of (seed, purpose, id)."),
    synthesis: z
      .object({
        target_shares: z
          .partialRecord(z.enum(CONTROL_LABELS), z.union([ratio, z.partialRecord(z.enum(DOMAINS), ratio)]))
          .describe(
            'Per edge-case kind, the target share of the samples of a domain whose instruction states that kind (docs/controls.md "Mix control"): ' +
              "natural instructed samples plus synthesized ones `<id>#synth-<kind>-<turn>` (one normal turn's observation rewritten by a rule, src/controls/synthesis/), " +
              "over every sample the domain writes. A number applies to each domain whose rules (or `teacher.kinds`) make the kind; `{ <domain>: share }` names the domains. " +
              "A counting stage finds the natural samples and the trajectories a verified synthesis exists for, and exactly as many are synthesized as reach the target; " +
              "a target the data cannot reach is reported as a shortfall. The targets of a domain add up to less than 1. Empty: off.",
          ),
        max_synthesized_ratio: z
          .number()
          .min(0)
          .nullable()
          .describe(
            "At most this many synthesized samples of a kind per natural instructed sample of it in the domain (null: no cap). " +
              "A kind the data never shows is then never synthesized; what the cap withholds is counted in the shortfall.",
          ),
        pairs: z
          .boolean()
          .describe(
            "A trajectory without edge cases that gives a synthesized sample is itself told to behave normally (control_kind `normal`): the pair, same prefix, normal vs edge-case continuation, teaches the instruction rather than the prefix.",
          ),
        teacher: z
          .object({
            kinds: z
              .partialRecord(z.enum(CONTROL_LABELS), z.array(z.enum(DOMAINS)).min(1))
              .describe(
                "Per edge-case kind, the domains whose synthesized observations a teacher writes, e.g. `{ timeout: [terminal, mcp], app_crash: [os] }` " +
                  "(kinds no rule makes; a kind a rule also makes is tried by the rules first). Empty: off.",
              ),
            turns: positiveInt.describe(
              "Candidate turns asked per trajectory and kind (before its first natural edge case, in seeded order); each answer is verified like a rule's.",
            ),
            ask_margin: z
              .number()
              .min(1)
              .nullable()
              .describe(
                'Cost cap (docs/controls.md "Teacher cost"): per task, domain and kind, the teacher is asked about at most ' +
                  "ceil(ask_margin × t × n × (1 + counterfactual_share) / (1 − T)) trajectories (t: the kind's target share, T: the domain's targets summed, " +
                  "n: the task's trajectories of the domain), those the mix plan would take first (lowest sha256(seed, id)); the margin covers answers the verifier rejects. " +
                  "Default 2 (a teacher whose answers pass half the time still meets the targets). null: every eligible trajectory is asked (`turns` requests per trajectory and kind).",
              ),
            ...controlsTeacherEndpoint.shape,
          })
          .strict()
          .optional()
          .describe(
            'Teacher-written syntheses (docs/controls.md "Teacher syntheses"): the stage `synthesis-teacher` asks a teacher for the observation under each kind listed, ' +
              "before the counting stage; an answer the verifier passes is one more candidate, counted toward the target shares like a rule's.",
          ),
      })
      .strict()
      .describe(
        "Counterfactual synthesis (issue 37): edge cases on demand, rule-based and verified, to target shares. Empty `target_shares`: off.",
      ),
    rephrase: z
      .object({
        share: ratio.describe(
          "Share of instructions (instructed and synthesized samples) a teacher rewords, a seeded draw per sample (`0`: off). " +
            "A rewording is used only when it keeps every number and quoted value, copies no observation and still states what the evidence shows; otherwise the template stays (rejections counted by reason in the manifest).",
        ),
        ...controlsTeacherEndpoint.shape,
      })
      .strict()
      .optional()
      .describe(
        "Teacher rephrasing of control instructions (issue 37): the stage `rephrase` asks the teacher before the records stage, so instructions vary in wording; the template form stays the fallback.",
      ),
  })
  .strict()
  .describe(
    'Controls (docs/controls.md "Controls"): edge cases (rate limits, pagination, permission errors, crashes, error pages, …) detected per turn by per-domain rules, ' +
      "recorded as labels with their evidence, and stated as instructions in the world-model system message.",
  );

export const dedupSchema = z
  .object({
    exact: z
      .boolean()
      .describe(
        "Drop trajectories whose turns equal an earlier one's once volatile values (timestamps, pids, temp names, hex ids, ports, durations) are canonicalized.",
      ),
    near: z
      .boolean()
      .describe(
        "Drop near copies: MinHash over word n-grams of the same canonical text, LSH, clusters joined transitively; the first member in input order stays.",
      ),
    ngram: positiveInt.describe("Words per shingle."),
    bands: positiveInt.describe(
      "LSH bands; bands × rows MinHash functions. A pair of Jaccard similarity s becomes a candidate with probability 1 − (1 − s^rows)^bands: 14 × 8 puts the 50% point at 0.68.",
    ),
    rows: positiveInt.describe("Rows per LSH band."),
    min_similarity: ratio.describe(
      "A candidate pair (a shared band) is joined only when their full signatures agree on at least this share (the estimated Jaccard similarity); `0` joins every candidate.",
    ),
    seed: z.number().int().nonnegative().describe("Seed of the MinHash functions."),
    partitions: z
      .union([positiveInt, z.literal("auto")])
      .describe(
        "Hash-range partitions of the clustering stage: its array size on a cluster, each holding about 1/partitions of the signatures. `auto`: one per task, at least 4.",
      ),
  })
  .strict()
  .describe(
    'Deduplication (docs/curation.md "Curation"): a corpus stage before shards are written; curation keeps the first of a cluster in input order (file order, then position).',
  );

export const decontaminateSchema = z
  .object({
    benchmarks: z
      .array(inputSchema)
      .describe(
        "Benchmark files in any format lwm-data reads, listed like `inputs`; `run --benchmark GLOB` adds more. Empty: no decontamination.",
      ),
    ngram: positiveInt.describe("Words per n-gram compared (13, as in the GPT-3 and datatrove decontaminators)."),
    min_overlap: z
      .number()
      .gt(0)
      .max(1)
      .describe("A training turn matches a benchmark episode when at least this share of its n-grams occur in that episode."),
    min_turns: positiveInt.describe(
      "Turns of one episode a trajectory must match (or all of the episode's comparable turns, when it has fewer): one shared `ls -la` is not a leak. `1` is the strict any-turn rule.",
    ),
    max_episode_frequency: positiveInt.describe(
      "N-grams found in more than this many benchmark episodes are boilerplate (a shared tool list, a prompt) and ignored.",
    ),
    action: z
      .enum(["remove", "mask"])
      .describe(
        "`remove`: the whole trajectory goes to `filtered/` naming the benchmark item; `mask`: it is kept and only the matching turns lose their loss.",
      ),
  })
  .strict()
  .describe('Decontamination against benchmarks (docs/curation.md "Decontamination"), a corpus stage before shards are written.');

const piiKinds = z
  .object(Object.fromEntries(PII_KINDS.map((k) => [k, z.boolean()])) as Record<PiiKind, z.ZodBoolean>)
  .strict()
  .meta({
    keyName: "kind",
    description:
      "Which kinds are replaced. `national_id`: checksummed ids only (DNI, NIR, CPF, Aadhaar, BSN, …; not US SSNs). `person_name` (rules and an English-centric lexicon) " +
      "also takes git authors and package maintainers in code: turn it on per domain where customer and contact records live.",
  });
const ipRangePolicy = z.enum(["keep", "redact"]);

export const piiSchema = z
  .object({
    enabled: z.boolean().describe("Replace personal data before anything is written: ids, quarantine excerpts and SFT prompts included."),
    kinds: piiKinds,
    phone_countries: z
      .array(z.string().regex(/^[A-Z]{2}$/, "a phone country is an ISO 3166 alpha-2 code (US, GB, DE)"))
      .describe("ISO 3166 alpha-2 countries whose national phone formats are recognised, tried in order; `+CC` numbers always are."),
    ip: z
      .object({
        private: ipRangePolicy.describe("Private, loopback, link-local, CGNAT, multicast and ULA addresses: they identify nobody."),
        documentation: ipRangePolicy.describe(
          "Documentation ranges (RFC 5737, RFC 3849: 192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24, 2001:db8::/32).",
        ),
      })
      .strict()
      .describe("IP addresses in ranges that identify nobody: `keep` them or `redact` them too."),
    domains: z
      .partialRecord(
        z.enum(DOMAINS),
        z
          .object({
            enabled: z.boolean().optional().describe("Overrides `normalize.pii.enabled` for this domain."),
            kinds: z
              .partialRecord(z.enum(PII_KINDS), z.boolean())
              .optional()
              .meta({ keyName: "kind", description: "Overrides single kinds of `normalize.pii.kinds` for this domain." }),
          })
          .strict(),
      )
      .meta({
        keyName: "domain",
        description: "Per-domain overrides, e.g. `{ terminal: { kinds: { ip: false } }, mcp: { enabled: true } }`.",
      }),
  })
  .strict()
  .describe(
    'Personal data (docs/normalization.md "Personal data"): emails, phones, IPs, cards, IBANs, national ids, addresses and names replaced with typed placeholders numbered per value ' +
      "within a trajectory (`<EMAIL_1>`, `<PHONE_2>`); counted per domain and kind in the manifest. `lwm-data pii scan <config>` lists what would be replaced.",
  );

export const configSchema = z
  .object({
    pipeline: z.string().min(1).describe("Stage graph to run, `pipelines/<name>.yaml`."),
    inputs: z
      .array(inputSchema)
      .min(1, "at least one input is required")
      .describe("The job's inputs: the one key every job config must set (`run --input` replaces it)."),
    input: z
      .object({
        max_line_bytes: byteSize.describe(
          SIZE_NOTE +
            "A longer line (or whole-file record: a BrowserGym or DroidBot episode file, an MCP transcript) is quarantined without being held in memory.",
        ),
        max_decompressed_bytes: byteSize.describe(
          SIZE_NOTE +
            "A compressed file (.gz, .zst) that expands past this many bytes stops being read; the stop is quarantined, the records read so far are kept.",
        ),
        max_expansion_ratio: z
          .number()
          .positive()
          .describe(
            "Likewise for a compressed file that expands to more than this many bytes per compressed byte past its first 64 MiB: real trajectory text compresses 5-50x, a decompression bomb thousands of times.",
          ),
        task_bytes: byteSize.describe(
          SIZE_NOTE +
            "Inputs are cut into tasks of about this many bytes: small files share a task, an uncompressed canonical JSONL file larger than this is split at line boundaries. " +
            "Tasks are the unit of parallelism, ranks and resume; the output depends on this value, never on workers or ranks.",
        ),
        duplicate_ids: z
          .enum(["quarantine", "keep"])
          .describe(
            "A trajectory id seen again within a task: `quarantine` keeps the first and quarantines the others (naming where the first was); `keep` writes them all.",
          ),
        root: z
          .string()
          .min(1)
          .optional()
          .describe(
            "Where relative input paths start, and what the shards' `source` labels, quarantine entries and the manifest are relative to: a folder or an `s3://` / `hf://` location " +
              "(default: the config's folder). Moving the inputs (a disk → a bucket) is then one line, and the output stays byte-identical. Not part of `config_sha256`.",
          ),
      })
      .strict()
      .describe('Reading limits and how the inputs are cut into tasks (docs/input-formats.md "Limits").'),
    tokenizer: z
      .object({
        name: z
          .string()
          .min(1)
          .describe(
            "`qwen3` (bundled), `tiktoken:o200k_base`, `tiktoken:cl100k_base`, or a path to a byte-level BPE `tokenizer.json` (Llama 3.x, Qwen2.5/Qwen3/Qwen3.5, DeepSeek-V3, GPT-OSS, GPT-2 style); " +
              "its `tokenizer_config.json` beside it supplies the special tokens and chat template (a `chat_template.jinja` beside it wins). Other tokenizer kinds are refused by `validate`.",
          ),
        special_tokens: z.record(z.string(), z.number().int().nonnegative()).default({}).meta({
          keyName: "token",
          description:
            'Extra special-token ids for tiktoken encodings, e.g. `{"<|im_start|>": 100264}` (the ChatML markers have documented defaults).',
        }),
      })
      .strict()
      .describe('The tokenizer (docs/masking.md "Rendering, tokenization and the loss mask").'),
    normalize: z
      .object({
        tree_target: z
          .enum(["full", "diff"])
          .describe(
            "web / android / os: the model predicts the whole canonical accessibility tree (`full`) or its `diff` against the previous observation; the other form is kept in turn meta.",
          ),
        collapse_empty_wrappers: z.boolean().describe("web / android / os: drop nameless wrapper nodes that only hold one child."),
        redact_secrets: z
          .boolean()
          .describe(
            "Replace API keys, tokens, private keys, passwords in URLs and Authorization headers with typed placeholders (`<SECRET:type>`) before anything is written; counted per type.",
          ),
        pii: piiSchema,
        invalid_utf8: z
          .enum(["repair", "quarantine"])
          .describe(
            "Lone surrogates and replacement characters from invalid UTF-8: `repair` (U+FFFD, counted) or `quarantine` the record.",
          ),
        max_observation_chars: z
          .object(Object.fromEntries(DOMAINS.map((d) => [d, positiveInt])) as Record<Domain, typeof positiveInt>)
          .strict()
          .meta({
            keyName: "domain",
            description:
              "Longest observation per domain, in characters; a longer one keeps head + tail around a marker saying how much was cut.",
          }),
      })
      .strict()
      .describe('Normalization, per domain and then for all (docs/normalization.md "Normalization").'),
    render: z
      .object({
        template: z
          .string()
          .min(1)
          .describe(
            "`tokenizer`: the `chat_template` of the tokenizer's `tokenizer_config.json` (tiktoken encodings ship none, so Qwen3's ChatML template is used for them; " +
              "a `tokenizer.json` without one is refused unless its vocabulary has the ChatML markers); or a path to a `.jinja` file or a `tokenizer_config.json`.",
          ),
        system_prompts_dir: z
          .string()
          .min(1)
          .describe(
            "World-model system prompts, one `<domain>.md` each, used when a trajectory has no system text (the default is `configs/system-prompts`).",
          ),
      })
      .strict()
      .describe("How a trajectory becomes chat-formatted text."),
    mask: z
      .object({
        policy: z
          .enum(LOSS_POLICY_NAMES)
          .describe(
            "Which observations carry the loss (with their end-of-turn token; system prompt, actions and template scaffolding never do): " +
              '`all-observations` every one; `turn-stats` classifies each turn from its statistics (docs/masking.md "Rendering, tokenization and the loss mask") and keeps it with its class\'s ratio.',
          ),
        seed: z.number().int().describe("Seed of the keep draw, a sha256 of (seed, trajectory id, turn index): same seed, same masks."),
        classes: z
          .array(
            z
              .object({
                name: z.enum(TURN_CLASSES).describe("The class a turn matching this rule gets."),
                when: z
                  .partialRecord(
                    z.enum(RULE_STATS),
                    z
                      .object({
                        min: z.number().optional().describe("Lower bound, inclusive."),
                        max: z.number().optional().describe("Upper bound, inclusive."),
                      })
                      .strict(),
                  )
                  .meta({
                    keyName: "stat",
                    description:
                      "Bounds on the turn's statistics, all of which must hold: overlap, novelty, jaccard, length_ratio (tokens), history_novelty, obs_tokens, act_tokens.",
                  }),
              })
              .strict(),
          )
          .describe("Ordered class rules over a turn's statistics: first match wins, no match = `Other`."),
        keep: z
          .partialRecord(z.enum(TURN_CLASSES), ratio)
          .meta({ keyName: "class", description: "Keep ratio per class; a class not listed keeps everything." }),
        domain_keep: z
          .partialRecord(z.enum(DOMAINS), z.partialRecord(z.enum(TURN_CLASSES), ratio).meta({ keyName: "class" }))
          .meta({ keyName: "domain", description: "Per-domain overrides of `mask.keep`, e.g. `terminal: { Boilerplate: 0.2 }`." }),
        weights: lossWeights,
        corpus_novelty: z
          .object({
            enabled: z
              .boolean()
              .describe(
                "Count job-wide how often each canonicalized observation occurs (stages `novelty`, `novelty-counts`) and give every turn the statistic `corpus_novelty` = -log2(count / N) bits, for class rules, weight ramps and the stats table.",
              ),
            partitions: positiveInt.describe(
              "Hash partitions of the job-wide counts: units of `novelty-counts`; memory per unit is the corpus's distinct observations / partitions.",
            ),
          })
          .strict()
          .describe('Corpus-level novelty of observations (docs/masking.md "Rendering, tokenization and the loss mask").'),
      })
      .strict()
      .refine((mask) => !mask.weights.enabled || mask.policy === "turn-stats", {
        message: "mask.weights needs mask.policy: turn-stats (the weights come from each turn's class and statistics)",
        path: ["weights"],
      })
      .refine(
        (mask) =>
          mask.corpus_novelty.enabled ||
          (!mask.classes.some((rule) => "corpus_novelty" in rule.when) &&
            !mask.weights.by_stat.some((ramp) => ramp.stat === "corpus_novelty")),
        { message: "a class rule or weight ramp on corpus_novelty needs mask.corpus_novelty.enabled", path: ["corpus_novelty"] },
      )
      .describe('The loss mask: which observation turns are trained on (docs/masking.md "Rendering, tokenization and the loss mask").'),
    sft: z
      .object({
        select: z
          .enum(["all", "last", "kept", "sample", "labelled"])
          .describe(
            "Turns that become world-model prompts: `all`, `last`, `kept` (kept by turn-stats masking), `sample` (`per_trajectory` turns per trajectory, drawn with `seed`), " +
              '`labelled` (turns where the controls detectors find an edge case: docs/controls.md "Controls").',
          ),
        per_trajectory: positiveInt.describe("`sample`: turns per trajectory."),
        seed: z.number().int().describe("`sample`: seed of the draw, a sha256 of (seed, id, turn)."),
        max_history_turns: z
          .number()
          .int()
          .nonnegative()
          .describe("History turns a prompt carries before the predicted one (`0`: all of them)."),
        hints: z.boolean().describe("Show the teacher the real observation as a hint (its thinking is then checked for leakage)."),
        instructions: z.string().describe("Answer-format instructions appended to the domain's system prompt in every SFT prompt."),
        teacher: z
          .object({
            base_url: z.url().describe("Any OpenAI-compatible endpoint: vLLM, SGLang, a hosted API. Unused with `--candidates`."),
            model: z.string().min(1).describe("Model name sent to the endpoint."),
            api_key_env: z
              .string()
              .min(1)
              .describe("Environment variable holding the API key (read, never written anywhere); unset: no key."),
            n: positiveInt.describe("Candidates per prompt."),
            temperature: z.number().min(0).describe("Sampling temperature."),
            max_tokens: positiveInt.describe("Most tokens per candidate."),
            concurrency: positiveInt.describe("Requests in flight at once."),
            requests_per_minute: z.number().int().nonnegative().describe("Rate limit (`0`: none)."),
            max_retries: z
              .number()
              .int()
              .nonnegative()
              .describe("Retries with backoff on 408/409/429/5xx, timeouts and malformed bodies (Retry-After honoured)."),
            timeout_ms: positiveInt.describe("Per-request timeout, in milliseconds."),
            cache_dir: z
              .string()
              .min(1)
              .describe(
                "On-disk cache of answered requests (relative to the job config), keyed by sha256 of what decides the answer (model, messages, `n`, sampling settings, seed; " +
                  "not the endpoint): a rerun never pays twice.",
              ),
          })
          .strict()
          .describe("The teacher model that writes candidate thinking traces."),
        verify: z
          .object({
            fidelity: z
              .object(Object.fromEntries(DOMAINS.map((d) => [d, ratio])) as Record<Domain, typeof ratio>)
              .strict()
              .meta({
                keyName: "domain",
                description: 'Minimum fidelity of the prediction to the real observation, per domain (docs/sft.md "SFT workflow").',
              }),
            min_think_chars: z.number().int().nonnegative().describe("Shortest thinking accepted, in characters."),
            max_think_chars: positiveInt.describe("Longest thinking accepted, in characters."),
          })
          .strict()
          .describe("Rules every candidate must pass."),
        prefer: z
          .enum(["shortest", "first"])
          .describe(
            "Of the passing candidates equally good to the best (see `sft.equal_within`), which is kept: the `shortest` thinking or the `first` candidate (src/sft/diversity/keep-policy.ts).",
          ),
        equal_within: z
          .object({
            fidelity: ratio.describe("Candidates within this fidelity of the best are equally good."),
            judge: z.number().min(0).max(100).describe("Candidates within this judge mean of the best (when judged) are equally good."),
          })
          .strict()
          .describe("When two passing candidates count as equally good."),
        diversity: z
          .object({
            max_per_cluster: z
              .number()
              .int()
              .nonnegative()
              .describe(
                "Kept traces per cluster of near-duplicate thinking (`0`: no cap; clusters are still reported). A prompt whose best trace is capped keeps its next passing one, else it is rejected.",
              ),
            similarity: z.number().gt(0).max(1).describe("Estimated Jaccard similarity at or above which two traces share a cluster."),
            ngram: positiveInt.describe("Words per MinHash shingle of the thinking."),
            opening_words: z.number().int().nonnegative().describe("Compare only the thinking's first this many words (`0`: all)."),
          })
          .strict()
          .describe("Near-duplicate thinking traces among the kept ones (MinHash over word shingles)."),
        quota: z
          .object({
            total: z.number().int().nonnegative().describe("Kept traces wanted in all (`0`: no target)."),
            per_domain: z
              .partialRecord(z.enum(DOMAINS), positiveInt)
              .meta({ keyName: "domain", description: "Kept traces wanted per domain, e.g. `{ terminal: 500 }`." }),
          })
          .strict()
          .describe(
            "Prompts are taken in input order; once a quota is reached, the further prompts it covers are not sent to the teacher (`keep_policy.quota.over_quota` in the manifest).",
          ),
        judge: z
          .object({
            enabled: z
              .boolean()
              .describe(
                "Judge candidates that passed the rules on the five AgentWorldBench dimensions (0–100), with a rubric per domain (`src/sft/judge/rubrics/<domain>.md`).",
              ),
            mode: z
              .enum(["gate", "tiebreak"])
              .describe("`gate`: a candidate must also reach `min_mean`; `tiebreak`: the judge only orders passing candidates."),
            min_mean: z.number().min(0).max(100).describe("`gate`: the lowest judge mean kept."),
            base_url: z.url().nullable().describe("The judge's OpenAI-compatible endpoint; `null`: the teacher's."),
            model: z
              .string()
              .min(1)
              .nullable()
              .describe(
                "The judge's model; `null`: the teacher's. A teacher judging its own candidates favours them (self-preference bias): name another model.",
              ),
            api_key_env: z.string().min(1).nullable().describe("Environment variable with the judge's API key; `null`: the teacher's."),
          })
          .strict()
          .describe(
            "LLM judge. Its requests have their own queue, with the teacher's concurrency, rate, retries and timeout, and share the teacher's cache.",
          ),
      })
      .strict()
      .describe('SFT (`lwm-data sft prompts|sample`): rejection-sampled thinking traces (docs/sft.md "SFT workflow").'),
    output: z
      .object({
        dir: z
          .string()
          .min(1)
          .describe(
            'Output folder, relative to the job config (`run --output` replaces it), or an `s3://bucket/prefix` (docs/object-storage.md "Outputs in object storage").',
          ),
        num_buckets: positiveInt.describe("Each task spreads its samples over this many buckets by a sha256 of their id."),
        max_shard_bytes: byteSize.describe(
          SIZE_NOTE +
            "When a bucket's shard passes this (uncompressed estimate), the task cuts a segment: every bucket's shard is finished and a checkpoint is written.",
        ),
        row_group_rows: positiveInt.describe(
          "Rows per Parquet row group; a row group also ends once its rows pass 4 MiB (uncompressed estimate), so memory never grows with the longest record seen.",
        ),
        checkpoint: z
          .object({
            seconds: z
              .number()
              .nonnegative()
              .describe("A task also checkpoints when this many seconds passed since its last checkpoint; `0`: no time-based checkpoints."),
            records: z
              .number()
              .int()
              .nonnegative()
              .describe("A task also checkpoints after this many records since its last checkpoint; `0`: no count-based checkpoints."),
          })
          .strict()
          .describe(
            'Checkpoints between segment cuts (docs/clusters.md "Resume"): the open segment\'s row groups are kept in `tasks/task-NNNNN.journal`, so a stopped or killed task resumes at its last checkpoint, not at its last cut. ' +
              "Where checkpoints fall never changes the output. Both `0`: checkpoints only at segment cuts and no journal. Local outputs only: with an `s3://` output, checkpoints stay at segment cuts.",
          ),
        include_messages: z
          .boolean()
          .describe(
            'Also write the text form (`messages` with a per-message `loss` flag; special-token literals neutralized, docs/output.md "Text form") into each row; needed by `export swift`.',
          ),
        validation_fraction: ratio.describe(
          "Share of trajectories in the `validation` split, drawn by a sha256 of (`split_seed`, trajectory id): a trajectory and everything made from it is in one split. " +
            "Shards are `data/train-…` and `data/validation-…`; `0`: everything in train.",
        ),
        split_seed: z.number().int().describe("Seed of the train/validation draw."),
      })
      .strict()
      .describe('Where and how the Parquet shards are written (docs/output.md "Output").'),
    mixture: mixtureSchema,
    controls: controlsSchema,
    dedup: dedupSchema,
    decontaminate: decontaminateSchema,
    pack: z
      .object({
        enabled: z.boolean().describe("Pack samples into rows of up to `pack.seq_len` tokens."),
        seq_len: positiveInt.describe("Tokens per packed row (rows are not padded)."),
        strategy: z
          .enum(["best-fit", "in-order"])
          .describe(
            "`best-fit`: best-fit decreasing over `pack.buffer_documents` samples at a time (fewest rows); `in-order`: samples keep their order, a row closes when the next does not fit.",
          ),
        buffer_documents: positiveInt.describe(
          "`best-fit` buffer per bucket and split: larger gives fuller rows (1,024 gives ~99% full rows on log-normal lengths) and takes more memory, " +
            "about buffer × buckets × 5 bytes × mean sample tokens.",
        ),
        overlong: z
          .enum(["split", "truncate", "quarantine"])
          .describe(
            "A sample longer than `seq_len`: `split` at turn boundaries (each piece rendered again with the system message and `context_turns` earlier turns, untrained), " +
              "`truncate` (keep the first `seq_len` tokens), `quarantine` (with the reason).",
          ),
        context_turns: z
          .number()
          .int()
          .nonnegative()
          .describe("`split`: earlier turns carried as untrained context at the start of each piece."),
      })
      .strict()
      .describe(
        'Sequence packing (docs/packing-and-trainers.md "Packing"): several samples per row, with position_ids restarting per document and cu_seqlens boundaries for varlen attention.',
      ),
    filters: filtersSchema.describe(
      'Record filters (docs/filters-selection-scoring.md "Filters and selection"), in order: each keeps or drops records by a predicate over their metadata and statistics; a dropped record goes to filtered/ (stage `filter`, the filter\'s name as rule) with the facts that decided it.',
    ),
    select: selectionSchema.describe(
      'Selection over the whole corpus (docs/filters-selection-scoring.md "Filters and selection"): a seeded keep_fraction, at most N per key (max_per), and share caps per key; dropped records go to filtered/ (stage `selection`).',
    ),
    scorers: scorersSchema.describe(
      'Model scorers (docs/filters-selection-scoring.md "Model-scored trajectories"): an OpenAI-compatible endpoint scores each trajectory against a rubric; scores are filter and selection inputs (`scores.<name>`).',
    ),
  })
  .strict();

export type JobConfig = z.infer<typeof configSchema>;
export type InputSpec = z.infer<typeof inputSchema>;
export type MixtureConfig = z.infer<typeof mixtureSchema>;
export type ControlsConfig = z.infer<typeof controlsSchema>;
export type SourceWeight = z.infer<typeof sourceWeightSchema>;
export type DedupConfig = z.infer<typeof dedupSchema>;
export type DecontaminateConfig = z.infer<typeof decontaminateSchema>;
