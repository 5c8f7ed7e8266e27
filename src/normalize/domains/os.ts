import { parseOsObservation } from "../../read/os-a11y.ts";
import type { DomainNormalizer } from "../normalizer.ts";
import { normalizeTreeTrajectory } from "./web.ts";

/** Desktops: AT-SPI XML or OSWorld's linearized table, told apart by content. */
export const osNormalizer: DomainNormalizer = {
  domain: "os",
  normalize: (trajectory, settings, counters, scope) =>
    normalizeTreeTrajectory(trajectory, settings, counters, (text, _format, options) => parseOsObservation(text, options), scope),
};
