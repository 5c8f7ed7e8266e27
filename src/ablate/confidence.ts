/** Two-sided 95% quantiles of Student's t (0.975 point) for 1–30 degrees of freedom. */
const T_975 = [
  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11, 2.101, 2.093, 2.086,
  2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042,
];

/** t(0.975, df): the table up to 30, then the Cornish–Fisher expansion around 1.96 (error < 0.001). */
export function tQuantile975(df: number): number {
  if (!Number.isInteger(df) || df < 1) throw new RangeError(`degrees of freedom must be a positive integer, got ${df}`);
  if (df <= T_975.length) return T_975[df - 1] as number;
  const z = 1.959964;
  return z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2);
}

export interface MeanInterval {
  n: number;
  mean: number;
  /** Half-width of the 95% interval (mean ± half); null with fewer than two values. */
  half: number | null;
  low: number | null;
  high: number | null;
}

/** Mean with a 95% t-interval: mean ± t(0.975, n−1) · s / √n, s the sample standard deviation. */
export function meanInterval(values: readonly number[]): MeanInterval {
  const n = values.length;
  if (n === 0) return { n, mean: Number.NaN, half: null, low: null, high: null };
  const mean = values.reduce((sum, v) => sum + v, 0) / n;
  if (n < 2) return { n, mean, half: null, low: null, high: null };
  const variance = values.reduce((sum, v) => sum + (v - mean) ** 2, 0) / (n - 1);
  const half = (tQuantile975(n - 1) * Math.sqrt(variance)) / Math.sqrt(n);
  return { n, mean, half, low: mean - half, high: mean + half };
}

/**
 * Variant minus baseline, paired by seed (a seed fixes the init and the order, so its pair shares
 * everything but the data): the interval of the per-seed differences. Seeds missing on either side
 * are left out.
 */
export function pairedDifference(variant: ReadonlyMap<number, number>, baseline: ReadonlyMap<number, number>): MeanInterval {
  const differences: number[] = [];
  for (const [seed, loss] of [...variant].sort((a, b) => a[0] - b[0])) {
    const base = baseline.get(seed);
    if (base !== undefined) differences.push(loss - base);
  }
  return meanInterval(differences);
}
