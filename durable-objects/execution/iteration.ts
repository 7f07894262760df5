/**
 * One iteration (one alarm invocation, SPEC 1): load the checkpoint, and until nothing is in
 * flight and nothing is ready, carry out what the engine decides. Each event (a step may
 * start, an attempt came back, a timer fell due, an answer arrived) gets one engine decision
 * (the scheduler's actions, an attempt verdict), committed before the scheduler settles it.
 */
import { conditionHolds } from "../../src/engine/conditions";
import type { CompiledPlan } from "../../src/engine/plan";
import type { RunRecord, RunStatus } from "../../src/engine/records";
import { endIteration, startIteration } from "../../src/engine/run-decisions";
import {
  cancelRun,
  createScheduler,
  decide,
  outcomeOf,
  settle,
  type Action,
  type Next,
  type Scheduler,
} from "../../src/engine/scheduler";
import type { TemplateContext } from "../../src/engine/templates";
import {
  attemptVerdict,
  storedOutput,
  type Answer,
  type AttemptResult,
  type Verdict,
} from "../../src/engine/verdict";
import type { RunContext } from "../run-context";
import { FanOuts } from "./fan-outs";
import { invoke, type Invoker } from "./invoke";
import {
  attemptStarted,
  commitAnswer,
  commitVerdict,
  stepCancelled,
  stepFailed,
  stepSkipped,
} from "./step-journal";
import { templateContext } from "./template-context";
import { Wakeup } from "./wakeup";

/** An attempt that came back, waiting to be committed with the others that arrived together. */
interface Completion {
  i: number;
  attempt: number;
  startedAt: number;
  result: AttemptResult;
}

export class Iteration {
  private readonly plan: CompiledPlan;
  private readonly invoker: Invoker;
  private s!: Scheduler;
  private attempts: number[] = [];
  private retryBase: number[] = [];
  private readonly controllers = new Map<number, AbortController>();
  private completed: Completion[] = [];
  private readonly fanOuts: FanOuts;
  private readonly wake = new Wakeup();

  constructor(
    private readonly ctx: RunContext,
    run: RunRecord,
  ) {
    const c = ctx.checkpoint;
    this.plan = c.plan.read();
    this.invoker = {
      tools: ctx.tools,
      callbacks: c.callbacks,
      runId: run.id,
      baseUrl: run.baseUrl,
      maxOutputBytes: ctx.maxOutputBytes,
    };
    this.fanOuts = new FanOuts({
      ctx,
      invoker: this.invoker,
      notify: () => this.wake.notify(),
      halted: () => this.s.halted,
      cancelled: () => this.s.cancelled,
    });
  }

  /** Runs the iteration; resolves to `now` when more work is ready at once, else null (the rows decide). */
  async run(): Promise<number | null> {
    const c = this.ctx.checkpoint;
    const now = this.ctx.now();
    const rows = c.steps.load();
    this.attempts = rows.map((r) => r.attempts);
    this.retryBase = rows.map((r) => r.retryBase);
    this.s = createScheduler(this.plan, rows);
    const run = c.run.read()!;
    const start = startIteration(this.s, this.plan.config.mode, run, now);
    switch (start.type) {
      case "idle":
        if (start.waiting) this.becomeWaiting(run.status, now);
        return null;
      case "limit_exceeded":
        this.failIterationLimit(start.max, now);
        return null;
      case "run":
        break;
      default:
        start satisfies never;
    }
    c.beginIteration(run, now);
    await this.ctx.alarm.renewLease();
    for (const i of this.s.interrupted) this.recover(i, now);
    return this.end(await this.loop(), run.status);
  }

  /** Cancels the run: nothing new starts, in-flight attempts are aborted. */
  cancel(): void {
    cancelRun(this.s);
    for (const c of this.controllers.values()) c.abort();
    this.fanOuts.cancel();
    this.wake.notify();
  }

  /** An approval or a callback answered step `i` while this iteration is live. */
  answer(i: number, answer: Answer): void {
    if (this.s.status[i] !== "waiting") return;
    const now = this.ctx.now();
    const startedAt = this.ctx.checkpoint.steps.get(i)!.startedAt ?? now;
    this.settleCommitted(i, this.commitAnswer(i, this.attempts[i]!, startedAt, answer, now));
    this.wake.notify();
  }

  /** Carries out decisions until nothing is in flight and nothing more is ready. */
  private async loop(): Promise<Exclude<Next, { type: "await" }>> {
    for (;;) {
      const { actions, next } = decide(this.s, this.ctx.now());
      for (const action of actions) this.apply(action);
      const fan = this.fanOuts.pump(this.plan.steps, this.ctx.now());
      for (const end of fan.ends) {
        if (end.type === "settled") settle(this.s, end.step, end.outcome);
        else this.fanOutSucceeded(end.step, end.data, end.startedAt);
      }
      if (fan.ends.length > 0) continue;
      if (next.type === "await") {
        await this.ctx.alarm.renewLease();
        const wakeAt = minOf(next.wakeAt, fan.wakeAt);
        await this.wake.wait(wakeAt === null ? undefined : wakeAt - this.ctx.now());
        // Results that arrive together are committed together: one storage transaction, not one each.
        if (this.completed.length > 0 && this.controllers.size > 0)
          await new Promise((r) => setTimeout(r, 0));
        this.commitCompleted();
        continue;
      }
      if (actions.length > 0) continue; // skips and cancels may have released more work
      return next;
    }
  }

  private end(next: Exclude<Next, { type: "await" }>, before: RunStatus): number | null {
    const c = this.ctx.checkpoint;
    const now = this.ctx.now();
    c.events.append("iteration_finished", now);
    const decision = endIteration(this.s, next, this.plan.config.mode, c.run.read()!);
    switch (decision.type) {
      case "finish":
        c.run.finish(decision.status, now);
        this.ctx.statusChanged(decision.status, now);
        return null;
      case "pause":
        c.run.setStatus("paused");
        this.ctx.statusChanged("paused", now);
        return null;
      case "again":
        return now;
      case "wait_for_answers":
        this.becomeWaiting(before, now);
        return null;
      case "sleep":
        return null;
      default:
        return decision satisfies never;
    }
  }

  /** Only outside answers can move the run on: it is `waiting` (announced when it just became so). */
  private becomeWaiting(before: RunStatus, now: number): void {
    this.ctx.checkpoint.run.setStatus("waiting");
    if (before !== "waiting") this.ctx.statusChanged("waiting", now);
  }

  private apply(action: Action): void {
    const c = this.ctx.checkpoint;
    const step = this.plan.steps[action.step]!;
    const now = this.ctx.now();
    switch (action.type) {
      case "start":
        this.start(action.step, now);
        return;
      case "skip":
        stepSkipped(c, step, action.reason, now);
        return;
      case "cancel":
        stepCancelled(c, step, now);
        return;
      case "resume":
        this.timerDue(action.step, now);
        this.wake.notify();
        return;
      default:
        action satisfies never;
    }
  }

  private start(i: number, now: number): void {
    const step = this.plan.steps[i]!;
    if (step.when !== undefined) {
      const holds = conditionHolds(step.when, this.context(i));
      if (holds !== true) {
        const c = this.ctx.checkpoint;
        if (holds === false) {
          stepSkipped(c, step, "condition_false", now);
          settle(this.s, i, { type: "skipped", reason: "condition_false" });
        } else {
          stepFailed(c, step, holds, now);
          settle(this.s, i, { type: "failed" });
        }
        this.wake.notify();
        return;
      }
    }
    if (step.forEach !== undefined) {
      this.startFanOut(i, now);
      return;
    }
    const attempt = ++this.attempts[i]!;
    attemptStarted(this.ctx.checkpoint, step, attempt, now);
    const invocation = invoke(this.invoker, step, attempt, this.context(i), now);
    if (invocation.type === "failed") {
      this.attemptEnded(i, attempt, now, invocation.result);
      // Settled without a promise: the loop must look again rather than wait for a completion.
      this.wake.notify();
      return;
    }
    this.controllers.set(i, invocation.controller);
    void invocation.result.then((result) => {
      this.controllers.delete(i);
      this.completed.push({ i, attempt, startedAt: now, result });
      this.wake.notify();
    });
  }

  private commitCompleted(): void {
    const batch = this.completed;
    this.completed = [];
    for (const c of batch) this.attemptEnded(c.i, c.attempt, c.startedAt, c.result);
  }

  /**
   * An attempt of step `i` came back. A callback that was answered before its outbound POST
   * returned (even when that POST then failed: the job got the token) is decided by its answer.
   */
  private attemptEnded(i: number, attempt: number, startedAt: number, result: AttemptResult) {
    const now = this.ctx.now();
    const failedOrWaits = !("ok" in result) || (!result.ok && result.category !== "cancelled");
    if (failedOrWaits && this.earlyAnswer(i, attempt, startedAt, now)) return;
    this.judge(i, attempt, startedAt, result, now);
  }

  /** Decides what became of step `i`'s attempt, commits it, then settles it. */
  private judge(i: number, attempt: number, startedAt: number, result: AttemptResult, now: number) {
    const step = this.plan.steps[i]!;
    const verdict = attemptVerdict(result, {
      retry: step.retry,
      counted: attempt - this.retryBase[i]!,
      halted: this.s.halted,
      cancelled: this.s.cancelled,
      maxOutputBytes: this.ctx.maxOutputBytes,
      outputName: "output",
      noSuspend: null,
      now,
      rand: this.ctx.rand,
    });
    commitVerdict(this.ctx.checkpoint, step, attempt, startedAt, verdict, now);
    this.settleCommitted(i, verdict);
  }

  private settleCommitted(i: number, verdict: Verdict): void {
    settle(this.s, i, outcomeOf(verdict));
  }

  /** Applies the stored answer of a callback step's attempt, if one came; true when it did. */
  private earlyAnswer(i: number, attempt: number, startedAt: number, now: number): boolean {
    if (this.plan.steps[i]!.tool !== "callback") return false;
    const row = this.ctx.checkpoint.callbacks.ofAttempt(i, attempt);
    if (row?.state !== "answered") return false;
    const answer: Answer = { type: "callback", token: row.token, answer: JSON.parse(row.result!) };
    this.settleCommitted(i, this.commitAnswer(i, attempt, startedAt, answer, now));
    return true;
  }

  private commitAnswer(i: number, attempt: number, startedAt: number, answer: Answer, now: number) {
    const step = this.plan.steps[i]!;
    const max = this.ctx.maxOutputBytes;
    return commitAnswer(this.ctx.checkpoint, step, attempt, startedAt, answer, max, now);
  }

  /** A waiting step's time came: a `wait` is over, a `callback` timed out. */
  private timerDue(i: number, now: number): void {
    const row = this.ctx.checkpoint.steps.get(i)!;
    const attempt = this.attempts[i]!;
    const startedAt = row.startedAt ?? now;
    if (row.waitingFor === "callback") {
      const message = `no callback within ${this.plan.steps[i]!.timeoutMs} ms`;
      this.judge(i, attempt, startedAt, { ok: false, category: "timeout", message }, now);
    } else {
      this.judge(i, attempt, startedAt, { ok: true, data: { resumedAt: iso(now) } }, now);
    }
  }

  /** A step found `running` at load: its attempt (or its items' attempts) was interrupted. */
  private recover(i: number, now: number): void {
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
      this.wake.notify();
    }
  }

  /** Every item of a forEach step succeeded: their outputs are the step's (bounded like any output). */
  private fanOutSucceeded(i: number, data: unknown[], startedAt: number): void {
    const stored = storedOutput(data, this.ctx.maxOutputBytes);
    const verdict: Verdict =
      "error" in stored
        ? { type: "failed", error: stored.error }
        : { type: "succeeded", data: stored.json, status: null };
    const now = this.ctx.now();
    commitVerdict(this.ctx.checkpoint, this.plan.steps[i]!, null, startedAt, verdict, now);
    this.settleCommitted(i, verdict);
  }

  private context(i: number): TemplateContext {
    const { checkpoint, results } = this.ctx;
    const refs = this.plan.steps[i]!.refs;
    return templateContext(checkpoint, this.plan, this.invoker.runId, refs, results);
  }

  private failIterationLimit(max: number, now: number): void {
    const c = this.ctx.checkpoint;
    c.cancelUnfinished(now);
    c.run.finish("failed", now, {
      category: "iteration_limit_exceeded",
      message: `the run used its ${max} iterations (config.mode.maxIterations) without finishing`,
    });
    this.ctx.statusChanged("failed", now);
  }
}

const iso = (t: number) => new Date(t).toISOString();

function minOf(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : Math.min(a, b);
}
