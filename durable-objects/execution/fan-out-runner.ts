/**
 * Runs the items of one `forEach` step inside an iteration: resolves the item list once
 * (stored one row per item), starts at most `maxConcurrency` item attempts, commits each
 * item's verdict, and says when the step is done. Each item's output is bounded like a step's.
 */
import {
  createFanOut,
  decideItems,
  settleItem,
  type FanOut,
  type FanOutNext,
} from "../../src/engine/fan-out";
import { typeName } from "../../src/engine/data-record";
import type { CompiledStep } from "../../src/engine/plan";
import type { StepError } from "../../src/engine/records";
import type { Outcome } from "../../src/engine/scheduler";
import { resolveTemplates, templateError, type TemplateContext } from "../../src/engine/templates";
import {
  attemptVerdict,
  itemsOutputTooLarge,
  type AttemptResult,
  type FinalVerdict,
} from "../../src/engine/verdict";
import type { RunContext } from "../run-context";
import { callTool, prepare, type Invoker, type Prepared } from "./invoke";
import type { Lease } from "./quota-gate";
import { itemTicket, type Ticket } from "./tickets";
import { itemQuotaWait } from "./step-journal";

export interface FanOutEnv {
  ctx: RunContext;
  invoker: Invoker;
  /** Something settled: the iteration loop should look again. */
  notify(): void;
  /** The run starts nothing new (fail-fast, cancel). */
  halted(): boolean;
  /** The run was cancelled. */
  cancelled(): boolean;
  /** The step fails as a whole (its items did, or its `forEach` is not a list): committed; its outcome. */
  /** `startedAt`: when the step started, for its execution time (default `now`: it never ran). */
  failStep(step: CompiledStep, error: StepError, now: number, startedAt?: number): Outcome;
}

export class FanOutRunner {
  private f!: FanOut;
  private attempts: number[] = [];
  private retryBase: number[] = [];
  private readonly controllers = new Map<number, AbortController>();
  /** Items waiting in memory for their destination to admit them. */
  private readonly waiting = new Set<Ticket>();
  /**
   * The step fails its run when it fails (`onFailure: "fail_run"`, the default with
   * `failFast`): the first item that fails for good stops new items.
   */
  private readonly failsFast: boolean;

  constructor(
    private readonly env: FanOutEnv,
    private readonly step: CompiledStep,
    private readonly context: TemplateContext,
  ) {
    this.failsFast = step.onFailure === "fail_run";
  }

  /** Loads (or, the first time, resolves and stores) the items. Returns an error when `forEach` is not an array. */
  begin(now: number): StepError | null {
    const { items } = this.env.ctx.checkpoint;
    let rows = items.load(this.step.index);
    if (rows.length === 0) {
      let list: unknown;
      try {
        list = resolveTemplates(this.step.forEach, this.context);
      } catch (err) {
        return templateError(err);
      }
      if (!Array.isArray(list)) {
        return {
          category: "invalid_data",
          message: `forEach resolved to ${typeName(list)}, not an array`,
        };
      }
      // A repaired step's items number their attempts on from its earlier items' (SPEC 9.2).
      const after = this.env.ctx.checkpoint.attempts.lastItemAttempt(this.step.index);
      items.insert(this.step.index, list, after);
      rows = list.map(() => ({
        status: "pending",
        nextAttemptAt: null,
        attempts: after,
        retryBase: after,
      }));
    }
    this.attempts = rows.map((r) => r.attempts);
    this.retryBase = rows.map((r) => r.retryBase);
    const plan = this.env.ctx.checkpoint.plan.read();
    this.f = createFanOut(rows, this.step.maxConcurrency ?? plan.config.maxParallel);
    for (const k of this.f.interrupted) {
      const message = "the run restarted while this item was in flight";
      this.judge(k, this.attempts[k]!, { ok: false, category: "interrupted", message }, now);
    }
    return null;
  }

  /**
   * Starts what may start; says what the step does next. Once the run halts, nothing new
   * starts; with `failFast`, nothing new starts either once an item failed for good (the step
   * will fail: its items not yet run are cancelled, as the run's steps would be).
   */
  pump(now: number): FanOutNext | { type: "halted" } {
    const halted = this.env.halted();
    const failing = !halted && this.failedFast();
    if (halted || failing) {
      if (this.waiting.size > 0) this.env.ctx.gate.wakeAll(); // items waiting for quota give up
      if (this.f.running > 0) return { type: "await", wakeAt: null };
      if (!failing) return { type: "halted" };
      this.cancelRemaining();
      return { type: "done", failed: this.f.failed };
    }
    const { start, next } = decideItems(this.f, now);
    for (const k of start) this.startItem(k, now);
    return next;
  }

  /** With `failFast`, an item failed for good: no new item starts. */
  private failedFast(): boolean {
    return this.failsFast && this.f.failed > 0;
  }

  /** The run halted: items that never finished are cancelled. */
  cancelRemaining(): void {
    this.env.ctx.checkpoint.items.cancelRemaining(this.step.index);
  }

  /** The assembled output would exceed `max` bytes (counted in SQL, so an oversize total never loads the rows). */
  outputTooLarge(max: number): StepError | null {
    const { n, bytes } = this.env.ctx.checkpoint.items.outputSize(this.step.index);
    return itemsOutputTooLarge(n, bytes, max);
  }

  /** Item data in order, for the step's result. Call it only once `outputTooLarge` says null. */
  data(): unknown[] {
    return this.env.ctx.checkpoint.items.data(this.step.index);
  }

  /** The first failed item's error, for the step's. */
  firstError(): StepError | undefined {
    return this.env.ctx.checkpoint.items.firstError(this.step.index);
  }

  totalAttempts(): number {
    return this.attempts.reduce((a, b) => a + b, 0);
  }

  cancel(): void {
    for (const c of this.controllers.values()) c.abort();
    if (this.waiting.size > 0) this.env.ctx.gate.wakeAll(); // they see the run halted and give up
  }

  /** Prepares item `k`'s call; it starts once its destination admits it (SPEC 10). */
  private startItem(k: number, now: number): void {
    const { ctx } = this.env;
    const item = ctx.checkpoint.items.item(this.step.index, k);
    const prepared = prepare(this.env.invoker, this.step, { ...this.context, item, index: k });
    if (prepared.type === "failed") {
      const attempt = this.recordAttempt(k, now);
      this.judge(k, attempt, prepared.result, now);
      this.env.notify(); // settled without a promise: the iteration must look again
      return;
    }
    const ticket = itemTicket(this.step.index, k, this.attempts[k]! + 1);
    const admission = ctx.gate.admit(this.step.tool, prepared.params, ticket, now);
    if (!(admission instanceof Promise) && admission.type === "go") {
      this.call(k, prepared, admission.lease, now);
      return;
    }
    // The item keeps its place among the maxConcurrency in flight while it waits, in memory.
    this.waiting.add(ticket);
    void ctx.gate
      .admitWaiting(
        admission,
        this.step.tool,
        prepared.params,
        ticket,
        (wait) => itemQuotaWait(ctx.checkpoint, this.step, k, wait, ctx.now()),
        () => this.env.halted() || this.failedFast(),
      )
      .then((admitted) => {
        this.waiting.delete(ticket);
        if (admitted === null) settleItem(this.f, k, { type: "cancelled" });
        else this.call(k, prepared, admitted.lease, ctx.now());
        this.env.notify();
      });
  }

  /** Records item `k`'s next attempt (SPEC 5.5); its number. */
  private recordAttempt(k: number, now: number): number {
    const c = this.env.ctx.checkpoint;
    const i = this.step.index;
    const attempt = ++this.attempts[k]!;
    c.items.attemptStarted(i, k, attempt);
    c.attempts.started(i, k, attempt, now);
    c.steps.countAttempt(i); // the status counts item attempts live
    return attempt;
  }

  private call(k: number, prepared: Prepared, lease: Lease | null, now: number): void {
    const { ctx } = this.env;
    const attempt = this.recordAttempt(k, now);
    const invocation = callTool(this.env.invoker, this.step, prepared, attempt, now, k);
    this.controllers.set(k, invocation.controller);
    void invocation.result.then((result) => {
      this.controllers.delete(k);
      ctx.gate.ended(this.step.tool, prepared.params, lease, result, ctx.now());
      this.judge(k, attempt, result, ctx.now());
      this.env.notify();
    });
  }

  /** Decides and commits what became of item `k`'s attempt, then settles it. */
  private judge(k: number, attempt: number, result: AttemptResult, now: number): void {
    const { ctx } = this.env;
    const verdict = attemptVerdict(result, {
      retry: this.step.retry,
      counted: attempt - this.retryBase[k]!,
      halted: this.env.halted(),
      cancelled: this.env.cancelled(),
      output: ctx.output,
      item: true,
      noSuspend: "this tool cannot run per item",
      now,
      rand: ctx.rand,
    });
    this.commit(k, attempt, verdict, now);
    settleItem(
      this.f,
      k,
      verdict.type === "retry" ? { type: "retry", at: verdict.at } : { type: verdict.type },
    );
  }

  private commit(k: number, attempt: number, verdict: FinalVerdict, now: number): void {
    const c = this.env.ctx.checkpoint;
    const i = this.step.index;
    switch (verdict.type) {
      case "succeeded":
        c.items.succeeded(i, k, verdict.data);
        c.attempts.ended(i, k, attempt, now, undefined, verdict.status);
        return;
      case "retry":
        c.attempts.ended(i, k, attempt, now, verdict.error);
        c.items.retrying(i, k, verdict.at, verdict.error);
        return;
      case "failed":
      case "cancelled":
        c.attempts.ended(i, k, attempt, now, verdict.error);
        c.items.ended(i, k, verdict.type, verdict.error);
        return;
      default:
        verdict satisfies never;
    }
  }
}
