/**
 * (5) Many runs at once: BENCH_CONCURRENT_RUNS (200) runs of a 5-step chain of 20 ms calls,
 * all submitted at once, each polled every 200 ms by its own client loop; the same batch of
 * Workflows. Batch time: the first request sent -> the last run seen final (client clock).
 * Every run's calls are checked in the upstream's log (each made exactly once). The warm-up
 * round runs full batches too: after a batch of 20, edgestep's first full batch still took
 * 15-30 % longer than the ones after it (7.1, 7.4 and 6.8 s against 4.5-5.9 s, in three full
 * bench runs), the first time its server holds 200 runs at once. Each batch waits for an idle
 * machine first (bench/settle.ts).
 */
import type { Followed, Submitted } from "../client.ts";
import { ms, NONE, sec, type CaseResult, type Ctx } from "../context.ts";
import { chainDag, dagPlan, dagUrls, type Dag } from "../plans.ts";
import { inTurns } from "../settle.ts";
import { medians, percentile } from "../stats.ts";

const STEPS = 5;
const CALL_MS = 20;
const POLL_MS = 200;
const GOAL = 0.3;

interface Batch extends Record<string, number> {
  batchMs: number;
  runsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  submitP50Ms: number;
  submitP99Ms: number;
  /** Client -> upstream (the machine's clock): the first request sent -> the batch's last call answered. */
  lastAnswerMs: number;
  polls: number;
}

async function batch(
  ctx: Ctx,
  n: number,
  dag: Dag,
  tag: string,
  one: (j: number) => Promise<{ sent: Submitted; seen: Followed<unknown> }>,
): Promise<Batch> {
  const runs = await Promise.all(Array.from({ length: n }, (_, j) => one(j)));
  const calls = await ctx.upstream.calls(tag, n * dag.latency.length);
  const start = Math.min(...runs.map((r) => r.sent.t0));
  const batchMs = Math.max(...runs.map((r) => r.seen.seenAt)) - start;
  const toFinal = runs.map((r) => r.seen.seenAt - r.sent.t0);
  const submit = runs.map((r) => r.sent.acceptedMs);
  return {
    batchMs,
    runsPerSecond: n / (batchMs / 1000),
    p50Ms: percentile(toFinal, 50),
    p99Ms: percentile(toFinal, 99),
    submitP50Ms: percentile(submit, 50),
    submitP99Ms: percentile(submit, 99),
    lastAnswerMs:
      Math.max(...[...calls.values()].map((c) => c.endedAt)) -
      Math.min(...runs.map((r) => r.sent.wall0)),
    polls: runs.reduce((sum, r) => sum + r.seen.polls, 0),
  };
}

export async function concurrentCase(ctx: Ctx): Promise<CaseResult> {
  const dag = chainDag(STEPS, CALL_MS);
  const n = ctx.opts.concurrentRuns;
  const edgestep = (runs: number, tag: string) =>
    batch(ctx, runs, dag, tag, async (j) => {
      const sent = await ctx.es.submit(dagPlan(ctx.upstreamUrl, dag, STEPS, tag, j * STEPS));
      return { sent, seen: await ctx.es.follow(sent.id, POLL_MS, ctx.opts.pollView) };
    });
  const workflows = (runs: number, tag: string) =>
    batch(ctx, runs, dag, tag, async (j) => {
      const urls = dagUrls(ctx.upstreamUrl, dag, tag, j * STEPS);
      const sent = await ctx.wf!.create({ kind: "dag", urls, deps: dag.deps });
      return { sent, seen: await ctx.wf!.follow(sent.id, POLL_MS) };
    });
  const samples = await ctx.rounds(`${n} concurrent runs`, async (round) => {
    const s: { es?: Batch; wf?: Batch } = {};
    const jobs = [
      async () => void (s.es = await edgestep(n, `conc${round}es`)),
      ...(ctx.wf ? [async () => void (s.wf = await workflows(n, `conc${round}wf`))] : []),
    ];
    await inTurns(jobs, round);
    return s;
  });
  const es = medians(samples.map((s) => s.es!));
  const wf = ctx.wf ? medians(samples.map((s) => s.wf!)) : null;
  const ratio = wf ? es.batchMs / wf.batchMs : NaN;
  const what = `(5) ${n} concurrent runs of a ${STEPS}-step chain of ${CALL_MS} ms calls, each polled every ${POLL_MS} ms`;
  const perRun = (b: Batch) => `${sec(b.p50Ms)} / ${sec(b.p99Ms)}`;
  return {
    rows: [
      {
        metric: `${what}: batch time (client)`,
        edgestep: sec(es.batchMs),
        workflows: wf ? sec(wf.batchMs) : NONE,
        ratio: wf ? ratio.toFixed(3) : NONE,
        goal: `ratio ≤ ${GOAL}`,
        met: wf ? ratio <= GOAL : null,
      },
      {
        metric: "(5) runs per second",
        edgestep: es.runsPerSecond.toFixed(1),
        workflows: wf ? wf.runsPerSecond.toFixed(1) : NONE,
        ratio: NONE,
        goal: NONE,
        met: null,
      },
      {
        metric: "(5) a run's time to final (request → seen final), p50 / p99",
        edgestep: perRun(es),
        workflows: wf ? perRun(wf) : NONE,
        ratio: NONE,
        goal: NONE,
        met: null,
      },
    ],
    notes: [
      `(5) submission (request → 202) p50 ${ms(es.submitP50Ms)}, p99 ${ms(es.submitP99Ms)}; the last call answered ${sec(es.lastAnswerMs)} after the first request; ${es.polls} polls in all.` +
        (wf
          ? ` Workflows: create p50 ${ms(wf.submitP50Ms)}, p99 ${ms(wf.submitP99Ms)}; the last call answered after ${sec(wf.lastAnswerMs)}; ${wf.polls} polls.`
          : ""),
      // The medians hide how much a round moves; the ratio of the medians is the goal's.
      `    By round, edgestep's batch: ${samples.map((s) => sec(s.es!.batchMs)).join(", ")}` +
        (wf ? `; Workflows': ${samples.map((s) => sec(s.wf!.batchMs)).join(", ")}.` : "."),
    ],
    data: {
      runs: n,
      steps: STEPS,
      callMs: CALL_MS,
      pollMs: POLL_MS,
      edgestep: es,
      workflows: wf,
      ratio,
      samples,
    },
  };
}
