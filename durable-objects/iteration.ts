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
import type { ToolSet } from "../src/tools";
import type { ToolResult } from "../src/tools/tool";
import type { RunStore } from "./store";
import { templateContext } from "./template-context";
import { Wakeup } from "./wakeup";

/** While attempts are in flight the alarm points this far ahead, so a crash resumes the run. */
export const LEASE_MS = 10_000;

export interface IterationDeps {
  store: RunStore;
  tools: ToolSet;
  maxOutputBytes: number;
  setAlarm(at: number): Promise<void>;
  /** The run reached a status users hear about (final, paused): events, webhook. */
  runStatusChanged(status: RunStatus, now: number): void;
  /** Results of finished steps, kept across iterations (they never change). */
  results: Map<number, StepResult>;
  rand?: () => number;
}

export class Iteration {
  private readonly plan: CompiledPlan;
  private readonly runId: string;
  private s!: Scheduler;
  private attempts: number[] = [];
  private retryBase: number[] = [];
  private readonly controllers = new Map<number, AbortController>();
  private readonly wake = new Wakeup();
  private leaseUntil = 0;

  constructor(private readonly deps: IterationDeps) {
    this.plan = deps.store.plan();
    this.runId = deps.store.run()!.id;
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
    if (!hasWork && this.s.finished < rows.length) return null; // woken early: nothing is due yet

    const run = store.run()!;
    if (mode.type === "continuous" && run.iterations >= mode.maxIterations) {
      this.failIterationLimit(now, mode.maxIterations);
      return null;
    }
    store.beginIteration(now);
    await this.renewLease(now);
    for (const i of this.s.interrupted) {
      const error: StepError = { category: "interrupted", message: "the run restarted while this attempt was in flight" };
      this.recordFailure(i, this.attempts[i]!, error, now);
    }
    for (;;) {
      const { actions, next } = decide(this.s, Date.now());
      for (const action of actions) this.apply(action);
      if (next.type === "await") {
        const t = Date.now();
        await this.renewLease(t);
        await this.wake.wait(next.wakeAt === null ? undefined : next.wakeAt - t);
        continue;
      }
      if (actions.length > 0) continue; // skips and cancels may have released more work
      const end = Date.now();
      store.event("iteration_finished", end);
      if (next.type === "finish") {
        store.finishRun(next.status, end);
        this.deps.runStatusChanged(next.status, end);
        return null;
      }
      const budget = store.run()!.iterationBudget;
      if (budget !== null && store.run()!.iterations >= budget) {
        store.setRunStatus("paused");
        this.deps.runStatusChanged("paused", end);
        return null;
      }
      return next.until === end ? end : null;
    }
  }

  /** Cancels the run: nothing new starts, in-flight attempts are aborted. */
  cancel(): void {
    cancelRun(this.s);
    for (const c of this.controllers.values()) c.abort();
    this.wake.notify();
  }

  private apply(action: Action): void {
    const { store } = this.deps;
    const step = this.plan.steps[action.step]!;
    const now = Date.now();
    switch (action.type) {
      case "start":
        this.start(action.step);
        return;
      case "skip":
        store.stepEnded(step.index, step.id, "skipped", action.reason, now);
        return;
      case "cancel":
        store.stepEnded(step.index, step.id, "cancelled", null, now);
        return;
      case "resume": {
        // A durable wait came due: the step succeeds now, and the loop must look again.
        const startedAt = store.step(action.step)!.startedAt ?? now;
        this.succeed(action.step, this.attempts[action.step]!, { data: { resumedAt: new Date(now).toISOString() } }, startedAt);
        this.wake.notify();
        return;
      }
      default:
        action satisfies never;
    }
  }

  private start(i: number): void {
    const { store, tools } = this.deps;
    const step = this.plan.steps[i]!;
    const now = Date.now();
    const context = templateContext(store, this.plan, this.runId, i, this.deps.results);
    if (step.when !== undefined && !conditionHolds(step.when, context)) {
      store.stepEnded(i, step.id, "skipped", "condition_false", now);
      settle(this.s, i, { type: "skipped", reason: "condition_false" });
      this.wake.notify();
      return;
    }
    const attempt = ++this.attempts[i]!;
    store.startAttempt(i, step.id, attempt, now);
    let params: Record<string, unknown>;
    try {
      params = resolveTemplates(step.params, context) as Record<string, unknown>;
    } catch (err) {
      const category = err instanceof TemplateUnresolvedError ? "template_unresolved" : "invalid_data";
      this.recordFailure(i, attempt, { category, message: (err as Error).message }, now);
      return;
    }
    const tool = tools.get(step.tool);
    if (!tool) {
      this.recordFailure(i, attempt, { category: "tool_not_found", message: `tool "${step.tool}" is not configured` }, now);
      return;
    }
    const controller = new AbortController();
    this.controllers.set(i, controller);
    const call = {
      runId: this.runId,
      stepId: step.id,
      attempt,
      idempotencyKey: `${this.runId}:${step.id}`,
      timeoutMs: step.timeoutMs,
      signal: controller.signal,
      maxOutputBytes: this.deps.maxOutputBytes,
      now,
    };
    void tool
      .invoke(params, call)
      .catch((err: unknown): ToolResult => ({ ok: false, category: "network", message: String(err) }))
      .then((result) => {
        this.controllers.delete(i);
        this.complete(i, attempt, now, result);
        this.wake.notify();
      });
  }

  private complete(i: number, attempt: number, startedAt: number, result: ToolResult): void {
    const step = this.plan.steps[i]!;
    const now = Date.now();
    if ("suspend" in result) {
      this.deps.store.stepWaiting(i, step.id, attempt, result.suspend.waitingFor, result.suspend.until, now);
      settle(this.s, i, { type: "wait", at: result.suspend.until });
    } else if (result.ok) this.succeed(i, attempt, result, startedAt);
    else {
      const { category, message, status, retryAfterMs } = result;
      this.recordFailure(i, attempt, { category, message, ...(status !== undefined && { status }) }, now, retryAfterMs);
    }
  }

  private succeed(i: number, attempt: number, result: { data: unknown; status?: number }, startedAt: number): void {
    const step = this.plan.steps[i]!;
    const now = Date.now();
    const data = JSON.stringify(result.data ?? null);
    const bytes = new TextEncoder().encode(data).byteLength;
    if (bytes > this.deps.maxOutputBytes) {
      const message = `output is ${bytes} bytes, more than MAX_OUTPUT_BYTES (${this.deps.maxOutputBytes})`;
      this.recordFailure(i, attempt, { category: "output_too_large", message }, now);
      return;
    }
    this.deps.store.stepSucceeded(i, step.id, attempt, data, result.status ?? null, now - startedAt, now);
    settle(this.s, i, { type: "succeeded" });
  }

  /** Commits a failed attempt, then the step's fate: a scheduled retry, a failure or a cancellation. */
  private recordFailure(i: number, attempt: number, error: StepError, now: number, retryAfterMs?: number): void {
    const { store } = this.deps;
    const step = this.plan.steps[i]!;
    store.endAttempt(i, attempt, now, error);
    if (error.category === "cancelled" || this.s.cancelled) {
      store.stepEnded(i, step.id, "cancelled", null, now);
      settle(this.s, i, { type: "cancelled" });
      return;
    }
    const counted = attempt - this.retryBase[i]!;
    const rand = this.deps.rand ?? Math.random;
    const outcome = failureOutcome(this.s, step.retry, counted, error.category as ErrorCategory, now, rand, retryAfterMs);
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

/** A `when` that matches nothing is false, like an empty wildcard. */
function conditionHolds(when: string | boolean, context: TemplateContext): boolean {
  try {
    return isTruthy(resolveTemplates(when, context));
  } catch (err) {
    if (err instanceof TemplateUnresolvedError) return false;
    throw err;
  }
}
