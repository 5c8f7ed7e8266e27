import type { Domain, Trajectory } from "../core/trajectory.ts";
import { androidNormalizer } from "./domains/android.ts";
import { mcpNormalizer } from "./domains/mcp.ts";
import { osNormalizer } from "./domains/os.ts";
import { searchNormalizer } from "./domains/search.ts";
import { sweNormalizer } from "./domains/swe.ts";
import { terminalNormalizer } from "./domains/terminal.ts";
import { webNormalizer } from "./domains/web.ts";
import type { Counters, DomainNormalizer, NormalizeSettings } from "./normalizer.ts";
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

/**
 * Domain rules first (they may re-render observations), then what every domain gets, on every
 * text field: Unicode check/repair, secret redaction (before anything is written), and the
 * per-domain size cap on observations.
 */
export async function normalizeTrajectory(trajectory: Trajectory, settings: NormalizeSettings, counters: Counters): Promise<Trajectory> {
  const normalizer = DOMAIN_NORMALIZERS[trajectory.domain];
  const t = normalizer ? await normalizer.normalize(trajectory, settings, counters) : trajectory;
  const clean = (text: string, field: string): string => {
    const checked = checkUnicode(text, settings.invalid_utf8, field, counters);
    return settings.redact_secrets ? redactSecrets(checked, counters) : checked;
  };
  const cleanOptional = (text: string | undefined, field: string) => (text === undefined ? undefined : clean(text, field));
  const cap = settings.max_observation_chars[t.domain];
  // Redaction runs before the cap: a cut must not halve a secret into something unrecognisable.
  const capped = (text: string) => capLength(text, cap, counters);
  const system = cleanOptional(t.system, "system");
  const task = cleanOptional(t.task, "task");
  const initialObservation = cleanOptional(t.initialObservation, "initialObservation");
  return {
    ...t,
    ...(settings.redact_secrets ? { id: redactIdentifier(t.id, counters) } : {}),
    ...(system !== undefined ? { system } : {}),
    ...(task !== undefined ? { task } : {}),
    ...(initialObservation !== undefined ? { initialObservation: capped(initialObservation) } : {}),
    turns: t.turns.map((turn, i) => {
      const thinking = cleanOptional(turn.thinking, `turns.${i}.thinking`);
      return {
        ...turn,
        action: clean(turn.action, `turns.${i}.action`),
        observation: capped(clean(turn.observation, `turns.${i}.observation`)),
        ...(thinking !== undefined ? { thinking } : {}),
      };
    }),
  };
}
