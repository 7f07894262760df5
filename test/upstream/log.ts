/** What the upstream's call log says, for the tests of both projects (workers and e2e). */

/** The most calls among `calls` (of `/work`, which logs when each ended) the upstream had in flight at once. */
export function maxInFlight(calls: { at: number; endedAt?: number }[]): number {
  const edges = calls.flatMap((c) => [
    [c.at, 1],
    [c.endedAt ?? Number.POSITIVE_INFINITY, -1],
  ]);
  // At the same millisecond an answer comes before the next arrival: the slot was given back first.
  edges.sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
  let now = 0;
  let max = 0;
  for (const [, delta] of edges) max = Math.max(max, (now += delta!));
  return max;
}
