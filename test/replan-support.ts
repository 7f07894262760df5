/**
 * What the replanning tests (SPEC 9.2) share: the plans' pieces and the scripted planner of
 * the loopback upstream (test/upstream/planners.ts).
 */
import { advanceToAlarm, fireAlarm, status, upstreamCalls, upstreamUrl } from "./helpers";

/** A step on the fake API that finds nothing for a misspelt city, so its `verify` fails. */
export function findStep(location = "Berln", extra: Record<string, unknown> = {}) {
  return {
    id: "find",
    tool: "http",
    params: { url: `${upstreamUrl}/facilities`, query: { location } },
    verify: "${output.length}",
    ...extra,
  };
}

/** `find` repaired: the same call with the right city. */
export const fixedFind = findStep("Berlin");

/** A scripted planner: the n-th call answers the n-th status of `plan`, a 200 with `body`. */
export function planner(key: string, body: unknown, opts: { plan?: string; delay?: number } = {}) {
  const q = new URLSearchParams({ body: JSON.stringify(body) });
  if (opts.plan) q.set("plan", opts.plan);
  if (opts.delay) q.set("delay", String(opts.delay));
  return `${upstreamUrl}/planner/answer/${key}?${q}`;
}

/** The calls a scripted planner received. */
export async function plannerCalls(key: string): Promise<any[]> {
  return upstreamCalls(`/planner/answer/${key}`);
}

/** The replan config of a plan, mode url, with no cooldown unless given. */
export function replanTo(url: string, extra: Record<string, unknown> = {}) {
  return { url, cooldownMs: 0, ...extra };
}

const ENDED = new Set(["completed", "partial", "failed", "cancelled", "paused"]);

/**
 * Runs the run to its end on its own clock: each time, the clock moves to the alarm (a
 * cooldown, a retry of the planner call falls due) and the alarm fires. The run's status then.
 */
export async function runToEnd(runId: string, max = 30): Promise<any> {
  for (let i = 0; i < max; i++) {
    await advanceToAlarm(runId);
    const fired = await fireAlarm(runId);
    const s = await status(runId);
    if (ENDED.has(s.status) || !fired) return s;
  }
  return status(runId);
}
