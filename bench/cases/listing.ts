/**
 * (8) Listing (SPEC 8.2): the newest 50 of BENCH_LIST_RUNS (10,000) runs of one API key,
 * `GET /v1/runs?limit=50`, on an edgestep started with two API keys. Key B first creates 100
 * runs and its listing is timed; then key A creates its runs (1-step `pass` plans,
 * BENCH_LIST_CONCURRENCY at a time); then A's listing is timed, and B's again: a listing must
 * not depend on how many runs other keys have. Times: client clock, median of 20 reads.
 * Then how long a status change takes to reach the listing (goal: 2 s): runs of one short
 * `wait` step, each followed through its own GET and through the listing at once.
 * Skipped, with a line saying so, while the route is not there (404/405).
 */
import { Edgestep, sleep } from "../client.ts";
import { kib, ms, NONE, type CaseResult, type Ctx, type Row } from "../context.ts";
import { median } from "../stats.ts";

const LIMIT = 50;
const GOAL_MS = 50;
const OTHER_RUNS = 100;
const READS = 20;
const LAG_GOAL_MS = 2000;
const LAG_RUNS = 10;
const KEYS = ["bench-list-key-a", "bench-list-key-b"] as const;

const tiny = { name: "list-bench", steps: [{ id: "a", tool: "pass", params: { value: 1 } }] };

async function create(ctx: Ctx, client: Edgestep, count: number, who: string): Promise<void> {
  const body = JSON.stringify(tiny);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next++;
      await client.submit(body);
      if (next % 1000 === 0) ctx.log(`  ${who}: ${next} runs created`);
    }
  };
  await Promise.all(Array.from({ length: ctx.opts.listConcurrency }, worker));
}

async function timeListing(client: Edgestep, expected: number) {
  const path = `/v1/runs?limit=${LIMIT}`;
  await client.get(path);
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < READS; i++) {
    const r = await client.get(path);
    if (r.status !== 200)
      throw new Error(`GET ${path} answered ${r.status}: ${r.text.slice(0, 300)}`);
    const page = JSON.parse(r.text) as { runs: { createdAt: string }[] };
    if (page.runs.length !== Math.min(LIMIT, expected))
      throw new Error(
        `GET ${path} listed ${page.runs.length} runs, expected ${Math.min(LIMIT, expected)}`,
      );
    const created = page.runs.map((x) => Date.parse(x.createdAt));
    if (created.some((t, j) => j > 0 && t > created[j - 1]!))
      throw new Error(`GET ${path}: runs not newest first`);
    times.push(r.ms);
    bytes = r.bytes;
  }
  return { ms: median(times), bytes };
}

/**
 * For each of LAG_RUNS runs (one 50 ms `wait` step, a tag of its own): the time from the
 * first poll whose `GET /v1/runs/:id?view=summary` shows it completed to the first whose
 * listing (`?tag=`) does. Both are read together every 10 ms, so 0 means the same poll.
 */
async function listingLags(client: Edgestep): Promise<number[]> {
  const lags: number[] = [];
  for (let i = 0; i < LAG_RUNS; i++) {
    const tag = `lag-${i}-${Date.now()}`;
    const plan = { tags: { lag: tag }, steps: [{ id: "w", tool: "wait", params: { ms: 50 } }] };
    const { id: runId } = await client.submit(JSON.stringify(plan));
    let runEnded: number | null = null;
    for (const deadline = performance.now() + 30_000; ;) {
      const [run, page] = await Promise.all([
        client.get(`/v1/runs/${runId}?view=summary`),
        client.get(`/v1/runs?tag=lag:${tag}`),
      ]);
      const now = performance.now();
      if ((JSON.parse(run.text) as { status: string }).status === "completed") runEnded ??= now;
      const listed = (JSON.parse(page.text) as { runs: { status: string }[] }).runs[0];
      if (listed?.status === "completed") {
        lags.push(now - (runEnded ?? now));
        break;
      }
      if (now > deadline) throw new Error(`run ${runId}: not listed as completed after 30 s`);
      await sleep(10);
    }
  }
  return lags;
}

function skipped(reason: string): CaseResult {
  const row: Row = {
    metric: `(8) listing: newest ${LIMIT} runs of one key, \`GET /v1/runs?limit=${LIMIT}\``,
    edgestep: `not available (${reason})`,
    workflows: NONE,
    ratio: NONE,
    goal: `≤ ${ms(GOAL_MS)}`,
    met: null,
  };
  return { rows: [row], notes: [], data: { available: false, reason } };
}

export async function listingCase(ctx: Ctx): Promise<CaseResult> {
  const probe = await ctx.es.get(`/v1/runs?limit=${LIMIT}`);
  if (probe.status === 404 || probe.status === 405)
    return skipped(`GET /v1/runs answered ${probe.status}: SPEC 8.2 is not implemented`);
  const n = ctx.opts.listRuns;
  ctx.log(`  starting an edgestep with API_KEYS for the listing (${n} runs to create)...`);
  const instance = await ctx.startEdgestep({ API_KEYS: KEYS.join(",") });
  try {
    const a = new Edgestep(instance.url, KEYS[0]);
    const b = new Edgestep(instance.url, KEYS[1]);
    await create(ctx, b, OTHER_RUNS, "key B");
    const otherBefore = await timeListing(b, OTHER_RUNS);
    const began = performance.now();
    await create(ctx, a, n, "key A");
    const creationSeconds = (performance.now() - began) / 1000;
    const own = await timeListing(a, n);
    const otherAfter = await timeListing(b, OTHER_RUNS);
    const lags = await listingLags(b);
    const lagMax = Math.max(...lags);
    const count = n.toLocaleString("en");
    return {
      rows: [
        {
          metric: `(8) listing: newest ${LIMIT} of ${count} runs of one key, \`GET /v1/runs?limit=${LIMIT}\``,
          edgestep: `${ms(own.ms, 1)} (${kib(own.bytes)})`,
          workflows: NONE,
          ratio: NONE,
          goal: `≤ ${ms(GOAL_MS)}`,
          met: own.ms <= GOAL_MS,
        },
        {
          metric: `(8) another key's newest ${LIMIT} (it has ${OTHER_RUNS} runs), before → after the first key's ${count}`,
          edgestep: `${ms(otherBefore.ms, 1)} → ${ms(otherAfter.ms, 1)}`,
          workflows: NONE,
          ratio: (otherAfter.ms / otherBefore.ms).toFixed(2),
          goal: `≤ ${ms(GOAL_MS)}, independent of other keys`,
          met: otherAfter.ms <= GOAL_MS,
        },
        {
          metric: `(8) a status change in listings: after the run's own GET shows it (median / max of ${LAG_RUNS})`,
          edgestep: `${ms(median(lags))} / ${ms(lagMax)}`,
          workflows: NONE,
          ratio: NONE,
          goal: `≤ ${ms(LAG_GOAL_MS)}`,
          met: lagMax <= LAG_GOAL_MS,
        },
      ],
      notes: [
        `(8) created ${count} runs in ${creationSeconds.toFixed(0)} s (${(n / creationSeconds).toFixed(0)} runs/s, ${ctx.opts.listConcurrency} at a time).`,
      ],
      data: {
        available: true,
        runs: n,
        otherRuns: OTHER_RUNS,
        own,
        otherBefore,
        otherAfter,
        creationSeconds,
        lags,
      },
    };
  } finally {
    await instance.stop();
  }
}
