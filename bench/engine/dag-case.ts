/**
 * Cases (b) and (c): the makespan of a DAG of upstream calls run by edgestep, next to the same
 * calls made by hand in baselines-worker.js, with per-step breakdowns from the run's timestamps
 * and the hop-gap analysis from the upstream's log.
 */
import type { Upstream } from "../../test/upstream/server.ts";
import { type Api, expectCompleted } from "./harness.ts";
import { SEED, log, med, rounds } from "./options.ts";
import { iso, sleep } from "../client.ts";
import { dagPlan, dagUrls, fanDag, randomDag, type Dag } from "../plans.ts";

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const spread = (xs: readonly number[]) => Math.max(...xs) - Math.min(...xs);

interface DagSample {
  /** Server clock: run endedAt - startedAt. */
  makespanMs: number;
  /** Client: POST -> first poll that saw the run final (first poll after the critical path, then every 100 ms). */
  wallMs: number;
  /** Per-step breakdown (ms), summed along the critical path and averaged over all steps. */
  criticalPath: Breakdown;
  perStep: Breakdown;
  firstCallAfterStartMs: number;
  finishAfterLastStepMs: number;
  hop: HopGaps;
  /** Upstream answered its first call -> last call (upstream clock), and edgestep recorded the first -> last end (server clock). */
  answersSpreadMs: number;
  endsSpreadMs: number;
  baselines: Record<Baseline, BaselineSample>;
}

interface BaselineSample {
  elapsedMs: number;
  firstCallAfterStartMs: number;
  hop: HopGaps;
}

/**
 * The same DAG run by baselines-worker.js: a plain Worker; a Durable Object writing edgestep's rows
 * as each call starts and ends; one writing them with results that arrive together batched.
 */
export type Baseline = "plainWorker" | "durableObject" | "durableObjectBatched";
const BASELINES: [Baseline, string][] = [
  ["plainWorker", "via=worker"],
  ["durableObject", "via=do&rows=all"],
  ["durableObjectBatched", "via=do&rows=batched"],
];

interface HopGaps {
  meanMs: number;
  criticalPathMs: number;
}

interface Breakdown {
  /** Step start - end of its last dependency (run start for roots): scheduling delay. */
  dispatchLag: number;
  /** Step start -> the upstream saw the request (upstream clock). */
  outbound: number;
  /** Upstream answered (arrival + latency) -> step end recorded. */
  inbound: number;
}

export type DagSummary = ReturnType<typeof summarize>;

/** (b) 50 parallel 100 ms calls. */
export async function fanOutCase(api: Api, bench: string, upstream: Upstream) {
  log(
    "(b) 50 × 100 ms calls, maxParallel 50 (plus a plain-Worker and a Durable Object baseline)...",
  );
  const fan = fanDag(50, 100);
  return summarize(
    await rounds("fan-out", (r) => dagRound(api, bench, upstream, fan, 50, `fan${r + 1}`)),
    fan,
  );
}

/** (c) a seeded random 200-step DAG. */
export async function randomDagCase(api: Api, bench: string, upstream: Upstream) {
  const dag = randomDag(SEED, 200, 3, 10, 50);
  log(
    `(c) random 200-step DAG, seed ${SEED}: critical path ${dag.criticalPathMs} ms over ${dag.criticalPath.length} steps...`,
  );
  return {
    seed: SEED,
    ...summarize(
      await rounds("random DAG", (r) => dagRound(api, bench, upstream, dag, 100, `dag${r + 1}`)),
      dag,
    ),
  };
}

async function dagRound(
  api: Api,
  bench: string,
  upstream: Upstream,
  dag: Dag,
  maxParallel: number,
  tag: string,
): Promise<DagSample> {
  const { runId, t0 } = await api.submit(dagPlan(upstream.url, dag, maxParallel, tag));
  // Polls are few (the makespan comes from the server's clock): a status read occupies the
  // run's Durable Object, and frequent ones would delay the run being measured.
  await sleep(dag.criticalPathMs);
  const { view, seenAt } = await api.waitRun(runId, 100);
  expectCompleted(view, tag);
  const start = iso(view.startedAt);
  const s = view.steps.map((st) => ({ start: iso(st.startedAt), end: iso(st.endedAt) }));
  const arrival = arrivals(upstream, tag, dag.latency.length);
  const lag = s.map((x, i) => x.start - Math.max(start, ...dag.deps[i]!.map((d) => s[d]!.end)));
  const outbound = s.map((x, i) => arrival.get(i)! - x.start);
  const inbound = s.map((x, i) => x.end - arrival.get(i)! - dag.latency[i]!);
  const onPath = (xs: number[]) => dag.criticalPath.reduce((sum, i) => sum + xs[i]!, 0);
  const baselines = await baselineRounds(bench, upstream, dag, maxParallel, tag);
  return {
    makespanMs: iso(view.endedAt) - start,
    wallMs: seenAt - t0,
    criticalPath: {
      dispatchLag: onPath(lag),
      outbound: onPath(outbound),
      inbound: onPath(inbound),
    },
    perStep: { dispatchLag: mean(lag), outbound: mean(outbound), inbound: mean(inbound) },
    firstCallAfterStartMs: Math.min(...arrival.values()) - start,
    finishAfterLastStepMs: iso(view.endedAt) - Math.max(...s.map((x) => x.end)),
    hop: hopGaps(dag, arrival),
    answersSpreadMs: spread([...arrival].map(([i, at]) => at + dag.latency[i]!)),
    endsSpreadMs: spread(s.map((x) => x.end)),
    baselines,
  };
}

/** The same calls without edgestep (see baselines-worker.js), one baseline after another. */
async function baselineRounds(
  bench: string,
  upstream: Upstream,
  dag: Dag,
  maxParallel: number,
  tag: string,
): Promise<Record<Baseline, BaselineSample>> {
  const baselines = {} as Record<Baseline, BaselineSample>;
  for (const [name, query] of BASELINES) {
    const vtag = `${tag}${name}`;
    const spec = {
      urls: dagUrls(upstream.url, dag, vtag),
      deps: dag.deps,
      maxParallel,
    };
    const res = await fetch(`${bench}/dag?${query}`, {
      method: "POST",
      body: JSON.stringify(spec),
    });
    if (!res.ok) throw new Error(`baseline ${name}: ${res.status} ${await res.text()}`);
    const { elapsedMs, startedAt } = (await res.json()) as { elapsedMs: number; startedAt: number };
    const calls = arrivals(upstream, vtag, dag.latency.length);
    baselines[name] = {
      elapsedMs,
      firstCallAfterStartMs: Math.min(...calls.values()) - startedAt,
      hop: hopGaps(dag, calls),
    };
  }
  return baselines;
}

/** When the upstream received each step's call (upstream clock), by step index. */
function arrivals(upstream: Upstream, tag: string, n: number): Map<number, number> {
  const arrival = new Map<number, number>();
  const pattern = new RegExp(`bench=${tag}&i=(\\d+)`);
  for (const call of upstream.calls) {
    const m = pattern.exec(call.query);
    if (m) arrival.set(Number(m[1]), call.at);
  }
  if (arrival.size !== n)
    throw new Error(`${tag}: the upstream saw ${arrival.size} calls, expected ${n}`);
  return arrival;
}

/**
 * Hop gap, all on the upstream's clock: a step's call arrived this long after the upstream
 * answered the last of its dependencies (arrival + latency). It is the whole cost of one
 * dependency edge: response back, result recorded, dependent dispatched, request out.
 */
function hopGaps(
  dag: Dag,
  arrival: Map<number, number>,
): { meanMs: number; criticalPathMs: number } {
  const gap = dag.latency.map((_, i) =>
    dag.deps[i]!.length === 0
      ? 0
      : arrival.get(i)! - Math.max(...dag.deps[i]!.map((d) => arrival.get(d)! + dag.latency[d]!)),
  );
  const withDeps = gap.filter((_, i) => dag.deps[i]!.length > 0);
  return {
    meanMs: withDeps.length === 0 ? 0 : mean(withDeps),
    criticalPathMs: dag.criticalPath.reduce((sum, i) => sum + gap[i]!, 0),
  };
}

function summarize(samples: DagSample[], dag: Dag) {
  const b = (k: "criticalPath" | "perStep") => ({
    dispatchLag: med(samples, (x) => x[k].dispatchLag),
    outbound: med(samples, (x) => x[k].outbound),
    inbound: med(samples, (x) => x[k].inbound),
  });
  const makespanMs = med(samples, (x) => x.makespanMs);
  const hop = (f: (x: DagSample) => HopGaps) => ({
    meanMs: med(samples, (x) => f(x).meanMs),
    criticalPathMs: med(samples, (x) => f(x).criticalPathMs),
  });
  return {
    steps: dag.latency.length,
    edges: dag.deps.reduce((n, d) => n + d.length, 0),
    criticalPathMs: dag.criticalPathMs,
    criticalPathSteps: dag.criticalPath.length,
    makespanMs,
    ratio: makespanMs / dag.criticalPathMs,
    clientWallMs: med(samples, (x) => x.wallMs),
    firstCallAfterStartMs: med(samples, (x) => x.firstCallAfterStartMs),
    finishAfterLastStepMs: med(samples, (x) => x.finishAfterLastStepMs),
    answersSpreadMs: med(samples, (x) => x.answersSpreadMs),
    endsSpreadMs: med(samples, (x) => x.endsSpreadMs),
    breakdownAlongCriticalPathMs: b("criticalPath"),
    breakdownMeanPerStepMs: b("perStep"),
    hopGapMs: {
      edgestep: hop((x) => x.hop),
      ...(Object.fromEntries(
        BASELINES.map(([name]) => [name, hop((x) => x.baselines[name].hop)]),
      ) as Record<Baseline, HopGaps>),
    },
    baselines: Object.fromEntries(
      BASELINES.map(([name]) => {
        const ms = med(samples, (x) => x.baselines[name].elapsedMs);
        return [
          name,
          {
            makespanMs: ms,
            ratio: ms / dag.criticalPathMs,
            firstCallAfterStartMs: med(samples, (x) => x.baselines[name].firstCallAfterStartMs),
          },
        ];
      }),
    ) as Record<Baseline, { makespanMs: number; ratio: number; firstCallAfterStartMs: number }>,
    samples,
  };
}
