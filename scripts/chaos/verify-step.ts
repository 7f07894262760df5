/**
 * Verifies one step of a finished run against the upstream's log of its calls: every call carried
 * the step's input, the recorded data is the upstream's answer, and each call beyond the first is
 * explained by the run's attempt log (an attempt interrupted by a kill, or one that failed).
 */
import { isDeepStrictEqual } from "node:util";
import { workAnswer, type LoggedCall } from "../../test/upstream/server.ts";
import type { Api, AttemptLogEntry, StepResult, StepView } from "./api.ts";
import type { ChaosStep } from "./plans.ts";
import type { ChaosReport, KillRecord } from "./report.ts";

/** The counters and findings verification accumulates: the report's fields of the same names. */
export type Tally = Pick<
  ChaosReport,
  | "steps"
  | "succeededSteps"
  | "lost"
  | "notCompleted"
  | "wrongData"
  | "duplicates"
  | "duplicatesInFlightAtKill"
  | "duplicatesAfterError"
  | "unexplained"
  | "interruptedAttempts"
  | "maxAnswerToKillMs"
  | "stuckUntilPolled"
  | "retriedByAlarm"
>;

export interface StepContext {
  api: Api;
  tally: Tally;
  kills: KillRecord[];
  /** options.graceMs */
  graceMs: number;
  /** When polling began: a retry before it was brought by an alarm, not by a request. */
  drainStart: number;
}

/** One upstream call, for a finding's detail. */
export function callInfo(c: LoggedCall) {
  return {
    attempt: c.attempt,
    at: new Date(c.at).toISOString(),
    endedAt: c.endedAt === undefined ? null : new Date(c.endedAt).toISOString(),
    aborted: c.aborted ?? false,
  };
}

/** `calls`: the upstream's log for this step's Idempotency-Key, oldest first. */
export async function verifyStep(
  ctx: StepContext,
  runId: string,
  step: ChaosStep,
  calls: LoggedCall[],
  sv: StepView | undefined,
  result: StepResult | undefined,
): Promise<void> {
  const { tally } = ctx;
  const key = `${runId}:${step.id}`;
  const succeeded = sv?.status === "succeeded" && result?.success === true;
  const expectedQuery = step.query(runId);
  if (calls.length > 1) tally.duplicates += calls.length - 1;
  for (const c of calls) {
    if (c.query !== `?${expectedQuery.toString()}`) {
      tally.wrongData.push({
        runId,
        stepId: step.id,
        problem: `call ${c.attempt} carried query ${c.query}, expected ?${expectedQuery.toString()}`,
      });
    }
  }
  if (succeeded) {
    tally.succeededSteps++;
    const expected = workAnswer(key, sv.attempts, expectedQuery);
    if (!isDeepStrictEqual(result.data, expected)) {
      tally.wrongData.push({
        runId,
        stepId: step.id,
        problem: "data is not the upstream's answer to the step's recorded successful attempt",
        detail: { data: result.data, expected },
      });
    }
  }
  // The common case (one call, one attempt) needs no attempt log.
  if (calls.length === 1 && sv?.attempts === 1 && calls[0]!.attempt === 1) return;
  if (calls.length === 0 && (sv?.attempts ?? 0) === 0) return;
  const detail = await ctx.api.get<{ attemptLog?: AttemptLogEntry[] }>(
    `/v1/runs/${runId}/steps/${step.id}`,
  );
  const attemptLog = detail.body?.attemptLog ?? [];
  tally.interruptedAttempts += attemptLog.filter((a) => a.category === "interrupted").length;
  const success = succeeded ? sv.attempts : null;
  const seen = explainCalls(ctx, runId, step.id, calls, attemptLog, success);
  if (success !== null && !seen.has(success)) {
    tally.wrongData.push({
      runId,
      stepId: step.id,
      problem: `the recorded successful attempt ${success} never reached the upstream`,
      detail: { calls: calls.map(callInfo), attemptLog },
    });
  }
}

/**
 * Matches each call to the attempt the run recorded, and counts or reports it: a repeat is fine
 * only for an attempt recorded as failed, and an `interrupted` one must have been in flight at a
 * kill. Returns the attempt numbers the upstream saw.
 */
function explainCalls(
  ctx: StepContext,
  runId: string,
  stepId: string,
  calls: LoggedCall[],
  attemptLog: AttemptLogEntry[],
  success: number | null,
): Set<number> {
  const { tally } = ctx;
  const logged = new Map(attemptLog.map((a) => [a.attempt, a]));
  const seen = new Set<number>();
  for (const c of calls) {
    const attempt = c.attempt ?? -1;
    const entry = logged.get(attempt);
    const problem = (p: string) =>
      tally.unexplained.push({
        runId,
        stepId,
        problem: p,
        detail: { calls: calls.map(callInfo), attemptLog },
      });
    if (seen.has(attempt)) {
      problem(`attempt ${attempt} was sent to the upstream twice (an attempt number was reused)`);
      continue;
    }
    seen.add(attempt);
    if (!entry) {
      problem(
        `the upstream saw attempt ${attempt}, which the run has no record of (an attempt must be recorded before the call)`,
      );
      continue;
    }
    if (success !== null && attempt > success) {
      problem(
        `attempt ${attempt} was executed after the step's success (attempt ${success}) was recorded`,
      );
      continue;
    }
    if (attempt === success) continue;
    // An earlier attempt whose outcome the run recorded as a failure: it was retried.
    if (entry.category === undefined) {
      problem(`attempt ${attempt} has no recorded outcome, yet attempt ${attempt + 1} exists`);
    } else if (entry.category === "interrupted") {
      const kill = killDuring(ctx, c, entry);
      if (kill) {
        tally.duplicatesInFlightAtKill++;
        const retry = calls.find((n) => (n.attempt ?? 0) > attempt);
        if (retry && retry.at < ctx.drainStart) tally.retriedByAlarm++;
        if (c.endedAt !== undefined)
          tally.maxAnswerToKillMs = Math.max(
            tally.maxAnswerToKillMs ?? -Infinity,
            kill.at - c.endedAt,
          );
      } else {
        problem(`attempt ${attempt} was recorded as interrupted but was not in flight at any kill`);
      }
    } else {
      tally.duplicatesAfterError++;
    }
  }
  return seen;
}

/**
 * The kill an interrupted attempt was in flight at: the first kill after the run recorded the
 * attempt as started (its own clock: the upstream's timestamps lag when this process is busy),
 * provided the upstream had not answered the call long before that kill (an answer may still be
 * on its way, or not yet committed, when the kill lands) and the run recorded the interruption
 * after it.
 */
function killDuring(
  ctx: StepContext,
  c: LoggedCall,
  entry: AttemptLogEntry,
): KillRecord | undefined {
  const started = Date.parse(entry.startedAt);
  const recorded = entry.endedAt === null ? Infinity : Date.parse(entry.endedAt);
  const kill = ctx.kills.find((k) => started <= k.goneAt);
  if (!kill) return undefined;
  const answeredInTime = c.endedAt === undefined || c.endedAt >= kill.at - ctx.graceMs;
  return answeredInTime && recorded >= kill.at ? kill : undefined;
}
