/**
 * Retention (SPEC 8.3): a final run is deleted, by its own alarm, a number of days after it
 * ended: the plan's `config.retentionDays`, else the Worker's `RUN_RETENTION_DAYS`. A redrive
 * makes the run active again (its `endedAt` is cleared), so the clock restarts when it ends
 * again. Pure: the caller gives the run and the days.
 */
import { FINAL_RUN_STATUSES, type RunRecord } from "./records";

export const DEFAULT_RETENTION_DAYS = 30;
export const MAX_RETENTION_DAYS = 3650;
export const DAY_MS = 86_400_000;

/** When the run is due for deletion, or null while it is not final. */
export function retentionDue(
  run: Pick<RunRecord, "status" | "endedAt">,
  planDays: number | undefined,
  workerDays: number,
): number | null {
  if (!FINAL_RUN_STATUSES.has(run.status) || run.endedAt === null) return null;
  return run.endedAt + (planDays ?? workerDays) * DAY_MS;
}
