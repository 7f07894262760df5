/**
 * The order a rollback undoes steps in (SPEC 5.6: the reverse of their completion). Times are
 * whole milliseconds, so steps that ended within one tie; of those, a step that depends on
 * another, directly or not, completed after it and is undone first (by the plan's topological
 * order, which also keeps the order of unrelated ties fixed). Pure.
 */
import { topologicalOrder } from "./graph";

export interface Completed {
  index: number;
  endedAt: number | null;
}

export function rollbackOrder(
  done: readonly Completed[],
  deps: readonly (readonly number[])[],
): number[] {
  const rank = new Int32Array(deps.length);
  (topologicalOrder(deps) ?? []).forEach((step, r) => (rank[step] = r));
  return [...done]
    .sort((a, b) => (b.endedAt ?? 0) - (a.endedAt ?? 0) || rank[b.index]! - rank[a.index]!)
    .map((s) => s.index);
}
