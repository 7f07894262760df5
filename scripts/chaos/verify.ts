/**
 * Verifies every run against the upstream's log of calls: each run finished `completed`, none was
 * lost or waited for a poll to resume, no call came from outside the runs, and each step passes
 * verifyStep().
 */
import type { LoggedCall, Upstream } from "../../test/upstream/server.ts";
import type { Api, StepResult } from "./api.ts";
import type { Drained } from "./drain.ts";
import type { ChaosReport, KillRecord } from "./report.ts";
import type { Submitted } from "./submissions.ts";
import { mapLimit, secs } from "./util.ts";
import { callInfo, verifyStep, type StepContext, type Tally } from "./verify-step.ts";

export type Verified = Tally & Pick<ChaosReport, "runs" | "upstreamCalls">;

export interface VerifyInput {
  api: Api;
  upstream: Upstream;
  submitted: Submitted[];
  drained: Drained;
  kills: KillRecord[];
  graceMs: number;
  /** When polling began (the end of the quiet period). */
  drainStart: number;
  /** When the server last became ready. */
  lastReadyAt: number;
}

/** Calls this long after a kill's processes were gone come from the restarted server (restarts take > 1 s). */
const AFTER_RESTART_MS = 500;

export async function verify(input: VerifyInput): Promise<Verified> {
  const { api, upstream, submitted, kills, drainStart } = input;
  const { views, vanished, unfinished } = input.drained;
  const tally: Tally = {
    steps: 0,
    succeededSteps: 0,
    lost: [],
    notCompleted: [],
    wrongData: [],
    duplicates: 0,
    duplicatesInFlightAtKill: 0,
    duplicatesAfterError: 0,
    unexplained: [],
    interruptedAttempts: 0,
    maxAnswerToKillMs: null,
    stuckUntilPolled: [],
    retriedByAlarm: 0,
  };
  const ctx: StepContext = { api, tally, kills, graceMs: input.graceMs, drainStart };
  const lastKill = kills.at(-1);

  const work = upstream.calls.filter((c) => c.path === "/work");
  const byKey = new Map<string, LoggedCall[]>();
  for (const c of work)
    byKey.set(c.idempotencyKey ?? "", [...(byKey.get(c.idempotencyKey ?? "") ?? []), c]);
  const known = new Set(submitted.flatMap((s) => s.plan.steps.map((st) => `${s.runId}:${st.id}`)));
  for (const [key, calls] of byKey) {
    if (!known.has(key))
      tally.unexplained.push({
        runId: key.split(":")[0] ?? "?",
        problem: `upstream call with an unknown Idempotency-Key "${key}"`,
        detail: calls.map(callInfo),
      });
  }

  await mapLimit(submitted, 4, async ({ runId, plan }) => {
    tally.steps += plan.steps.length;
    if (vanished.has(runId)) {
      tally.lost.push({ runId, problem: "the run vanished: GET /v1/runs/:id answers 404" });
      return;
    }
    const view = views.get(runId);
    if (!view || unfinished.has(runId)) {
      tally.lost.push({
        runId,
        problem: `stuck: still ${view?.status ?? "unknown"} ${secs(Date.now() - input.lastReadyAt)} after the last restart`,
        detail: view?.steps
          .filter((s) => s.status !== "succeeded")
          .map((s) => ({
            id: s.id,
            status: s.status,
            attempts: s.attempts,
            nextAttemptAt: s.nextAttemptAt,
            error: s.error,
          })),
      });
    } else if (view.status !== "completed") {
      tally.notCompleted.push({
        runId,
        problem: `ended ${view.status}`,
        detail: view.steps
          .filter((s) => s.status !== "succeeded")
          .map((s) => ({ id: s.id, status: s.status, attempts: s.attempts, error: s.error })),
      });
    }
    // Unfinished at the last kill (a call before it, another after it), yet no call between the
    // restart and the end of the quiet period: it moved only once the drain polled it.
    if (lastKill) {
      const runCalls = plan.steps.flatMap((st) => byKey.get(`${runId}:${st.id}`) ?? []);
      const before = runCalls.some((c) => c.at <= lastKill.goneAt + AFTER_RESTART_MS);
      const quiet = runCalls.some(
        (c) => c.at > lastKill.goneAt + AFTER_RESTART_MS && c.at < drainStart,
      );
      const polled = runCalls.filter((c) => c.at >= drainStart).sort((a, b) => a.at - b.at)[0];
      if (before && !quiet && polled) {
        tally.stuckUntilPolled.push({
          runId,
          problem: `no upstream call for ${secs(drainStart - lastKill.goneAt)} after the last kill, then calls again ${polled.at - drainStart} ms after polling began (its alarm was not restored?)`,
        });
      }
    }
    if (!view) return;
    const { status, body: results } = await api.get<StepResult[]>(`/v1/runs/${runId}/results`);
    if (status !== 200 || !Array.isArray(results)) {
      tally.lost.push({ runId, problem: `GET /results answered ${status}` });
      return;
    }
    for (let i = 0; i < plan.steps.length; i++) {
      const step = plan.steps[i]!;
      const calls = (byKey.get(`${runId}:${step.id}`) ?? []).sort((a, b) => a.at - b.at);
      await verifyStep(ctx, runId, step, calls, view.steps[i], results[i]);
    }
  });
  return { runs: submitted.length, ...tally, upstreamCalls: work.length };
}
