/**
 * One run of a DAG of upstream calls (`/work?ms=<latency>`), by edgestep or by a Workflow,
 * followed by a polling client, and timed on the upstream's clock:
 *   makespan = the last call answered - the first call arrived (both logged by the upstream).
 * It covers every dispatch and every dependency hop; the time before the first call (POST,
 * alarm) and after the last answer (recording it, the run's end, the client's poll) are
 * reported apart, as `headMs` and `seenAfterLastAnswerMs`.
 */
import { iso, type Call, type Followed, type Submitted } from "./client.ts";
import { ms, NONE, type Ctx, type Row } from "./context.ts";
import { dagPlan, dagUrls, type Dag } from "./plans.ts";
import { inTurns } from "./settle.ts";
import { mean, median, medians } from "./stats.ts";

export interface DagTiming extends Record<string, number> {
  /** Upstream clock: first call arrived -> last call answered. */
  makespanMs: number;
  /** Upstream clock: first call arrived -> last call arrived. */
  arrivalSpreadMs: number;
  /** Upstream clock: a call's arrival - the answer of its last dependency; mean over calls with dependencies, and summed along the critical path. */
  hopMeanMs: number;
  hopCriticalPathMs: number;
  /** Client: request sent -> the first poll that saw the run final. */
  clientWallMs: number;
  /** Client -> upstream (the machine's clock): request sent -> first call arrived. */
  headMs: number;
  /** Upstream -> client: last call answered -> the client saw the run final. */
  seenAfterLastAnswerMs: number;
  acceptedMs: number;
  polls: number;
  pollReadMedianMs: number;
}

export interface EdgestepDagTiming extends DagTiming {
  /** Server clock: createdAt -> startedAt (the alarm's delivery). */
  alarmDelayMs: number;
  /** Upstream -> server: last call answered -> the run's endedAt. */
  endedAfterLastAnswerMs: number;
}

function timing(
  dag: Dag,
  calls: Map<number, Call>,
  sent: Submitted,
  seen: Followed<unknown>,
): DagTiming {
  const all = [...calls.values()];
  const first = Math.min(...all.map((c) => c.at));
  const lastAnswer = Math.max(...all.map((c) => c.endedAt));
  const hop = dag.deps.map((deps, i) =>
    deps.length === 0 ? 0 : calls.get(i)!.at - Math.max(...deps.map((d) => calls.get(d)!.endedAt)),
  );
  const withDeps = hop.filter((_, i) => dag.deps[i]!.length > 0);
  return {
    makespanMs: lastAnswer - first,
    arrivalSpreadMs: Math.max(...all.map((c) => c.at)) - first,
    hopMeanMs: withDeps.length === 0 ? 0 : mean(withDeps),
    hopCriticalPathMs: dag.criticalPath.reduce((sum, i) => sum + hop[i]!, 0),
    clientWallMs: seen.seenAt - sent.t0,
    headMs: first - sent.wall0,
    seenAfterLastAnswerMs: seen.seenWall - lastAnswer,
    acceptedMs: sent.acceptedMs,
    polls: seen.polls,
    pollReadMedianMs: median(seen.readMs),
  };
}

/** edgestep runs `dag` (`maxParallel`), polled every `pollMs`. */
export async function edgestepDag(
  ctx: Ctx,
  dag: Dag,
  maxParallel: number,
  tag: string,
  pollMs: number,
): Promise<EdgestepDagTiming> {
  const sent = await ctx.es.submit(dagPlan(ctx.upstreamUrl, dag, maxParallel, tag));
  const seen = await ctx.es.follow(sent.id, pollMs, ctx.opts.pollView);
  const calls = await ctx.upstream.calls(tag, dag.latency.length);
  const lastAnswer = Math.max(...[...calls.values()].map((c) => c.endedAt));
  return {
    ...timing(dag, calls, sent, seen),
    alarmDelayMs: iso(seen.doc.startedAt) - iso(seen.doc.createdAt),
    endedAfterLastAnswerMs: iso(seen.doc.endedAt) - lastAnswer,
  };
}

/** A Workflow runs `dag` (one `step.do` per call), its status polled every `pollMs`. */
export async function workflowsDag(
  ctx: Ctx,
  dag: Dag,
  tag: string,
  pollMs: number,
): Promise<DagTiming> {
  const urls = dagUrls(ctx.upstreamUrl, dag, tag);
  const sent = await ctx.wf!.create({ kind: "dag", urls, deps: dag.deps });
  const seen = await ctx.wf!.follow(sent.id, pollMs);
  return timing(dag, await ctx.upstream.calls(tag, dag.latency.length), sent, seen);
}

/**
 * Rounds of `dag` run by edgestep (`maxParallel`) and, unless BENCH_WORKFLOWS=0, by a
 * Workflow, both polled every BENCH_POLL_MS, in an order that rotates from round to round.
 */
export async function dagRounds(
  ctx: Ctx,
  label: string,
  dag: Dag,
  maxParallel: number,
  tag: string,
) {
  const samples = await ctx.rounds(label, async (round) => {
    const s: { es?: EdgestepDagTiming; wf?: DagTiming } = {};
    const jobs = [
      async () =>
        void (s.es = await edgestepDag(ctx, dag, maxParallel, `${tag}${round}es`, ctx.opts.pollMs)),
      ...(ctx.wf
        ? [
            async () =>
              void (s.wf = await workflowsDag(ctx, dag, `${tag}${round}wf`, ctx.opts.pollMs)),
          ]
        : []),
    ];
    await inTurns(jobs, round);
    return s;
  });
  return {
    es: medians(samples.map((s) => s.es!)),
    wf: ctx.wf ? medians(samples.map((s) => s.wf!)) : null,
    samples,
  };
}

export interface DagRowsSpec {
  /** "(2)" */
  id: string;
  what: string;
  /** What the times are divided by. */
  unitMs: number;
  unitName: string;
  pollMs: number;
  goal: number;
}

/**
 * A DAG case's two rows: the makespan (upstream clock) ÷ the unit, with the goal for edgestep,
 * and the client's wall time ÷ the unit: what a user waits.
 */
export function dagRows(spec: DagRowsSpec, es: DagTiming, wf: DagTiming | null): Row[] {
  const show = (x: number) => `${(x / spec.unitMs).toFixed(3)} (${ms(x)})`;
  const row = (pick: (t: DagTiming) => number, metric: string) => ({
    metric,
    edgestep: show(pick(es)),
    workflows: wf ? show(pick(wf)) : NONE,
    ratio: wf ? (pick(es) / pick(wf)).toFixed(3) : NONE,
  });
  return [
    {
      ...row(
        (t) => t.makespanMs,
        `${spec.id} ${spec.what}: makespan ÷ ${spec.unitName} (upstream clock; polls every ${spec.pollMs} ms)`,
      ),
      goal: `edgestep ≤ ${spec.goal}`,
      met: es.makespanMs / spec.unitMs <= spec.goal,
    },
    {
      ...row(
        (t) => t.clientWallMs,
        `${spec.id} the same: client wall time (request → seen completed) ÷ ${spec.unitName}`,
      ),
      goal: NONE,
      met: null,
    },
  ];
}
