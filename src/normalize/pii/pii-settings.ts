import type { Domain } from "../../core/trajectory.ts";
import { type IpPolicy, PII_KINDS, type PiiKind } from "./types.ts";

/*
 * What `normalize.pii` turns on, for which domain: no detector here, so planning a job (which asks
 * whether PII is on) never loads the detectors (libphonenumber-js alone is ~90 modules).
 */

/** Config `normalize.pii` (configs/defaults.yaml). */
export interface PiiSettings {
  enabled: boolean;
  kinds: Record<PiiKind, boolean>;
  /** Countries whose national phone formats are recognised (ISO 3166 alpha-2), tried in order. */
  phone_countries: string[];
  ip: IpPolicy;
  /** Per-domain overrides of `enabled` and of single kinds. */
  domains: Partial<Record<Domain, { enabled?: boolean | undefined; kinds?: Partial<Record<PiiKind, boolean>> | undefined }>>;
}

/** What applies to one domain's records (documents, with no domain, get the top-level settings). */
export interface ResolvedPii {
  kinds: readonly PiiKind[];
  phoneCountries: readonly string[];
  ip: IpPolicy;
}

/** The kinds that apply to `domain`, or null when PII redaction is off for it. */
export function resolvePii(settings: PiiSettings | undefined, domain?: Domain): ResolvedPii | null {
  if (!settings) return null;
  const override = domain !== undefined ? settings.domains[domain] : undefined;
  if (!(override?.enabled ?? settings.enabled)) return null;
  const kinds = PII_KINDS.filter((kind) => override?.kinds?.[kind] ?? settings.kinds[kind]);
  if (kinds.length === 0) return null;
  return { kinds, phoneCountries: settings.phone_countries, ip: settings.ip };
}

/**
 * For text whose domain is unknown (quarantine excerpts quote raw records): on when any domain
 * has it on, with every kind some domain uses. Raw input must not leak what its record would not.
 */
export function resolvePiiAnyDomain(settings: PiiSettings | undefined): ResolvedPii | null {
  if (!settings) return null;
  const resolved = [resolvePii(settings), ...Object.keys(settings.domains).map((d) => resolvePii(settings, d as Domain))].filter(
    (r): r is ResolvedPii => r !== null,
  );
  const first = resolved[0];
  if (!first) return null;
  const kinds = PII_KINDS.filter((kind) => resolved.some((r) => r.kinds.includes(kind)));
  return { ...first, kinds };
}

/** Whether PII redaction is on anywhere: at the top level or for some domain. */
export function piiActive(settings: PiiSettings | undefined): boolean {
  return resolvePiiAnyDomain(settings) !== null;
}
