/**
 * What the run's status shows of its repairs (SPEC 9.2): `replans`, the history of the settled
 * ones, and `pendingReplan`, the ones a person may answer now with `POST /v1/runs/:id/replan`.
 * The planner gets the same history in each request.
 */
import type { StepError } from "../../src/engine/records";
import type { Checkpoint } from "../storage/checkpoint";
import type { RepairAnswerKind, RepairRow } from "../storage/replan-table";

const iso = (t: number) => new Date(t).toISOString();

/** One settled repair: `at` is when it was asked (the cooldown spaces these), `answeredAt` when it ended. */
export function repairEntry(r: RepairRow) {
  return {
    n: r.n,
    stepId: r.stepId,
    at: iso(r.askedAt ?? r.requestedAt),
    diagnosis: r.diagnosis,
    answer: r.state as RepairAnswerKind,
    newStepIds: r.newStepIds === null ? [] : (JSON.parse(r.newStepIds) as string[]),
    attempts: r.attempts,
    ...(r.answeredAt !== null && { answeredAt: iso(r.answeredAt) }),
    ...(r.reason !== null && { reason: r.reason }),
  };
}

/** `replans` (when the plan replans) and `pendingReplan` (when a person may answer), for the status. */
export function replanStatus(c: Checkpoint) {
  if (!c.plan.read().replan) return {};
  const pending = c.replans.answerable().map((r) => ({
    n: r.n,
    stepId: r.stepId,
    error: JSON.parse(r.error) as StepError,
    diagnosis: r.diagnosis,
  }));
  return {
    replans: c.replans.history().map(repairEntry),
    ...(pending.length > 0 && { pendingReplan: pending }),
  };
}
