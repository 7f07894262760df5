/**
 * Commits what happens to a step (SPEC 5.2, 5.5): each function writes that step's rows
 * (steps, attempts, callback tokens) and its events, and nothing else. The verdict was
 * decided in the engine; the scheduler settles it only after this committed it, so memory
 * never runs ahead of storage.
 */
import type { OutputLimits } from "../../src/engine/output";
import type { CompiledStep } from "../../src/engine/plan";
import type { SkipReason, StepError } from "../../src/engine/records";
import { diagnose } from "../../src/engine/replan";
import {
  answerVerdict,
  type Answer,
  type QuotaWait,
  type StepChecks,
  type Verdict,
} from "../../src/engine/verdict";
import { STEP_ATTEMPT } from "../storage/attempt-table";
import type { Checkpoint } from "../storage/checkpoint";
import type { RepairAnswerKind } from "../storage/replan-table";

/** Recorded before the tool is called (SPEC 5.5). */
export function attemptStarted(c: Checkpoint, step: CompiledStep, attempt: number, now: number) {
  c.steps.attemptStarted(step.index, attempt, now); // its attempt's row with it
  c.events.append("step_started", now, step.id, attempt);
}

/**
 * An attempt of a tool that answers at once (`Tool.answerNow`) succeeded: its start and its
 * outcome are written together, one write per row (nothing ran outside the run in between).
 */
export function attemptSucceededAtOnce(
  c: Checkpoint,
  step: CompiledStep,
  attempt: number,
  verdict: Extract<Verdict, { type: "succeeded" }>,
  now: number,
) {
  c.steps.succeededAtOnce(step.index, attempt, verdict.data, verdict.status, now);
  c.attempts.ran(step.index, STEP_ATTEMPT, attempt, now, verdict.status);
  c.events.append("step_started", now, step.id, attempt);
  c.events.append("step_succeeded", now, step.id, attempt, { executionMs: 0 });
}

/** A forEach step runs its items: the first time (`first`), or again after a round of item retries. */
export function fanOutRunning(c: Checkpoint, step: CompiledStep, first: boolean, now: number) {
  c.steps.fanOutRunning(step.index, now);
  if (first) c.events.append("step_started", now, step.id, null, { forEach: true });
}

/** The step retries at `at` (a forEach step: its items do, and `attempt` counts theirs). */
export function retryScheduled(
  c: Checkpoint,
  step: CompiledStep,
  attempt: number | null,
  error: StepError,
  at: number,
  now: number,
) {
  c.steps.retrying(step.index, error, at);
  c.events.append("step_retry_scheduled", now, step.id, attempt, retryData(error, at));
}

/** What a `step_retry_scheduled` event says: the attempt's error and when the next one is due. */
export function retryData(error: StepError, at: number, more: Record<string, unknown> = {}) {
  return { ...error, nextAttemptAt: new Date(at).toISOString(), ...more };
}

/**
 * Commits a verdict on the step's attempt `attempt` (null: the step failed or succeeded as a
 * whole, e.g. a `when` that cannot be evaluated, or a forEach step's items).
 */
export function commitVerdict(
  c: Checkpoint,
  step: CompiledStep,
  attempt: number | null,
  startedAt: number,
  verdict: Verdict,
  now: number,
): void {
  const i = step.index;
  if (verdict.type === "succeeded") {
    c.steps.succeeded(i, attempt, verdict.data, verdict.status, now - startedAt, now);
    c.events.append("step_succeeded", now, step.id, attempt, { executionMs: now - startedAt });
    return;
  }
  if (verdict.type === "suspended") {
    suspended(c, step, attempt, verdict.suspension, now);
    return;
  }
  // A failed attempt's callback token can no longer complete the step (later answers get a
  // 409), unless its POST did not get through and a retry follows: that sends it again.
  if (
    step.tool === "callback" &&
    !(verdict.type === "retry" && c.steps.get(i)?.status === "running")
  )
    c.callbacks.expire(i);
  // The attempt ended with its own error, also when the step fails with another (no repair left).
  const attemptError = (verdict.type === "failed" && verdict.cause) || verdict.error;
  if (attempt !== null) c.attempts.ended(i, STEP_ATTEMPT, attempt, now, attemptError);
  if (attemptError.category === "verification_failed")
    c.events.append("verification_failed", now, step.id, attempt, attemptError);
  switch (verdict.type) {
    case "retry":
      retryScheduled(c, step, attempt, verdict.error, verdict.at, now);
      return;
    case "failed":
      if (verdict.error.category === "replan_limit_reached")
        c.events.append("replan_failed", now, step.id, null, verdict.error);
      c.steps.failed(i, verdict.error, now - startedAt, now, verdict.data ?? null);
      c.events.append("step_failed", now, step.id, attempt, verdict.error);
      return;
    case "replan":
      repairRequested(c, step, verdict, now);
      return;
    case "cancelled":
      c.replans.cancelOf(i, now);
      c.steps.ended(i, "cancelled", null, now);
      return;
    default:
      verdict satisfies never;
  }
}

/**
 * The step failed for good and the run asks for a repair (SPEC 9.2): a numbered request, and
 * the step waiting for it (until its planner call is due, or a person may answer).
 */
function repairRequested(
  c: Checkpoint,
  step: CompiledStep,
  verdict: Extract<Verdict, { type: "replan" }>,
  now: number,
) {
  const { error } = verdict;
  const mode = c.plan.read().replan?.mode ?? "url";
  const attempts = c.steps.get(step.index)!.attempts;
  const diagnosis = diagnose(step, error, attempts);
  const n = c.replans.request({
    stepIndex: step.index,
    stepId: step.id,
    mode,
    error,
    diagnosis,
    now,
  });
  if (verdict.at === null) c.replans.opened(n, now);
  c.steps.waitingForRepair(step.index, error, verdict.data ?? null, verdict.at);
  const until = verdict.at === null ? {} : { until: new Date(verdict.at).toISOString() };
  c.events.append("step_waiting", now, step.id, null, { waitingFor: "replan", ...until });
  c.events.append("replan_requested", now, step.id, null, { n, mode, error, diagnosis });
}

/**
 * The step's repair `n` waits until `at` (the cooldown, or a retry of the planner call after
 * `error`): said again in the events, since `at` moved from the time they last named.
 */
export function repairWaits(
  c: Checkpoint,
  step: CompiledStep,
  n: number,
  at: number,
  error: StepError | null,
  now: number,
) {
  c.replans.waiting(n, error && `${error.category}: ${error.message}`);
  c.steps.repairDue(step.index, at);
  const until = new Date(at).toISOString();
  c.events.append("step_waiting", now, step.id, null, { waitingFor: "replan", until });
}

/** A person may answer the step's repair `n` from now on (its cooldown is over). */
export function repairOpened(c: Checkpoint, step: CompiledStep, n: number, now: number) {
  c.replans.opened(n, now);
  c.steps.repairDue(step.index, null);
}

/**
 * Repair `n` failed (`answer`: how, `error`: the step's new error): it is settled and the step
 * fails; the run goes on under SPEC 5.3. Returns the verdict for the scheduler.
 */
export function repairFailed(
  c: Checkpoint,
  step: CompiledStep,
  n: number,
  answer: Exclude<RepairAnswerKind, "repaired">,
  error: StepError,
  now: number,
): Verdict {
  c.replans.settled(n, answer, now, error.message);
  c.events.append("replan_failed", now, step.id, null, { n, answer, ...error });
  const verdict: Verdict = { type: "failed", error };
  commitVerdict(c, step, null, now, verdict, now);
  return verdict;
}

function suspended(
  c: Checkpoint,
  step: CompiledStep,
  attempt: number | null,
  suspension: Extract<Verdict, { type: "suspended" }>["suspension"],
  now: number,
) {
  const until = suspension.waitingFor === "approval" ? null : suspension.until;
  c.steps.waiting(step.index, suspension.waitingFor, until);
  if (suspension.waitingFor === "quota") {
    // Not an attempt (SPEC 10): the call has not started; `until` is when the run asks again.
    c.events.append("quota_wait", now, step.id, null, quotaWaitData(suspension));
    return;
  }
  c.events.append("step_waiting", now, step.id, attempt, {
    waitingFor: suspension.waitingFor,
    ...(until !== null && { until: new Date(until).toISOString() }),
  });
  if (suspension.waitingFor === "approval")
    c.events.append("approval_requested", now, step.id, attempt);
}

/** What a `quota_wait` event says: the destination, why, and (when known) the place in its queue or the pause's end. */
export function quotaWaitData(wait: QuotaWait, more: Record<string, unknown> = {}) {
  return {
    destination: wait.destination,
    reason: wait.reason,
    ...more,
    ...(wait.position !== null && { position: wait.position }),
    ...(wait.pausedUntil !== null && { pausedUntil: new Date(wait.pausedUntil).toISOString() }),
  };
}

/** A forEach item's call waits for its destination (the step goes on running its other items). */
export function itemQuotaWait(
  c: Checkpoint,
  step: CompiledStep,
  item: number,
  wait: QuotaWait,
  now: number,
) {
  c.events.append("quota_wait", now, step.id, null, quotaWaitData(wait, { item }));
}

/**
 * The destination granted the slot a step waits for to make attempt `attempt`, while no
 * iteration is live: the step is due now. False, and nothing written, when it does not wait for it.
 */
export function quotaDue(c: Checkpoint, step: CompiledStep, attempt: number, now: number): boolean {
  const row = c.steps.get(step.index);
  if (row?.status !== "waiting" || row.waitingFor !== "quota" || row.attempts + 1 !== attempt)
    return false;
  c.steps.waiting(step.index, "quota", now);
  return true;
}

/**
 * Commits an outside answer to the waiting step's attempt `attempt` (its record: the approval
 * event or the used token, then its verdict). Returns the verdict for the scheduler.
 */
export function commitAnswer(
  c: Checkpoint,
  step: CompiledStep,
  attempt: number,
  startedAt: number,
  answer: Answer,
  limits: OutputLimits,
  checks: StepChecks,
  now: number,
): Verdict {
  if (answer.type === "callback") c.callbacks.use(answer.token);
  else {
    c.events.append(
      answer.approved ? "approval_granted" : "approval_denied",
      now,
      step.id,
      attempt,
      answer.comment ? { comment: answer.comment } : undefined,
    );
  }
  const verdict = answerVerdict(answer, limits, checks);
  commitVerdict(c, step, attempt, startedAt, verdict, now);
  return verdict;
}

export function stepSkipped(c: Checkpoint, step: CompiledStep, reason: SkipReason, now: number) {
  c.steps.ended(step.index, "skipped", reason, now);
  c.events.append("step_skipped", now, step.id, null, { reason });
}

/** A step that never ran is cancelled (the run stopped): its tokens cannot complete it. */
export function stepCancelled(c: Checkpoint, step: CompiledStep, now: number) {
  c.callbacks.expire(step.index);
  c.replans.cancelOf(step.index, now);
  c.steps.ended(step.index, "cancelled", null, now);
}
