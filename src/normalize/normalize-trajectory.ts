import type { Domain, Trajectory } from "../core/trajectory.ts";
import { androidNormalizer } from "./domains/android.ts";
import { osNormalizer } from "./domains/os.ts";
import { terminalNormalizer } from "./domains/terminal.ts";
import { webNormalizer } from "./domains/web.ts";
import type { Counters, DomainNormalizer, NormalizeSettings } from "./normalizer.ts";

/** The per-domain normalizers; a domain without one keeps its observations as read. */
export const DOMAIN_NORMALIZERS: Partial<Record<Domain, DomainNormalizer>> = {
  terminal: terminalNormalizer,
  web: webNormalizer,
  android: androidNormalizer,
  os: osNormalizer,
};

/** Domain rules first (they may re-render observations), then the steps every domain gets. */
export async function normalizeTrajectory(trajectory: Trajectory, settings: NormalizeSettings, counters: Counters): Promise<Trajectory> {
  const normalizer = DOMAIN_NORMALIZERS[trajectory.domain];
  const normalized = normalizer ? await normalizer.normalize(trajectory, settings, counters) : trajectory;
  return normalized;
}
