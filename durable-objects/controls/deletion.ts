/**
 * Deleting a run (SPEC 8.3), by `DELETE /v1/runs/:id` or when its retention ends (its own
 * alarm). The order makes it crash-safe: a crash at any instant leaves neither a listing
 * entry for a deleted run nor a run that can never be listed or deleted.
 *
 *  1. Mark: the run row records that deletion began, and the alarm is aimed at the rest of
 *     the deletion in the same commit. From then on the run reads as gone (every route
 *     answers 404, its callback tokens too), the feed sends no more updates, and a crash
 *     resumes the deletion by alarm.
 *  2. Unlist: the entry is removed from the owner's RunIndex, which remembers the removal
 *     so an update still in flight cannot bring it back. Until this succeeds (the index
 *     unreachable: retried by alarm with backoff) the run is still stored and still
 *     listed; nothing is lost.
 *  3. Wipe: `deleteAll()` (its data and its alarm) and the tombstone, in one commit
 *     (Checkpoint.wipe). Only now is the data gone, and the id can never be taken again.
 *
 * Steps 2 and 3 are idempotent, so running them again after a crash is harmless.
 */
import { FINAL_RUN_STATUSES, type RunRecord } from "../../src/engine/records";
import { retentionDue } from "../../src/engine/retention";
import type { IndexFeed } from "../listing/index-feed";
import type { Checkpoint } from "../storage/checkpoint";
import type { EarlyAnswer } from "./run-controls";

/** A failed run's compensations are still running (or due): deleting would abandon them. */
function rollbackPending(c: Checkpoint, now: number): boolean {
  return c.compensations.earliestDue(now) !== null;
}

/** Why the run cannot be deleted now (409), or null. */
export function checkDelete(run: RunRecord, c: Checkpoint, now: number): EarlyAnswer | null {
  if (!FINAL_RUN_STATUSES.has(run.status)) {
    return {
      ok: false,
      status: run.status,
      message: `only a finished run can be deleted; this one is ${run.status} (cancel it first)`,
    };
  }
  if (rollbackPending(c, now)) {
    return {
      ok: false,
      status: run.status,
      message: "the run's rollback is still running: delete it once its compensations are done",
    };
  }
  return null;
}

/** A final run whose retention is over (SPEC 8.3), and whose rollback (if any) is done. */
export function retentionEnded(c: Checkpoint, run: RunRecord, now: number, workerDays: number) {
  const due = retentionDue(run, c.plan.read().config.retentionDays, workerDays);
  return due !== null && due <= now && !rollbackPending(c, now);
}

/** This id's run was deleted, or its deletion began: the id is never used again. */
export function isDeleted(c: Checkpoint): boolean {
  return c.tombstone.read() !== undefined || (c.runRecord()?.deleteRequestedAt ?? null) !== null;
}

export interface DeletionDeps {
  checkpoint: Checkpoint;
  feed: IndexFeed;
  now(): number;
  /** Points the alarm at what is due (the rest of the deletion), or clears it once wiped. */
  rearm(): Promise<void>;
}

/** Marks the run for deletion (step 1) and carries the deletion as far as it can now. */
export async function deleteRun(deps: DeletionDeps, now: number): Promise<"deleted" | "retrying"> {
  deps.checkpoint.run.requestDeletion(now);
  // The alarm is aimed at the rest of the deletion in this same turn, so the mark and the
  // alarm commit together: a crash from here on still finishes the deletion.
  await deps.rearm();
  return continueDeletion(deps);
}

/** Steps 2 and 3 of a deletion that began; "retrying" when the index could not be reached. */
export async function continueDeletion(deps: DeletionDeps): Promise<"deleted" | "retrying"> {
  const { checkpoint: c } = deps;
  const run = c.runRecord();
  if (!run) return "deleted";
  try {
    await deps.feed.remove(run);
  } catch (err) {
    console.warn(`edgestep: run ${run.id}: its listing entry could not be removed yet`, err);
    await deps.rearm();
    return "retrying";
  }
  await c.wipe(deps.now());
  await deps.rearm(); // nothing is left: clears the alarm
  return "deleted";
}
