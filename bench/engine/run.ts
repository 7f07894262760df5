/**
 * `npm run bench:engine`: engine figures, NOT what users see (`npm run bench` measures that,
 * through `wrangler dev` with a polling client). Boots edgestep and a Worker of hand-written
 * baselines in one local workerd through Miniflare (direct sockets, sparse polling), next to an
 * in-process loopback upstream, and measures (bench/README.md says exactly how):
 *   (b) makespan of 50 parallel 100 ms `http` steps, over 100 ms (server clock), with baselines
 *   (c) makespan of a seeded random 200-step DAG, over its critical path, with baselines
 *   (d) submitting a 10,000-step plan, and pure scheduler cost per step at 100/1k/10k steps
 * Prints a markdown table and writes bench/engine/results.json. Not part of `npm test`.
 *
 * Environment: BENCH_REPEATS (default 5), BENCH_SEED (default 42), BENCH_REF (measure that git
 * revision instead of the working tree), BENCH_DO_STORAGE=tmpfs (Durable Object storage on
 * /dev/shm: a diagnostic, not the default).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { format, resolveConfig } from "prettier";
import { startUpstream, type Upstream } from "../../test/upstream/server.ts";
import { Api, ENGINE_DIR, boot, buildWorker, expectCompleted, loadEngine } from "./harness.ts";
import { iso, sleep } from "../client.ts";
import { gitCommit, sourceTree } from "../source-tree.ts";
import { dagPlan, dagUrl, dependsOnChain, fanDag, randomDag, type Dag } from "../plans.ts";
import { compile, median, schedulerBench } from "./scheduler-bench.ts";

process.env.WRANGLER_SEND_METRICS = "false";

const REPEATS = Math.max(1, Number(process.env.BENCH_REPEATS ?? 5));
const SEED = Number(process.env.BENCH_SEED ?? 42);
const STORAGE = process.env.BENCH_DO_STORAGE === "tmpfs" ? "tmpfs" : "disk";
const REF = process.env.BENCH_REF || undefined;
const BIG = 10_000;

const log = (msg: string) => process.stderr.write(`${msg}\n`);
const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const spread = (xs: readonly number[]) => Math.max(...xs) - Math.min(...xs);
/** Median of one field over samples. */
const med = <T>(xs: readonly T[], f: (x: T) => number) => median(xs.map(f));

/** One warm-up round (discarded), then REPEATS measured rounds. */
async function rounds<T>(label: string, fn: (round: number) => Promise<T>): Promise<T[]> {
  await fn(-1);
  const out: T[] = [];
  for (let i = 0; i < REPEATS; i++) {
    out.push(await fn(i));
    log(`  ${label}: round ${i + 1}/${REPEATS}`);
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// (b), (c): makespan of a DAG of upstream calls, with hand-written baselines
// ---------------------------------------------------------------------------------------

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
 * The same DAG run by bench-worker.js: a plain Worker; a Durable Object writing edgestep's rows
 * as each call starts and ends; one writing them with results that arrive together batched.
 */
type Baseline = "plainWorker" | "durableObject" | "durableObjectBatched";
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

  // The same calls without edgestep (see bench-worker.js).
  const baselines = {} as Record<Baseline, BaselineSample>;
  for (const [name, query] of BASELINES) {
    const vtag = `${tag}${name}`;
    const spec = {
      urls: dag.latency.map((_, i) => dagUrl(upstream.url, dag, i, vtag)),
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

// ---------------------------------------------------------------------------------------
// (d) a 10,000-step plan
// ---------------------------------------------------------------------------------------

async function bigPlanRun(api: Api, body: string) {
  const { runId, wall0, acceptedMs } = await api.submit(body);
  const last = await api.waitStep(runId, `s${BIG - 1}`, 50);
  if (last.status !== "succeeded") throw new Error(`10k run: the last step ended ${last.status}`);
  const first = (await api.json<{ startedAt: string }>(`/v1/runs/${runId}/steps/s0`)).body;
  const { view } = await api.waitRun(runId, 50);
  expectCompleted(view, "10k chain");
  return {
    acceptedMs,
    /** Server clock of step 0's start - client clock just before POST (same machine). */
    firstStepStartedMs: iso(first.startedAt) - wall0,
    alarmLagMs: iso(view.startedAt) - iso(view.createdAt),
    execMsPerStep: (iso(view.endedAt) - iso(view.startedAt)) / BIG,
  };
}

async function validateOnly(api: Api, body: string): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(`${api.base}/v1/plans/validate`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`POST /v1/plans/validate answered ${res.status}`);
  return performance.now() - t0;
}

// ---------------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------------

interface Row {
  metric: string;
  value: string;
  goal: string;
  met: boolean | null;
}

const fmt = (x: number, d = 1) => `${x.toFixed(d)} ms`;

function markdown(rows: Row[]): string {
  const lines = ["| metric | value | goal | met? |", "| --- | --- | --- | --- |"];
  for (const r of rows)
    lines.push(
      `| ${r.metric} | ${r.value} | ${r.goal} | ${r.met === null ? "—" : r.met ? "✅ yes" : "❌ no"} |`,
    );
  return lines.join("\n");
}

async function main(): Promise<void> {
  const began = performance.now();
  const loadBefore = loadavg()[0]!;
  const tmp = mkdtempSync(join(tmpdir(), "edgestep-bench-"));
  const upstream = await startUpstream(0);
  let booted: Awaited<ReturnType<typeof boot>> | undefined;
  try {
    log(
      `building ${REF ? `revision ${REF}` : "the working tree"}: the Worker (wrangler deploy --dry-run) and the engine bundle (esbuild)...`,
    );
    const tree = sourceTree(tmp, REF);
    const out = join(tmp, "out");
    buildWorker(tree, out);
    const engine = await loadEngine(tree, out);
    log(`booting workerd (Miniflare; Durable Object storage on ${STORAGE})...`);
    booted = await boot(tree, out, STORAGE);
    const api = new Api(booted.edgestep);
    const bench = booted.bench;

    log(
      "(b) 50 × 100 ms calls, maxParallel 50 (plus a plain-Worker and a Durable Object baseline)...",
    );
    const fan = fanDag(50, 100);
    const b = summarize(
      await rounds("fan-out", (r) => dagRound(api, bench, upstream, fan, 50, `fan${r + 1}`)),
      fan,
    );

    const dag = randomDag(SEED, 200, 3, 10, 50);
    log(
      `(c) random 200-step DAG, seed ${SEED}: critical path ${dag.criticalPathMs} ms over ${dag.criticalPath.length} steps...`,
    );
    const c = {
      seed: SEED,
      ...summarize(
        await rounds("random DAG", (r) => dagRound(api, bench, upstream, dag, 100, `dag${r + 1}`)),
        dag,
      ),
    };

    const bigPlan = dependsOnChain(BIG);
    const bigBody = JSON.stringify(bigPlan);
    log(`(d) ${BIG}-step plan (${(bigBody.length / 1024).toFixed(0)} KiB)...`);
    const big = await rounds("10k plan", async () => ({
      validateMs: await validateOnly(api, bigBody),
      run: await bigPlanRun(api, bigBody),
    }));
    const compileMs: number[] = [];
    for (let i = 0; i <= REPEATS; i++) {
      const t0 = performance.now();
      compile(engine, bigPlan);
      if (i > 0) compileMs.push(performance.now() - t0);
    }
    log("(d) pure scheduler in Node at 100 / 1,000 / 10,000 steps...");
    const sched = schedulerBench(engine, [100, 1_000, 10_000]);
    const flatness = (shape: "chain" | "wide") => {
      const xs = sched.filter((f) => f.shape === shape).map((f) => f.usPerStep);
      return Math.max(...xs) / Math.min(...xs);
    };
    // Per-step time ~ n^k between 100 and 10,000 steps: k = 0 is flat, k = 1 an O(n) cost per step.
    const exponent = (shape: "chain" | "wide") => {
      const xs = sched.filter((f) => f.shape === shape);
      return (
        Math.log(xs.at(-1)!.usPerStep / xs[0]!.usPerStep) /
        Math.log(xs.at(-1)!.steps / xs[0]!.steps)
      );
    };
    const d = {
      steps: BIG,
      planBytes: bigBody.length,
      acceptedMs: med(big, (x) => x.run.acceptedMs),
      firstStepStartedMs: med(big, (x) => x.run.firstStepStartedMs),
      serverAlarmLagMs: med(big, (x) => x.run.alarmLagMs),
      execMsPerStepAt10k: med(big, (x) => x.run.execMsPerStep),
      validateEndpointMs: med(big, (x) => x.validateMs),
      compilePlanInNodeMs: median(compileMs),
      samples: big,
      scheduler: sched,
      schedulerFlatness: { chain: flatness("chain"), wide: flatness("wide") },
      schedulerScalingExponent: { chain: exponent("chain"), wide: exponent("wide") },
    };

    const us = (shape: "chain" | "wide") =>
      `${sched
        .filter((f) => f.shape === shape)
        .map((f) => f.usPerStep.toFixed(2))
        .join(" / ")} µs`;
    const rows: Row[] = [
      {
        metric: "(b) 50 × 100 ms calls, maxParallel 50: makespan ÷ 100 ms",
        value: `${b.ratio.toFixed(3)} (${fmt(b.makespanMs, 0)})`,
        goal: "— (goals: `npm run bench`)",
        met: null,
      },
      {
        metric: `(c) random 200-step DAG (seed ${SEED}): makespan ÷ critical path`,
        value: `${c.ratio.toFixed(3)} (${fmt(c.makespanMs, 0)} ÷ ${fmt(c.criticalPathMs, 0)})`,
        goal: "— (goals: `npm run bench`)",
        met: null,
      },
      {
        metric: `(d) ${BIG.toLocaleString("en")}-step plan: POST /v1/runs → 202`,
        value: fmt(d.acceptedMs, 0),
        goal: "—",
        met: null,
      },
      {
        metric: `(d) ${BIG.toLocaleString("en")}-step plan: POST → first step started`,
        value: fmt(d.firstStepStartedMs, 0),
        goal: "—",
        met: null,
      },
      {
        metric: "(d) scheduler per completed step, chain, 100 / 1k / 10k steps",
        value: us("chain"),
        goal: "flat (max ≤ 2 × min)",
        met: d.schedulerFlatness.chain <= 2,
      },
      {
        metric: "(d) scheduler per completed step, wide DAG, 100 / 1k / 10k steps",
        value: us("wide"),
        goal: "flat (max ≤ 2 × min)",
        met: d.schedulerFlatness.wide <= 2,
      },
    ];
    const table = markdown(rows);
    const loadAfter = loadavg()[0]!;
    const header =
      `edgestep engine bench (Miniflare, direct sockets: not what users see): median of ${REPEATS} rounds after a warm-up; ${cpus().length} CPUs, load average ${loadBefore.toFixed(1)} → ${loadAfter.toFixed(1)}; ` +
      `Node ${process.version}; local workerd (Miniflare), Durable Object storage on ${STORAGE}; ${REF ? `revision ${REF}` : "working tree"}`;
    const bd = (x: { dispatchLag: number; outbound: number; inbound: number }, dp = 0) =>
      `dispatch lag ${fmt(x.dispatchLag, dp)}, outbound ${fmt(x.outbound, dp)}, inbound ${fmt(x.inbound, dp)}`;
    const same = (x: Record<Baseline, { ratio: number }>) =>
      `a plain Worker: ${x.plainWorker.ratio.toFixed(3)}; a Durable Object writing edgestep's rows (step, attempt, event) at each start and end: ` +
      `${x.durableObject.ratio.toFixed(3)}; the same with ends that arrive together written in one transaction: ${x.durableObjectBatched.ratio.toFixed(3)}`;
    const notes = [
      `(b) the same 50 calls from ${same(b.baselines)}.`,
      `    First call ${fmt(b.firstCallAfterStartMs, 0)} after run start (Durable Object baseline: ${fmt(b.baselines.durableObject.firstCallAfterStartMs, 0)}); ` +
        `the upstream answered all 50 within ${fmt(b.answersSpreadMs, 0)}, edgestep recorded their ends over ${fmt(b.endsSpreadMs, 0)} ` +
        `(${fmt(b.endsSpreadMs / 49, 2)} per completion); run ended ${fmt(b.finishAfterLastStepMs, 0)} after its last step; mean per step: ${bd(b.breakdownMeanPerStepMs, 1)}.`,
      `(c) the same DAG from ${same(c.baselines)}.`,
      `    Along the ${c.criticalPathSteps}-step critical path: ${bd(c.breakdownAlongCriticalPathMs)}; mean per step: ${bd(c.breakdownMeanPerStepMs, 1)}.`,
      `    Mean hop gap (upstream clock: a dependency answered -> its dependent's call arrived): edgestep ${fmt(c.hopGapMs.edgestep.meanMs, 2)}, ` +
        `plain Worker ${fmt(c.hopGapMs.plainWorker.meanMs, 2)}, Durable Object ${fmt(c.hopGapMs.durableObject.meanMs, 2)}, ` +
        `batched ${fmt(c.hopGapMs.durableObjectBatched.meanMs, 2)}.`,
      `(d) POST /v1/plans/validate alone ${fmt(d.validateEndpointMs, 0)}; compilePlan in Node ${fmt(d.compilePlanInNodeMs, 0)}; ` +
        `alarm lag ${fmt(d.serverAlarmLagMs, 0)}; execution ${fmt(d.execMsPerStepAt10k, 3)} per step at 10k steps.`,
      `    Scheduler per-step time grows as n^${d.schedulerScalingExponent.chain.toFixed(2)} (chain) and n^${d.schedulerScalingExponent.wide.toFixed(2)} (wide) ` +
        `from 100 to 10,000 steps (0 = flat, 1 = a cost per step proportional to the plan).`,
    ];
    const results = {
      generatedAt: new Date().toISOString(),
      environment: {
        node: process.version,
        cpus: cpus().length,
        cpuModel: cpus()[0]?.model ?? null,
        loadAverage: { before: loadBefore, after: loadAfter },
        repeats: REPEATS,
        doStorage: STORAGE,
        source: REF
          ? { ref: REF, commit: gitCommit(REF) }
          : { ref: "working tree", commit: gitCommit("HEAD") },
      },
      b,
      c,
      d,
      table: rows,
      markdown: table,
      notes,
      benchSeconds: Math.round((performance.now() - began) / 100) / 10,
    };
    const file = join(ENGINE_DIR, "results.json");
    // Formatted as the repository's Prettier config would, so `prettier --check` stays quiet.
    const style = (await resolveConfig(file)) ?? {};
    writeFileSync(file, await format(JSON.stringify(results), { ...style, parser: "json" }));
    console.log(
      `\n${header}\n\n${table}\n\n${notes.join("\n")}\n\nwrote bench/engine/results.json (${results.benchSeconds} s)`,
    );
  } finally {
    await booted?.mf.dispose();
    booted?.cleanup();
    await upstream.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
