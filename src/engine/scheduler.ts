/**
 * Scheduling decisions (SPEC 5.1, 5.3) as plain functions over plain data.
 *
 * The shell (RunObject) builds a `Scheduler` from stored step rows once per iteration,
 * then alternates `decide()` (what to start, skip or cancel now, and what to do next)
 * with `settle()` (an outcome it has committed). Every call costs O(1) plus the edges
 * it touches: nothing rescans the plan per event, so per-step cost is flat in plan size.
 */
import { FINISHED, type FinalStatus } from "./records";
import {
  finish,
  nextTimer,
  releaseDueTimers,
  releaseForIteration,
  setStatus,
  setTimer,
  type Action,
  type Outcome,
  type Scheduler,
} from "./scheduler-state";
import type { Verdict } from "./verdict";

export {
  createScheduler,
  type Action,
  type Outcome,
  type Scheduler,
  type StepSnapshot,
} from "./scheduler-state";

/** What the iteration does once the actions are done. */
export type Next =
  | { type: "finish"; status: FinalStatus }
  /** Attempts are in flight: wait for one to settle, or until `wakeAt` (a retry falls due). */
  | { type: "await"; wakeAt: number | null }
  /** Nothing in flight: end the iteration; the alarm goes off at `until` (null: an outside event). */
  | { type: "sleep"; until: number | null };

/** Starts an iteration: due retries become ready; bounded mode fixes the wave. */
export function beginIteration(s: Scheduler, now: number, wave: boolean): void {
  releaseForIteration(s, now);
  s.wave = wave;
}

export function decide(s: Scheduler, now: number): { actions: Action[]; next: Next } {
  if (!s.wave) releaseDueTimers(s, now);
  const actions = s.outbox;
  s.outbox = [];
  while (!s.halted && s.running < s.maxParallel && s.ready.size > 0) {
    const i = s.ready.pop()![1];
    if (s.status[i] !== "pending") continue;
    s.status[i] = "running";
    s.running++;
    actions.push({ type: "start", step: i });
  }
  if (s.running > 0) return { actions, next: { type: "await", wakeAt: nextTimer(s) } };
  if (s.halted && s.finished < s.status.length) {
    // Fail-fast or cancel: whatever never started will not start now.
    for (let i = 0; i < s.status.length; i++) {
      if (!FINISHED.has(s.status[i]!)) {
        settle(s, i, { type: "cancelled" });
        actions.push({ type: "cancel", step: i });
      }
    }
    actions.push(...s.outbox);
    s.outbox = [];
  }
  if (s.finished === s.status.length)
    return { actions, next: { type: "finish", status: finalStatus(s) } };
  const pendingReady = hasReadyWork(s);
  return { actions, next: { type: "sleep", until: pendingReady ? now : nextTimer(s) } };
}

/**
 * Whether step `i` ending would let another step start: a ready step waits for a slot
 * (`maxParallel`), or a dependent waits for `i` alone. The shell commits such a result at
 * once instead of waiting a task to commit it with others: it is on the path of more work.
 */
export function releasesWork(s: Scheduler, i: number): boolean {
  if (hasReadyWork(s)) return true;
  return s.dependents[i]!.some((d) => s.status[d] === "pending" && s.unfinishedDeps[d] === 1);
}

/** Records a committed outcome of step `i`. */
export function settle(s: Scheduler, i: number, outcome: Outcome): void {
  const before = s.status[i]!;
  if (FINISHED.has(before)) return;
  if (before === "running") s.running--;
  switch (outcome.type) {
    case "retry":
      setStatus(s, i, "retrying");
      setTimer(s, i, outcome.at);
      return;
    case "wait":
      setStatus(s, i, "waiting", outcome.for);
      if (outcome.at !== null) setTimer(s, i, outcome.at);
      return;
    case "replanned":
      // Not ready: its dependencies are in the new plan. The iteration ends and the next one runs it.
      setStatus(s, i, "pending");
      s.replanned = true;
      return;
    case "succeeded":
      setStatus(s, i, "succeeded");
      break;
    case "failed":
      setStatus(s, i, "failed");
      if (s.failsRun[i]) s.halted = true;
      break;
    case "skipped":
      setStatus(s, i, "skipped");
      break;
    case "cancelled":
      setStatus(s, i, "cancelled");
      break;
    default:
      outcome satisfies never;
  }
  finish(s, i);
}

/** The scheduler's outcome of a committed verdict. */
export function outcomeOf(verdict: Verdict): Outcome {
  switch (verdict.type) {
    case "succeeded":
    case "failed":
    case "cancelled":
      return { type: verdict.type };
    case "retry":
      return { type: "retry", at: verdict.at };
    case "suspended": {
      const { suspension } = verdict;
      const at = suspension.waitingFor === "approval" ? null : suspension.until;
      return { type: "wait", at, for: suspension.waitingFor };
    }
    case "replan":
      return { type: "wait", at: verdict.at, for: "replan" };
    default:
      return verdict satisfies never;
  }
}

/**
 * Nothing is in flight, scheduled for a retry or sleeping on a timer, and some step waits
 * for an approval, a callback or a person's repair: only an outside answer can move the run
 * on (SPEC 5.8).
 */
export function onlyWaitingForAnswers(s: Scheduler): boolean {
  return s.answerWaits > 0 && s.running === 0 && s.retrying === 0 && s.timerWaits === 0;
}

/** Steps are ready and not started (a bounded wave leaves them for the next iteration). */
export function hasReadyWork(s: Scheduler): boolean {
  return s.ready.size > 0 || s.heldBack.length > 0;
}

/**
 * A waiting step goes on now, before its time (its destination granted the slot it waits for):
 * it is running again and its timer is dropped. False when it is not waiting, or the run halted.
 */
export function wakeWaiting(s: Scheduler, i: number): boolean {
  if (s.status[i] !== "waiting" || s.halted) return false;
  s.dueAt[i] = NaN;
  setStatus(s, i, "running");
  s.running++;
  return true;
}

/** Stops the run: nothing new starts; the caller aborts what is in flight. */
export function cancelRun(s: Scheduler): void {
  s.halted = true;
  s.cancelled = true;
}

export function finalStatus(s: Scheduler): FinalStatus {
  if (s.cancelled) return "cancelled";
  if (s.failed > 0) return s.succeeded > 0 && !haltedByFailure(s) ? "partial" : "failed";
  return "completed";
}

function haltedByFailure(s: Scheduler): boolean {
  return s.halted && !s.cancelled;
}
