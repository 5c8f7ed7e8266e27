import type { Domain, Trajectory } from "../core/trajectory.ts";
import type { PiiSettings } from "./pii/pii-settings.ts";

/** Settings of the normalize stage (config key `normalize`, see configs/defaults.yaml). */
export interface NormalizeSettings {
  /** web/android/os: what the model is trained to predict: the whole tree, or the diff against the previous one. */
  tree_target: "full" | "diff";
  /** web/android/os: drop nameless wrapper nodes that only hold one child. */
  collapse_empty_wrappers: boolean;
  /** Redact secrets (keys, tokens, passwords in URLs…) with typed placeholders before anything is written. */
  redact_secrets: boolean;
  /** Personal data (emails, phones, IPs, cards, IBANs): typed placeholders per trajectory. Absent = off. */
  pii?: PiiSettings | undefined;
  /** Invalid UTF-8 (U+FFFD from decoding, lone surrogates): repair (replace) or quarantine the record. */
  invalid_utf8: "repair" | "quarantine";
  /** Per-domain cap on one observation, in characters; longer ones keep head and tail with an elision marker. */
  max_observation_chars: Record<Domain, number>;
}

/**
 * Counts what normalization found and did, e.g. `secrets.aws_access_key_id`, `volatile.uuid`,
 * `truncated.observations`. Summed over the run into the manifest's `normalize` section.
 */
export type Counters = Map<string, number>;

export function count(counters: Counters, key: string, n = 1): void {
  if (n !== 0) counters.set(key, (counters.get(key) ?? 0) + n);
}

/**
 * What a caller reads of a normalized trajectory. The records stage reads all of it. Curation's
 * signatures read only the id and the turns' action and observation text: with `textOnly`,
 * normalization skips what cannot change those or the record's fate. The turns' text is the same
 * either way.
 */
export interface NormalizeScope {
  /**
   * Only the id and the turns' text are read: a tree domain skips the form the model is not
   * trained on (kept in `turn.meta` for the records stage), and the counters that only the
   * manifest reads (volatile values, tree counts) are not counted.
   */
  textOnly?: boolean;
  /**
   * Set by normalizeTrajectory with `textOnly` when the other text fields (system, task, initial
   * observation, thinking) cannot change the turns' text or quarantine the record: no personal
   * data redaction (its placeholders are numbered across fields) and `invalid_utf8: repair`. They
   * are then left as read, and a domain does no work on the initial observation that only it reads.
   */
  turnsOnly?: boolean;
}

/**
 * One domain's rules: turns the observations a reader produced into what the environment
 * actually presented (rendered terminal screen, canonical tree, canonical JSON). Pure function
 * of the trajectory and settings; throws RecordError for a record it cannot normalize.
 */
export interface DomainNormalizer {
  domain: Domain;
  /** May be async: the terminal emulator renders asynchronously. */
  normalize(
    trajectory: Trajectory,
    settings: NormalizeSettings,
    counters: Counters,
    scope?: NormalizeScope,
  ): Trajectory | Promise<Trajectory>;
}
