/**
 * The watchdog over calls in flight. Every tool call ends by its timeout at the latest: the
 * tool's own timer aborts it. A call still in flight long after that was lost by the runtime
 * (workerd drops what an object started under a request that was cancelled, its timer
 * included), and the work waiting on it would wait for good: the run would stay `running`,
 * its alarm only renewing the lease. The verdict below lets the alarm restart the object
 * instead, as a crash would (its calls in flight are retried, SPEC 5.5). Pure: `now` is an
 * argument.
 */

/** How long after its timeout a call may still settle before it counts as lost. */
export const CALL_GRACE_MS = 10_000;

export interface CallInFlight {
  stepId: string;
  /** The forEach item, for an item's call. */
  itemIndex?: number;
  attempt: number;
  startedAt: number;
  timeoutMs: number;
}

export type CallWatchVerdict =
  | { type: "healthy" }
  /** `call` (the one overdue longest) outlived its timeout by more than the grace. */
  | { type: "lost"; call: CallInFlight; overdueMs: number };

export function watchCalls(
  calls: Iterable<CallInFlight>,
  now: number,
  graceMs: number = CALL_GRACE_MS,
): CallWatchVerdict {
  let lost: CallInFlight | null = null;
  let overdueMs = 0;
  for (const call of calls) {
    const overdue = now - (call.startedAt + call.timeoutMs);
    if (overdue > graceMs && overdue > overdueMs) {
      lost = call;
      overdueMs = overdue;
    }
  }
  return lost ? { type: "lost", call: lost, overdueMs } : { type: "healthy" };
}

/** What the log says when a lost call restarts the run's object (ids and times only: no params). */
export function lostCallMessage(runId: string, verdict: { call: CallInFlight; overdueMs: number }) {
  const { call, overdueMs } = verdict;
  const item = call.itemIndex === undefined ? "" : ` (item ${call.itemIndex})`;
  return (
    `edgestep: run ${runId}: step "${call.stepId}"${item} attempt ${call.attempt} is still in flight ` +
    `${overdueMs} ms after its ${call.timeoutMs} ms timeout: the call was lost; restarting the ` +
    `run's object, as after a crash (its calls in flight are retried)`
  );
}
