import { z } from "zod";

/** Multipliers of the units a size may be written in: IEC (KiB = 1024) and SI (KB = 1000), as the README writes sizes. */
const UNITS: Readonly<Record<string, number>> = {
  b: 1,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
  tib: 1024 ** 4,
  kb: 1000,
  mb: 1000 ** 2,
  gb: 1000 ** 3,
  tb: 1000 ** 4,
};

const SIZE = /^\s*(\d+(?:\.\d+)?)\s*([a-z]+)?\s*$/i;

/** `8 MiB` → 8388608; a plain number of bytes as it is. Undefined when the text is not a size. */
export function parseByteSize(text: string): number | undefined {
  const match = SIZE.exec(text);
  if (!match) return undefined;
  const unit = (match[2] ?? "b").toLowerCase();
  const multiplier = UNITS[unit];
  if (multiplier === undefined) return undefined;
  return Math.round(Number(match[1]) * multiplier);
}

/**
 * A size in bytes: a positive integer, or text with a unit (`8 MiB`, `256MiB`, `1.5 GiB`, `500 MB`).
 * Parsed to the integer, so a size written either way is the same config (and the same hash).
 */
export const byteSize = z.preprocess(
  (value) => (typeof value === "string" ? (parseByteSize(value) ?? value) : value),
  z
    .number({
      error: (issue) =>
        typeof issue.input === "string"
          ? `"${issue.input}" is not a size: write bytes (8388608) or a number and a unit (8 MiB, 500 MB)`
          : undefined,
    })
    .int()
    .positive(),
);
