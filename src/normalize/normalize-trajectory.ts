import type { Domain, Trajectory } from "../core/trajectory.ts";
import { androidNormalizer } from "./domains/android.ts";
import { mcpNormalizer } from "./domains/mcp.ts";
import { osNormalizer } from "./domains/os.ts";
import { searchNormalizer } from "./domains/search.ts";
import { sweNormalizer } from "./domains/swe.ts";
import { terminalNormalizer } from "./domains/terminal.ts";
import { webNormalizer } from "./domains/web.ts";
import type { Counters, DomainNormalizer, NormalizeScope, NormalizeSettings } from "./normalizer.ts";
import { PiiRedactor, resolvePii } from "./pii/pii.ts";
import { redactIdentifier } from "./redact-output.ts";
import { redactSecrets } from "./secrets.ts";
import { capLength } from "./truncate.ts";
import { checkUnicode } from "./utf8.ts";

/** The per-domain normalizers; a domain without one keeps its observations as read. */
export const DOMAIN_NORMALIZERS: Partial<Record<Domain, DomainNormalizer>> = {
  terminal: terminalNormalizer,
  mcp: mcpNormalizer,
  search: searchNormalizer,
  swe: sweNormalizer,
  web: webNormalizer,
  android: androidNormalizer,
  os: osNormalizer,
};

// Module-level, not closures per trajectory: V8 keeps optimized code only for functions that
// stay alive, and per-call closures were compiled again after every major GC.

/**
 * Unicode check/repair, then secret redaction, then personal data (before anything is written).
 * Secrets first: a token in a URL's userinfo would otherwise be half an email address.
 */
function clean(text: string, field: string, settings: NormalizeSettings, counters: Counters, pii: PiiRedactor | null): string {
  const checked = checkUnicode(text, settings.invalid_utf8, field, counters);
  const redacted = settings.redact_secrets ? redactSecrets(checked, counters) : checked;
  return pii ? pii.redact(redacted) : redacted;
}

function cleanOptional(
  text: string | undefined,
  field: string,
  settings: NormalizeSettings,
  counters: Counters,
  pii: PiiRedactor | null,
): string | undefined {
  return text === undefined ? undefined : clean(text, field, settings, counters, pii);
}

/** A field other than the id and the turns' text: cleaned, or left as read when only those are read. */
function cleanOther(
  text: string | undefined,
  field: string,
  settings: NormalizeSettings,
  counters: Counters,
  pii: PiiRedactor | null,
  turnsOnly: boolean,
): string | undefined {
  return turnsOnly ? text : cleanOptional(text, field, settings, counters, pii);
}

/**
 * Domain rules first (they may re-render observations), then what every domain gets, on every
 * text field: Unicode check/repair, secret redaction (before anything is written), and the
 * per-domain size cap on observations.
 */
export async function normalizeTrajectory(
  trajectory: Trajectory,
  settings: NormalizeSettings,
  counters: Counters,
  scope: NormalizeScope = {},
): Promise<Trajectory> {
  const resolved = resolvePii(settings.pii, trajectory.domain);
  // The fields besides the id and the turns' text matter to a text-only caller only through PII
  // numbering or a quarantine (NormalizeScope.turnsOnly); otherwise they are left as read.
  const turnsOnly = scope.textOnly === true && !resolved && settings.invalid_utf8 === "repair";
  const normalizer = DOMAIN_NORMALIZERS[trajectory.domain];
  const t = normalizer ? await normalizer.normalize(trajectory, settings, counters, { ...scope, turnsOnly }) : trajectory;
  const cap = settings.max_observation_chars[t.domain];
  // Redaction runs before the cap: a cut must not halve a secret into something unrecognisable.
  // One PII redactor per trajectory: a value keeps its placeholder number across turns.
  const pii = resolved ? new PiiRedactor(resolved, counters, t.domain) : null;
  const system = cleanOther(t.system, "system", settings, counters, pii, turnsOnly);
  const task = cleanOther(t.task, "task", settings, counters, pii, turnsOnly);
  const initialObservation = cleanOther(t.initialObservation, "initialObservation", settings, counters, pii, turnsOnly);
  // The counters' keys keep first-counted order, so fields are handled in the order they are written.
  const id = settings.redact_secrets || pii ? redactIdentifier(t.id, counters, { secrets: settings.redact_secrets, pii }) : undefined;
  const cappedInitial = initialObservation !== undefined && !turnsOnly ? capLength(initialObservation, cap, counters) : initialObservation;
  const turns: Trajectory["turns"] = [];
  for (let i = 0; i < t.turns.length; i++) {
    const turn = t.turns[i] as Trajectory["turns"][number];
    const thinking = cleanOther(turn.thinking, `turns.${i}.thinking`, settings, counters, pii, turnsOnly);
    turns.push({
      ...turn,
      action: clean(turn.action, `turns.${i}.action`, settings, counters, pii),
      observation: capLength(clean(turn.observation, `turns.${i}.observation`, settings, counters, pii), cap, counters),
      ...(thinking !== undefined ? { thinking } : {}),
    });
  }
  return {
    ...t,
    ...(id !== undefined ? { id } : {}),
    ...(system !== undefined ? { system } : {}),
    ...(task !== undefined ? { task } : {}),
    ...(cappedInitial !== undefined ? { initialObservation: cappedInitial } : {}),
    turns,
  };
}
