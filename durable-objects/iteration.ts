/**
 * One iteration (one alarm invocation, SPEC 1): load the checkpoint, ask the scheduler
 * what to do, call tools, commit each outcome before acting on it, and repeat until
 * nothing is in flight and nothing is ready. Returns when the next iteration should run.
 */
import type { CompiledPlan } from "../src/engine/plan";
import type { RunStatus, StepError } from "../src/engine/records";
import {
  beginIteration,
  cancelRun,
  createScheduler,
  decide,
  settle,
  type Action,
  type Scheduler,
} from "../src/engine/scheduler";
import type { StepResult } from "../src/engine/status";
import {
  TemplateUnresolvedError,
  isTruthy,
  resolveTemplates,
  type TemplateContext,
} from "../src/engine/templates";
import type { ToolResult } from "../src/tools/tool";
import { commitAnswer, type Answer } from "./answers";
import type { CallbackStore } from "./callback-store";
import { FanOuts } from "./fan-outs";
import { invoke, type InvokeDeps } from "./invoke";
import { AttemptOutcomes } from "./outcomes";
import type { Sql } from "./sql";
import type { RunStore } from "./store";
import { templateContext } from "./template-context";
import { Wakeup } from "./wakeup";

/** While attempts are in flight the alarm points this far ahead, so a crash resumes the run. */
export const LEASE_MS = 10_000;

export interface IterationDeps extends Omit<InvokeDeps, "runId" | "baseUrl"> {
  store: RunStore;
  db: Sql;
  callbacks: CallbackStore;
  setAlarm(at: number): Promise<void>;
  /** The run reached a status users hear about (final, paused, waiting): events, webhook. */
  runStatusChanged(status: RunStatus, now: number): void;
  /** Results of finished steps, kept across iterations (they never change). */
  results: Map<number, StepResult>;
  rand?: () => number;
}

export class Iteration {
  private readonly plan: CompiledPlan;
  private readonly invokeDeps: InvokeDeps;
  private s!: Scheduler;
  private attempts: number[] = [];
  private retryBase: number[] = [];
  private readonly controllers = new Map<number, AbortController>();
  /** Results that arrived and wait to be committed together (one write transaction). */
  private completed: { i: number; attempt: number; startedAt: number; result: ToolResult }[] = [];
  private readonly fanOuts: FanOuts;
  private outcomes!: AttemptOutcomes;
  private readonly wake = new Wakeup();
  private readonly rand: () => number;
  private leaseUntil = 0;

  constructor(private readonly deps: IterationDeps) {
    this.plan = deps.store.plan();
    const run = deps.store.run()!;
    this.invokeDeps = { ...deps, runId: run.id, baseUrl: run.baseUrl };
    this.rand = deps.rand ?? Math.random;
    this.fanOuts = new FanOuts({
      ...this.invokeDeps,
      db: deps.db,
      store: deps.store,
      rand: this.rand,
      notify: () => this.wake.notify(),
      halted: () => this.s.halted,
    });
  }

  /** Runs the iteration; resolves to `now` when more work is ready at once, else null (rows decide). */
  async run(): Promise<number | null> {
    const { store } = this.deps;
    const now = this.deps.now();
    const rows = store.snapshots();
    this.attempts = rows.map((r) => r.attempts);
    this.retryBase = rows.map((r) => r.retryBase);
    this.s = createScheduler(this.plan, rows);
    this.outcomes = new AttemptOutcomes({
      ...this.deps,
      plan: this.plan,
      scheduler: this.s,
      retryBase: this.retryBase,
      rand: this.rand,
    });
    const mode = this.plan.config.mode;
    beginIteration(this.s, now, mode.type === "bounded");
    const hasWork =
      this.s.interrupted.length > 0 ||
      this.s.readyHead < this.s.ready.length ||
      this.s.outbox.length > 0;
    const run = store.run()!;
    if (!hasWork && this.s.finished < rows.length) {
      // Woken with nothing due (early, or after an answer that released nothing): the run may
      // be back to waiting only for answers.
      this.markWaiting(run.status, now);
      return null;
    }

    // A redrive grants a fresh allowance: iteration_budget then holds the new ceiling.
    if (
      mode.type === "continuous" &&
      run.iterations >= (run.iterationBudget ?? mode.maxIterations)
    ) {
      this.failIterationLimit(now, mode.maxIterations);
      return null;
    }
    store.beginIteration(now);
    await this.renewLease(now);
    for (const i of this.s.interrupted) this.recover(i, now);
    for (;;) {
      const { actions, next } = decide(this.s, this.deps.now());
      for (const action of actions) this.apply(action);
      const fan = this.fanOuts.pump(this.plan.steps, this.deps.now());
      for (const end of fan.ends) {
        if (end.type === "settled") settle(this.s, end.step, end.outcome);
        else this.outcomes.succeed(end.step, null, end.data, null, end.startedAt);
      }
      if (fan.ends.length > 0) continue;
      if (next.type === "await") {
        const t = this.deps.now();
        await this.renewLease(t);
        const wakeAt = minOf(next.wakeAt, fan.wakeAt);
        await this.wake.wait(wakeAt === null ? undefined : wakeAt - t);
        // Results that arrive together are committed together: one storage transaction, not one each.
        if (this.completed.length > 0 && this.controllers.size > 0)
          await new Promise((r) => setTimeout(r, 0));
        this.commitCompleted();
        continue;
      }
      if (actions.length > 0) continue; // skips and cancels may have released more work
      return this.end(
        next.type === "finish" ? next.status : null,
        next.type === "sleep" ? next.until : null,
        run.status,
      );
    }
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
    const attempt = this.attempts[i]!;
    const startedAt = this.deps.store.step(i)!.startedAt ?? this.deps.now();
    const fate = commitAnswer(
      this.deps,
      this.plan.steps[i]!,
      attempt,
      startedAt,
      answer,
      this.deps.now(),
    );
    settle(this.s, i, { type: fate });
    this.wake.notify();
  }

  private end(
    status: RunStatus | null,
    sleepUntil: number | null,
    before: RunStatus,
  ): number | null {
    const { store } = this.deps;
    const end = this.deps.now();
    store.event("iteration_finished", end);
    if (status !== null) {
      store.finishRun(status, end);
      this.deps.runStatusChanged(status, end);
      return null;
    }
    const run = store.run()!;
    if (
      this.plan.config.mode.type === "bounded" &&
      run.iterationBudget !== null &&
      run.iterations >= run.iterationBudget
    ) {
      store.setRunStatus("paused");
      this.deps.runStatusChanged("paused", end);
      return null;
    }
    // Work ready now (a bounded wave left some) means the run is not waiting for answers.
    // `sleepUntil` is a reading of the clock taken before `end`: compare, never equate them.
    const readyNow = sleepUntil !== null && sleepUntil <= end;
    if (!readyNow) this.markWaiting(before, end);
    return readyNow ? end : null;
  }

  /** Nothing is ready or in flight: when only answers (approval, callback) can move the run on, it is `waiting`. */
  private markWaiting(before: RunStatus, now: number): void {
    const { store } = this.deps;
    if (!store.onlyWaitingForAnswers()) return;
    store.setRunStatus("waiting");
    if (before !== "waiting") this.deps.runStatusChanged("waiting", now);
  }

  private apply(action: Action): void {
    const { store } = this.deps;
    const step = this.plan.steps[action.step]!;
    const now = this.deps.now();
    switch (action.type) {
      case "start":
        this.start(action.step, now);
        return;
      case "skip":
        store.stepEnded(step.index, step.id, "skipped", action.reason, now);
        return;
      case "cancel":
        this.deps.callbacks.expire(step.index);
        store.stepEnded(step.index, step.id, "cancelled", null, now);
        return;
      case "resume":
        this.outcomes.timerDue(action.step, this.attempts[action.step]!, now);
        this.wake.notify();
        return;
      default:
        action satisfies never;
    }
  }

  /** A step found `running` at load: its attempt (or its items' attempts) was interrupted. */
  private recover(i: number, now: number): void {
    if (this.plan.steps[i]!.forEach !== undefined) {
      this.startFanOut(i, now);
      return;
    }
    if (
      this.outcomes.applyEarlyAnswer(
        i,
        this.attempts[i]!,
        this.deps.store.step(i)!.startedAt ?? now,
        now,
      )
    )
      return;
    this.deps.callbacks.expire(i);
    const error: StepError = {
      category: "interrupted",
      message: "the run restarted while this attempt was in flight",
    };
    this.outcomes.fail(i, this.attempts[i]!, error, now);
  }

  private context(i: number): TemplateContext {
    return templateContext(
      this.deps.store,
      this.plan,
      this.invokeDeps.runId,
      this.plan.steps[i]!.refs,
      this.deps.results,
    );
  }

  private start(i: number, now: number): void {
    const step = this.plan.steps[i]!;
    if (step.when !== undefined) {
      const holds = conditionHolds(step.when, this.context(i));
      if (holds !== true) {
        if (holds === false) {
          this.deps.store.stepEnded(i, step.id, "skipped", "condition_false", now);
          settle(this.s, i, { type: "skipped", reason: "condition_false" });
        } else {
          this.deps.store.stepFailed(i, step.id, null, holds, now);
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
    this.deps.store.startAttempt(i, step.id, attempt, now);
    const invocation = invoke(this.invokeDeps, step, attempt, this.context(i), now);
    if (invocation.type === "failed") {
      this.outcomes.complete(i, attempt, now, invocation.result);
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
    for (const c of batch) this.outcomes.complete(c.i, c.attempt, c.startedAt, c.result);
  }

  private startFanOut(i: number, now: number): void {
    if (this.s.status[i] !== "running") return;
    const failed = this.fanOuts.start(this.plan.steps[i]!, this.context(i), now);
    if (failed) {
      settle(this.s, i, failed);
      this.wake.notify();
    }
  }

  private async renewLease(now: number): Promise<void> {
    if (now + LEASE_MS / 2 < this.leaseUntil) return;
    this.leaseUntil = now + LEASE_MS;
    await this.deps.setAlarm(this.leaseUntil);
  }

  private failIterationLimit(now: number, max: number): void {
    const { store } = this.deps;
    store.cancelUnfinished(now);
    store.finishRun("failed", now, {
      category: "iteration_limit_exceeded",
      message: `the run used its ${max} iterations (config.mode.maxIterations) without finishing`,
    });
    this.deps.runStatusChanged("failed", now);
  }
}

/**
 * A `when` that matches nothing is false, like an empty wildcard. One that cannot be
 * evaluated (a JSONPath filter that throws on this data) fails the step as `invalid_data`.
 */
function conditionHolds(when: string | boolean, context: TemplateContext): boolean | StepError {
  try {
    return isTruthy(resolveTemplates(when, context));
  } catch (err) {
    if (err instanceof TemplateUnresolvedError) return false;
    return { category: "invalid_data", message: `when: ${(err as Error).message}` };
  }
}

function minOf(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : Math.min(a, b);
}
