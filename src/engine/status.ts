/** Formats the stored records as the API's views (SPEC 5.8 and 6). Pure. */
import { readStoredOutput } from "./output";
import type { CompiledPlan } from "./plan";
import type { AttemptRecord, RunRecord, StepError, StepRecord } from "./records";
import { FINISHED } from "./scheduler";

/** A stored time as ISO-8601; one no Date can hold (stored by an earlier version) reads as null. */
const iso = (t: number | null): string | null =>
  t === null || !(Math.abs(t) <= 8.64e15) ? null : new Date(t).toISOString();

export function stepView(s: StepRecord) {
  return {
    id: s.id,
    index: s.index,
    tool: s.tool,
    status: s.status,
    ...(s.reason !== null && { reason: s.reason }),
    attempts: s.attempts,
    startedAt: iso(s.startedAt),
    endedAt: iso(s.endedAt),
    durationMs: s.startedAt !== null && s.endedAt !== null ? s.endedAt - s.startedAt : null,
    ...(s.nextAttemptAt !== null &&
      s.status === "retrying" && { nextAttemptAt: iso(s.nextAttemptAt) }),
    ...(s.waitingFor !== null && s.status === "waiting" && { waitingFor: s.waitingFor }),
    ...(s.error !== null && { error: JSON.parse(s.error) as StepError }),
  };
}

/**
 * The seed executor's per-step result: `{ success, tool, data, error?, metadata }`.
 * `itemTotal`: a forEach step's item count (its attempts are its items'; retries are the rest).
 */
export function stepResult(s: StepRecord, itemTotal?: number) {
  const error = s.error === null ? undefined : (JSON.parse(s.error) as StepError);
  return {
    stepId: s.id,
    success: s.status === "succeeded",
    tool: s.tool,
    data: s.data === null ? null : readStoredOutput(s.data),
    ...(error && s.status !== "succeeded" && { error }),
    metadata: {
      executionTime: s.executionMs,
      timestamp: iso(s.endedAt),
      attempts: s.attempts,
      retries: Math.max(0, s.attempts - (itemTotal ?? 1)),
      ...(s.httpStatus !== null && { status: s.httpStatus }),
    },
  };
}

export type StepResult = ReturnType<typeof stepResult>;

export function attemptLog(attempts: AttemptRecord[]) {
  return attempts.map((a) => ({
    ...(a.itemIndex >= 0 && { item: a.itemIndex }),
    attempt: a.attempt,
    startedAt: iso(a.startedAt),
    endedAt: iso(a.endedAt),
    ...(a.category !== null && { category: a.category }),
    ...(a.httpStatus !== null && { status: a.httpStatus }),
    ...(a.message !== null && { message: a.message }),
  }));
}

export function runView(run: RunRecord, plan: CompiledPlan, steps: StepRecord[], now: number) {
  const summary = {
    totalSteps: steps.length,
    successfulSteps: 0,
    failedSteps: 0,
    skippedSteps: 0,
    cancelledSteps: 0,
  };
  let completedSteps = 0;
  let runningSteps = 0;
  let durationSum = 0;
  let durationCount = 0;
  for (const s of steps) {
    if (s.status === "succeeded") summary.successfulSteps++;
    else if (s.status === "failed") summary.failedSteps++;
    else if (s.status === "skipped") summary.skippedSteps++;
    else if (s.status === "cancelled") summary.cancelledSteps++;
    else if (s.status === "running") runningSteps++;
    if (FINISHED.has(s.status)) completedSteps++;
    if (
      (s.status === "succeeded" || s.status === "failed") &&
      s.startedAt !== null &&
      s.endedAt !== null
    ) {
      durationSum += s.endedAt - s.startedAt;
      durationCount++;
    }
  }
  const averageStepDurationMs = durationCount === 0 ? 0 : Math.round(durationSum / durationCount);
  const finished = run.endedAt !== null;
  const mode = plan.config.mode;
  return {
    runId: run.id,
    name: plan.name,
    status: run.status,
    createdAt: iso(run.createdAt),
    startedAt: iso(run.startedAt),
    endedAt: iso(run.endedAt),
    mode,
    iterations: run.iterations,
    iterationsRemaining: Math.max(
      0,
      (run.iterationBudget ?? (mode.type === "continuous" ? mode.maxIterations : mode.iterations)) -
        run.iterations,
    ),
    progress: {
      completedSteps,
      totalSteps: steps.length,
      percentage:
        steps.length === 0 ? 100 : Math.round((completedSteps / steps.length) * 10000) / 100,
      elapsedMs: run.startedAt === null ? 0 : (run.endedAt ?? now) - run.startedAt,
      averageStepDurationMs,
      estimatedTimeRemainingMs: finished
        ? 0
        : (steps.length - completedSteps) * averageStepDurationMs,
      runningSteps,
    },
    summary,
    ...(run.error !== null && { error: JSON.parse(run.error) as StepError }),
    steps: steps.map(stepView),
  };
}
