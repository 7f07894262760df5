/**
 * Graph algorithms over a plan's dependency lists (`deps[i]` = indices step i waits for).
 * All linear in steps + edges.
 */

/**
 * The step a dependency written as text names (SPEC 2.1: step ids or plan indices): the step
 * with that id, else, for digits (`"0"`, as JSON from an agent may write an index), the step
 * at that index; undefined when neither is in the plan of `count` steps.
 */
export function stepNamedBy(
  ref: string,
  indexOfId: (id: string) => number | undefined,
  count: number,
): number | undefined {
  const i = indexOfId(ref) ?? (/^\d{1,5}$/.test(ref) ? Number(ref) : undefined);
  return i !== undefined && i < count ? i : undefined;
}

/** Kahn's topological order; `null` when there is a cycle. */
export function topologicalOrder(deps: readonly (readonly number[])[]): number[] | null {
  const n = deps.length;
  const indegree = new Int32Array(n);
  const dependents = dependentsOf(deps);
  for (let i = 0; i < n; i++) indegree[i] = deps[i]!.length;
  const order: number[] = [];
  for (let i = 0; i < n; i++) if (indegree[i] === 0) order.push(i);
  for (let head = 0; head < order.length; head++) {
    for (const d of dependents[order[head]!]!) if (--indegree[d]! === 0) order.push(d);
  }
  return order.length === n ? order : null;
}

export function dependentsOf(deps: readonly (readonly number[])[]): number[][] {
  const dependents: number[][] = deps.map(() => []);
  deps.forEach((ds, i) => ds.forEach((d) => dependents[d]!.push(i)));
  return dependents;
}

/** One cycle, as step indices in dependency order (the first repeated at the end), or null. */
export function findCycle(deps: readonly (readonly number[])[]): number[] | null {
  const state = new Uint8Array(deps.length); // 0 new, 1 on stack, 2 done
  const parent = new Int32Array(deps.length).fill(-1);
  for (let root = 0; root < deps.length; root++) {
    if (state[root] !== 0) continue;
    // Iterative DFS so 10,000-step chains do not overflow the stack.
    const stack: [number, number][] = [[root, 0]];
    state[root] = 1;
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const [node, next] = top;
      const ds = deps[node]!;
      if (next >= ds.length) {
        state[node] = 2;
        stack.pop();
        continue;
      }
      top[1]++;
      const d = ds[next]!;
      if (state[d] === 1) {
        const cycle = [d];
        for (let v = node; v !== d; v = parent[v]!) cycle.push(v);
        cycle.push(d);
        return cycle.reverse();
      }
      if (state[d] === 0) {
        state[d] = 1;
        parent[d] = node;
        stack.push([d, 0]);
      }
    }
  }
  return null;
}

/**
 * One cycle for each group of steps that wait on each other (a strongly connected group of
 * two or more), so independent cycles are each named; groups in plan order, at most `max`.
 */
export function findCycles(deps: readonly (readonly number[])[], max = 20): number[][] {
  return cyclicGroups(deps)
    .sort((a, b) => Math.min(...a) - Math.min(...b))
    .slice(0, max)
    .map((group) => {
      const inGroup = new Set(group);
      const within = deps.map((ds, i) => (inGroup.has(i) ? ds.filter((d) => inGroup.has(d)) : []));
      return findCycle(within)!;
    });
}

/** Tarjan's strongly connected components of two or more steps, iteratively (long chains). */
function cyclicGroups(deps: readonly (readonly number[])[]): number[][] {
  const n = deps.length;
  const index = new Int32Array(n).fill(-1);
  const low = new Int32Array(n);
  const onStack = new Uint8Array(n);
  const stack: number[] = [];
  const groups: number[][] = [];
  let counter = 0;
  const visit = (v: number, work: [number, number][]) => {
    index[v] = low[v] = counter++;
    stack.push(v);
    onStack[v] = 1;
    work.push([v, 0]);
  };
  for (let root = 0; root < n; root++) {
    if (index[root] !== -1) continue;
    const work: [number, number][] = [];
    visit(root, work);
    while (work.length > 0) {
      const top = work[work.length - 1]!;
      const v = top[0];
      const w = deps[v]![top[1]++];
      if (w !== undefined) {
        if (index[w] === -1) visit(w, work);
        else if (onStack[w]) low[v] = Math.min(low[v]!, index[w]!);
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const u = work[work.length - 1]![0];
        low[u] = Math.min(low[u]!, low[v]!);
      }
      if (low[v] !== index[v]) continue;
      const group: number[] = [];
      let x: number;
      do {
        x = stack.pop()!;
        onStack[x] = 0;
        group.push(x);
      } while (x !== v);
      if (group.length > 1) groups.push(group);
    }
  }
  return groups;
}

/** Level of each step: 0 without dependencies, else 1 + the highest level among them. */
export function levelsOf(
  deps: readonly (readonly number[])[],
  order: readonly number[],
): number[][] {
  const level = new Int32Array(deps.length);
  const levels: number[][] = [];
  for (const i of order) {
    let l = 0;
    for (const d of deps[i]!) l = Math.max(l, level[d]! + 1);
    level[i] = l;
    (levels[l] ??= []).push(i);
  }
  return levels;
}

/**
 * Height of each step: the number of steps on the longest chain from it to a step nothing
 * depends on (1 for such a step). `order` is a topological order.
 */
export function heightsOf(
  deps: readonly (readonly number[])[],
  order: readonly number[],
): Int32Array {
  const height = new Int32Array(deps.length).fill(1);
  for (let k = order.length - 1; k >= 0; k--) {
    const i = order[k]!;
    for (const d of deps[i]!) height[d] = Math.max(height[d]!, height[i]! + 1);
  }
  return height;
}

/** The longest chain, weighted by `weight` (1 per step by default), as indices from first to last. */
export function criticalPath(
  deps: readonly (readonly number[])[],
  order: readonly number[],
  weight: (i: number) => number = () => 1,
): { path: number[]; length: number } {
  const best = new Float64Array(deps.length);
  const via = new Int32Array(deps.length).fill(-1);
  let end = -1;
  for (const i of order) {
    let b = 0;
    for (const d of deps[i]!) {
      if (best[d]! > b) {
        b = best[d]!;
        via[i] = d;
      }
    }
    best[i] = b + weight(i);
    if (end < 0 || best[i]! > best[end]!) end = i;
  }
  const path: number[] = [];
  for (let v = end; v >= 0; v = via[v]!) path.push(v);
  return { path: path.reverse(), length: end < 0 ? 0 : best[end]! };
}
