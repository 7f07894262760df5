/**
 * `POST /v1/runs/:id/replan` (SPEC 9.2): decides which waiting repair a person's answer (read
 * by the route: readRepairAnswer) is for, without changing anything: `409` when none is
 * pending (or the run's repairs come from its planner), `400` for a choice it must name.
 * RunObject applies the answer (replan/repair.ts).
 */
import type { CompiledPlan } from "../../src/engine/plan";
import type { RunRecord } from "../../src/engine/records";
import type { RepairAnswer } from "../../src/engine/plan-schema";
import type { Issue } from "../../src/errors";
import type { RepairRow, ReplanTable } from "../storage/replan-table";
import type { ControlOutcome } from "./run-controls";

/** `invalid`: the body is no repair, or its repair does not validate (400 with `issues`). */
export type ReplanOutcome =
  | ControlOutcome
  | { ok: false; invalid: true; code: "invalid_plan" | "egress_denied"; issues: Issue[] };

export type ReplanDecision =
  { type: "refuse"; outcome: NonNullable<ReplanOutcome> } | { type: "answer"; row: RepairRow };

export function decideReplan(
  run: RunRecord,
  plan: CompiledPlan,
  replans: ReplanTable,
  answer: RepairAnswer,
): ReplanDecision {
  const conflict = (message: string): ReplanDecision => ({
    type: "refuse",
    outcome: { ok: false, status: run.status, message },
  });
  if (plan.replan?.mode !== "human")
    return conflict(
      plan.replan
        ? "this run's repairs come from its planner (replan.url), not from POST /replan"
        : "this run's plan has no replan",
    );
  const pending = replans.answerable();
  if (pending.length === 0) return conflict("no repair is pending");
  const { stepId } = answer;
  const row =
    stepId === undefined
      ? pending.length === 1
        ? pending[0]
        : undefined
      : pending.find((r) => r.stepId === stepId);
  if (row) return { type: "answer", row };
  if (stepId !== undefined) return conflict(`no repair of step "${stepId}" is pending`);
  const ids = pending.map((r) => r.stepId).join(", ");
  return refuseInvalid([
    { path: "stepId", message: `several repairs are pending (${ids}): name one in stepId` },
  ]);
}

function refuseInvalid(issues: Issue[]): ReplanDecision {
  return { type: "refuse", outcome: { ok: false, invalid: true, code: "invalid_plan", issues } };
}
