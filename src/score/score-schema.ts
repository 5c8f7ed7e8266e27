import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { z } from "zod";
import { UserError } from "../core/errors.ts";

const positiveInt = z.number().int().positive();

/** A scorer's name becomes the column `scores.<name>` and a filter input, so it is plain: kebab or snake case. */
export const SCORER_NAME = /^[a-z][a-z0-9]*(?:[_-][a-z0-9]+)*$/;

/**
 * One model scorer (docs/filters-selection-scoring.md "Model-scored trajectories"): an OpenAI-compatible endpoint asked to
 * score each trajectory, or each of its observation turns, against a rubric. Transport settings
 * mean what they mean for `sft.teacher`; the default `cache_dir` is the teacher's, so scoring and
 * SFT share one request cache (keys hash the model and the prompt, never the endpoint).
 */
export const scorerSchema = z
  .object({
    name: z
      .string()
      .regex(SCORER_NAME, "a scorer name is lower-case kebab or snake case, e.g. judge-quality")
      .describe(
        "Unique name, e.g. `judge-quality`: the field `scores.<name>` filters and `select.order` read, and the shard column `score_<name>` (`-` written `_`).",
      ),
    base_url: z.url().describe("Any OpenAI-compatible endpoint: vLLM, SGLang, a hosted API."),
    base_url_env: z
      .string()
      .min(1)
      .optional()
      .describe(
        "Environment variable that, when set, replaces `base_url` (a cluster's judge address, a test's server). Where the model is served is not part of the job: the output is the same.",
      ),
    model: z.string().min(1).describe("Model name sent to the endpoint."),
    api_key_env: z
      .string()
      .min(1)
      .default("OPENAI_API_KEY")
      .describe("Environment variable holding the API key (read, never written anywhere); unset: no key."),
    rubric: z.string().trim().min(1).optional().describe("The rubric itself, inline; exactly one of `rubric` and `rubric_file`."),
    rubric_file: z
      .string()
      .min(1)
      .optional()
      .describe("A text file holding the rubric, relative to the config; exactly one of `rubric` and `rubric_file`."),
    scope: z
      .enum(["trajectory", "turns"])
      .default("trajectory")
      .describe("`trajectory`: one request per record; `turns`: one per observation turn, combined by `aggregate`."),
    aggregate: z.enum(["mean", "min", "max"]).default("mean").describe("`turns`: how the turns' scores make the record's score."),
    scale: z
      .object({
        min: z.number().describe("Lowest score the rubric gives."),
        max: z.number().describe("Highest score the rubric gives; above `min`."),
      })
      .strict()
      .refine((scale) => scale.min < scale.max, { message: "scale.min must be below scale.max" })
      .default({ min: 0, max: 1 })
      .describe("The score range the rubric uses; an answer outside it is malformed (score null)."),
    max_chars: positiveInt
      .default(48_000)
      .describe("Most characters of trajectory text in one prompt; longer text is cut in the middle, and the prompt says so."),
    concurrency: positiveInt.default(8).describe("Requests in flight at once."),
    requests_per_minute: z.number().int().nonnegative().default(0).describe("Rate limit (`0`: none)."),
    max_retries: z
      .number()
      .int()
      .nonnegative()
      .default(5)
      .describe("Retries with backoff on 408/409/429/5xx, timeouts and malformed bodies; a request still failing scores null."),
    timeout_ms: positiveInt.default(120_000).describe("Per-request timeout, in milliseconds."),
    cache_dir: z
      .string()
      .min(1)
      .default(".lwm-cache/teacher")
      .describe("On-disk request cache, relative to the config; the SFT teacher's folder by default, so scoring and SFT share one cache."),
    temperature: z.number().min(0).default(0).describe("Sampling temperature."),
    max_tokens: positiveInt.default(1024).describe("Most tokens per answer."),
  })
  .strict()
  .superRefine((scorer, ctx) => {
    if ((scorer.rubric === undefined) === (scorer.rubric_file === undefined)) {
      ctx.addIssue({ code: "custom", path: ["rubric"], message: "give exactly one of rubric (inline text) and rubric_file (a path)" });
    }
  });

/** The config's scorers; names are unique since each is a column. */
export const scorersSchema = z
  .array(scorerSchema)
  .default([])
  .superRefine((scorers, ctx) => {
    const seen = new Set<string>();
    scorers.forEach((scorer, index) => {
      if (seen.has(scorer.name)) ctx.addIssue({ code: "custom", path: [index, "name"], message: `duplicate scorer name ${scorer.name}` });
      seen.add(scorer.name);
    });
  });

export type ScorerConfig = z.output<typeof scorerSchema>;

/** A scorer ready to run: the rubric read, the cache folder absolute. */
export interface Scorer extends Omit<ScorerConfig, "rubric" | "rubric_file"> {
  rubric: string;
  /** sha256 of the rubric text, for the manifest: a changed rubric shows (and, being in the prompt, misses the cache). */
  rubric_sha256: string;
  /** Where the rubric came from: `inline` or the file's absolute path. */
  rubric_source: string;
}

const absolute = (base: string, path: string) => (isAbsolute(path) ? path : resolve(base, path));

/**
 * The configured scorers made runnable: `rubric_file` read and `cache_dir` made absolute, both
 * relative to `configDir`. `where` names the config key in errors (e.g. `job.yaml: scorers`).
 */
export function loadScorers(scorers: readonly ScorerConfig[], configDir: string, where = "scorers"): Scorer[] {
  return scorers.map((config, index) => {
    const { rubric: inline, rubric_file, ...rest } = config;
    let rubric: string;
    let rubric_source = "inline";
    if (rubric_file !== undefined) {
      rubric_source = absolute(configDir, rubric_file);
      try {
        rubric = readFileSync(rubric_source, "utf8").trim();
      } catch (err) {
        throw new UserError(`${where}[${index}].rubric_file: cannot read ${rubric_source}: ${(err as Error).message}`);
      }
      if (rubric === "") throw new UserError(`${where}[${index}].rubric_file: ${rubric_source} is empty`);
    } else {
      rubric = (inline ?? "").trim();
    }
    return {
      ...rest,
      cache_dir: absolute(configDir, rest.cache_dir),
      rubric,
      rubric_sha256: createHash("sha256").update(rubric).digest("hex"),
      rubric_source,
    };
  });
}
