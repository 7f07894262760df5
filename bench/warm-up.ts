/**
 * Warms both servers before the first case. A `wrangler dev` that has just started serves its
 * first requests slower while V8 compiles what grows hot: on this machine (1)'s 200-step
 * chain took about 46 ms over a fresh server's first ten runs and about 40 ms after twenty.
 * A server users run has served requests before, so each contender first runs the same work,
 * one after the other: BENCH_SERVER_WARMUP runs (default 20) each of (1)'s 200-step chain and
 * of (5)'s 5-step chain of calls, every one followed to its end. 0 skips it.
 */
import type { Ctx } from "./context.ts";
import { chainDag, dagPlan, dagUrls, passChain } from "./plans.ts";

const CHAIN_STEPS = 200;
const CALLS = 5;
const CALL_MS = 1;

export async function warmServers(ctx: Ctx, runs: number): Promise<void> {
  if (runs === 0) return;
  const t0 = performance.now();
  const dag = chainDag(CALLS, CALL_MS);
  const poll = ctx.opts.pollMs;
  for (let i = 0; i < runs; i++) {
    const tag = `warm${i}`;
    const chain = await ctx.es.submit(passChain(CHAIN_STEPS));
    await ctx.es.follow(chain.id, poll, ctx.opts.pollView);
    const calls = await ctx.es.submit(dagPlan(ctx.upstreamUrl, dag, CALLS, `${tag}es`));
    await ctx.es.follow(calls.id, poll, ctx.opts.pollView);
    if (ctx.wf === null) continue;
    await ctx.wf.follow((await ctx.wf.create({ kind: "pass", n: CHAIN_STEPS })).id, poll);
    const urls = dagUrls(ctx.upstreamUrl, dag, `${tag}wf`);
    await ctx.wf.follow((await ctx.wf.create({ kind: "dag", urls, deps: dag.deps })).id, poll);
  }
  ctx.log(
    `servers warmed: ${runs} runs of each kind (${((performance.now() - t0) / 1000).toFixed(1)} s)`,
  );
}
