/**
 * (1) A 200-step chain of `pass` steps (step i reads step i-1's data), next to the same chain
 * as a Workflow (200 `step.do`s, each returning the previous value). Client wall time: request
 * sent -> the first poll that sees the run `completed` (the Workflow `complete`). Each round
 * also runs a 1-step chain on both, which splits the wall time into a fixed part and a per-step
 * part.
 */
import { iso } from "../client.ts";
import { ms, NONE, type CaseResult, type Ctx } from "../context.ts";
import { passChain } from "../plans.ts";
import { inTurns } from "../settle.ts";
import { median, medians } from "../stats.ts";

const STEPS = 200;
const GOAL = 0.1;

async function edgestep(ctx: Ctx, n: number) {
  const sent = await ctx.es.submit(passChain(n));
  const seen = await ctx.es.follow(sent.id, ctx.opts.pollMs, ctx.opts.pollView);
  const { createdAt, startedAt, endedAt } = seen.doc;
  return {
    wallMs: seen.seenAt - sent.t0,
    acceptedMs: sent.acceptedMs,
    /** Server clock. */
    alarmDelayMs: iso(startedAt) - iso(createdAt),
    executionMs: iso(endedAt) - iso(startedAt),
    /** Server -> client (the machine's clock): the run's endedAt -> the client saw it. */
    seenAfterEndMs: seen.seenWall - iso(endedAt),
    firstPollMs: seen.readMs[0]!,
    polls: seen.polls,
    iterations: seen.doc.iterations,
  };
}

async function workflow(ctx: Ctx, n: number) {
  const sent = await ctx.wf!.create({ kind: "pass", n });
  const seen = await ctx.wf!.follow(sent.id, ctx.opts.pollMs);
  return {
    wallMs: seen.seenAt - sent.t0,
    acceptedMs: sent.acceptedMs,
    firstPollMs: seen.readMs[0]!,
    polls: seen.polls,
    statusReadMs: median(seen.readMs),
  };
}

export async function chainCase(ctx: Ctx): Promise<CaseResult> {
  const wf = ctx.wf !== null;
  type Sample = {
    es: Awaited<ReturnType<typeof edgestep>>;
    es1: Awaited<ReturnType<typeof edgestep>>;
    wf?: Awaited<ReturnType<typeof workflow>>;
    wf1?: Awaited<ReturnType<typeof workflow>>;
  };
  const samples = await ctx.rounds("chain", async (round) => {
    const s = {} as Sample;
    const jobs: (() => Promise<void>)[] = [
      async () => void (s.es = await edgestep(ctx, STEPS)),
      async () => void (s.es1 = await edgestep(ctx, 1)),
      ...(wf
        ? [
            async () => void (s.wf = await workflow(ctx, STEPS)),
            async () => void (s.wf1 = await workflow(ctx, 1)),
          ]
        : []),
    ];
    await inTurns(jobs, round);
    return s;
  });
  const es = medians(samples.map((s) => s.es));
  const es1 = medians(samples.map((s) => s.es1));
  const w = wf ? medians(samples.map((s) => s.wf!)) : null;
  const w1 = wf ? medians(samples.map((s) => s.wf1!)) : null;
  const ratio = w ? es.wallMs / w.wallMs : NaN;
  const perStep = (all: number, one: number) => ms((all - one) / (STEPS - 1), 3);
  return {
    rows: [
      {
        metric: `(1) ${STEPS}-step \`pass\` chain: request → client sees it completed (polls every ${ctx.opts.pollMs} ms)`,
        edgestep: ms(es.wallMs),
        workflows: w ? ms(w.wallMs) : NONE,
        ratio: w ? ratio.toFixed(3) : NONE,
        goal: `ratio ≤ ${GOAL}`,
        met: w ? ratio <= GOAL : null,
      },
    ],
    notes: [
      `(1) edgestep: POST → 202 ${ms(es.acceptedMs, 1)}; alarm delay (createdAt → startedAt) ${ms(es.alarmDelayMs)}; ` +
        `execution (startedAt → endedAt) ${ms(es.executionMs)} in ${es.iterations} iteration(s); endedAt → client saw it ${ms(es.seenAfterEndMs)}; ` +
        `${es.polls} polls, the first took ${ms(es.firstPollMs, 1)}. A 1-step chain takes ${ms(es1.wallMs)}: ${perStep(es.wallMs, es1.wallMs)} per further step.`,
      ...(w && w1
        ? [
            `    Workflows: create → 201 ${ms(w.acceptedMs, 1)}; ${w.polls} polls of ${ms(w.statusReadMs, 1)} (median), the first ${ms(w.firstPollMs, 1)}. ` +
              `A 1-step Workflow takes ${ms(w1.wallMs)}: ${perStep(w.wallMs, w1.wallMs)} per further step.`,
          ]
        : []),
    ],
    data: {
      steps: STEPS,
      edgestep: es,
      edgestep1Step: es1,
      workflows: w,
      workflows1Step: w1,
      ratio,
      samples,
    },
  };
}
