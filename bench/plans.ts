/** The plans the benchmark submits, and the seeded PRNG and critical-path maths behind them. */

export interface BenchStep {
  id: string;
  tool: string;
  params: Record<string, unknown>;
  dependsOn?: string[];
}

export interface BenchPlan {
  name?: string;
  config?: Record<string, unknown>;
  steps: BenchStep[];
}

/** mulberry32: a small, fast, seedable PRNG (same sequence on every machine). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** (a) n `pass` steps, each reading the previous one's data (an implicit dependency). */
export function passChain(n: number): BenchPlan {
  const steps: BenchStep[] = [];
  for (let i = 0; i < n; i++) {
    steps.push({
      id: `s${i}`,
      tool: "pass",
      params: { value: i === 0 ? 0 : `\${step[${i - 1}].data}` },
    });
  }
  return { name: `pass-chain-${n}`, steps };
}

/** (d) n `pass` steps chained with explicit `dependsOn` (no templates: validation-bound). */
export function dependsOnChain(n: number): BenchPlan {
  const steps: BenchStep[] = [];
  for (let i = 0; i < n; i++) {
    steps.push({
      id: `s${i}`,
      tool: "pass",
      params: { value: i },
      ...(i > 0 && { dependsOn: [`s${i - 1}`] }),
    });
  }
  return { name: `depends-on-chain-${n}`, steps };
}

/** A DAG of upstream calls: (b) is one with no edges, (c) a random one. */
export interface Dag {
  /** Latency of each step (ms). */
  latency: number[];
  /** Dependencies of each step, by index (all earlier). */
  deps: number[][];
  /** Sum of latencies along the longest path, and that path. */
  criticalPathMs: number;
  criticalPath: number[];
}

/** (b) n independent calls of `ms` each. */
export function fanDag(n: number, ms: number): Dag {
  const latency = Array.from({ length: n }, () => ms);
  const deps = latency.map(() => [] as number[]);
  const { length, path } = longestPath(latency, deps);
  return { latency, deps, criticalPathMs: length, criticalPath: path };
}

/** (c) n steps; step i depends on 0..maxDeps distinct random earlier steps; latency in [minMs, maxMs]. */
export function randomDag(
  seed: number,
  n: number,
  maxDeps: number,
  minMs: number,
  maxMs: number,
): Dag {
  const rand = mulberry32(seed);
  const latency: number[] = [];
  const deps: number[][] = [];
  for (let i = 0; i < n; i++) {
    latency.push(minMs + Math.floor(rand() * (maxMs - minMs + 1)));
    const want = Math.min(i, Math.floor(rand() * (maxDeps + 1)));
    const set = new Set<number>();
    while (set.size < want) set.add(Math.floor(rand() * i));
    deps.push([...set].sort((a, b) => a - b));
  }
  const { length, path } = longestPath(latency, deps);
  return { latency, deps, criticalPathMs: length, criticalPath: path };
}

/** Longest latency-weighted path of a DAG whose dependencies all point to earlier indices. */
export function longestPath(
  latency: readonly number[],
  deps: readonly (readonly number[])[],
): { length: number; path: number[] } {
  const finish: number[] = [];
  const via: number[] = [];
  for (let i = 0; i < latency.length; i++) {
    let best = 0;
    let from = -1;
    for (const d of deps[i]!) {
      if (finish[d]! > best) {
        best = finish[d]!;
        from = d;
      }
    }
    finish.push(best + latency[i]!);
    via.push(from);
  }
  let end = 0;
  for (let i = 1; i < finish.length; i++) if (finish[i]! > finish[end]!) end = i;
  const path: number[] = [];
  for (let i = end; i !== -1; i = via[i]!) path.unshift(i);
  return { length: finish[end] ?? 0, path };
}

/** The URL step `i` calls: `/delay/<ms>`, tagged so the upstream log tells runs and steps apart. */
export function dagUrl(upstream: string, dag: Dag, i: number, tag: string): string {
  return `${upstream}/delay/${dag.latency[i]}?bench=${tag}&i=${i}`;
}

/** (b), (c) as an edgestep plan of `http` steps. */
export function dagPlan(upstream: string, dag: Dag, maxParallel: number, tag: string): BenchPlan {
  const steps = dag.latency.map((_, i) => ({
    id: `d${i}`,
    tool: "http",
    params: { url: dagUrl(upstream, dag, i, tag) },
    ...(dag.deps[i]!.length > 0 && { dependsOn: dag.deps[i]!.map((d) => `d${d}`) }),
  }));
  return { name: `dag-${dag.latency.length}`, config: { maxParallel }, steps };
}

/** A wide layered DAG for the in-process scheduler bench: layers of `width`, 2 deps on the layer above. */
export function wideDag(n: number, width: number, seed: number): BenchPlan {
  const rand = mulberry32(seed);
  const steps: BenchStep[] = [];
  for (let i = 0; i < n; i++) {
    const layer = Math.floor(i / width);
    const deps = new Set<string>();
    if (layer > 0) {
      const above = (layer - 1) * width;
      while (deps.size < 2) deps.add(`w${above + Math.floor(rand() * width)}`);
    }
    steps.push({
      id: `w${i}`,
      tool: "pass",
      params: { value: i },
      ...(deps.size > 0 && { dependsOn: [...deps] }),
    });
  }
  return { name: `wide-${n}`, config: { maxParallel: width }, steps };
}
