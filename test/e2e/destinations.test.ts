/**
 * Flow control per destination (SPEC 10) end to end: the built Worker in Miniflare with real
 * alarms, its destinations' objects on their own clocks and alarms, and the loopback upstream's
 * log (arrival and end of every call, on its clock) as the referee.
 *  - `limited` (concurrency 3) and `rated` (20 per second) are registry tools limited by name;
 *  - the upstream's host, 127.0.0.1, is not listed: only a pause holds its calls back.
 */
import { describe, expect, it } from "vitest";
import { maxInFlight } from "../upstream/log.ts";
import { e2eClient } from "./client.ts";
import { bootForFile } from "./worker.ts";

const e2e = bootForFile((upstream) => ({
  TOOLS: JSON.stringify({
    limited: { url: `${upstream}/work` },
    rated: { url: `${upstream}/work` },
  }),
  DESTINATIONS: JSON.stringify({
    limited: { concurrency: 3 },
    rated: { ratePerSecond: 20 },
  }),
}));

const { post, getJson, waitFor, waitForEnd } = e2eClient(() => e2e.worker.url);

async function submit(plan: unknown): Promise<string> {
  const res = await post("/v1/runs", plan);
  expect(res.status).toBe(202);
  return res.headers.get("location")!;
}

/** The `/work` calls tagged `t=<tag>`, in the order they arrived. */
const workCalls = (tag: string) =>
  e2e.upstream.calls.filter(
    (c) => c.path === "/work" && new URLSearchParams(c.query).get("t") === tag,
  );

/** A plan of `n` independent calls of `tool` (all ready at once). */
const parallel = (tool: string, n: number, params: Record<string, unknown>) => ({
  config: { maxParallel: n },
  steps: Array.from({ length: n }, (_, k) => ({ id: `c${k}`, tool, params: { ...params, k } })),
});

describe("e2e: flow control per destination", () => {
  it(
    "concurrency 3: 10 runs of 10 parallel calls never have more than 3 in flight, and all complete",
    { timeout: 60_000 },
    async () => {
      const tag = `conc-${Date.now()}`;
      const runs = await Promise.all(
        Array.from({ length: 10 }, () => submit(parallel("limited", 10, { ms: 60, t: tag }))),
      );
      const waiting = await waitFor(runs[9]!, "a quota wait", (s) =>
        s.steps.some((st: any) => st.waitingFor === "quota"),
      );
      expect(waiting.steps.find((st: any) => st.waitingFor === "quota").attempts).toBe(0);
      const finals = await Promise.all(runs.map((r) => waitForEnd(r, 45_000)));
      expect(finals.map((s) => s.status)).toEqual(Array(10).fill("completed"));
      for (const s of finals) for (const step of s.steps) expect(step.attempts).toBe(1);
      const calls = workCalls(tag);
      expect(calls).toHaveLength(100);
      expect(maxInFlight(calls)).toBeLessThanOrEqual(3);
    },
  );

  it(
    "ratePerSecond 20 holds over 200 calls, on the upstream's clock",
    { timeout: 60_000 },
    async () => {
      const tag = `rate-${Date.now()}`;
      const runs = await Promise.all(
        Array.from({ length: 4 }, () => submit(parallel("rated", 50, { ms: 1, t: tag }))),
      );
      const finals = await Promise.all(runs.map((r) => waitForEnd(r, 45_000)));
      expect(finals.map((s) => s.status)).toEqual(Array(4).fill("completed"));
      const arrivals = workCalls(tag)
        .map((c) => c.at)
        .sort((a, b) => a - b);
      expect(arrivals).toHaveLength(200);
      // A token every 50 ms (burst 1): 199 intervals take at least 9.95 s, less the spread
      // between a grant and its call's arrival (5% allowed for it).
      const span = arrivals.at(-1)! - arrivals[0]!;
      expect((199 / span) * 1000).toBeLessThanOrEqual(20 * 1.05);
    },
  );

  it(
    "one run's 429 with Retry-After 2 makes every other run's next call to that host wait at least 2 s, waiting for quota with no retry spent",
    { timeout: 60_000 },
    async () => {
      const key = `e2e-429-${Date.now()}`;
      const upstream = e2e.upstream.url;
      const a = await submit({
        steps: [
          {
            id: "hit",
            tool: "http",
            params: { url: `${upstream}/script/${key}?plan=429,200&retryAfter=2` },
          },
        ],
      });
      await waitFor(
        a,
        "the 429",
        (s) => s.steps[0].attempts === 1 && s.steps[0].status !== "running",
      );
      const tag = `after-${key}`;
      const others = await Promise.all(
        Array.from({ length: 4 }, () =>
          submit({
            steps: [
              { id: "call", tool: "http", params: { url: `${upstream}/work?ms=1&t=${tag}` } },
            ],
          }),
        ),
      );
      for (const run of others) {
        const s = await waitFor(run, "a quota wait", (st) => st.steps[0].waitingFor === "quota");
        expect(s.steps[0]).toMatchObject({ status: "waiting", attempts: 0 });
      }
      const listed = (await getJson("/v1/destinations")) as any[];
      expect(listed.find((d) => d.destination === "127.0.0.1")).toMatchObject({
        limits: {},
        waiting: 4,
      });

      const finals = await Promise.all([a, ...others].map((r) => waitForEnd(r)));
      expect(finals.map((s) => s.status)).toEqual(Array(5).fill("completed"));
      for (const s of finals.slice(1)) expect(s.steps[0].attempts).toBe(1);
      const hit = e2e.upstream.calls.find((c) => c.path === `/script/${key}`)!;
      const after = workCalls(tag);
      expect(after).toHaveLength(4);
      for (const call of after) expect(call.at - hit.at).toBeGreaterThanOrEqual(2_000);
      for (const run of others) {
        const { events } = await getJson(`${run}/events?limit=1000`);
        const types = events.map((e: any) => e.type);
        expect(types).toContain("quota_wait");
        expect(types).not.toContain("step_retry_scheduled");
      }
    },
  );
});
