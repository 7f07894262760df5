/**
 * The live `forEach` steps of one iteration: starts each one's FanOutRunner, pumps their
 * items, and commits how each step ended. A step whose items all succeeded is handed back
 * with its data, so the iteration commits it like any other success.
 */
import type { CompiledStep } from "../../src/engine/plan";
import type { StepError } from "../../src/engine/records";
import type { Outcome } from "../../src/engine/scheduler";
import type { TemplateContext } from "../../src/engine/templates";
import { FanOutRunner, type FanOutEnv } from "./fan-out-runner";
import { retryScheduled, fanOutRunning } from "./step-journal";

export type FanOutEnd =
  /** Committed here; the scheduler settles the step with `outcome`. */
  | { type: "settled"; step: number; outcome: Outcome }
  /** Every item succeeded: the caller commits `data` as the step's output. */
  | { type: "succeeded"; step: number; data: unknown[]; startedAt: number };

export class FanOuts {
  private readonly runners = new Map<number, FanOutRunner>();

  constructor(private readonly env: FanOutEnv) {}

  /** Starts (or, after a restart or a retry round, resumes) a step's items; a failure to begin is committed and returned. */
  start(step: CompiledStep, context: TemplateContext, now: number): Outcome | null {
    const c = this.env.ctx.checkpoint;
    const runner = new FanOutRunner(this.env, step, context);
    const row = c.steps.get(step.index)!;
    if (row.startedAt === null || row.status !== "running")
      fanOutRunning(c, step, row.startedAt === null, now);
    const error = runner.begin(now);
    if (error) return this.env.failStep(step, error, now);
    this.runners.set(step.index, runner);
    return null;
  }

  /** Starts what may start; returns the steps whose items are all done, and when to look again. */
  pump(steps: readonly CompiledStep[], now: number): { ends: FanOutEnd[]; wakeAt: number | null } {
    const ends: FanOutEnd[] = [];
    let wakeAt: number | null = null;
    for (const [i, runner] of this.runners) {
      const next = runner.pump(now);
      if (next.type === "await") {
        if (next.wakeAt !== null)
          wakeAt = wakeAt === null ? next.wakeAt : Math.min(wakeAt, next.wakeAt);
        continue;
      }
      this.runners.delete(i);
      ends.push(this.end(steps[i]!, runner, next, now));
    }
    return { ends, wakeAt };
  }

  cancel(): void {
    for (const runner of this.runners.values()) runner.cancel();
  }

  private end(
    step: CompiledStep,
    runner: FanOutRunner,
    next: Exclude<ReturnType<FanOutRunner["pump"]>, { type: "await" }>,
    now: number,
  ): FanOutEnd {
    const c = this.env.ctx.checkpoint;
    const i = step.index;
    const settled = (outcome: Outcome): FanOutEnd => ({ type: "settled", step: i, outcome });
    c.steps.setAttempts(i, runner.totalAttempts());
    if (next.type === "halted") {
      runner.cancelRemaining();
      c.steps.ended(i, "cancelled", null, now);
      return settled({ type: "cancelled" });
    }
    if (next.type === "retry") {
      const error = runner.firstError() ?? {
        category: "server_error",
        message: "items are retrying",
      };
      retryScheduled(c, step, runner.totalAttempts(), error, next.at, now);
      return settled({ type: "retry", at: next.at });
    }
    const startedAt = c.steps.get(i)!.startedAt ?? now;
    if (next.failed > 0) {
      const first = runner.firstError();
      const error: StepError = {
        category: first?.category ?? "invalid_data",
        message: `${next.failed} item(s) failed; first: ${first?.message ?? "unknown"}`,
      };
      return settled(this.env.failStep(step, error, now, startedAt));
    }
    // Checked before the rows are loaded: 1,000 items under the limit each can still total far more.
    const tooLarge = runner.outputTooLarge(this.env.ctx.output.maxOutputBytes);
    if (tooLarge) return settled(this.env.failStep(step, tooLarge, now, startedAt));
    return { type: "succeeded", step: i, data: runner.data(), startedAt };
  }
}
