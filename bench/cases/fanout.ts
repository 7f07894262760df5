/**
 * (2) Fan-out: 50 independent 100 ms calls (`maxParallel: 50`), by edgestep and by a Workflow
 * (50 `step.do`s started at once), each polled every BENCH_POLL_MS. Makespan on the upstream's
 * clock (dag-runs.ts), divided by one call's 100 ms.
 */
import { ms, type CaseResult, type Ctx } from "../context.ts";
import { dagRounds, dagRows } from "../dag-runs.ts";
import { fanDag } from "../plans.ts";

const CALLS = 50;
const CALL_MS = 100;
const GOAL = 1.15;

export async function fanoutCase(ctx: Ctx): Promise<CaseResult> {
  const dag = fanDag(CALLS, CALL_MS);
  const { es, wf, samples } = await dagRounds(ctx, "fan-out", dag, CALLS, "fan");
  return {
    rows: dagRows(
      {
        id: "(2)",
        what: `fan-out ${CALLS} × ${CALL_MS} ms calls`,
        unitMs: CALL_MS,
        unitName: `${CALL_MS} ms`,
        pollMs: ctx.opts.pollMs,
        goal: GOAL,
      },
      es,
      wf,
    ),
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
