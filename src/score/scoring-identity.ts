import type { Scorer } from "./score-schema.ts";

/**
 * What decides a scorer's scores (the config hash counts these): the model, the rubric and how it
 * is asked; not where the model is served, its key, its cache or how fast it may go.
 */
export function scoringIdentity(scorer: Scorer) {
  return {
    name: scorer.name,
    model: scorer.model,
    rubric_sha256: scorer.rubric_sha256,
    scope: scorer.scope,
    aggregate: scorer.aggregate,
    scale: scorer.scale,
    max_chars: scorer.max_chars,
    temperature: scorer.temperature,
    max_tokens: scorer.max_tokens,
  };
}

/** The scorer with `base_url_env`'s value as its endpoint, when that variable is set. */
export function locatedScorer(scorer: Scorer, env: NodeJS.ProcessEnv = process.env): Scorer {
  const url = scorer.base_url_env ? env[scorer.base_url_env] : undefined;
  return url ? { ...scorer, base_url: url } : scorer;
}
