/**
 * One iteration (one alarm invocation, SPEC 1): load the checkpoint, and until nothing is in
 * flight and nothing is ready, carry out what the engine decides. Each event (a step may
 * start, an attempt came back, a timer fell due, an answer arrived) gets one engine decision
 * (the scheduler's actions, an attempt verdict), committed before the scheduler settles it.
 */
import type { CompiledPlan } from "../../src/engine/plan";
import type { FinalStatus, RunRecord, RunStatus } from "../../src/engine/records";
import { endIteration, startIteration } from "../../src/engine/run-decisions";
import {
  createScheduler,
  decide,
  settle,
  type Action,
  type Next,
  type Outcome,
  type Scheduler,
} from "../../src/engine/scheduler";
import type { Answer } from "../../src/engine/verdict";
import type { RunContext } from "../run-context";
import { invokerOf, type Invoker } from "./invoke";
import type { Ticket } from "./tickets";
import { StepAttempts } from "./step-attempts";
import { stepCancelled, stepSkipped } from "./step-journal";
import { Wakeup } from "./wakeup";
import { nextTask } from "../turns";

/** Started steps after which the loop yields a task (see `loop`). */
const YIELD_EVERY = 64;

export class Iteration {
  private readonly plan: CompiledPlan;
  private readonly invoker: Invoker;
  private s!: Scheduler;
  private steps!: StepAttempts;
  private readonly wake = new Wakeup();

  constructor(
    private readonly ctx: RunContext,
    run: RunRecord,
  ) {
    const c = ctx.checkpoint;
    this.plan = c.plan.read();
    this.invoker = invokerOf(ctx, run.id, run.baseUrl);
  }

  /** Runs the iteration; resolves to `now` when more work is ready at once, else null (the rows decide). */
  async run(): Promise<number | null> {
    const c = this.ctx.checkpoint;
    const now = this.ctx.now();
    const rows = c.steps.load();
    this.s = createScheduler(this.plan, rows);
    const notify = () => this.wake.notify();
    this.steps = new StepAttempts(this.ctx, this.plan, this.invoker, this.s, rows, notify);
    const run = c.run.read()!;
    const start = startIteration(this.s, this.plan.config.mode, run, now);
    switch (start.type) {
      case "idle":
        if (start.waiting) this.becomeWaiting(run.status, now);
        return null;
      case "limit_exceeded":
        this.failIterationLimit(start.max, now);
        return null;
      case "finish":
        this.finish(start.status, now);
        return null;
      case "run":
        c.beginIteration(run, now);
        break;
      case "resume":
        break;
      default:
        start satisfies never;
    }
    await this.ctx.alarm.renewLease();
    for (const i of this.s.interrupted) this.steps.recover(i, now);
    return this.end(await this.loop(), run.status);
  }

  /** Cancels the run: nothing new starts, in-flight attempts are aborted. */
  cancel(): void {
    this.steps.cancel();
    this.wake.notify();
  }

  /**
   * The alarm fired while this iteration is live: it looks again at what is due. Its own timer
   * serves its timers to the millisecond, but one the runtime dropped would leave it asleep
   * with a `wait` or a retry due; a wake-up with nothing due changes nothing.
   */
  nudge(): void {
    this.wake.notify();
  }

  /** An approval or a callback answered step `i` while this iteration is live. */
  answer(i: number, answer: Answer): void {
    this.steps.answer(i, answer);
  }

  /** The run stops (cancel, fail-fast): it takes no repair any more. */
  get stopping(): boolean {
    return this.s.halted;
  }

  /** A person's answer to step `i`'s repair was committed while this iteration is live (SPEC 9.2). */
  repaired(i: number, outcome: Outcome): void {
    if (this.s.status[i] === "waiting") settle(this.s, i, outcome);
    this.wake.notify();
  }

  /** Step `i`'s destination granted the slot its call waits for (see StepAttempts.quotaGranted). */
  quotaGranted(i: number, ticket: Ticket): boolean {
    // Before the steps are loaded nothing waits in this iteration: the row decides.
    return this.steps !== undefined && this.steps.quotaGranted(i, ticket);
  }

  /**
   * Carries out decisions until nothing is in flight and nothing more is ready. Tools that
   * answer at once (`pass`) would keep this loop from yielding for a whole run: every
   * YIELD_EVERY started steps it yields a task (and renews its lease), so status reads and
   * answers are served meanwhile instead of waiting for the iteration's end.
   */
  private async loop(): Promise<Exclude<Next, { type: "await" }>> {
    let started = 0;
    for (;;) {
      if (started >= YIELD_EVERY) {
        started = 0;
        await nextTask();
        await this.ctx.alarm.renewLease();
      }
      const { actions, next } = decide(this.s, this.ctx.now());
      for (const action of actions) {
        if (action.type === "start") started++;
        this.apply(action);
      }
      const fan = this.steps.fanOuts.pump(this.plan.steps, this.ctx.now());
      for (const end of fan.ends) {
        if (end.type === "settled") settle(this.s, end.step, end.outcome);
        else this.steps.verdicts.fanOutSucceeded(end.step, end.data, end.startedAt);
      }
      // Steps that settled at once (a tool that answers now, a skip, a cancel) may have made more ready.
      if (fan.ends.length > 0 || actions.length > 0) continue;
      if (next.type === "await") {
        const wakeAt = minOf(next.wakeAt, fan.wakeAt);
        await this.ctx.alarm.renewLease({ due: wakeAt });
        await this.wake.wait(wakeAt === null ? undefined : wakeAt - this.ctx.now());
        // Results that arrive together are committed together: one storage transaction, not one each.
        if (this.steps.batching) await nextTask();
        this.steps.commitCompleted();
        continue;
      }
      if (this.ctx.gate.releasing) {
        // Slots just given back may go to this run's queued calls: they start in this iteration.
        await this.ctx.gate.released();
        continue;
      }
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
        // Steps a repair added meanwhile are unknown to this iteration's scheduler: they never run.
        if (this.s.replanned) c.cancelUnfinished(now);
        this.finish(decision.status, now);
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

  private finish(status: FinalStatus, now: number): void {
    this.ctx.checkpoint.run.finish(status, now);
    this.ctx.statusChanged(status, now);
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
        this.steps.start(action.step, now);
        return;
      case "skip":
        stepSkipped(c, step, action.reason, now);
        return;
      case "cancel":
        stepCancelled(c, step, now);
        return;
      case "resume":
        this.steps.timerDue(action.step, now);
        this.wake.notify();
        return;
      default:
        action satisfies never;
    }
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

function minOf(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : Math.min(a, b);
}
