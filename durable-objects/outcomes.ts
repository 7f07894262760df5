/**
 * Commits what became of a step's attempt (SPEC 5.2, 5.5): a success (its output bounded by
 * MAX_OUTPUT_BYTES), a failure and the retry policy's verdict, a durable wait (timer,
 * approval, callback), or an answer that arrived early. Each commit is followed by the
 * scheduler's `settle`, so memory never runs ahead of storage.
 */
import type { CompiledPlan } from "../src/engine/plan";
import type { StepError } from "../src/engine/records";
import type { ErrorCategory } from "../src/engine/retry";
import { failureOutcome, settle, type Scheduler } from "../src/engine/scheduler";
import type { Suspension, ToolResult } from "../src/tools/tool";
import { commitAnswer, commitSuccess, type AnswerDeps } from "./answers";

export interface OutcomeDeps extends AnswerDeps {
  plan: CompiledPlan;
  scheduler: Scheduler;
  /** Per step: attempts made before the last redrive (the retry policy counts from there). */
  retryBase: readonly number[];
  rand: () => number;
}

export class AttemptOutcomes {
  constructor(private readonly deps: OutcomeDeps) {}

  /** A waiting step's time came: a `wait` is over, a `callback` timed out. */
  timerDue(i: number, attempt: number, now: number): void {
    const row = this.deps.store.step(i)!;
    if (row.waitingFor === "callback") {
      this.deps.callbacks.expire(i);
      const step = this.deps.plan.steps[i]!;
      this.fail(
        i,
        attempt,
        { category: "timeout", message: `no callback within ${step.timeoutMs} ms` },
        now,
      );
    } else
      this.succeed(
        i,
        attempt,
        { resumedAt: new Date(now).toISOString() },
        null,
        row.startedAt ?? now,
      );
  }

  complete(i: number, attempt: number, startedAt: number, result: ToolResult): void {
    const now = Date.now();
    if ("suspend" in result) this.suspend(i, attempt, result.suspend, startedAt, now);
    else if (result.ok) this.succeed(i, attempt, result.data, result.status ?? null, startedAt);
    else if (result.category !== "cancelled" && this.applyEarlyAnswer(i, attempt, startedAt, now))
      return;
    else {
      const { category, message, status, retryAfterMs } = result;
      this.fail(
        i,
        attempt,
        { category, message, ...(status !== undefined && { status }) },
        now,
        retryAfterMs,
      );
    }
  }

  /**
   * A callback answered before its outbound POST returned, even when that POST then failed
   * (timed out, lost its connection, the run restarted): the job got the token, so its answer
   * decides the step. True when an answer was applied.
   */
  applyEarlyAnswer(i: number, attempt: number, startedAt: number, now: number): boolean {
    const step = this.deps.plan.steps[i]!;
    if (step.tool !== "callback") return false;
    const row = this.deps.callbacks.ofAttempt(i, attempt);
    if (row?.state !== "answered") return false;
    const answer = { type: "callback" as const, token: row.token, answer: JSON.parse(row.result!) };
    settle(this.deps.scheduler, i, {
      type: commitAnswer(this.deps, step, attempt, startedAt, answer, now),
    });
    return true;
  }

  /** The attempt waits durably: its row records what for and until when; the alarm follows. */
  private suspend(
    i: number,
    attempt: number,
    suspension: Suspension,
    startedAt: number,
    now: number,
  ): void {
    const { store } = this.deps;
    const step = this.deps.plan.steps[i]!;
    switch (suspension.waitingFor) {
      case "timer":
        store.stepWaiting(i, step.id, attempt, "timer", suspension.until, now);
        settle(this.deps.scheduler, i, { type: "wait", at: suspension.until });
        return;
      case "approval":
        store.stepWaiting(i, step.id, attempt, "approval", null, now);
        store.event("approval_requested", now, step.id, attempt);
        settle(this.deps.scheduler, i, { type: "wait", at: null });
        return;
      case "callback": {
        if (this.applyEarlyAnswer(i, attempt, startedAt, now)) return;
        store.stepWaiting(i, step.id, attempt, "callback", suspension.until, now);
        settle(this.deps.scheduler, i, { type: "wait", at: suspension.until });
        return;
      }
      default:
        suspension satisfies never;
    }
  }

  succeed(
    i: number,
    attempt: number | null,
    output: unknown,
    httpStatus: number | null,
    startedAt: number,
  ): void {
    const step = this.deps.plan.steps[i]!;
    const now = Date.now();
    const error = commitSuccess(
      this.deps.store,
      step,
      attempt ?? 0,
      output,
      httpStatus,
      startedAt,
      now,
      this.deps,
    );
    if (error === null) settle(this.deps.scheduler, i, { type: "succeeded" });
    else if (attempt === null) {
      this.deps.store.stepFailed(i, step.id, null, error, now);
      settle(this.deps.scheduler, i, { type: "failed" });
    } else this.fail(i, attempt, error, now);
  }

  /** Commits a failed attempt, then the step's fate: a scheduled retry, a failure or a cancellation. */
  fail(i: number, attempt: number, error: StepError, now: number, retryAfterMs?: number): void {
    const { store } = this.deps;
    const step = this.deps.plan.steps[i]!;
    // A failed attempt's callback token can no longer complete the step: later answers get a 409.
    if (step.tool === "callback") this.deps.callbacks.expire(i);
    store.endAttempt(i, attempt, now, error);
    if (error.category === "cancelled" || this.deps.scheduler.cancelled) {
      store.stepEnded(i, step.id, "cancelled", null, now);
      settle(this.deps.scheduler, i, { type: "cancelled" });
      return;
    }
    const counted = attempt - this.deps.retryBase[i]!;
    const outcome = failureOutcome(
      this.deps.scheduler,
      step.retry,
      counted,
      error.category as ErrorCategory,
      now,
      this.deps.rand,
      retryAfterMs,
    );
    if (outcome.type === "retry") store.stepRetrying(i, step.id, attempt, error, outcome.at, now);
    else store.stepFailed(i, step.id, attempt, error, now);
    settle(this.deps.scheduler, i, outcome);
  }
}
