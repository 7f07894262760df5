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

/** n `pass` steps, each reading the previous one's data (an implicit dependency). */
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

/** n `pass` steps chained with explicit `dependsOn` (no templates). */
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

/** A DAG of upstream calls: the fan-out has no edges, the random DAG some, a chain one per step. */
export interface Dag {
  /** Latency of each step (ms). */
  latency: number[];
  /** Dependencies of each step, by index (all earlier). */
  deps: number[][];
  /** Sum of latencies along the longest path, and that path. */
  criticalPathMs: number;
  criticalPath: number[];
}

function dagOf(latency: number[], deps: number[][]): Dag {
  const { length, path } = longestPath(latency, deps);
  return { latency, deps, criticalPathMs: length, criticalPath: path };
}

/** n independent calls of `ms` each. */
export function fanDag(n: number, ms: number): Dag {
  return dagOf(
    Array.from({ length: n }, () => ms),
    Array.from({ length: n }, () => []),
  );
}

/** n calls of `ms` each, each depending on the one before. */
export function chainDag(n: number, ms: number): Dag {
  return dagOf(
    Array.from({ length: n }, () => ms),
    Array.from({ length: n }, (_, i) => (i === 0 ? [] : [i - 1])),
  );
}

/** n steps; step i depends on 0..maxDeps distinct random earlier steps; latency in [minMs, maxMs]. */
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
  return dagOf(latency, deps);
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

/**
 * The URL step `i` calls: the upstream's `/work?ms=<latency>`, which logs when each call
 * arrived and when it was answered, tagged so the log tells runs and steps apart.
 */
export function dagUrl(upstream: string, dag: Dag, i: number, tag: string, first = 0): string {
  return `${upstream}/work?ms=${dag.latency[i]}&bench=${tag}&i=${first + i}`;
}

/** Every step's URL (`dagUrl`), in step order: what a Workflow of the DAG calls. */
export function dagUrls(upstream: string, dag: Dag, tag: string, first = 0): string[] {
  return dag.latency.map((_, i) => dagUrl(upstream, dag, i, tag, first));
}

/** A DAG as an edgestep plan of `http` steps; its calls are tagged `i=first`, `first + 1`, ... */
export function dagPlan(
  upstream: string,
  dag: Dag,
  maxParallel: number,
  tag: string,
  first = 0,
): BenchPlan {
  const steps = dag.latency.map((_, i) => ({
    id: `d${i}`,
    tool: "http",
    params: { url: dagUrl(upstream, dag, i, tag, first) },
    ...(dag.deps[i]!.length > 0 && { dependsOn: dag.deps[i]!.map((d) => `d${d}`) }),
  }));
  return { name: `dag-${dag.latency.length}`, config: { maxParallel }, steps };
}

/**
 * n steps chained with `dependsOn`: an `http` call to the upstream (`/work?ms=<firstMs>`,
 * tagged with `i=0`), n - 2 `pass` steps, and another call (`/work?ms=0`, `i=1`). The
 * upstream's log then times the chain on a clock of its own.
 */
export function probedChain(n: number, upstream: string, tag: string, firstMs = 0): BenchPlan {
  const plan = dependsOnChain(n);
  const probe = (i: number, ms: number) => ({
    url: `${upstream}/work?ms=${ms}&bench=${tag}&i=${i}`,
  });
  plan.steps[0] = { ...plan.steps[0]!, tool: "http", params: probe(0, firstMs) };
  plan.steps[n - 1] = { ...plan.steps[n - 1]!, tool: "http", params: probe(1, 0) };
  return { ...plan, name: `probed-chain-${n}` };
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
