/** Formats the stored records as the API's views (SPEC 5.8 and 6). Pure. */
import { readStoredOutput, storedOutputText } from "./output";
import type { CompiledPlan } from "./plan";
import type {
  AttemptRecord,
  RunRecord,
  StepCounts,
  StepError,
  StepRecord,
  StepViewRecord,
} from "./records";

/** A stored time as ISO-8601; one no Date can hold (stored by an earlier version) reads as null. */
export const iso = (t: number | null): string | null =>
  t === null || !(Math.abs(t) <= 8.64e15) ? null : new Date(t).toISOString();

export function stepView(s: StepViewRecord) {
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
    // `success: false` alone does not tell a failure from a step that never ran (skipped).
    status: s.status,
    ...(s.reason !== null && { reason: s.reason }),
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

/**
 * `JSON.stringify(stepResult(s, itemTotal))`, with the stored output spliced in as stored
 * rather than parsed and written again: results of many large outputs stream without
 * holding each one twice.
 */
export function stepResultJson(s: StepRecord, itemTotal?: number): string {
  const { data: _, ...rest } = stepResult({ ...s, data: null }, itemTotal);
  const { stepId, success, status, reason, tool, ...after } = rest;
  const head = JSON.stringify({ stepId, success, status, reason, tool });
  const data = s.data === null ? "null" : storedOutputText(s.data);
  return `${head.slice(0, -1)},"data":${data},${JSON.stringify(after).slice(1)}`;
}

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

/** The counts of `steps` (storage keeps the same counts by trigger as steps change). */
export function countSteps(steps: readonly StepRecord[]): StepCounts {
  const counts: StepCounts = {
    total: steps.length,
    succeeded: 0,
    failed: 0,
    skipped: 0,
    cancelled: 0,
    running: 0,
    durationSum: 0,
    durationCount: 0,
  };
  for (const s of steps) {
    switch (s.status) {
      case "succeeded":
      case "failed":
        if (s.startedAt !== null && s.endedAt !== null) {
          counts.durationSum += s.endedAt - s.startedAt;
          counts.durationCount++;
        }
        counts[s.status]++;
        break;
      case "skipped":
      case "cancelled":
      case "running":
        counts[s.status]++;
        break;
      default:
        break;
    }
  }
  return counts;
}

/** The step counts a status (and a listing entry) shows as `summary`. */
export type SummaryCounts = Pick<
  StepCounts,
  "total" | "succeeded" | "failed" | "skipped" | "cancelled"
>;

/** `summary` of a status document or listing entry (SPEC 6, 8.2). */
export function stepSummary(c: SummaryCounts) {
  return {
    totalSteps: c.total,
    successfulSteps: c.succeeded,
    failedSteps: c.failed,
    skippedSteps: c.skipped,
    cancelledSteps: c.cancelled,
  };
}

/** The part of `progress` a listing entry shows too: finished steps, of how many, in percent. */
export function stepCompletion(c: SummaryCounts) {
  const completedSteps = c.succeeded + c.failed + c.skipped + c.cancelled;
  return {
    completedSteps,
    totalSteps: c.total,
    percentage: c.total === 0 ? 100 : Math.round((completedSteps / c.total) * 10000) / 100,
  };
}

/** `GET /v1/runs/:id` without `steps` (SPEC 6.1): built from the run row alone, O(1). */
export function runSummary(run: RunRecord, plan: CompiledPlan, now: number) {
  const c = run.counts;
  const completion = stepCompletion(c);
  const { completedSteps } = completion;
  const averageStepDurationMs =
    c.durationCount === 0 ? 0 : Math.round(c.durationSum / c.durationCount);
  const finished = run.endedAt !== null;
  const mode = plan.config.mode;
  return {
    runId: run.id,
    name: plan.name,
    status: run.status,
    tags: plan.tags,
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
      ...completion,
      elapsedMs: run.startedAt === null ? 0 : (run.endedAt ?? now) - run.startedAt,
      averageStepDurationMs,
      estimatedTimeRemainingMs: finished ? 0 : (c.total - completedSteps) * averageStepDurationMs,
      runningSteps: c.running,
    },
    summary: stepSummary(c),
    ...(run.error !== null && { error: JSON.parse(run.error) as StepError }),
  };
}

/** `GET /v1/runs/:id`: the summary and every step. */
export function runView(run: RunRecord, plan: CompiledPlan, steps: StepRecord[], now: number) {
  return { ...runSummary(run, plan, now), steps: steps.map(stepView) };
}
