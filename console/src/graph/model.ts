/**
 * A plan's graph as the console draws it: step ids, dependencies by index, levels and the
 * critical path. The graph algorithms are the engine's own (src/engine/graph.ts, pure).
 */
import { criticalPath, levelsOf, topologicalOrder } from "../../../src/engine/graph";
import type { StepStatus } from "../types";

export interface GraphModel {
  ids: string[];
  index: Map<string, number>;
  /** `deps[i]`: the indices step i waits for. */
  deps: number[][];
  /** A topological order; null when the graph has a cycle (a plan the API would reject). */
  order: number[] | null;
  levels: number[][];
}

export function graphOf(
  steps: readonly { id: string; dependsOn: readonly string[] }[],
): GraphModel {
  const ids = steps.map((s) => s.id);
  const index = new Map(ids.map((id, i) => [id, i]));
  const deps = steps.map((s) => [
    ...new Set(s.dependsOn.flatMap((d) => (index.has(d) ? [index.get(d)!] : []))),
  ]);
  const order = topologicalOrder(deps);
  return { ids, index, deps, order, levels: order ? levelsOf(deps, order) : [] };
}

/**
 * The critical path. Before anything ran: the longest chain by step count (what
 * `POST /v1/plans/validate` reports). Once steps ran: the chain that took longest, by
 * their durations (a running step counts until `now`), which is what set the makespan.
 */
export function criticalPathOf(
  model: GraphModel,
  steps: readonly StepStatus[] | null,
  now: number,
): number[] {
  if (!model.order) return [];
  const timed = steps?.some((s) => s.startedAt !== null);
  if (!steps || !timed) return criticalPath(model.deps, model.order).path;
  const weight = (i: number) => {
    const s = steps[i];
    if (!s?.startedAt) return 0;
    const end = s.endedAt ? Date.parse(s.endedAt) : now;
    return Math.max(1, end - Date.parse(s.startedAt));
  };
  return criticalPath(model.deps, model.order, weight).path;
}

/** Edges as pairs `[from, to]` (dependency first). */
export function edgesOf(model: GraphModel): [number, number][] {
  return model.deps.flatMap((ds, i) => ds.map((d): [number, number] => [d, i]));
}
