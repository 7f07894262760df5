/**
 * Case (d): submitting a 10,000-step plan to edgestep (202, first step started, validation
 * alone, compilePlan in Node), and the pure scheduler's cost per step at 100/1k/10k steps.
 */
import { performance } from "node:perf_hooks";
import { type Api, expectCompleted } from "./harness.ts";
import type * as Engine from "./pure-engine.ts";
import { BIG, REPEATS, log, med, rounds } from "./options.ts";
import { compile, median, schedulerBench, type SchedulerFigure } from "./scheduler-bench.ts";
import { iso } from "../client.ts";
import { dependsOnChain, type BenchPlan } from "../plans.ts";

type Shape = SchedulerFigure["shape"];

export type BigPlanFigures = Awaited<ReturnType<typeof bigPlanCase>>;

export async function bigPlanCase(api: Api, engine: typeof Engine) {
  const bigPlan = dependsOnChain(BIG);
  const bigBody = JSON.stringify(bigPlan);
  log(`(d) ${BIG}-step plan (${(bigBody.length / 1024).toFixed(0)} KiB)...`);
  const big = await rounds("10k plan", async () => ({
    validateMs: await validateOnly(api, bigBody),
    run: await bigPlanRun(api, bigBody),
  }));
  const compileMs = compileTimes(engine, bigPlan);
  log("(d) pure scheduler in Node at 100 / 1,000 / 10,000 steps...");
  const sched = schedulerBench(engine, [100, 1_000, 10_000]);
  return {
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
    schedulerFlatness: { chain: flatness(sched, "chain"), wide: flatness(sched, "wide") },
    schedulerScalingExponent: { chain: exponent(sched, "chain"), wide: exponent(sched, "wide") },
  };
}

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

/** compilePlan in Node: one warm-up, then REPEATS timed compilations (ms). */
function compileTimes(engine: typeof Engine, plan: BenchPlan): number[] {
  const compileMs: number[] = [];
  for (let i = 0; i <= REPEATS; i++) {
    const t0 = performance.now();
    compile(engine, plan);
    if (i > 0) compileMs.push(performance.now() - t0);
  }
  return compileMs;
}

/** Max ÷ min of the per-step time over the plan sizes. */
function flatness(sched: SchedulerFigure[], shape: Shape): number {
  const xs = sched.filter((f) => f.shape === shape).map((f) => f.usPerStep);
  return Math.max(...xs) / Math.min(...xs);
}

/** Per-step time ~ n^k between 100 and 10,000 steps: k = 0 is flat, k = 1 an O(n) cost per step. */
function exponent(sched: SchedulerFigure[], shape: Shape): number {
  const xs = sched.filter((f) => f.shape === shape);
  return (
    Math.log(xs.at(-1)!.usPerStep / xs[0]!.usPerStep) / Math.log(xs.at(-1)!.steps / xs[0]!.steps)
  );
}
