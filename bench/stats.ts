/** Small statistics over samples. */

export function median(xs: readonly number[]): number {
  return percentile(xs, 50);
}

/** Linear interpolation between closest ranks; NaN for no samples. */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (rank - lo);
}

export function mean(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** The median of each field over samples of the same shape. */
export function medians<T extends Record<string, number>>(samples: readonly T[]): T {
  const out: Record<string, number> = {};
  for (const key of Object.keys(samples[0] ?? {})) out[key] = median(samples.map((s) => s[key]!));
  return out as T;
}

/** `items` rotated left by `by`: rounds start with a different contender, so none always goes first. */
export function rotate<T>(items: readonly T[], by: number): T[] {
  const k = ((by % items.length) + items.length) % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}
