/**
 * `POST /v1/runs/:id/approve` (SPEC 5.4): decides what an approval request means for the run,
 * without changing anything. It answers the risk gate while the run waits there (and the
 * request names no step), else an `approval` step. RunObject commits the decision.
 */
import type { RunRecord } from "../../src/engine/records";
import type { Answer } from "../../src/engine/verdict";
import type { StepTable } from "../storage/step-table";
import type { ControlOutcome } from "./run-controls";

export interface ApproveRequest {
  approved: boolean;
  skipSteps?: string[];
  stepId?: string;
  comment?: string;
}

/** `invalid`: the request names something that does not exist or does not apply (400; `field`: the body field). */
export type ApproveOutcome =
  ControlOutcome | { ok: false; invalid: true; message: string; field?: string };

export type ApprovalDecision =
  /** Nothing changes: the request is invalid or does not apply now. */
  | { type: "refuse"; outcome: NonNullable<ApproveOutcome> }
  /** The risk gate is denied: the run is cancelled. */
  | { type: "deny_risk_gate"; comment?: string }
  /** The risk gate opens: the run starts, with `skipSteps` skipped. */
  | { type: "open_risk_gate"; skipSteps: string[] }
  /** An `approval` step gets its answer. */
  | { type: "answer_step"; index: number; answer: Answer };

export function decideApproval(
  run: RunRecord,
  steps: StepTable,
  request: ApproveRequest,
): ApprovalDecision {
  if (run.riskGate && request.stepId === undefined) return decideRiskGate(steps, request);
  return decideApprovalStep(run, steps, request);
}

function decideRiskGate(steps: StepTable, request: ApproveRequest): ApprovalDecision {
  const skipSteps = request.skipSteps ?? [];
  const unknown = skipSteps.filter((id) => steps.indexOf(id) === undefined);
  if (unknown.length > 0)
    return refuse({
      ok: false,
      invalid: true,
      field: "skipSteps",
      message: `skipSteps: unknown step(s) ${unknown.join(", ")}`,
    });
  if (!request.approved) {
    // A "no" cancels the run: steps named to skip would be ignored, which the caller should know.
    if (skipSteps.length > 0)
      return refuse({
        ok: false,
        invalid: true,
        field: "skipSteps",
        message: `skipSteps: a rejected run skips nothing (it is cancelled); send approved: true to run it without these steps`,
      });
    return { type: "deny_risk_gate", ...(request.comment && { comment: request.comment }) };
  }
  return { type: "open_risk_gate", skipSteps };
}

function decideApprovalStep(
  run: RunRecord,
  steps: StepTable,
  request: ApproveRequest,
): ApprovalDecision {
  const waiting = steps.waitingForApproval();
  // With one step waiting the request need not name it; with several it must.
  const stepId = request.stepId ?? (waiting.length === 1 ? waiting[0] : undefined);
  if (stepId === undefined) {
    const message =
      waiting.length > 1
        ? `several steps wait for approval (${waiting.join(", ")}): name one in stepId`
        : `nothing waits for approval: the run is ${run.status}`;
    return refuse(
      waiting.length > 1
        ? { ok: false, invalid: true, field: "stepId", message }
        : { ok: false, status: run.status, message },
    );
  }
  const index = steps.indexOf(stepId);
  if (index === undefined)
    return refuse({
      ok: false,
      invalid: true,
      field: "stepId",
      message: `unknown step "${stepId}"`,
    });
  if (!waiting.includes(stepId)) {
    const gate = run.riskGate
      ? ": the run waits at the risk gate, answered without stepId (with skipSteps to skip steps)"
      : `: it is ${steps.get(index)?.status}, and the run is ${run.status}`;
    return refuse({
      ok: false,
      status: run.status,
      message: `step "${stepId}" is not waiting for approval${gate}`,
    });
  }
  // Only the risk gate skips steps: ignoring skipSteps here would run steps the caller meant to skip.
  if (request.skipSteps !== undefined && request.skipSteps.length > 0) {
    return refuse({
      ok: false,
      invalid: true,
      field: "skipSteps",
      message: `skipSteps: only the risk gate takes skipSteps; approval step "${stepId}" is answered with approved (and comment)`,
    });
  }
  return {
    type: "answer_step",
    index,
    answer: {
      type: "approval",
      approved: request.approved,
      ...(request.comment && { comment: request.comment }),
    },
  };
}

function refuse(outcome: NonNullable<ApproveOutcome>): ApprovalDecision {
  return { type: "refuse", outcome };
}
