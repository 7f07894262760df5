/**
 * The control requests (cancel, resume, redrive) a run's state allows, and the outcomes the
 * API turns into HTTP answers. Each check returns the outcome to answer without changing
 * anything, or null when the request may go ahead; RunObject then commits it.
 */
import type { CompiledPlan } from "../../src/engine/plan";
import { FINAL_RUN_STATUSES, type RunRecord } from "../../src/engine/records";

/** `deleted`: the id belonged to a deleted run and is never used again. */
export type CreateOutcome = { created: boolean; status: string } | { deleted: true };

/** What a run id holds for a caller (see RunObject.lookup). */
export type RunLookup =
  | { type: "run"; status: string }
  | { type: "deleted"; latestGeneration: number }
  | { type: "none" };

/** `null`: no such run (404); `ok: false`: not allowed in the run's state (409). */
export type ControlOutcome =
  { ok: true; status: string } | { ok: false; status: string; message: string } | null;

/** An outcome answered without changing the run (a check's null means: go ahead). */
export type EarlyAnswer = NonNullable<ControlOutcome>;

/** Cancelling twice is fine (the same answer); an ended run cannot be cancelled. */
export function checkCancel(run: RunRecord): EarlyAnswer | null {
  if (run.status === "cancelled") return { ok: true, status: "cancelled" };
  if (FINAL_RUN_STATUSES.has(run.status)) {
    return { ok: false, status: run.status, message: `the run already ended as ${run.status}` };
  }
  return null;
}

export function checkResume(run: RunRecord): EarlyAnswer | null {
  if (run.status !== "paused")
    return {
      ok: false,
      status: run.status,
      message: `only a paused run can resume; this one is ${run.status}`,
    };
  return null;
}

/** Iterations a resume adds: as asked, else a bounded run's own batch size (else one). */
export function resumeIterations(plan: CompiledPlan, iterations: number | undefined): number {
  const mode = plan.config.mode;
  return iterations ?? (mode.type === "bounded" ? mode.iterations : 1);
}

/** `rolledBack`: whether a rollback was queued for the run (asked only of a failed or partial run). */
export function checkRedrive(run: RunRecord, rolledBack: () => boolean): EarlyAnswer | null {
  if (run.status !== "failed" && run.status !== "partial") {
    return {
      ok: false,
      status: run.status,
      message: `only a failed or partial run can be retried; this one is ${run.status}`,
    };
  }
  // Redrive keeps succeeded results; after a rollback undid them, they no longer hold.
  if (rolledBack()) {
    return {
      ok: false,
      status: run.status,
      message:
        "this run was rolled back (config.rollback): its completed steps were undone, so submit the plan again instead of retrying",
    };
  }
  return null;
}
