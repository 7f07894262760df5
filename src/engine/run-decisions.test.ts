import { describe, expect, it } from "vitest";
import type { CompiledPlan } from "./plan";
import { configSchema } from "./plan-schema";
import { DEFAULT_RETRY } from "./retry";
import { endIteration, startIteration } from "./run-decisions";
import { createScheduler, decide, settle, type Scheduler } from "./scheduler";

function chain(n: number, mode: unknown = { type: "continuous", maxIterations: 10 }): CompiledPlan {
  const config = configSchema.parse({ mode });
  return {
    name: null,
    tags: {},
    input: null,
    config,
    steps: Array.from({ length: n }, (_, i) => ({
      index: i,
      id: `s${i}`,
      tool: "pass",
      params: {},
      deps: i === 0 ? [] : [i - 1],
      refs: [],
      trigger: "all_success" as const,
      retry: DEFAULT_RETRY,
      timeoutMs: 30_000,
      onFailure: "continue" as const,
    })),
  };
}

const pending = (n: number) =>
  Array.from({ length: n }, () => ({
    status: "pending" as const,
    nextAttemptAt: null,
    waitingFor: null,
  }));

/** Runs decide/settle until nothing is in flight, succeeding each started step at once. */
function runWave(s: Scheduler, now: number) {
  for (;;) {
    const { actions, next } = decide(s, now);
    for (const a of actions) if (a.type === "start") settle(s, a.step, { type: "succeeded" });
    if (next.type !== "await" && actions.length === 0) return next;
  }
}

describe("startIteration", () => {
  it("runs when steps are ready", () => {
    const p = chain(2);
    const s = createScheduler(p, pending(2));
    expect(startIteration(s, p.config.mode, { iterations: 0, iterationBudget: null }, 0)).toEqual({
      type: "run",
    });
  });

  it("carries on an iteration a restart cut off (steps found running): uncounted, past any limit", () => {
    const p = chain(2, { type: "continuous", maxIterations: 3 });
    const rows = [{ ...pending(1)[0]!, status: "running" as const }, ...pending(1)];
    const s = createScheduler(p, rows);
    expect(startIteration(s, p.config.mode, { iterations: 3, iterationBudget: null }, 0)).toEqual({
      type: "resume",
    });
    const bounded = chain(2, { type: "bounded", iterations: 1 });
    const t = createScheduler(bounded, rows);
    expect(
      startIteration(t, bounded.config.mode, { iterations: 1, iterationBudget: 1 }, 0),
    ).toEqual({ type: "resume" });
  });

  it("fails a continuous run that used its iterations", () => {
    const p = chain(2, { type: "continuous", maxIterations: 3 });
    const s = createScheduler(p, pending(2));
    const start = startIteration(s, p.config.mode, { iterations: 3, iterationBudget: null }, 0);
    expect(start).toEqual({ type: "limit_exceeded", max: 3 });
  });

  it("honours a redriven run's fresh allowance", () => {
    const p = chain(2, { type: "continuous", maxIterations: 3 });
    const s = createScheduler(p, pending(2));
    expect(startIteration(s, p.config.mode, { iterations: 3, iterationBudget: 6 }, 0).type).toBe(
      "run",
    );
  });

  it("finishes a run an outside answer completed, past its iterations or budget, without an iteration", () => {
    const done = [{ status: "succeeded" as const, nextAttemptAt: null, waitingFor: null }];
    for (const mode of [
      { type: "continuous", maxIterations: 1 },
      { type: "bounded", iterations: 1 },
    ]) {
      const p = chain(1, mode);
      const s = createScheduler(p, done);
      expect(startIteration(s, p.config.mode, { iterations: 1, iterationBudget: 1 }, 0)).toEqual({
        type: "finish",
        status: "completed",
      });
    }
    // A run that never iterated (every step skipped at the risk gate) still starts, then ends.
    const p = chain(1);
    const s = createScheduler(p, [{ status: "skipped", nextAttemptAt: null, waitingFor: null }]);
    expect(startIteration(s, p.config.mode, { iterations: 0, iterationBudget: null }, 0).type).toBe(
      "run",
    );
  });

  it("is idle, and waiting, when only an approval is left", () => {
    const p = chain(2);
    const rows = [
      { status: "waiting" as const, nextAttemptAt: null, waitingFor: "approval" as const },
      ...pending(1),
    ];
    const s = createScheduler(p, rows);
    expect(startIteration(s, p.config.mode, { iterations: 1, iterationBudget: null }, 0)).toEqual({
      type: "idle",
      waiting: true,
    });
  });

  it("is idle but not waiting while a timer is pending", () => {
    const p = chain(2);
    const rows = [
      { status: "waiting" as const, nextAttemptAt: 500, waitingFor: "timer" as const },
      ...pending(1),
    ];
    const s = createScheduler(p, rows);
    expect(startIteration(s, p.config.mode, { iterations: 1, iterationBudget: null }, 0)).toEqual({
      type: "idle",
      waiting: false,
    });
  });
});

describe("endIteration", () => {
  it("finishes a run whose steps all finished", () => {
    const p = chain(2);
    const s = createScheduler(p, pending(2));
    startIteration(s, p.config.mode, { iterations: 0, iterationBudget: null }, 0);
    const next = runWave(s, 0);
    expect(endIteration(s, next, p.config.mode, { iterations: 1, iterationBudget: null })).toEqual({
      type: "finish",
      status: "completed",
    });
  });

  it("runs again at once when a bounded wave left ready work, whatever the clock says", () => {
    // The decision is structural: an earlier version compared two clock readings and, when
    // the clock moved between them, left a running run with ready work and no alarm.
    const p = chain(3, { type: "bounded", iterations: 1 });
    const s = createScheduler(p, pending(3));
    startIteration(s, p.config.mode, { iterations: 1, iterationBudget: 11 }, 100);
    const next = runWave(s, 100);
    expect(next).toEqual({ type: "sleep", until: 100 });
    expect(endIteration(s, next, p.config.mode, { iterations: 2, iterationBudget: 11 })).toEqual({
      type: "again",
    });
  });

  it("pauses a bounded run that used its iterations", () => {
    const p = chain(3, { type: "bounded", iterations: 1 });
    const s = createScheduler(p, pending(3));
    startIteration(s, p.config.mode, { iterations: 0, iterationBudget: 1 }, 0);
    const next = runWave(s, 0);
    expect(endIteration(s, next, p.config.mode, { iterations: 1, iterationBudget: 1 })).toEqual({
      type: "pause",
    });
  });

  it("waits for answers when only an approval step is left", () => {
    const p = chain(2);
    const s = createScheduler(p, pending(2));
    startIteration(s, p.config.mode, { iterations: 0, iterationBudget: null }, 0);
    decide(s, 0);
    settle(s, 0, { type: "wait", at: null, for: "approval" });
    const next = runWave(s, 0);
    expect(endIteration(s, next, p.config.mode, { iterations: 1, iterationBudget: null })).toEqual({
      type: "wait_for_answers",
    });
  });

  it("sleeps until a retry", () => {
    const p = chain(2);
    const s = createScheduler(p, pending(2));
    startIteration(s, p.config.mode, { iterations: 0, iterationBudget: null }, 0);
    decide(s, 0);
    settle(s, 0, { type: "retry", at: 1000 });
    const next = runWave(s, 0);
    expect(next).toEqual({ type: "sleep", until: 1000 });
    expect(endIteration(s, next, p.config.mode, { iterations: 1, iterationBudget: null })).toEqual({
      type: "sleep",
    });
  });
});
