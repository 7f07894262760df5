/**
 * (d, second half) Pure scheduler cost per completed step, in-process in Node: the same
 * calls RunObject's iteration makes (createScheduler, beginIteration, then decide/settle
 * per completion), with tools that complete instantly, oldest in-flight step first.
 */
import { performance } from "node:perf_hooks";
import type * as Engine from "./pure-engine.ts";
import { dependsOnChain, wideDag, type BenchPlan } from "../plans.ts";

type CompiledPlan = Extract<ReturnType<typeof Engine.compilePlan>, { ok: true }>["plan"];

export interface SchedulerFigure {
  shape: "chain" | "wide";
  steps: number;
  /** Median over batches of (batch time / steps completed in the batch), in microseconds. */
  usPerStep: number;
  /** Of that, createScheduler (the per-iteration load from stored rows), amortised per step. */
  usPerStepLoad: number;
  batches: number[];
}

export function compile(engine: typeof Engine, plan: BenchPlan): CompiledPlan {
  const result = engine.compilePlan(plan, {
    maxSteps: 10_000,
    tool: (name) => (name === "pass" ? engine.passTool : undefined),
    checkUrl: () => null,
  });
  if (!result.ok)
    throw new Error(`bench plan is invalid: ${JSON.stringify(result.issues.slice(0, 3))}`);
  return result.plan;
}

/** Runs a whole plan through the scheduler once; returns [total ms, createScheduler ms]. */
function drive(engine: typeof Engine, plan: CompiledPlan): [number, number] {
  const now = 1_700_000_000_000;
  const rows = plan.steps.map(() => ({
    status: "pending" as const,
    nextAttemptAt: null,
    waitingFor: null,
  }));
  const t0 = performance.now();
  const s = engine.createScheduler(plan, rows);
  const t1 = performance.now();
  engine.beginIteration(s, now, false);
  const inFlight: number[] = [];
  let head = 0;
  let completed = 0;
  for (;;) {
    const { actions, next } = engine.decide(s, now);
    for (const a of actions) if (a.type === "start") inFlight.push(a.step);
    if (next.type === "finish") break;
    if (next.type !== "await" || head >= inFlight.length)
      throw new Error(`scheduler stalled: ${JSON.stringify(next)}`);
    engine.settle(s, inFlight[head++]!, { type: "succeeded" });
    completed++;
  }
  const t2 = performance.now();
  if (completed !== plan.steps.length)
    throw new Error(`completed ${completed} of ${plan.steps.length}`);
  return [t2 - t0, t1 - t0];
}

export function schedulerBench(
  engine: typeof Engine,
  sizes: number[],
  batches = 5,
  stepsPerBatch = 200_000,
): SchedulerFigure[] {
  const figures: SchedulerFigure[] = [];
  const plans: { shape: "chain" | "wide"; steps: number; plan: CompiledPlan }[] = [];
  for (const n of sizes) {
    plans.push({ shape: "chain", steps: n, plan: compile(engine, dependsOnChain(n)) });
    plans.push({ shape: "wide", steps: n, plan: compile(engine, wideDag(n, 100, 7)) });
  }
  // Warm-up: let the JIT see every shape and size before anything is timed.
  for (const p of plans)
    for (let i = 0; i < Math.max(1, 20_000 / p.steps); i++) drive(engine, p.plan);
  for (const p of plans) {
    const reps = Math.max(1, Math.round(stepsPerBatch / p.steps));
    const perStep: number[] = [];
    const loadPerStep: number[] = [];
    for (let b = 0; b < batches; b++) {
      let total = 0;
      let load = 0;
      for (let r = 0; r < reps; r++) {
        const [t, l] = drive(engine, p.plan);
        total += t;
        load += l;
      }
      perStep.push((total * 1000) / (reps * p.steps));
      loadPerStep.push((load * 1000) / (reps * p.steps));
    }
    figures.push({
      shape: p.shape,
      steps: p.steps,
      usPerStep: median(perStep),
      usPerStepLoad: median(loadPerStep),
      batches: perStep,
    });
  }
  return figures;
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
