/**
 * Applies an answer to a repair (SPEC 9.2), the planner's or a person's: `giveUp` fails the
 * step (`replan_declined`); a repair is merged into the run's plan and validated like a
 * submission, then committed in one transaction with the step's state (Checkpoint.applyRepair),
 * or fails the step (`replan_invalid`). A person's invalid repair changes nothing: the API
 * answers its issues and the step keeps waiting.
 */
import type { Issue } from "../../src/errors";
import type { RepairAnswer } from "../../src/engine/plan-schema";
import { repairPlan } from "../../src/engine/replan";
import type { StepError } from "../../src/engine/records";
import type { Verdict } from "../../src/engine/verdict";
import { repairFailed } from "../execution/step-journal";
import type { RunContext } from "../run-context";
import type { RepairRow } from "../storage/replan-table";

export type RepairOutcome =
  /** The plan has its new revision; the step waits for the next iteration to run it. */
  | { type: "applied"; newStepIds: string[] }
  /** The step failed (`replan_declined`, `replan_invalid`): settle this verdict. */
  | { type: "failed"; verdict: Verdict }
  /** A person's repair does not validate: nothing changed. */
  | { type: "invalid"; code: "invalid_plan" | "egress_denied"; issues: Issue[] };

/** Issues quoted in a `replan_invalid` message (all of them are in the event). */
const QUOTED_ISSUES = 5;

export function applyAnswer(
  ctx: RunContext,
  row: RepairRow,
  answer: RepairAnswer,
  now: number,
  { person }: { person: boolean },
): RepairOutcome {
  const c = ctx.checkpoint;
  const plan = c.plan.read();
  const step = plan.steps[row.stepIndex]!;
  if ("giveUp" in answer) {
    const reason = answer.reason ? `: ${answer.reason}` : "";
    const error: StepError = {
      category: "replan_declined",
      message: `the repair was declined${reason}`,
    };
    return { type: "failed", verdict: repairFailed(c, step, row.n, "declined", error, now) };
  }
  const repaired = repairPlan(plan, row.stepIndex, answer.steps, ctx.replan.validation);
  if (!repaired.ok) {
    if (person) return { type: "invalid", code: repaired.code, issues: repaired.issues };
    const quoted = repaired.issues.slice(0, QUOTED_ISSUES).map((i) => `${i.path}: ${i.message}`);
    const more =
      repaired.issues.length > QUOTED_ISSUES
        ? ` (and ${repaired.issues.length - QUOTED_ISSUES} more)`
        : "";
    const error: StepError = {
      category: "replan_invalid",
      message: `the repair does not validate: ${quoted.join("; ")}${more}`,
    };
    return { type: "failed", verdict: repairFailed(c, step, row.n, "invalid", error, now) };
  }
  const { newStepIds } = repaired;
  c.applyRepair({ n: row.n, index: row.stepIndex, plan: repaired.plan, newStepIds, now });
  ctx.results.delete(row.stepIndex);
  return { type: "applied", newStepIds };
}
