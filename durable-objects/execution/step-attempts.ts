/**
 * The attempts of one iteration's steps: starting a step (its `when`, its tool call, or its
 * forEach items), and handing each attempt that comes back (or a timer, a restart, an answer)
 * to StepVerdicts, which commits one engine verdict and then settles it in the scheduler.
 * Attempts that come back together are committed together. A call is admitted by its
 * destination (SPEC 10, QuotaGate) before its attempt is recorded: it goes, or its step waits
 * for quota (no attempt, no retry) until a grant or its time wakes it.
 */
import { conditionHolds } from "../../src/engine/conditions";
import type { CompiledPlan } from "../../src/engine/plan";
import {
  cancelRun,
  releasesWork,
  settle,
  wakeWaiting,
  type Scheduler,
} from "../../src/engine/scheduler";
import type { TemplateContext } from "../../src/engine/templates";
import { quotaVerdict, type Answer, type AttemptResult } from "../../src/engine/verdict";
import { PlannerCalls } from "../replan/planner-calls";
import type { RunContext } from "../run-context";
import type { StepLoad } from "../storage/step-table";
import { FanOuts } from "./fan-outs";
import { callTool, prepare, type Invoker, type Prepared } from "./invoke";
import type { Admission, Lease } from "./quota-gate";
import { stepTicket, type Ticket } from "./tickets";
import { attemptStarted, commitVerdict, stepCancelled, stepSkipped } from "./step-journal";
import { StepVerdicts } from "./step-verdicts";
import { templateContext } from "./template-context";

/** An attempt that came back, waiting to be committed with the others that arrived together. */
interface Completion {
  i: number;
  attempt: number;
  startedAt: number;
  result: AttemptResult;
}

export class StepAttempts {
  readonly fanOuts: FanOuts;
  /** Repairs of steps that failed for good (SPEC 9.2): their planner calls. */
  private readonly planner: PlannerCalls;
  private readonly attempts: number[];
  private readonly controllers = new Map<number, AbortController>();
  /** Steps whose destination is being asked for a slot: its answer starts the call or parks the step. */
  private readonly asking = new Set<number>();
  private completed: Completion[] = [];
  /** Judges, commits and settles what became of the steps. */
  readonly verdicts: StepVerdicts;

  constructor(
    private readonly ctx: RunContext,
    private readonly plan: CompiledPlan,
    private readonly invoker: Invoker,
    private readonly s: Scheduler,
    rows: readonly StepLoad[],
    /** Something settled or came back: the iteration loop should look again. */
    private readonly notify: () => void,
  ) {
    this.attempts = rows.map((r) => r.attempts);
    const verdicts = (this.verdicts = new StepVerdicts(ctx, plan, s, invoker.runId, rows));
    this.fanOuts = new FanOuts({
      ctx,
      invoker,
      notify,
      halted: () => s.halted,
      cancelled: () => s.cancelled,
      failStep: (step, error, now, startedAt) => verdicts.failWhole(step, error, now, startedAt),
    });
    this.planner = new PlannerCalls(ctx, plan, s, invoker.runId, notify);
  }

  /**
   * Attempts came back while others are still in flight: worth committing together, unless
   * one of them lets more work start (a dependent, a queued step), which then goes first.
   */
  get batching(): boolean {
    if (this.completed.length === 0 || this.controllers.size === 0) return false;
    return !this.completed.some((c) => releasesWork(this.s, c.i));
  }

  /** Cancels the run: nothing new starts, in-flight attempts are aborted. */
  cancel(): void {
    cancelRun(this.s);
    for (const c of this.controllers.values()) c.abort();
    this.fanOuts.cancel();
    this.planner.cancel();
  }

  /** An approval or a callback answered step `i` while the iteration is live. */
  answer(i: number, answer: Answer): void {
    if (this.s.status[i] !== "waiting") return;
    const now = this.ctx.now();
    const startedAt = this.ctx.checkpoint.steps.get(i)!.startedAt ?? now;
    this.verdicts.answered(i, this.attempts[i]!, startedAt, answer, now);
    this.notify();
  }

  start(i: number, now: number): void {
    const step = this.plan.steps[i]!;
    if (step.when !== undefined) {
      const holds = conditionHolds(step.when, this.context(i));
      if (holds !== true) {
        const c = this.ctx.checkpoint;
        if (holds === false) {
          stepSkipped(c, step, "condition_false", now);
          settle(this.s, i, { type: "skipped", reason: "condition_false" });
        } else settle(this.s, i, this.verdicts.failWhole(step, holds, now));
        this.notify();
        return;
      }
    }
    if (step.forEach !== undefined) {
      this.startFanOut(i, now);
      return;
    }
    this.launch(i, now);
  }

  /**
   * Step `i`'s destination granted the slot its call waits for (the iteration is live): the
   * call goes now. False when the grant is not for the call this step waits to make.
   */
  quotaGranted(i: number, ticket: Ticket): boolean {
    if (ticket !== stepTicket(i, this.attempts[i]! + 1)) return false;
    if (this.asking.has(i)) return true; // the answer being awaited uses the grant
    if (this.s.waitingFor[i] !== "quota" || !wakeWaiting(this.s, i)) return false;
    this.launch(i, this.ctx.now());
    this.notify();
    return true;
  }

  /** Prepares step `i`'s call and has its destination admit it: the call starts, or the step waits for quota. */
  private launch(i: number, now: number): void {
    const step = this.plan.steps[i]!;
    const prepared = prepare(this.invoker, step, this.context(i));
    if (prepared.type === "failed") {
      const attempt = ++this.attempts[i]!;
      attemptStarted(this.ctx.checkpoint, step, attempt, now);
      this.attemptEnded(i, attempt, now, prepared.result);
      // Settled without a promise: the loop must look again rather than wait for a completion.
      this.notify();
      return;
    }
    const ticket = stepTicket(i, this.attempts[i]! + 1);
    const admission = this.ctx.gate.admit(step.tool, prepared.params, ticket, now);
    if (!(admission instanceof Promise)) {
      this.admitted(i, prepared, admission, now);
      return;
    }
    this.asking.add(i);
    void admission.then((answer) => {
      this.asking.delete(i);
      this.admitted(i, prepared, answer, this.ctx.now());
      this.notify();
    });
  }

  /** Carries out the destination's answer for step `i`'s call (the run may have halted while it asked). */
  private admitted(i: number, prepared: Prepared, admission: Admission, now: number): void {
    const step = this.plan.steps[i]!;
    const c = this.ctx.checkpoint;
    if (this.s.halted) {
      if (admission.type === "go") this.ctx.gate.release(admission.lease);
      stepCancelled(c, step, now);
      settle(this.s, i, { type: "cancelled" });
      return;
    }
    if (admission.type === "go") {
      this.call(i, prepared, admission.lease, now);
      return;
    }
    const verdict = quotaVerdict(admission.wait);
    commitVerdict(c, step, null, now, verdict, now);
    this.verdicts.settleCommitted(i, verdict);
  }

  /** Records step `i`'s attempt (SPEC 5.5), then calls its tool. */
  private call(i: number, prepared: Prepared, lease: Lease | null, now: number): void {
    if (prepared.tool.answerNow) {
      this.answerNow(i, prepared, lease, now);
      return;
    }
    const step = this.plan.steps[i]!;
    const attempt = ++this.attempts[i]!;
    attemptStarted(this.ctx.checkpoint, step, attempt, now);
    // Stored before the call is made (SPEC 5.5): the output gate holds a call back only for
    // the writes made before it. The turn's other held rows (the success that made this step
    // ready, the events) go in the same statement.
    this.ctx.checkpoint.flush();
    const invocation = callTool(this.invoker, step, prepared, attempt, now);
    this.controllers.set(i, invocation.controller);
    void invocation.result.then((result) => {
      this.controllers.delete(i);
      this.ctx.gate.ended(step.tool, prepared.params, lease, result, this.ctx.now());
      this.completed.push({ i, attempt, startedAt: now, result });
      this.notify();
    });
  }

  /** Step `i`'s tool answers at once: judged, committed and settled now, with no promise in between. */
  private answerNow(i: number, prepared: Prepared, lease: Lease | null, now: number): void {
    const attempt = ++this.attempts[i]!;
    const result = prepared.tool.answerNow!(prepared.params);
    this.ctx.gate.ended(this.plan.steps[i]!.tool, prepared.params, lease, result, now);
    this.verdicts.judgeAtOnce(i, attempt, result, now);
  }

  /** Commits the attempts that came back since the loop last looked, each judged in turn. */
  commitCompleted(): void {
    const batch = this.completed;
    this.completed = [];
    for (const c of batch) this.attemptEnded(c.i, c.attempt, c.startedAt, c.result);
    this.planner.commitCompleted();
  }

  /**
   * An attempt of step `i` came back. A callback that was answered before its outbound POST
   * returned (even when that POST then failed: the job got the token) is decided by its answer.
   */
  private attemptEnded(i: number, attempt: number, startedAt: number, result: AttemptResult) {
    const now = this.ctx.now();
    const failedOrWaits = !("ok" in result) || (!result.ok && result.category !== "cancelled");
    if (failedOrWaits && this.verdicts.earlyAnswer(i, attempt, startedAt, now)) return;
    this.verdicts.judge(i, attempt, startedAt, result, now);
  }

  /** A waiting step's time came: a `wait` is over, a `callback` timed out, a repair is due, a quota wait asks again. */
  timerDue(i: number, now: number): void {
    const row = this.ctx.checkpoint.steps.get(i)!;
    if (row.waitingFor === "replan") return this.planner.due(i, now);
    const attempt = this.attempts[i]!;
    const startedAt = row.startedAt ?? now;
    if (row.waitingFor === "quota") {
      this.launch(i, now); // time to ask its destination again
      return;
    }
    if (row.waitingFor === "callback") {
      const message = `no callback within ${this.plan.steps[i]!.timeoutMs} ms`;
      this.verdicts.judge(i, attempt, startedAt, { ok: false, category: "timeout", message }, now);
    } else {
      this.verdicts.judge(i, attempt, startedAt, { ok: true, data: { resumedAt: iso(now) } }, now);
    }
  }

  /** A step found `running` at load: its attempt (or its items' attempts) was interrupted. */
  recover(i: number, now: number): void {
    if (this.plan.steps[i]!.forEach !== undefined) {
      this.startFanOut(i, now);
      return;
    }
    const attempt = this.attempts[i]!;
    const startedAt = this.ctx.checkpoint.steps.get(i)!.startedAt ?? now;
    const message = "the run restarted while this attempt was in flight";
    this.attemptEnded(i, attempt, startedAt, { ok: false, category: "interrupted", message });
  }

  private startFanOut(i: number, now: number): void {
    if (this.s.status[i] !== "running") return;
    const failed = this.fanOuts.start(this.plan.steps[i]!, this.context(i), now);
    if (failed) {
      settle(this.s, i, failed);
      this.notify();
    }
  }

  private context(i: number): TemplateContext {
    const { checkpoint, results } = this.ctx;
    const refs = this.plan.steps[i]!.refs;
    return templateContext(checkpoint, this.plan, this.invoker.runId, refs, results);
  }
}

const iso = (t: number) => new Date(t).toISOString();
