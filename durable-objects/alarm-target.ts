/**
 * Where the run's alarm should point. SQLite is the truth and the alarm only a pointer at
 * the earliest due row: a step's retry or timer, a compensation, a webhook delivery. Every
 * change re-aims it from the rows (RunObject.rearm): timers kept in memory would be lost
 * when the object is evicted.
 */
import type { RunRecord, RunStatus } from "../src/engine/records";
import type { RunState } from "./run-state";

/** Statuses whose alarm runs iterations (a `waiting` run may have timeouts due). */
const ACTIVE: ReadonlySet<RunStatus> = new Set(["pending", "running", "waiting"]);

/** True when the alarm should run iterations: an active run not held at the risk gate. */
export function iterates(run: RunRecord): boolean {
  return ACTIVE.has(run.status) && !run.riskGate;
}

/** The earliest due time (or `soon`, when the iteration asked for it), or null when nothing is due. */
export function alarmTarget(
  { store, rollback, outbox }: RunState,
  run: RunRecord | undefined,
  soon: number | null,
  now: number,
): number | null {
  const candidates = [soon, outbox.earliestDue(), rollback.earliestDue(now)];
  if (run && iterates(run)) candidates.push(store.earliestDue());
  const due = candidates.filter((t): t is number => t !== null);
  return due.length === 0 ? null : Math.min(...due);
}
