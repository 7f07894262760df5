/**
 * What became of a step: for an attempt that came back (or timed out, or was interrupted), an
 * answer from outside, or the step as a whole (its `when`, its forEach items), the engine's
 * verdict, committed (step-journal) and only then settled in the scheduler, so memory never
 * runs ahead of storage. StepAttempts starts the calls; this judges what they became.
 */
import type { CompiledPlan, CompiledStep } from "../../src/engine/plan";
import type { StepError } from "../../src/engine/records";
import { outcomeOf, settle, type Outcome, type Scheduler } from "../../src/engine/scheduler";
import {
  attemptVerdict,
  stepFailure,
  successVerdict,
  type Answer,
  type AttemptResult,
  type Verdict,
} from "../../src/engine/verdict";
import type { RunContext } from "../run-context";
import type { StepLoad } from "../storage/step-table";
import { stepChecks } from "./step-checks";
import {
  attemptStarted,
  attemptSucceededAtOnce,
  commitAnswer,
  commitVerdict,
} from "./step-journal";
import { keepResult } from "./template-context";

export class StepVerdicts {
  /** Per step: attempts made before the last redrive (the retry policy counts from there). */
  private readonly retryBase: number[];
  /** Steps some step's templates read (their results are kept in memory once they succeed). */
  private readonly referenced: ReadonlySet<number>;

  constructor(
    private readonly ctx: RunContext,
    private readonly plan: CompiledPlan,
    private readonly s: Scheduler,
    private readonly runId: string,
    rows: readonly StepLoad[],
  ) {
    this.referenced = new Set(plan.steps.flatMap((s) => s.refs));
    this.retryBase = rows.map((r) => r.retryBase);
  }

  /** Decides what became of step `i`'s attempt, commits it, then settles it. */
  judge(i: number, attempt: number, startedAt: number, result: AttemptResult, now: number): void {
    const verdict = this.verdictOf(i, attempt, result, now);
    commitVerdict(this.ctx.checkpoint, this.plan.steps[i]!, attempt, startedAt, verdict, now);
    this.remember(i, attempt, verdict, startedAt, now);
    this.settleCommitted(i, verdict);
  }

  /**
   * Step `i`'s tool answered attempt `attempt` at once (`Tool.answerNow`): its start and its
   * verdict are committed together, then settled, with no promise in between.
   */
  judgeAtOnce(i: number, attempt: number, result: AttemptResult, now: number): void {
    const c = this.ctx.checkpoint;
    const step = this.plan.steps[i]!;
    const verdict = this.verdictOf(i, attempt, result, now);
    if (verdict.type === "succeeded") attemptSucceededAtOnce(c, step, attempt, verdict, now);
    else {
      attemptStarted(c, step, attempt, now);
      commitVerdict(c, step, attempt, now, verdict, now);
    }
    this.remember(i, attempt, verdict, now, now);
    this.settleCommitted(i, verdict);
  }

  /** The engine's verdict on attempt `attempt` of step `i` (not committed). */
  private verdictOf(i: number, attempt: number, result: AttemptResult, now: number): Verdict {
    const step = this.plan.steps[i]!;
    return attemptVerdict(result, {
      retry: step.retry,
      counted: attempt - this.retryBase[i]!,
      halted: this.s.halted,
      cancelled: this.s.cancelled,
      output: this.ctx.output,
      item: false,
      noSuspend: null,
      now,
      rand: this.ctx.rand,
      ...this.checks(i, now),
    });
  }

  /** Step `i`'s verdict was committed: the scheduler learns its outcome. */
  settleCommitted(i: number, verdict: Verdict): void {
    settle(this.s, i, outcomeOf(verdict));
  }

  /** Step `i`'s verdict was committed: a success that templates read is kept in memory. */
  private remember(
    i: number,
    attempt: number,
    verdict: Verdict,
    startedAt: number,
    now: number,
  ): void {
    if (verdict.type === "succeeded" && this.referenced.has(i))
      keepResult(this.ctx.results, this.plan.steps[i]!, attempt, verdict, startedAt, now);
  }

  /** An answer (an approval, a callback) to step `i`'s attempt: committed, then settled. */
  answered(i: number, attempt: number, startedAt: number, answer: Answer, now: number): void {
    const step = this.plan.steps[i]!;
    const { checkpoint, output } = this.ctx;
    const checks = this.checks(i, now);
    const verdict = commitAnswer(checkpoint, step, attempt, startedAt, answer, output, checks, now);
    this.settleCommitted(i, verdict);
  }

  /** Applies the stored answer of a callback step's attempt, if one came; true when it did. */
  earlyAnswer(i: number, attempt: number, startedAt: number, now: number): boolean {
    if (this.plan.steps[i]!.tool !== "callback") return false;
    const row = this.ctx.checkpoint.callbacks.ofAttempt(i, attempt);
    if (row?.state !== "answered") return false;
    const answer: Answer = { type: "callback", token: row.token, answer: JSON.parse(row.result!) };
    this.answered(i, attempt, startedAt, answer, now);
    return true;
  }

  /** Every item of a forEach step succeeded: their outputs are the step's (bounded and verified like any output). */
  fanOutSucceeded(i: number, data: unknown[], startedAt: number): void {
    const now = this.ctx.now();
    const { halted, cancelled } = this.s;
    const rules = { output: this.ctx.output, item: false, halted, cancelled };
    const verdict = successVerdict(data, null, { ...rules, ...this.checks(i, now) });
    commitVerdict(this.ctx.checkpoint, this.plan.steps[i]!, null, startedAt, verdict, now);
    this.settleCommitted(i, verdict);
  }

  /**
   * The step fails as a whole, without an attempt of its own (its `when`, its items): committed;
   * its outcome. `startedAt`: when its items began (its execution time), else it never ran.
   */
  failWhole(step: CompiledStep, error: StepError, now: number, startedAt = now): Outcome {
    const checks = this.checks(step.index, now);
    const verdict = stepFailure({ type: "failed", error }, { halted: this.s.halted, ...checks });
    commitVerdict(this.ctx.checkpoint, step, null, startedAt, verdict, now);
    return outcomeOf(verdict);
  }

  /** The step's own checks (SPEC 9): its `verify`, and whether a failure for good asks for a repair. */
  private checks(i: number, now: number) {
    return stepChecks(this.ctx, this.plan, i, this.runId, now);
  }
}
