/**
 * (3) The seeded random 200-step DAG (10–50 ms calls, 0–3 dependencies on earlier steps,
 * `maxParallel: 100`), by edgestep and by a Workflow, polled every BENCH_POLL_MS: makespan on
 * the upstream's clock (dag-runs.ts) ÷ the DAG's critical path.
 * (4) The same DAG by edgestep polled every 10 ms and every 500 ms: makespan ÷ makespan.
 */
import { ms, NONE, type CaseResult, type Ctx } from "../context.ts";
import { dagRounds, dagRows, edgestepDag, type EdgestepDagTiming } from "../dag-runs.ts";
import { randomDag, type Dag } from "../plans.ts";
import { inTurns } from "../settle.ts";
import { medians } from "../stats.ts";

const STEPS = 200;
const MAX_PARALLEL = 100;
const GOAL = 1.1;
const POLLING_GOAL = 1.05;
const FAST_POLL_MS = 10;
const SLOW_POLL_MS = 500;

export function benchDag(seed: number): Dag {
  return randomDag(seed, STEPS, 3, 10, 50);
}

function describe(dag: Dag, seed: number): string {
  return `random ${STEPS}-step DAG (seed ${seed}; critical path ${dag.criticalPathMs} ms over ${dag.criticalPath.length} steps)`;
}

export async function dagCase(ctx: Ctx): Promise<CaseResult> {
  const dag = benchDag(ctx.opts.seed);
  const { es, wf, samples } = await dagRounds(ctx, "random DAG", dag, MAX_PARALLEL, "dag");
  const hops = dag.criticalPath.length - 1;
  return {
    rows: dagRows(
      {
        id: "(3)",
        what: describe(dag, ctx.opts.seed),
        unitMs: dag.criticalPathMs,
        unitName: "critical path",
        pollMs: ctx.opts.pollMs,
        goal: GOAL,
      },
      es,
      wf,
    ),
    notes: [
      `(3) edgestep: hop (a dependency answered → its dependent's call arrived, upstream clock) ${ms(es.hopMeanMs, 1)} on average, ` +
        `${ms(es.hopCriticalPathMs)} over the critical path's ${hops} hops; request → first call ${ms(es.headMs)} (alarm delay ${ms(es.alarmDelayMs)}); ` +
        `last answer → endedAt ${ms(es.endedAfterLastAnswerMs)} → client saw it ${ms(es.seenAfterLastAnswerMs)} after the last answer; client wall ${ms(es.clientWallMs)}, ` +
        `${es.polls} polls of ${ms(es.pollReadMedianMs, 1)}. ` +
        `By round, makespan ÷ critical path: ${samples.map((s) => (s.es!.makespanMs / dag.criticalPathMs).toFixed(3)).join(", ")}.`,
      ...(wf
        ? [
            `    Workflows: hop ${ms(wf.hopMeanMs, 1)} on average, ${ms(wf.hopCriticalPathMs)} over the critical path; request → first call ${ms(wf.headMs)}; client wall ${ms(wf.clientWallMs)}.`,
          ]
        : []),
    ],
    data: {
      seed: ctx.opts.seed,
      steps: STEPS,
      criticalPathMs: dag.criticalPathMs,
      criticalPathSteps: dag.criticalPath.length,
      edgestep: es,
      workflows: wf,
      samples,
    },
  };
}

export async function pollingCase(ctx: Ctx): Promise<CaseResult> {
  const dag = benchDag(ctx.opts.seed);
  const samples = await ctx.rounds("DAG polled every 10 / 500 ms", async (round) => {
    const s: { fast?: EdgestepDagTiming; slow?: EdgestepDagTiming } = {};
    const jobs = [
      async () =>
        void (s.fast = await edgestepDag(ctx, dag, MAX_PARALLEL, `poll${round}f`, FAST_POLL_MS)),
      async () =>
        void (s.slow = await edgestepDag(ctx, dag, MAX_PARALLEL, `poll${round}s`, SLOW_POLL_MS)),
    ];
    await inTurns(jobs, round);
    return s;
  });
  const fast = medians(samples.map((s) => s.fast!));
  const slow = medians(samples.map((s) => s.slow!));
  const ratio = fast.makespanMs / slow.makespanMs;
  return {
    rows: [
      {
        metric: `(4) the same DAG polled every ${FAST_POLL_MS} ms ÷ every ${SLOW_POLL_MS} ms: makespan ÷ makespan (upstream clock)`,
        edgestep: `${ratio.toFixed(3)} (${ms(fast.makespanMs)} ÷ ${ms(slow.makespanMs)})`,
        workflows: NONE,
        ratio: NONE,
        goal: `≤ ${POLLING_GOAL}`,
        met: ratio <= POLLING_GOAL,
      },
    ],
    notes: [
      `(4) polled every ${FAST_POLL_MS} ms: ${fast.polls} polls of ${ms(fast.pollReadMedianMs, 1)}, hop ${ms(fast.hopMeanMs, 1)} on average; ` +
        `every ${SLOW_POLL_MS} ms: ${slow.polls} polls, hop ${ms(slow.hopMeanMs, 1)}. Makespan ÷ critical path: ${(fast.makespanMs / dag.criticalPathMs).toFixed(3)} and ${(slow.makespanMs / dag.criticalPathMs).toFixed(3)}.`,
    ],
    data: { fastPollMs: FAST_POLL_MS, slowPollMs: SLOW_POLL_MS, fast, slow, ratio, samples },
  };
}
