/**
 * The live `forEach` steps of one iteration: starts each one's FanOutRunner, pumps their
 * items, and commits how each step ended. A step whose items all succeeded is handed back
 * with its data, so the iteration commits it like any other success.
 */
import type { CompiledStep } from "../src/engine/plan";
import type { StepError } from "../src/engine/records";
import type { Outcome } from "../src/engine/scheduler";
import type { TemplateContext } from "../src/engine/templates";
import { FanOutRunner, type FanOutDeps } from "./fan-out-runner";

export type FanOutEnd =
  /** Committed here; the scheduler settles the step with `outcome`. */
  | { type: "settled"; step: number; outcome: Outcome }
  /** Every item succeeded: the caller commits `data` as the step's output. */
  | { type: "succeeded"; step: number; data: unknown[]; startedAt: number };

export class FanOuts {
  private readonly runners = new Map<number, FanOutRunner>();

  constructor(private readonly deps: FanOutDeps) {}

  /** Starts (or, after a restart or a retry round, resumes) a step's items; a failure to begin is committed and returned. */
  start(step: CompiledStep, context: TemplateContext, now: number): Outcome | null {
    const { store } = this.deps;
    const i = step.index;
    const runner = new FanOutRunner(this.deps, step, context);
    const row = store.step(i)!;
    if (row.startedAt === null) store.fanOutStarted(i, step.id, now);
    else if (row.status !== "running") store.fanOutResumed(i); // a round of item retries
    const error = runner.begin(now);
    if (error) {
      store.stepFailed(i, step.id, null, error, now);
      return { type: "failed" };
    }
    this.runners.set(i, runner);
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
    const { store } = this.deps;
    const i = step.index;
    const settled = (outcome: Outcome): FanOutEnd => ({ type: "settled", step: i, outcome });
    store.setAttempts(i, runner.totalAttempts());
    if (next.type === "halted") {
      runner.cancelRemaining();
      store.stepEnded(i, step.id, "cancelled", null, now);
      return settled({ type: "cancelled" });
    }
    if (next.type === "retry") {
      const error = runner.firstError() ?? {
        category: "server_error",
        message: "items are retrying",
      };
      store.stepRetrying(i, step.id, runner.totalAttempts(), error, next.at, now);
      return settled({ type: "retry", at: next.at });
    }
    if (next.failed > 0) {
      const first = runner.firstError();
      const error: StepError = {
        category: first?.category ?? "invalid_data",
        message: `${next.failed} item(s) failed; first: ${first?.message ?? "unknown"}`,
      };
      store.stepFailed(i, step.id, null, error, now);
      return settled({ type: "failed" });
    }
    // Checked before the rows are loaded: 1,000 items under the limit each can still total far more.
    const tooLarge = runner.outputTooLarge(this.deps.maxOutputBytes);
    if (tooLarge) {
      store.stepFailed(i, step.id, null, tooLarge, now);
      return settled({ type: "failed" });
    }
    return {
      type: "succeeded",
      step: i,
      data: runner.data(),
      startedAt: store.step(i)!.startedAt ?? now,
    };
  }
}
