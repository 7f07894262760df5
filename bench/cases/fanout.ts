/**
 * (2) Fan-out: 50 independent 100 ms calls (`maxParallel: 50`), by edgestep and by a Workflow
 * (50 `step.do`s started at once), each polled every BENCH_POLL_MS. Makespan on the upstream's
 * clock (dag-runs.ts), divided by one call's 100 ms.
 */
import { ms, NONE, type CaseResult, type Ctx } from "../context.ts";
import { edgestepDag, workflowsDag, type DagTiming, type EdgestepDagTiming } from "../dag-runs.ts";
import { fanDag } from "../plans.ts";
import { medians, rotate } from "../stats.ts";

const CALLS = 50;
const CALL_MS = 100;
const GOAL = 1.15;

export async function fanoutCase(ctx: Ctx): Promise<CaseResult> {
  const dag = fanDag(CALLS, CALL_MS);
  const samples = await ctx.rounds("fan-out", async (round) => {
    const s: { es?: EdgestepDagTiming; wf?: DagTiming } = {};
    const tag = `fan${round}`;
    const jobs = [
      async () => void (s.es = await edgestepDag(ctx, dag, CALLS, `${tag}es`, ctx.opts.pollMs)),
      ...(ctx.wf
        ? [async () => void (s.wf = await workflowsDag(ctx, dag, `${tag}wf`, ctx.opts.pollMs))]
        : []),
    ];
    for (const job of rotate(jobs, round)) await job();
    return s;
  });
  const es = medians(samples.map((s) => s.es!));
  const wf = ctx.wf ? medians(samples.map((s) => s.wf!)) : null;
  const value = (t: DagTiming) => `${(t.makespanMs / CALL_MS).toFixed(2)} (${ms(t.makespanMs)})`;
  const wall = (t: DagTiming) => `${(t.clientWallMs / CALL_MS).toFixed(2)} (${ms(t.clientWallMs)})`;
  return {
    rows: [
      {
        metric: `(2) fan-out ${CALLS} × ${CALL_MS} ms calls: makespan ÷ ${CALL_MS} ms (upstream clock; polls every ${ctx.opts.pollMs} ms)`,
        edgestep: value(es),
        workflows: wf ? value(wf) : NONE,
        ratio: wf ? (es.makespanMs / wf.makespanMs).toFixed(3) : NONE,
        goal: `edgestep ≤ ${GOAL}`,
        met: es.makespanMs / CALL_MS <= GOAL,
      },
      {
        metric: `(2) the same: client wall time (request → seen completed) ÷ ${CALL_MS} ms`,
        edgestep: wall(es),
        workflows: wf ? wall(wf) : NONE,
        ratio: wf ? (es.clientWallMs / wf.clientWallMs).toFixed(3) : NONE,
        goal: NONE,
        met: null,
      },
    ],
    notes: [
      `(2) edgestep: POST → 202 ${ms(es.acceptedMs, 1)}, alarm delay ${ms(es.alarmDelayMs)}, request → first call ${ms(es.headMs)}; ` +
        `the ${CALLS} calls arrived over ${ms(es.arrivalSpreadMs)}; last answer → run's endedAt ${ms(es.endedAfterLastAnswerMs)} → client saw it ${ms(es.seenAfterLastAnswerMs)} after the last answer; ` +
        `client wall ${ms(es.clientWallMs)}, ${es.polls} polls of ${ms(es.pollReadMedianMs, 1)}.`,
      ...(wf
        ? [
            `    Workflows: request → first call ${ms(wf.headMs)}; the calls arrived over ${ms(wf.arrivalSpreadMs)}; ` +
              `client saw it ${ms(wf.seenAfterLastAnswerMs)} after the last answer; client wall ${ms(wf.clientWallMs)}.`,
          ]
        : []),
    ],
    data: { calls: CALLS, callMs: CALL_MS, edgestep: es, workflows: wf, samples },
  };
}
