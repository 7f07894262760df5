/**
 * One iteration (one alarm invocation, SPEC 1): load the checkpoint, ask the scheduler
 * what to do, call tools, commit each outcome before acting on it, and repeat until
 * nothing is in flight and nothing is ready. Returns when the next iteration should run.
 */
import type { CompiledPlan } from "../src/engine/plan";
import type { RunStatus, StepError } from "../src/engine/records";
import type { ErrorCategory } from "../src/engine/retry";
import {
  beginIteration,
  cancelRun,
  createScheduler,
  decide,
  failureOutcome,
  settle,
  type Action,
  type Scheduler,
} from "../src/engine/scheduler";
import type { StepResult } from "../src/engine/status";
import { TemplateUnresolvedError, isTruthy, resolveTemplates, type TemplateContext } from "../src/engine/templates";
import type { Suspension, ToolResult } from "../src/tools/tool";
import { commitAnswer, commitSuccess, type Answer } from "./answers";
import type { CallbackStore } from "./callback-store";
import { FanOutRunner } from "./fan-out-runner";
import { invoke, type InvokeDeps } from "./invoke";
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
  private readonly fanOuts = new Map<number, FanOutRunner>();
  private readonly wake = new Wakeup();
  private readonly rand: () => number;
  private leaseUntil = 0;

  constructor(private readonly deps: IterationDeps) {
    this.plan = deps.store.plan();
    const run = deps.store.run()!;
    this.invokeDeps = { ...deps, runId: run.id, baseUrl: run.baseUrl };
    this.rand = deps.rand ?? Math.random;
  }

  /** Runs the iteration; resolves to `now` when more work is ready at once, else null (rows decide). */
  async run(): Promise<number | null> {
    const { store } = this.deps;
    const now = Date.now();
    const rows = store.snapshots();
    this.attempts = rows.map((r) => r.attempts);
    this.retryBase = rows.map((r) => r.retryBase);
    this.s = createScheduler(this.plan, rows);
    const mode = this.plan.config.mode;
    beginIteration(this.s, now, mode.type === "bounded");
    const hasWork = this.s.interrupted.length > 0 || this.s.readyHead < this.s.ready.length || this.s.outbox.length > 0;
    const run = store.run()!;
    if (!hasWork && this.s.finished < rows.length) {
      // Woken with nothing due (early, or after an answer that released nothing): the run may
      // be back to waiting only for answers.
      this.markWaiting(run.status, now);
      return null;
    }

    // A redrive grants a fresh allowance: iteration_budget then holds the new ceiling.
    if (mode.type === "continuous" && run.iterations >= (run.iterationBudget ?? mode.maxIterations)) {
      this.failIterationLimit(now, mode.maxIterations);
      return null;
    }
    store.beginIteration(now);
    await this.renewLease(now);
    for (const i of this.s.interrupted) this.recover(i, now);
    for (;;) {
      const { actions, next } = decide(this.s, Date.now());
      for (const action of actions) this.apply(action);
      const fan = this.pumpFanOuts(Date.now());
      if (fan.changed) continue;
      if (next.type === "await") {
        const t = Date.now();
        await this.renewLease(t);
        const wakeAt = minOf(next.wakeAt, fan.wakeAt);
        await this.wake.wait(wakeAt === null ? undefined : wakeAt - t);
        // Results that arrive together are committed together: one storage transaction, not one each.
        if (this.completed.length > 0 && this.controllers.size > 0) await new Promise((r) => setTimeout(r, 0));
        this.commitCompleted();
        continue;
      }
      if (actions.length > 0) continue; // skips and cancels may have released more work
      return this.end(next.type === "finish" ? next.status : null, next.type === "sleep" ? next.until : null, run.status);
    }
  }

  /** Cancels the run: nothing new starts, in-flight attempts are aborted. */
  cancel(): void {
    cancelRun(this.s);
    for (const c of this.controllers.values()) c.abort();
    for (const f of this.fanOuts.values()) f.cancel();
    this.wake.notify();
  }

  /** An approval or a callback answered step `i` while this iteration is live. */
  answer(i: number, answer: Answer): void {
    if (this.s.status[i] !== "waiting") return;
    const attempt = this.attempts[i]!;
    const startedAt = this.deps.store.step(i)!.startedAt ?? Date.now();
    const fate = commitAnswer(this.deps, this.plan.steps[i]!, attempt, startedAt, answer, Date.now());
    settle(this.s, i, { type: fate });
    this.wake.notify();
  }

  private end(status: RunStatus | null, sleepUntil: number | null, before: RunStatus): number | null {
    const { store } = this.deps;
    const end = Date.now();
    store.event("iteration_finished", end);
    if (status !== null) {
      store.finishRun(status, end);
      this.deps.runStatusChanged(status, end);
      return null;
    }
    const run = store.run()!;
    if (this.plan.config.mode.type === "bounded" && run.iterationBudget !== null && run.iterations >= run.iterationBudget) {
      store.setRunStatus("paused");
      this.deps.runStatusChanged("paused", end);
      return null;
    }
    // Work ready now (a bounded wave left some) means the run is not waiting for answers.
    if (sleepUntil !== end) this.markWaiting(before, end);
    return sleepUntil === end ? end : null;
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
    const now = Date.now();
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
        this.timerDue(action.step, now);
        this.wake.notify();
        return;
      default:
        action satisfies never;
    }
  }

  /** A waiting step's time came: a `wait` is over, a `callback` timed out. */
  private timerDue(i: number, now: number): void {
    const row = this.deps.store.step(i)!;
    const attempt = this.attempts[i]!;
    if (row.waitingFor === "callback") {
      this.deps.callbacks.expire(i);
      const step = this.plan.steps[i]!;
      this.recordFailure(i, attempt, { category: "timeout", message: `no callback within ${step.timeoutMs} ms` }, now);
    } else this.succeed(i, attempt, { resumedAt: new Date(now).toISOString() }, null, row.startedAt ?? now);
  }

  /** A step found `running` at load: its attempt (or its items' attempts) was interrupted. */
  private recover(i: number, now: number): void {
    if (this.plan.steps[i]!.forEach !== undefined) {
      this.startFanOut(i, now);
      return;
    }
    if (this.applyEarlyAnswer(i, this.attempts[i]!, this.deps.store.step(i)!.startedAt ?? now, now)) return;
    this.deps.callbacks.expire(i);
    const error: StepError = { category: "interrupted", message: "the run restarted while this attempt was in flight" };
    this.recordFailure(i, this.attempts[i]!, error, now);
  }

  private context(i: number): TemplateContext {
    return templateContext(this.deps.store, this.plan, this.invokeDeps.runId, this.plan.steps[i]!.refs, this.deps.results);
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
      this.complete(i, attempt, now, invocation.result);
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
    for (const c of batch) this.complete(c.i, c.attempt, c.startedAt, c.result);
  }

  private startFanOut(i: number, now: number): void {
    const step = this.plan.steps[i]!;
    if (this.s.status[i] !== "running") return;
    const runner = new FanOutRunner(
      { ...this.invokeDeps, db: this.deps.db, store: this.deps.store, rand: this.rand, notify: () => this.wake.notify(), halted: () => this.s.halted },
      step,
      this.context(i),
    );
    const row = this.deps.store.step(i)!;
    if (row.startedAt === null) this.deps.store.fanOutStarted(i, step.id, now);
    else if (row.status !== "running") this.deps.store.fanOutResumed(i); // a round of item retries
    const error = runner.begin(now);
    if (error) {
      this.deps.store.stepFailed(i, step.id, null, error, now);
      settle(this.s, i, { type: "failed" });
      this.wake.notify();
      return;
    }
    this.fanOuts.set(i, runner);
  }

  /** Pumps every live fan-out; settles the steps whose items are all done. */
  private pumpFanOuts(now: number): { changed: boolean; wakeAt: number | null } {
    const { store } = this.deps;
    let changed = false;
    let wakeAt: number | null = null;
    for (const [i, runner] of this.fanOuts) {
      const step = this.plan.steps[i]!;
      const next = runner.pump(now);
      if (next.type === "await") {
        wakeAt = minOf(wakeAt, next.wakeAt);
        continue;
      }
      this.fanOuts.delete(i);
      changed = true;
      store.setAttempts(i, runner.totalAttempts());
      if (next.type === "halted") {
        runner.cancelRemaining();
        store.stepEnded(i, step.id, "cancelled", null, now);
        settle(this.s, i, { type: "cancelled" });
      } else if (next.type === "retry") {
        const error = runner.firstError() ?? { category: "server_error", message: "items are retrying" };
        store.stepRetrying(i, step.id, runner.totalAttempts(), error, next.at, now);
        settle(this.s, i, { type: "retry", at: next.at });
      } else if (next.failed > 0) {
        const first = runner.firstError();
        const error: StepError = { category: first?.category ?? "invalid_data", message: `${next.failed} item(s) failed; first: ${first?.message ?? "unknown"}` };
        store.stepFailed(i, step.id, null, error, now);
        settle(this.s, i, { type: "failed" });
      } else {
        // Checked before the rows are loaded: 1,000 items under the limit each can still total far more.
        const tooLarge = runner.outputTooLarge(this.deps.maxOutputBytes);
        if (tooLarge) {
          store.stepFailed(i, step.id, null, tooLarge, now);
          settle(this.s, i, { type: "failed" });
        } else this.succeed(i, null, runner.data(), null, store.step(i)!.startedAt ?? now);
      }
    }
    return { changed, wakeAt };
  }

  private complete(i: number, attempt: number, startedAt: number, result: ToolResult): void {
    const now = Date.now();
    if ("suspend" in result) this.suspend(i, attempt, result.suspend, startedAt, now);
    else if (result.ok) this.succeed(i, attempt, result.data, result.status ?? null, startedAt);
    else if (result.category !== "cancelled" && this.applyEarlyAnswer(i, attempt, startedAt, now)) return;
    else {
      const { category, message, status, retryAfterMs } = result;
      this.recordFailure(i, attempt, { category, message, ...(status !== undefined && { status }) }, now, retryAfterMs);
    }
  }

  /**
   * A callback answered before its outbound POST returned, even when that POST then failed
   * (timed out, lost its connection, the run restarted): the job got the token, so its answer
   * decides the step. True when an answer was applied.
   */
  private applyEarlyAnswer(i: number, attempt: number, startedAt: number, now: number): boolean {
    const step = this.plan.steps[i]!;
    if (step.tool !== "callback") return false;
    const row = this.deps.callbacks.ofAttempt(i, attempt);
    if (row?.state !== "answered") return false;
    const answer = { type: "callback" as const, token: row.token, answer: JSON.parse(row.result!) };
    settle(this.s, i, { type: commitAnswer(this.deps, step, attempt, startedAt, answer, now) });
    return true;
  }

  /** The attempt waits durably: its row records what for and until when; the alarm follows. */
  private suspend(i: number, attempt: number, suspension: Suspension, startedAt: number, now: number): void {
    const { store } = this.deps;
    const step = this.plan.steps[i]!;
    switch (suspension.waitingFor) {
      case "timer":
        store.stepWaiting(i, step.id, attempt, "timer", suspension.until, now);
        settle(this.s, i, { type: "wait", at: suspension.until });
        return;
      case "approval":
        store.stepWaiting(i, step.id, attempt, "approval", null, now);
        store.event("approval_requested", now, step.id, attempt);
        settle(this.s, i, { type: "wait", at: null });
        return;
      case "callback": {
        if (this.applyEarlyAnswer(i, attempt, startedAt, now)) return;
        store.stepWaiting(i, step.id, attempt, "callback", suspension.until, now);
        settle(this.s, i, { type: "wait", at: suspension.until });
        return;
      }
      default:
        suspension satisfies never;
    }
  }

  private succeed(i: number, attempt: number | null, output: unknown, httpStatus: number | null, startedAt: number): void {
    const step = this.plan.steps[i]!;
    const now = Date.now();
    const error = commitSuccess(this.deps.store, step, attempt ?? 0, output, httpStatus, startedAt, now, this.deps.maxOutputBytes);
    if (error === null) settle(this.s, i, { type: "succeeded" });
    else if (attempt === null) {
      this.deps.store.stepFailed(i, step.id, null, error, now);
      settle(this.s, i, { type: "failed" });
    } else this.recordFailure(i, attempt, error, now);
  }

  /** Commits a failed attempt, then the step's fate: a scheduled retry, a failure or a cancellation. */
  private recordFailure(i: number, attempt: number, error: StepError, now: number, retryAfterMs?: number): void {
    const { store } = this.deps;
    const step = this.plan.steps[i]!;
    // A failed attempt's callback token can no longer complete the step: later answers get a 409.
    if (step.tool === "callback") this.deps.callbacks.expire(i);
    store.endAttempt(i, attempt, now, error);
    if (error.category === "cancelled" || this.s.cancelled) {
      store.stepEnded(i, step.id, "cancelled", null, now);
      settle(this.s, i, { type: "cancelled" });
      return;
    }
    const counted = attempt - this.retryBase[i]!;
    const outcome = failureOutcome(this.s, step.retry, counted, error.category as ErrorCategory, now, this.rand, retryAfterMs);
    if (outcome.type === "retry") store.stepRetrying(i, step.id, attempt, error, outcome.at, now);
    else store.stepFailed(i, step.id, attempt, error, now);
    settle(this.s, i, outcome);
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
