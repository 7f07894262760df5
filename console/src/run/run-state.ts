/**
 * Whether a run's page still follows it. Pure: a function of the status document, so the
 * run page's hooks and the unit tests ask the same question.
 */
import { FINAL_STATUSES, type RunStatus } from "../types";

/**
 * Nothing more will happen to the run itself: it is final and its rollback (which runs after
 * the end) is over. Its webhook may still be retrying: that goes on beside the run (the event
 * stream closes without it) and changes none of the run's figures, so it does not keep the
 * page live; `webhookPending` says when the header should still read the status, slowly.
 */
export function settled(s: Pick<RunStatus, "status" | "rollback">): boolean {
  return FINAL_STATUSES.has(s.status) && s.rollback?.state !== "running";
}

/** A settled run whose webhook is still being delivered (retries can last a minute). */
export function webhookPending(s: Pick<RunStatus, "status" | "rollback" | "webhook">): boolean {
  return settled(s) && s.webhook?.state === "pending";
}
