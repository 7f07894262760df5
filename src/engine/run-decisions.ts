/**
 * The run-level decisions of an iteration (SPEC 5.1, 5.8): whether it has work at all,
 * whether the run used up its iterations, and how it ends (finished, paused, waiting for
 * an outside answer, again at once, or asleep until the next due row). Pure: the shell
 * applies the tagged decision it gets.
 */
import type { RunMode } from "./plan-schema";
import type { FinalStatus } from "./records";
import {
  beginIteration,
  finalStatus,
  hasReadyWork,
  onlyWaitingForAnswers,
  type Next,
  type Scheduler,
} from "./scheduler";

/** What a decision needs of the run row. */
export interface RunCounters {
  iterations: number;
  /** Bounded mode: pause at this many iterations; continuous: the redriven ceiling (else null). */
  iterationBudget: number | null;
}

export type IterationStart =
  /** Nothing is due (woken early, or an answer released nothing): `waiting` when only answers can help. */
  | { type: "idle"; waiting: boolean }
  /** Continuous mode used its iterations: the run fails (`iteration_limit_exceeded`). */
  | { type: "limit_exceeded"; max: number }
  /** An outside answer finished the last step after the run iterated: it ends, with no iteration. */
  | { type: "finish"; status: FinalStatus }
  | { type: "run" }
  /**
   * Steps were found in flight: a restart cut the last iteration off, and this one carries it
   * on. It is not counted again, and no limit applies: a crash costs the run no iteration.
   */
  | { type: "resume" };

export type IterationEnd =
  | { type: "finish"; status: FinalStatus }
  /** Bounded mode used its iterations: `paused` until `POST /resume`. */
  | { type: "pause" }
  /** Work is ready now (a bounded wave left some): the next iteration runs at once. */
  | { type: "again" }
  /** Only outside answers can move the run on: it is `waiting`. */
  | { type: "wait_for_answers" }
  /** Asleep until the earliest due row (the alarm points at it). */
  | { type: "sleep" };

/** Decides whether an iteration runs. Due timers are released first (bounded mode fixes its wave). */
export function startIteration(
  s: Scheduler,
  mode: RunMode,
  run: RunCounters,
  now: number,
): IterationStart {
  beginIteration(s, now, mode.type === "bounded");
  const hasWork = s.interrupted.length > 0 || hasReadyWork(s) || s.outbox.length > 0;
  if (!hasWork && s.finished < s.status.length)
    return { type: "idle", waiting: onlyWaitingForAnswers(s) };
  // Nothing is left to iterate for, so no iteration limit or budget applies (a first
  // iteration still runs, to start the run even when every step was skipped at the gate).
  if (!hasWork && run.iterations > 0) return { type: "finish", status: finalStatus(s) };
  if (s.interrupted.length > 0 && run.iterations > 0) return { type: "resume" };
  // A redrive grants a fresh allowance: iterationBudget then holds the new ceiling.
  if (mode.type === "continuous" && run.iterations >= (run.iterationBudget ?? mode.maxIterations))
    return { type: "limit_exceeded", max: mode.maxIterations };
  return { type: "run" };
}

/**
 * Decides how an iteration ends once nothing is in flight. `run` is the run row after the
 * iteration began.
 */
export function endIteration(
  s: Scheduler,
  next: Exclude<Next, { type: "await" }>,
  mode: RunMode,
  run: RunCounters,
): IterationEnd {
  if (next.type === "finish") return { type: "finish", status: next.status };
  if (
    mode.type === "bounded" &&
    run.iterationBudget !== null &&
    run.iterations >= run.iterationBudget
  )
    return { type: "pause" };
  // A repair changed the plan (SPEC 9.2): the next iteration runs with the new one.
  if (hasReadyWork(s) || s.replanned) return { type: "again" };
  return onlyWaitingForAnswers(s) ? { type: "wait_for_answers" } : { type: "sleep" };
}
