/**
 * Answers from outside the run (SPEC 5.4, 5.5, 9.2, 10): an approval or the risk gate, a
 * callback, a person's repair, a destination's grant. Each goes through the live iteration
 * when there is one, or is committed now for the next alarm; every change ends with `rearm()`.
 */
import { outcomeOf, type Outcome } from "../../src/engine/scheduler";
import type { RunRecord } from "../../src/engine/records";
import { stepCompletion } from "../../src/engine/status";
import type { RepairAnswer } from "../../src/engine/plan-schema";
import type { Answer, CallbackAnswer } from "../../src/engine/verdict";
import { iterates } from "../alarm";
import type { Iteration } from "../execution/iteration";
import { stepChecks } from "../execution/step-checks";
import { commitAnswer, quotaDue } from "../execution/step-journal";
import { stepOfTicket } from "../execution/tickets";
import { applyAnswer as applyRepairAnswer } from "../replan/repair";
import type { RunContext } from "../run-context";
import { decideApproval, type ApproveOutcome, type ApproveRequest } from "./approval-control";
import { decideReplan, type ReplanOutcome } from "./replan-control";

/** What answers need of the run's object. */
export interface AnswerDeps {
  work: RunContext;
  now(): number;
  /** The iteration live in this instance, if any. */
  iteration(): Iteration | undefined;
  live(): RunRecord | undefined;
  owned(owner: string): RunRecord | undefined;
  rearm(wake?: number | null): Promise<void>;
  wake(): void;
  cancelNow(now: number): void;
}

export class OutsideAnswers {
  constructor(private readonly d: AnswerDeps) {}

  /** Answers the risk gate, or an `approval` step (SPEC 5.4). */
  async approve(owner: string, request: ApproveRequest): Promise<ApproveOutcome> {
    const run = this.d.owned(owner);
    if (!run) return null;
    const now = this.d.now();
    const decision = decideApproval(run, this.d.work.checkpoint.steps, request);
    switch (decision.type) {
      case "refuse":
        return decision.outcome;
      case "deny_risk_gate":
        this.d.work.checkpoint.events.append("approval_denied", now, null, null, {
          gate: "risk",
          ...(decision.comment && { comment: decision.comment }),
        });
        this.d.cancelNow(now);
        await this.d.rearm();
        return { ok: true, status: "cancelled" };
      case "open_risk_gate":
        this.d.work.checkpoint.openRiskGate(decision.skipSteps, now);
        await this.d.rearm(now);
        this.d.wake();
        return { ok: true, status: "pending" };
      case "answer_step":
        await this.applyAnswer(decision.index, decision.answer);
        return { ok: true, status: this.d.work.checkpoint.run.read()!.status };
      default:
        return decision satisfies never;
    }
  }

  /**
   * `POST /v1/runs/:id/replan`: a person's answer to a step's repair (SPEC 9.2). A repair that
   * does not validate changes nothing (400 with its issues; the step keeps waiting).
   */
  async replan(owner: string, answer: RepairAnswer): Promise<ReplanOutcome> {
    const run = this.d.owned(owner);
    if (!run) return null;
    if (this.d.iteration()?.stopping)
      return { ok: false, status: run.status, message: "the run is stopping" };
    const decision = decideReplan(
      run,
      this.d.work.checkpoint.plan.read(),
      this.d.work.checkpoint.replans,
      answer,
    );
    if (decision.type === "refuse") return decision.outcome;
    const now = this.d.now();
    const { row } = decision;
    const outcome = applyRepairAnswer(this.d.work, row, answer, now, { person: true });
    if (outcome.type === "invalid")
      return { ok: false, invalid: true, code: outcome.code, issues: outcome.issues };
    const settled: Outcome =
      outcome.type === "applied" ? { type: "replanned" } : outcomeOf(outcome.verdict);
    const iteration = this.d.iteration();
    if (iteration) iteration.repaired(row.stepIndex, settled);
    else this.moveOn(this.d.work.checkpoint.run.read()!);
    await this.d.rearm(now);
    return { ok: true, status: this.d.work.checkpoint.run.read()!.status };
  }

  /** Completes a `callback` step: `not_found` for an unknown token, `conflict` for a used or expired one. */
  async answerCallback(
    token: string,
    answer: CallbackAnswer,
  ): Promise<"ok" | "not_found" | "conflict"> {
    if (!this.d.live()) return "not_found";
    const { callbacks, steps } = this.d.work.checkpoint;
    const row = callbacks.get(token);
    if (!row) return "not_found";
    if (!callbacks.answer(token, answer)) return "conflict";
    const step = steps.get(row.stepIndex)!;
    // Still in flight (the outbound POST has not returned): the attempt applies the answer when it does.
    if (
      step.status === "waiting" &&
      step.waitingFor === "callback" &&
      step.attempts === row.attempt
    ) {
      await this.applyAnswer(row.stepIndex, { type: "callback", token, answer });
    }
    return "ok";
  }

  /**
   * A destination granted the slot a call of this run waits for (SPEC 10): a call waiting in
   * memory (a forEach item, a compensation) or a step of the live iteration goes at once; a
   * step of a sleeping run is made due now and the alarm wakes it. A grant that no call waits
   * for any more (the run ended, the step moved on) is given back at once.
   */
  async quotaGranted(destination: string, ticket: string): Promise<void> {
    const { gate } = this.d.work;
    if (gate.granted(destination, ticket)) return;
    const run = this.d.work.checkpoint.runRecord();
    const call = stepOfTicket(ticket);
    if (run && iterates(run) && call) {
      const iteration = this.d.iteration();
      if (iteration) {
        if (iteration.quotaGranted(call.step, ticket)) return;
      } else {
        const now = this.d.now();
        const step = this.d.work.checkpoint.plan.read().steps[call.step];
        if (step && quotaDue(this.d.work.checkpoint, step, call.attempt, now))
          return this.d.rearm(now);
      }
    }
    gate.giveBack(destination, ticket);
  }

  /**
   * An answer committed outside an iteration: a run that waited for it runs on, and a paused
   * run whose last step it finished ends at the next alarm rather than at `POST /resume`
   * (SPEC 5.1 pauses only an unfinished run).
   */
  private moveOn(run: RunRecord): void {
    const { completedSteps, totalSteps } = stepCompletion(run.counts);
    if (run.status === "waiting" || (run.status === "paused" && completedSteps === totalSteps))
      this.d.work.checkpoint.run.setStatus("running");
  }

  /** Applies an outside answer: through the live iteration, or committed now for the next alarm. */
  async applyAnswer(index: number, answer: Answer): Promise<void> {
    const iteration = this.d.iteration();
    if (iteration) {
      iteration.answer(index, answer);
      return;
    }
    const c = this.d.work.checkpoint;
    const row = c.steps.get(index)!;
    const now = this.d.now();
    const plan = c.plan.read();
    const step = plan.steps[index]!;
    const checks = stepChecks(this.d.work, plan, index, c.run.read()!.id, now);
    const startedAt = row.startedAt ?? now;
    commitAnswer(c, step, row.attempts, startedAt, answer, this.d.work.output, checks, now);
    this.moveOn(c.run.read()!);
    await this.d.rearm(now);
    this.d.wake();
  }
}
