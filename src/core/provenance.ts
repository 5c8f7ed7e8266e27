/**
 * Outcome and provenance of a trajectory, as readers record them in `trajectory.meta` (`outcome`
 * {resolved, success, reward, failure_mode}, `agent`, `model`, `task_id`, `attempt`), flattened to
 * the shard columns of the same names (docs/output.md "Shard schema"). Only what the source records:
 * a field the source does not name stays null, nothing is guessed.
 */
export interface Provenance {
  task_id: string | null;
  attempt: string | null;
  agent: string | null;
  model: string | null;
  /** `resolved` / `unresolved` (a SWE resolution), else `success` / `failure`. */
  outcome: string | null;
  reward: number | null;
  failure_mode: string | null;
}

export const PROVENANCE_COLUMNS = ["task_id", "attempt", "agent", "model", "outcome", "reward", "failure_mode"] as const;

const EMPTY: Provenance = {
  task_id: null,
  attempt: null,
  agent: null,
  model: null,
  outcome: null,
  reward: null,
  failure_mode: null,
};

/** A string, or a finite number written as one (task ids and attempt numbers come as either). */
function label(value: unknown): string | null {
  if (typeof value === "string") return value.trim() === "" ? null : value;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return null;
}

function outcomeLabel(outcome: Record<string, unknown>): string | null {
  if (typeof outcome.resolved === "boolean") return outcome.resolved ? "resolved" : "unresolved";
  if (typeof outcome.success === "boolean") return outcome.success ? "success" : "failure";
  // A failure mode with no verdict is still a failure: the run ended in it.
  if (label(outcome.failure_mode) !== null) return "failure";
  return null;
}

/** The provenance a trajectory's `meta` records; all null when it records none. */
export function provenanceOf(meta: Record<string, unknown> | undefined): Provenance {
  if (!meta) return EMPTY;
  const raw = meta.outcome;
  const outcome = typeof raw === "object" && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : undefined;
  const reward = outcome?.reward;
  return {
    task_id: label(meta.task_id),
    attempt: label(meta.attempt),
    agent: label(meta.agent),
    model: label(meta.model),
    outcome: outcome ? outcomeLabel(outcome) : null,
    reward: typeof reward === "number" && Number.isFinite(reward) ? reward : null,
    failure_mode: outcome ? label(outcome.failure_mode) : null,
  };
}

/** True when the record names any of them. */
export function hasProvenance(provenance: Provenance): boolean {
  return PROVENANCE_COLUMNS.some((column) => provenance[column] !== null);
}

/** The same provenance with every text field passed through `redact` (outputs never hold a secret the source held). */
export function redactedProvenance(provenance: Provenance, redact: (text: string) => string): Provenance {
  const text = (value: string | null) => (value === null ? null : redact(value));
  return {
    ...provenance,
    task_id: text(provenance.task_id),
    attempt: text(provenance.attempt),
    agent: text(provenance.agent),
    model: text(provenance.model),
    failure_mode: text(provenance.failure_mode),
  };
}
