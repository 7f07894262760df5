/**
 * The scheduler's state: step statuses, dependency counters, the ready queue and the
 * timers, built once per iteration from the stored step rows, and the transitions that
 * keep them consistent (counters, releases, cascading skips). scheduler.ts decides with it.
 */
import { heightsOf, topologicalOrder } from "./graph";
import { MinHeap } from "./heap";
import type { CompiledPlan } from "./plan";
import { FINISHED, type SkipReason, type StepStatus, type WaitingFor } from "./records";

/** What the scheduler needs of a stored step row. */
export interface StepSnapshot {
  status: StepStatus;
  nextAttemptAt: number | null;
  waitingFor: WaitingFor | null;
}

/** Something to do to one step now. */
export type Action =
  | { type: "start"; step: number }
  | { type: "skip"; step: number; reason: SkipReason }
  | { type: "cancel"; step: number }
  /** A waiting step's timer is due: the shell completes it. */
  | { type: "resume"; step: number };

export type Outcome =
  | { type: "succeeded" }
  | { type: "failed" }
  | { type: "skipped"; reason: SkipReason }
  | { type: "cancelled" }
  | { type: "retry"; at: number }
  /** The attempt suspends until `at` (then a `resume` action comes) or, with null, an outside answer. */
  | { type: "wait"; at: number | null; for: WaitingFor }
  /**
   * A repair was applied (SPEC 9.2): the step waits for its new definition, which this
   * scheduler (built from the plan before the repair) does not know; the next iteration does.
   */
  | { type: "replanned" };

export interface Scheduler {
  readonly deps: readonly (readonly number[])[];
  readonly dependents: readonly number[][];
  readonly allDone: Uint8Array;
  readonly failsRun: Uint8Array;
  readonly maxParallel: number;
  status: StepStatus[];
  /** Per step: what a `waiting` step waits for. */
  waitingFor: (WaitingFor | null)[];
  unfinishedDeps: Int32Array;
  /** Per step, the worst finished dependency: 1 skipped, 2 cancelled, 3 failed. */
  badDeps: Uint8Array;
  /**
   * Ready steps, first the one heading the longest chain of dependents (`rank`), ties in plan
   * order: when `maxParallel` leaves a choice, the critical path goes first (SPEC 5.1).
   */
  ready: MinHeap;
  /** Per step: its key in `ready` (a greater height first, then a lower index). */
  readonly rank: Float64Array;
  timers: MinHeap;
  /** Per step: when its current timer (retry or wait) falls due; heap entries at other times are stale. */
  dueAt: Float64Array;
  outbox: Action[];
  running: number;
  finished: number;
  succeeded: number;
  failed: number;
  retrying: number;
  /** Steps waiting for an outside answer (approval, callback), and for a timer (or quota). */
  answerWaits: number;
  timerWaits: number;
  /** A person repairs failed steps (`replan.mode` human): replan waits are answer waits, else timer waits (the planner's calls). */
  readonly replanAnswers: boolean;
  /** A repair was applied while this scheduler ran: the plan it was built from is out of date. */
  replanned: boolean;
  /** No new step starts: fail-fast tripped, or the run was cancelled. */
  halted: boolean;
  cancelled: boolean;
  /** Bounded mode: this iteration starts only its wave, the steps ready at its start. */
  wave: boolean;
  /** Steps that became ready during a bounded wave: they wait for the next one. */
  heldBack: number[];
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
    waitingFor: rows.map((r) => (r.status === "waiting" ? r.waitingFor : null)),
    unfinishedDeps: new Int32Array(n),
    badDeps: new Uint8Array(n),
    ready: new MinHeap(),
    rank: rankOf(plan),
    timers: new MinHeap(),
    dueAt: new Float64Array(n).fill(NaN),
    outbox: [],
    running: 0,
    finished: 0,
    succeeded: 0,
    failed: 0,
    retrying: 0,
    answerWaits: 0,
    timerWaits: 0,
    replanAnswers: plan.replan?.mode === "human",
    replanned: false,
    halted: false,
    cancelled: false,
    wave: false,
    heldBack: [],
    interrupted: [],
  };
  for (let i = 0; i < n; i++) {
    const status = s.status[i]!;
    for (const d of s.deps[i]!) dependents[d]!.push(i);
    count(s, i, +1);
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

const ranks = new WeakMap<CompiledPlan, Float64Array>();

/** Each step's key in the ready queue: a higher step first (see `ready`), then plan order; once per plan. */
function rankOf(plan: CompiledPlan): Float64Array {
  let rank = ranks.get(plan);
  if (!rank) {
    const deps = plan.steps.map((st) => st.deps);
    const n = deps.length;
    const height = heightsOf(deps, topologicalOrder(deps) ?? []);
    rank = Float64Array.from(height, (h, i) => -h * n + i);
    ranks.set(plan, rank);
  }
  return rank;
}

/** Step `i` may start: it joins the ready queue, or in a bounded wave the next wave. */
function makeReady(s: Scheduler, i: number): void {
  if (s.wave) s.heldBack.push(i);
  else s.ready.push(s.rank[i]!, i);
}

export function setStatus(
  s: Scheduler,
  i: number,
  status: StepStatus,
  waitingFor?: WaitingFor,
): void {
  count(s, i, -1);
  s.status[i] = status;
  s.waitingFor[i] = status === "waiting" ? (waitingFor ?? s.waitingFor[i] ?? null) : null;
  count(s, i, +1);
}

/** Adds (or removes) step `i` to the counters of its status. */
function count(s: Scheduler, i: number, delta: number): void {
  const status = s.status[i]!;
  if (FINISHED.has(status)) s.finished += delta;
  if (status === "succeeded") s.succeeded += delta;
  else if (status === "failed") s.failed += delta;
  else if (status === "retrying") s.retrying += delta;
  else if (status === "waiting") {
    // A quota wait ends by the destination's grant or at its time: the run's alarm, not an answer.
    const wait = s.waitingFor[i];
    if (wait === "timer" || wait === "quota" || (wait === "replan" && !s.replanAnswers))
      s.timerWaits += delta;
    else s.answerWaits += delta;
  }
}

/** Step `i` reached a final status: release dependents, cascading skips. */
export function finish(s: Scheduler, i: number): void {
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
    makeReady(s, i);
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

export function setTimer(s: Scheduler, i: number, at: number): void {
  s.dueAt[i] = at;
  s.timers.push(at, i);
}

/** An iteration starts: the steps held back by the last wave, and those whose timer is due, are ready. */
export function releaseForIteration(s: Scheduler, now: number): void {
  s.wave = false;
  for (const i of s.heldBack) makeReady(s, i);
  s.heldBack = [];
  releaseDueTimers(s, now);
}

export function releaseDueTimers(s: Scheduler, now: number): void {
  for (let top = s.timers.peek(); top && top[0] <= now; top = s.timers.peek()) {
    s.timers.pop();
    const i = top[1];
    if (s.dueAt[i] !== top[0]) continue; // superseded by a later timer of the same step
    s.dueAt[i] = NaN;
    if (s.status[i] === "retrying") {
      setStatus(s, i, "pending");
      makeReady(s, i);
    } else if (s.status[i] === "waiting" && !s.halted) {
      setStatus(s, i, "running");
      s.running++;
      s.outbox.push({ type: "resume", step: i });
    }
  }
}

export function nextTimer(s: Scheduler): number | null {
  while (s.timers.size > 0) {
    const [at, i] = s.timers.peek()!;
    if ((s.status[i] === "retrying" || s.status[i] === "waiting") && s.dueAt[i] === at && !s.halted)
      return at;
    s.timers.pop();
  }
  return null;
}
