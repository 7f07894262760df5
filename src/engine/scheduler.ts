/**
 * Scheduling decisions (SPEC 5.1, 5.3) as plain functions over plain data.
 *
 * The shell (RunObject) builds a `Scheduler` from stored step rows once per iteration,
 * then alternates `decide()` (what to start, skip or cancel now, and what to do next)
 * with `settle()` (an outcome it has committed). Every call costs O(1) plus the edges
 * it touches: nothing rescans the plan per event, so per-step cost is flat in plan size.
 */
import { MinHeap } from "./heap";
import type { CompiledPlan } from "./plan";
import { nextAttemptAt, type ErrorCategory, type RetryPolicy } from "./retry";

export type StepStatus =
  "pending" | "running" | "retrying" | "waiting" | "succeeded" | "failed" | "skipped" | "cancelled";

export type SkipReason =
  "dependency_failed" | "dependency_skipped" | "condition_false" | "skipped_by_user";

export type FinalStatus = "completed" | "partial" | "failed" | "cancelled";

export const FINISHED: ReadonlySet<StepStatus> = new Set([
  "succeeded",
  "failed",
  "skipped",
  "cancelled",
]);

/** What the scheduler needs of a stored step row. */
export interface StepSnapshot {
  status: StepStatus;
  nextAttemptAt: number | null;
}

/** Something to do to one step now. */
export type Action =
  | { type: "start"; step: number }
  | { type: "skip"; step: number; reason: SkipReason }
  | { type: "cancel"; step: number }
  /** A waiting step's timer is due: the shell completes it. */
  | { type: "resume"; step: number };

/** What the iteration does once the actions are done. */
export type Next =
  | { type: "finish"; status: FinalStatus }
  /** Attempts are in flight: wait for one to settle, or until `wakeAt` (a retry falls due). */
  | { type: "await"; wakeAt: number | null }
  /** Nothing in flight: end the iteration; the alarm goes off at `until` (null: an outside event). */
  | { type: "sleep"; until: number | null };

export type Outcome =
  | { type: "succeeded" }
  | { type: "failed" }
  | { type: "skipped"; reason: SkipReason }
  | { type: "cancelled" }
  | { type: "retry"; at: number }
  /** The attempt suspends until `at` (then a `resume` action comes) or, with null, an outside answer. */
  | { type: "wait"; at: number | null };

export interface Scheduler {
  readonly deps: readonly (readonly number[])[];
  readonly dependents: readonly number[][];
  readonly allDone: Uint8Array;
  readonly failsRun: Uint8Array;
  readonly maxParallel: number;
  status: StepStatus[];
  unfinishedDeps: Int32Array;
  /** Per step, the worst finished dependency: 1 skipped, 2 cancelled, 3 failed. */
  badDeps: Uint8Array;
  ready: number[];
  readyHead: number;
  timers: MinHeap;
  /** Per step: when its current timer (retry or wait) falls due; heap entries at other times are stale. */
  dueAt: Float64Array;
  outbox: Action[];
  running: number;
  finished: number;
  succeeded: number;
  failed: number;
  /** No new step starts: fail-fast tripped, or the run was cancelled. */
  halted: boolean;
  cancelled: boolean;
  /** Bounded mode: how many more steps this iteration's wave may start (null: unbounded). */
  waveBudget: number | null;
  /** Steps found `running` at load: their attempts were interrupted by a restart. */
  interrupted: number[];
}

export function createScheduler(plan: CompiledPlan, rows: readonly StepSnapshot[]): Scheduler {
  const n = plan.steps.length;
  const dependents: number[][] = plan.steps.map(() => []);
  const s: Scheduler = {
    deps: plan.steps.map((st) => st.deps),
    dependents,
    allDone: Uint8Array.from(plan.steps, (st) => (st.trigger === "all_done" ? 1 : 0)),
    failsRun: Uint8Array.from(plan.steps, (st) => (st.onFailure === "fail_run" ? 1 : 0)),
    maxParallel: plan.config.maxParallel,
    status: rows.map((r) => r.status),
    unfinishedDeps: new Int32Array(n),
    badDeps: new Uint8Array(n),
    ready: [],
    readyHead: 0,
    timers: new MinHeap(),
    dueAt: new Float64Array(n).fill(NaN),
    outbox: [],
    running: 0,
    finished: 0,
    succeeded: 0,
    failed: 0,
    halted: false,
    cancelled: false,
    waveBudget: null,
    interrupted: [],
  };
  for (let i = 0; i < n; i++) {
    const status = s.status[i]!;
    for (const d of s.deps[i]!) dependents[d]!.push(i);
    count(s, status, +1);
    if (status === "failed" && s.failsRun[i]) s.halted = true;
    if (status === "running") {
      s.running++;
      s.interrupted.push(i);
    } else if (status === "retrying" || status === "waiting") {
      const at = rows[i]!.nextAttemptAt;
      if (at !== null) setTimer(s, i, at);
    }
  }
  for (let i = 0; i < n; i++) {
    for (const d of s.deps[i]!) loadEdge(s, i, s.status[d]!);
    if (s.status[i] === "pending" && s.unfinishedDeps[i] === 0) release(s, i);
  }
  return s;
}

/** Starts an iteration: due retries become ready; bounded mode fixes the wave. */
export function beginIteration(s: Scheduler, now: number, wave: boolean): void {
  releaseDueTimers(s, now);
  s.waveBudget = wave ? s.ready.length - s.readyHead : null;
}

export function decide(s: Scheduler, now: number): { actions: Action[]; next: Next } {
  if (s.waveBudget === null) releaseDueTimers(s, now);
  const actions = s.outbox;
  s.outbox = [];
  while (
    !s.halted &&
    s.running < s.maxParallel &&
    s.readyHead < s.ready.length &&
    s.waveBudget !== 0
  ) {
    const i = s.ready[s.readyHead++]!;
    if (s.status[i] !== "pending") continue;
    s.status[i] = "running";
    s.running++;
    if (s.waveBudget !== null) s.waveBudget--;
    actions.push({ type: "start", step: i });
  }
  if (s.readyHead > 1024 && s.readyHead * 2 > s.ready.length) {
    s.ready = s.ready.slice(s.readyHead);
    s.readyHead = 0;
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
  const pendingReady = s.readyHead < s.ready.length;
  return { actions, next: { type: "sleep", until: pendingReady ? now : nextTimer(s) } };
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
      setStatus(s, i, "waiting");
      if (outcome.at !== null) setTimer(s, i, outcome.at);
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

/**
 * The outcome of a failed attempt number `attempt` of step `i`: a retry under its policy,
 * or a final failure (also when the run has halted: a halted run starts nothing new).
 */
export function failureOutcome(
  s: Scheduler,
  policy: RetryPolicy,
  attempt: number,
  category: ErrorCategory,
  now: number,
  rand: () => number,
  retryAfterMs?: number,
): Outcome {
  const at = s.halted ? null : nextAttemptAt(policy, attempt, category, now, rand, retryAfterMs);
  return at === null ? { type: "failed" } : { type: "retry", at };
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

function setStatus(s: Scheduler, i: number, status: StepStatus): void {
  count(s, s.status[i]!, -1);
  s.status[i] = status;
  count(s, status, +1);
}

function count(s: Scheduler, status: StepStatus, delta: number): void {
  if (FINISHED.has(status)) s.finished += delta;
  if (status === "succeeded") s.succeeded += delta;
  else if (status === "failed") s.failed += delta;
}

/** Step `i` reached a final status: release dependents, cascading skips. */
function finish(s: Scheduler, i: number): void {
  const work = [i];
  while (work.length > 0) {
    const done = work.pop()!;
    for (const d of s.dependents[done]!) {
      depFinished(s, d, s.status[done]!);
      if (s.status[d] !== "pending" || s.unfinishedDeps[d] !== 0) continue;
      const skip = release(s, d);
      if (skip) work.push(d);
    }
  }
}

/** At load: counts the edge from step `i` to a dependency in status `depStatus`. */
function loadEdge(s: Scheduler, i: number, depStatus: StepStatus): void {
  if (FINISHED.has(depStatus)) markBadDep(s, i, depStatus);
  else s.unfinishedDeps[i]!++;
}

/** A dependency of step `i` just finished with `depStatus`. */
function depFinished(s: Scheduler, i: number, depStatus: StepStatus): void {
  s.unfinishedDeps[i]!--;
  markBadDep(s, i, depStatus);
}

function markBadDep(s: Scheduler, i: number, depStatus: StepStatus): void {
  const bad =
    depStatus === "failed" ? 3 : depStatus === "cancelled" ? 2 : depStatus === "skipped" ? 1 : 0;
  if (bad > s.badDeps[i]!) s.badDeps[i] = bad;
}

/** All deps of pending step `i` are finished: make it ready, or skip (or cancel) it. Returns true when it finished. */
function release(s: Scheduler, i: number): boolean {
  const bad = s.badDeps[i]!;
  if (bad === 0 || s.allDone[i]) {
    s.ready.push(i);
    return false;
  }
  if (bad === 2) {
    // A dependency was cancelled (only a stopping run cancels steps): this one never runs either.
    setStatus(s, i, "cancelled");
    s.outbox.push({ type: "cancel", step: i });
    return true;
  }
  const reason: SkipReason = bad === 3 ? "dependency_failed" : "dependency_skipped";
  setStatus(s, i, "skipped");
  s.outbox.push({ type: "skip", step: i, reason });
  return true;
}

function setTimer(s: Scheduler, i: number, at: number): void {
  s.dueAt[i] = at;
  s.timers.push(at, i);
}

function releaseDueTimers(s: Scheduler, now: number): void {
  for (let top = s.timers.peek(); top && top[0] <= now; top = s.timers.peek()) {
    s.timers.pop();
    const i = top[1];
    if (s.dueAt[i] !== top[0]) continue; // superseded by a later timer of the same step
    s.dueAt[i] = NaN;
    if (s.status[i] === "retrying") {
      setStatus(s, i, "pending");
      s.ready.push(i);
    } else if (s.status[i] === "waiting" && !s.halted) {
      setStatus(s, i, "running");
      s.running++;
      s.outbox.push({ type: "resume", step: i });
    }
  }
}

function nextTimer(s: Scheduler): number | null {
  while (s.timers.size > 0) {
    const [at, i] = s.timers.peek()!;
    if ((s.status[i] === "retrying" || s.status[i] === "waiting") && s.dueAt[i] === at && !s.halted)
      return at;
    s.timers.pop();
  }
  return null;
}
