import { z } from "zod";
import { DOMAINS, type Domain } from "../core/trajectory.ts";
import { LOSS_POLICY_NAMES } from "../mask/loss-policy.ts";
import { RULE_STATS, TURN_CLASSES } from "../mask/turn-classes.ts";
import { PII_KINDS, type PiiKind } from "../normalize/pii/types.ts";

const positiveInt = z.number().int().positive();
const ratio = z.number().min(0).max(1);
/** A mixture source's name: it lands in shards, paths-free, so letters, digits, `_`, `-`, `.`. */
const sourceName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, "a source name is letters, digits, _, - and .");

export const inputSchema = z
  .object({
    /** File path or glob, relative to the config file. */
    path: z.string().min(1),
    /** Reader to use; `auto` detects it from the file's content. */
    format: z.string().default("auto"),
    /** Domain for formats whose records do not name one. */
    domain: z.enum(DOMAINS).optional(),
    /** Mixture source its records belong to; default: the record's domain, `knowledge` for text documents. */
    source: sourceName.optional(),
  })
  .strict();

/** A source's weight: a sampling factor, or a target share of the output's trained tokens. */
export const sourceWeightSchema = z.union([
  z.object({ factor: z.number().min(0) }).strict(),
  z.object({ share: z.number().gt(0).max(1) }).strict(),
]);

/** CPT mixture: how many copies of each source's records the output holds (README "Mixtures"). */
export const mixtureSchema = z
  .object({
    /** Seed of the keep/copy draw, a sha256 of (seed, id, copy). */
    seed: z.number().int().nonnegative(),
    sources: z.record(sourceName, sourceWeightSchema),
    /** Largest factor a target share may derive (copies of a source's data): past it the share is an error. */
    max_factor: z.number().positive(),
    /** Trained tokens the shares are of; auto: the corpus's own (or, beside fixed factors, what those give). */
    total_tokens: z.union([positiveInt, z.literal("auto")]),
  })
  .strict();

/** Controls (README "Controls"): edge cases detected in trajectories, stated as instructions in the system message. */
export const controlsSchema = z
  .object({
    /** Detect edge cases (labels in the turn stats, the shards and the manifest) and write instructions. */
    enabled: z.boolean(),
    /** Share of labelled trajectories whose system message states what the environment showed. */
    share: ratio,
    /** Share of labelled trajectories that also give a counterfactual: the normal turns before the first edge case, told to behave normally. */
    counterfactual_share: ratio,
    /** Seed of both draws, a sha256 of (seed, purpose, id). */
    seed: z.number().int().nonnegative(),
  })
  .strict();

/** Which records curation keeps: the first of a cluster in input order (file order, then position). */
export const dedupSchema = z
  .object({
    /** Job-wide exact duplicates: same turns once volatile values are canonicalized. */
    exact: z.boolean(),
    /** Near duplicates: MinHash + LSH over word n-grams of the same canonical text. */
    near: z.boolean(),
    /** Words per shingle. */
    ngram: positiveInt,
    /** LSH bands × rows per band = MinHash functions; the threshold is about (1/bands)^(1/rows). */
    bands: positiveInt,
    rows: positiveInt,
    /** A band collision is kept only when the two full signatures agree on at least this share (estimated Jaccard); 0: every candidate. */
    min_similarity: ratio,
    /** Seed of the MinHash functions. */
    seed: z.number().int().nonnegative(),
    /** Hash-range partitions of the clustering stage (its array size); "auto": one per task, at least 4. */
    partitions: z.union([positiveInt, z.literal("auto")]),
  })
  .strict();

export const decontaminateSchema = z
  .object({
    /** Benchmark files (any format lwm-data reads), like `inputs`; none = decontamination off. */
    benchmarks: z.array(inputSchema),
    /** Words per n-gram (13, as in the GPT-3 and datatrove decontaminators). */
    ngram: positiveInt,
    /** A training turn matches a benchmark episode when at least this share of its n-grams occur in that episode. */
    min_overlap: z.number().gt(0).max(1),
    /** Turns of one episode a trajectory must match (or all of the episode's, when it has fewer): one shared `ls -la` is not a leak. */
    min_turns: positiveInt,
    /** N-grams found in more than this many benchmark episodes are boilerplate (a shared tool list, a prompt) and ignored. */
    max_episode_frequency: positiveInt,
    /** remove: the whole trajectory goes to filtered/; mask: only the matching turns lose their loss. */
    action: z.enum(["remove", "mask"]),
  })
  .strict();

const piiKinds = z.object(Object.fromEntries(PII_KINDS.map((k) => [k, z.boolean()])) as Record<PiiKind, z.ZodBoolean>).strict();
const ipRangePolicy = z.enum(["keep", "redact"]);

/** Personal data (README "PII"): emails, phones, IPs, cards, IBANs replaced with typed, per-trajectory placeholders. */
export const piiSchema = z
  .object({
    enabled: z.boolean(),
    kinds: piiKinds,
    /** ISO 3166 alpha-2 countries whose national phone formats are recognised; `+CC` numbers always are. */
    phone_countries: z.array(z.string().regex(/^[A-Z]{2}$/, "a phone country is an ISO 3166 alpha-2 code (US, GB, DE)")),
    ip: z.object({ private: ipRangePolicy, documentation: ipRangePolicy }).strict(),
    /** Per-domain overrides: `{ terminal: { kinds: { ip: false } }, mcp: { enabled: true } }`. */
    domains: z.partialRecord(
      z.enum(DOMAINS),
      z.object({ enabled: z.boolean().optional(), kinds: z.partialRecord(z.enum(PII_KINDS), z.boolean()).optional() }).strict(),
    ),
  })
  .strict();

export const configSchema = z
  .object({
    pipeline: z.string().min(1),
    inputs: z.array(inputSchema).min(1, "at least one input is required"),
    input: z
      .object({
        max_line_bytes: positiveInt,
        max_decompressed_bytes: positiveInt,
        max_expansion_ratio: z.number().positive(),
        task_bytes: positiveInt,
        duplicate_ids: z.enum(["quarantine", "keep"]),
        /**
         * Where relative input paths start, and what the shards' `source` labels are relative to:
         * a folder or an `s3://`/`hf://` location (default: the config's folder). Moving the
         * inputs (a disk → a bucket) is then one line, and the shards stay byte-identical.
         */
        root: z.string().min(1).optional(),
      })
      .strict(),
    tokenizer: z
      .object({
        name: z.string().min(1),
        special_tokens: z.record(z.string(), z.number().int().nonnegative()).default({}),
      })
      .strict(),
    normalize: z
      .object({
        tree_target: z.enum(["full", "diff"]),
        collapse_empty_wrappers: z.boolean(),
        redact_secrets: z.boolean(),
        pii: piiSchema,
        invalid_utf8: z.enum(["repair", "quarantine"]),
        max_observation_chars: z
          .object(Object.fromEntries(DOMAINS.map((d) => [d, positiveInt])) as Record<Domain, typeof positiveInt>)
          .strict(),
      })
      .strict(),
    render: z.object({ template: z.string().min(1), system_prompts_dir: z.string().min(1) }).strict(),
    mask: z
      .object({
        policy: z.enum(LOSS_POLICY_NAMES),
        seed: z.number().int(),
        classes: z.array(
          z
            .object({
              name: z.enum(TURN_CLASSES),
              when: z.partialRecord(z.enum(RULE_STATS), z.object({ min: z.number().optional(), max: z.number().optional() }).strict()),
            })
            .strict(),
        ),
        keep: z.partialRecord(z.enum(TURN_CLASSES), ratio),
        domain_keep: z.partialRecord(z.enum(DOMAINS), z.partialRecord(z.enum(TURN_CLASSES), ratio)),
      })
      .strict(),
    sft: z
      .object({
        select: z.enum(["all", "last", "kept", "sample", "labelled"]),
        per_trajectory: positiveInt,
        seed: z.number().int(),
        max_history_turns: z.number().int().nonnegative(),
        hints: z.boolean(),
        instructions: z.string(),
        teacher: z
          .object({
            base_url: z.url(),
            model: z.string().min(1),
            api_key_env: z.string().min(1),
            n: positiveInt,
            temperature: z.number().min(0),
            max_tokens: positiveInt,
            concurrency: positiveInt,
            requests_per_minute: z.number().int().nonnegative(),
            max_retries: z.number().int().nonnegative(),
            timeout_ms: positiveInt,
            cache_dir: z.string().min(1),
          })
          .strict(),
        verify: z
          .object({
            fidelity: z.object(Object.fromEntries(DOMAINS.map((d) => [d, ratio])) as Record<Domain, typeof ratio>).strict(),
            min_think_chars: z.number().int().nonnegative(),
            max_think_chars: positiveInt,
          })
          .strict(),
        // Which passing candidate is kept, across prompts (src/sft/diversity/keep-policy.ts).
        prefer: z.enum(["shortest", "first"]),
        equal_within: z.object({ fidelity: ratio, judge: z.number().min(0).max(100) }).strict(),
        diversity: z
          .object({
            max_per_cluster: z.number().int().nonnegative(),
            similarity: z.number().gt(0).max(1),
            ngram: positiveInt,
            opening_words: z.number().int().nonnegative(),
          })
          .strict(),
        quota: z.object({ total: z.number().int().nonnegative(), per_domain: z.partialRecord(z.enum(DOMAINS), positiveInt) }).strict(),
        judge: z
          .object({
            enabled: z.boolean(),
            mode: z.enum(["gate", "tiebreak"]),
            min_mean: z.number().min(0).max(100),
            // null = the teacher's (sft.teacher.base_url, model, api_key_env).
            base_url: z.url().nullable(),
            model: z.string().min(1).nullable(),
            api_key_env: z.string().min(1).nullable(),
          })
          .strict(),
      })
      .strict(),
    output: z
      .object({
        dir: z.string().min(1),
        num_buckets: positiveInt,
        max_shard_bytes: positiveInt,
        row_group_rows: positiveInt,
        include_messages: z.boolean(),
        validation_fraction: ratio,
        split_seed: z.number().int(),
      })
      .strict(),
    mixture: mixtureSchema,
    controls: controlsSchema,
    dedup: dedupSchema,
    decontaminate: decontaminateSchema,
    pack: z
      .object({
        enabled: z.boolean(),
        seq_len: positiveInt,
        strategy: z.enum(["best-fit", "in-order"]),
        buffer_documents: positiveInt,
        overlong: z.enum(["split", "truncate", "quarantine"]),
        context_turns: z.number().int().nonnegative(),
      })
      .strict(),
  })
  .strict();

export type JobConfig = z.infer<typeof configSchema>;
export type InputSpec = z.infer<typeof inputSchema>;
export type MixtureConfig = z.infer<typeof mixtureSchema>;
export type ControlsConfig = z.infer<typeof controlsSchema>;
export type SourceWeight = z.infer<typeof sourceWeightSchema>;
export type DedupConfig = z.infer<typeof dedupSchema>;
export type DecontaminateConfig = z.infer<typeof decontaminateSchema>;
