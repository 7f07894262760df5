import { describe, expect, it } from "vitest";
import type { CompiledPlan } from "./plan";
import { configSchema } from "./plan-schema";
import type { StepStatus } from "./records";
import { DEFAULT_RETRY, type ErrorCategory, type RetryPolicy } from "./retry";
import {
  beginIteration,
  cancelRun,
  createScheduler,
  decide,
  finalStatus,
  onlyWaitingForAnswers,
  outcomeOf,
  releasesWork,
  settle,
  wakeWaiting,
  type Action,
  type Next,
  type Outcome,
  type Scheduler,
  type StepSnapshot,
} from "./scheduler";
import { failureVerdict, quotaVerdict } from "./verdict";

interface StepOpts {
  deps?: number[];
  trigger?: "all_success" | "all_done";
  onFailure?: "fail_run" | "continue";
}

function plan(steps: StepOpts[], config: Record<string, unknown> = {}): CompiledPlan {
  const cfg = configSchema.parse(config);
  return {
    name: null,
    tags: {},
    input: null,
    config: cfg,
    steps: steps.map((o, i) => ({
      index: i,
      id: `s${i}`,
      tool: "pass",
      params: {},
      deps: o.deps ?? [],
      refs: [],
      trigger: o.trigger ?? "all_success",
      retry: DEFAULT_RETRY,
      timeoutMs: 30_000,
      onFailure: o.onFailure ?? (cfg.failFast ? "fail_run" : "continue"),
    })),
  };
}

const chainOf = (n: number): StepOpts[] =>
  Array.from({ length: n }, (_, i) => ({ deps: i === 0 ? [] : [i - 1] }));
const independent = (n: number): StepOpts[] => Array.from({ length: n }, () => ({}));
const rowsOf = (...statuses: (StepStatus | [StepStatus, number])[]): StepSnapshot[] =>
  statuses.map((s) =>
    Array.isArray(s)
      ? { status: s[0], nextAttemptAt: s[1], waitingFor: null }
      : { status: s, nextAttemptAt: null, waitingFor: null },
  );
const pendingRows = (n: number): StepSnapshot[] =>
  Array.from({ length: n }, () => ({ status: "pending", nextAttemptAt: null, waitingFor: null }));

/** The scheduler's outcome of a failed attempt, through the engine's one verdict. */
function failureOutcome(
  s: Scheduler,
  policy: RetryPolicy,
  attempt: number,
  category: ErrorCategory,
  now: number,
  rand: () => number,
): Outcome {
  const rules = {
    retry: policy,
    counted: attempt,
    halted: s.halted,
    cancelled: s.cancelled,
    output: { maxOutputBytes: 1024, maxOutputDepth: 64 },
    item: false,
    noSuspend: null,
    now,
    rand,
  };
  return outcomeOf(failureVerdict({ category, message: category }, rules));
}

/** A scheduler for `p` at the start of a continuous iteration (or a bounded wave). */
function begin(
  p: CompiledPlan,
  rows = pendingRows(p.steps.length),
  now = 0,
  wave = false,
): Scheduler {
  const s = createScheduler(p, rows);
  beginIteration(s, now, wave);
  return s;
}

const starts = (actions: Action[]) => actions.filter((a) => a.type === "start").map((a) => a.step);
const cancels = (actions: Action[]) =>
  actions.filter((a) => a.type === "cancel").map((a) => a.step);
const skips = (actions: Action[]) =>
  actions.flatMap((a) => (a.type === "skip" ? [[a.step, a.reason] as const] : []));

/**
 * Runs the iteration loop the way the shell does, settling each started step at once
 * with `outcome(step)`. Stops at `finish` or at a `sleep` that brought no actions.
 */
function drive(
  s: Scheduler,
  outcome: (i: number) => Outcome = () => ({ type: "succeeded" }),
  now = 0,
) {
  const log: Action[] = [];
  let decides = 0;
  let maxRunning = 0;
  for (;;) {
    const { actions, next } = decide(s, now);
    decides++;
    log.push(...actions);
    maxRunning = Math.max(maxRunning, s.running);
    for (const a of actions) if (a.type === "start") settle(s, a.step, outcome(a.step));
    if (next.type === "finish" || (next.type === "sleep" && actions.length === 0)) {
      return { log, next, decides, maxRunning };
    }
    if (next.type === "await" && actions.length === 0)
      throw new Error("await with nothing settled: test bug");
  }
}

const finish = (status: string): Next => ({ type: "finish", status }) as Next;

describe("eager dispatch (SPEC 5.1)", () => {
  it("starts the roots first and awaits them", () => {
    const s = begin(plan(chainOf(2)));
    const { actions, next } = decide(s, 0);
    expect(starts(actions)).toEqual([0]);
    expect(next).toEqual({ type: "await", wakeAt: null });
  });

  it("starts a dependent on the next decide after its dependency settles", () => {
    const s = begin(plan(chainOf(2)));
    decide(s, 0);
    settle(s, 0, { type: "succeeded" });
    expect(starts(decide(s, 0).actions)).toEqual([1]);
  });

  it("starts a dependent while an unrelated step is still in flight", () => {
    const s = begin(plan([{}, {}, { deps: [0] }]));
    expect(starts(decide(s, 0).actions)).toEqual([0, 1]);
    settle(s, 0, { type: "succeeded" });
    const { actions, next } = decide(s, 0);
    expect(starts(actions)).toEqual([2]);
    expect(next.type).toBe("await");
    expect(s.status[1]).toBe("running");
  });

  it("waits for every dependency", () => {
    const s = begin(plan([{}, {}, { deps: [0, 1] }]));
    decide(s, 0);
    settle(s, 0, { type: "succeeded" });
    expect(starts(decide(s, 0).actions)).toEqual([]);
    settle(s, 1, { type: "succeeded" });
    expect(starts(decide(s, 0).actions)).toEqual([2]);
  });

  it("a whole chain runs in one iteration", () => {
    const s = begin(plan(chainOf(5)));
    const { log, next } = drive(s);
    expect(starts(log)).toEqual([0, 1, 2, 3, 4]);
    expect(next).toEqual(finish("completed"));
  });
});

describe("maxParallel", () => {
  it("caps how many steps one decide starts", () => {
    const s = begin(plan(independent(5), { maxParallel: 2 }));
    expect(starts(decide(s, 0).actions)).toEqual([0, 1]);
  });

  it("starts nothing more while the cap is reached", () => {
    const s = begin(plan(independent(5), { maxParallel: 2 }));
    decide(s, 0);
    expect(starts(decide(s, 0).actions)).toEqual([]);
  });

  it("starts one more when one settles", () => {
    const s = begin(plan(independent(5), { maxParallel: 2 }));
    decide(s, 0);
    settle(s, 1, { type: "succeeded" });
    expect(starts(decide(s, 0).actions)).toEqual([2]);
  });

  it("a retry scheduled for later frees its slot", () => {
    const s = begin(plan(independent(3), { maxParallel: 2 }));
    decide(s, 0);
    settle(s, 0, { type: "retry", at: 5000 });
    const { actions, next } = decide(s, 0);
    expect(starts(actions)).toEqual([2]);
    expect(next).toEqual({ type: "await", wakeAt: 5000 });
  });

  it("never has more in flight than the cap over a whole run", () => {
    const steps = [...independent(10), { deps: [0, 1, 2] }, ...independent(10)];
    const s = begin(plan(steps, { maxParallel: 3 }));
    // Settle nothing until three are in flight.
    let maxRunning = 0;
    for (;;) {
      const { actions, next } = decide(s, 0);
      maxRunning = Math.max(maxRunning, s.running);
      if (next.type === "finish") break;
      const running = s.status.flatMap((st, i) => (st === "running" ? [i] : []));
      expect(actions.length > 0 || running.length > 0).toBe(true);
      settle(s, running[0]!, { type: "succeeded" });
    }
    expect(maxRunning).toBe(3);
    expect(finalStatus(s)).toBe("completed");
  });
});

describe("which ready step starts first (SPEC 5.1)", () => {
  /** Every started step takes one tick: the ticks the whole run takes. */
  function ticks(s: Scheduler): number {
    for (let t = 0; ; t++) {
      const { next } = decide(s, t);
      if (next.type === "finish") return t;
      const running = s.status.flatMap((st, i) => (st === "running" ? [i] : []));
      for (const i of running) settle(s, i, { type: "succeeded" });
    }
  }

  it("starts the step heading the longest chain of dependents first, ties in plan order", () => {
    // 0, 1, 2 and 6 stand alone; 3 -> 4 -> 5 is a chain.
    const steps = [...independent(3), {}, { deps: [3] }, { deps: [4] }, {}];
    const s = begin(plan(steps, { maxParallel: 2 }));
    expect(starts(decide(s, 0).actions)).toEqual([3, 0]);
    settle(s, 3, { type: "succeeded" });
    expect(starts(decide(s, 0).actions)).toEqual([4]);
    settle(s, 0, { type: "succeeded" });
    expect(starts(decide(s, 0).actions)).toEqual([1]);
  });

  it("under maxParallel a run takes its critical path, not the plan's order", () => {
    // Eight lone steps listed before a chain of four, five slots: the chain sets the pace.
    const steps = [...independent(8), {}, { deps: [8] }, { deps: [9] }, { deps: [10] }];
    expect(ticks(begin(plan(steps, { maxParallel: 5 })))).toBe(4);
  });

  it("ranks a step by its dependents wherever the plan lists them", () => {
    // 0 waits for 2: of the two ready steps, 2 heads the longer chain.
    const s = begin(plan([{ deps: [2] }, {}, {}], { maxParallel: 1 }));
    expect(starts(decide(s, 0).actions)).toEqual([2]);
  });
});

describe("triggers and skips (SPEC 5.3)", () => {
  it("skips an all_success dependent of a failed step with dependency_failed", () => {
    const s = begin(plan([{}, { deps: [0] }]));
    decide(s, 0);
    settle(s, 0, { type: "failed" });
    const { actions } = decide(s, 0);
    expect(skips(actions)).toEqual([[1, "dependency_failed"]]);
    expect(starts(actions)).toEqual([]);
    expect(s.status[1]).toBe("skipped");
  });

  it("runs an all_done dependent of a failed step", () => {
    const s = begin(plan([{}, { deps: [0], trigger: "all_done" }, { deps: [0] }]));
    decide(s, 0);
    settle(s, 0, { type: "failed" });
    const { actions } = decide(s, 0);
    expect(starts(actions)).toEqual([1]);
    expect(skips(actions)).toEqual([[2, "dependency_failed"]]);
  });

  it("cascades dependency_skipped down a chain", () => {
    const s = begin(plan(chainOf(4)));
    decide(s, 0);
    settle(s, 0, { type: "failed" });
    const { actions, next } = decide(s, 0);
    expect(skips(actions)).toEqual([
      [1, "dependency_failed"],
      [2, "dependency_skipped"],
      [3, "dependency_skipped"],
    ]);
    expect(next).toEqual(finish("failed"));
  });

  it("runs an all_done step at the end of a skipped chain", () => {
    const s = begin(plan([{}, { deps: [0] }, { deps: [1], trigger: "all_done" }]));
    decide(s, 0);
    settle(s, 0, { type: "failed" });
    const { actions } = decide(s, 0);
    expect(skips(actions)).toEqual([[1, "dependency_failed"]]);
    expect(starts(actions)).toEqual([2]);
  });

  it("a failed dependency wins over a skipped one", () => {
    // 2 waits for 0 (failed) and 1 (skipped because of 0).
    const s = begin(plan([{}, { deps: [0] }, { deps: [0, 1] }]));
    decide(s, 0);
    settle(s, 0, { type: "failed" });
    expect(skips(decide(s, 0).actions)).toEqual([
      [1, "dependency_failed"],
      [2, "dependency_failed"],
    ]);
  });

  it("a condition_false skip makes dependents dependency_skipped and the run completed", () => {
    const s = begin(plan([{}, { deps: [0] }, {}]));
    decide(s, 0);
    settle(s, 0, { type: "skipped", reason: "condition_false" });
    settle(s, 2, { type: "succeeded" });
    const { actions, next } = decide(s, 0);
    expect(skips(actions)).toEqual([[1, "dependency_skipped"]]);
    expect(next).toEqual(finish("completed"));
  });

  it("an all_done step runs when every dependency succeeded too", () => {
    const s = begin(plan([{}, { deps: [0], trigger: "all_done" }]));
    expect(starts(drive(s).log)).toEqual([0, 1]);
  });
});

describe("fail_run / failFast (SPEC 5.3)", () => {
  // 0 fails the run; 1 is in flight with it; 2 depends on 0; 3 and 4 never got a slot.
  const steps: StepOpts[] = [{ onFailure: "fail_run" }, {}, { deps: [0] }, {}, {}];

  function failed() {
    const s = begin(plan(steps, { maxParallel: 2 }));
    expect(starts(decide(s, 0).actions)).toEqual([0, 1]);
    settle(s, 0, { type: "failed" });
    return s;
  }

  it("starts no new step after the failure", () => {
    const s = failed();
    const { actions, next } = decide(s, 0);
    expect(starts(actions)).toEqual([]);
    expect(next.type).toBe("await");
  });

  it("lets the in-flight step settle and records its outcome", () => {
    const s = failed();
    decide(s, 0);
    settle(s, 1, { type: "succeeded" });
    decide(s, 0);
    expect(s.status[1]).toBe("succeeded");
  });

  it("cancels the steps that never started, then finishes failed", () => {
    const s = failed();
    decide(s, 0);
    settle(s, 1, { type: "succeeded" });
    const { actions, next } = decide(s, 0);
    expect(cancels(actions)).toEqual([3, 4]);
    expect(next).toEqual(finish("failed"));
    expect(s.status).toEqual(["failed", "succeeded", "skipped", "cancelled", "cancelled"]);
  });

  it("config.failFast makes every step fail the run", () => {
    const s = begin(plan([{}, {}, {}], { failFast: true, maxParallel: 1 }));
    decide(s, 0);
    settle(s, 0, { type: "failed" });
    const { actions, next } = decide(s, 0);
    expect(starts(actions)).toEqual([]);
    expect(cancels(actions)).toEqual([1, 2]);
    expect(next).toEqual(finish("failed"));
  });

  it("a step with onFailure continue does not halt a failFast-free run", () => {
    const s = begin(
      plan([{ onFailure: "continue" }, { onFailure: "fail_run" }, {}], { maxParallel: 1 }),
    );
    decide(s, 0);
    settle(s, 0, { type: "failed" });
    expect(starts(decide(s, 0).actions)).toEqual([1]);
  });

  it("a halted run turns a retryable failure into a final one", () => {
    const s = failed();
    const policy: RetryPolicy = { ...DEFAULT_RETRY, jitter: "none" };
    expect(failureOutcome(s, policy, 1, "server_error", 0, Math.random)).toEqual({
      type: "failed",
    });
  });

  it("before the failure, a retryable failure is retried under the policy", () => {
    const s = begin(plan(steps, { maxParallel: 2 }));
    decide(s, 0);
    const policy: RetryPolicy = { ...DEFAULT_RETRY, jitter: "none" };
    expect(failureOutcome(s, policy, 1, "server_error", 100, Math.random)).toEqual({
      type: "retry",
      at: 1100,
    });
    expect(failureOutcome(s, policy, 1, "client_error", 100, Math.random)).toEqual({
      type: "failed",
    });
  });

  it("a pending retry is cancelled, not run, after fail-fast", () => {
    const s = begin(plan([{ onFailure: "fail_run" }, {}]));
    decide(s, 0);
    settle(s, 1, { type: "retry", at: 10 });
    settle(s, 0, { type: "failed" });
    const { actions, next } = decide(s, 50);
    expect(starts(actions)).toEqual([]);
    expect(cancels(actions)).toEqual([1]);
    expect(next).toEqual(finish("failed"));
  });
});

describe("continue and final status", () => {
  it("independent branches go on after a failure and the run is partial", () => {
    const s = begin(plan([{}, { deps: [0] }, {}, { deps: [2] }]));
    const { log, next } = drive(s, (i) => ({ type: i === 0 ? "failed" : "succeeded" }));
    expect(starts(log)).toEqual([0, 2, 3]);
    expect(skips(log)).toEqual([[1, "dependency_failed"]]);
    expect(next).toEqual(finish("partial"));
  });

  it("all succeeded is completed", () => {
    expect(drive(begin(plan(independent(3)))).next).toEqual(finish("completed"));
  });

  it("nothing succeeded is failed", () => {
    expect(drive(begin(plan(independent(3))), () => ({ type: "failed" })).next).toEqual(
      finish("failed"),
    );
  });

  it("settling a finished step again changes nothing", () => {
    const s = begin(plan(independent(1)));
    decide(s, 0);
    settle(s, 0, { type: "succeeded" });
    settle(s, 0, { type: "failed" });
    expect(s.status[0]).toBe("succeeded");
    expect(decide(s, 0).next).toEqual(finish("completed"));
  });
});

describe("restart (SPEC 5.5)", () => {
  it("lists steps found running as interrupted and counts them in flight", () => {
    const s = begin(plan(independent(3)), rowsOf("succeeded", "running", "pending"));
    expect(s.interrupted).toEqual([1]);
    expect(s.running).toBe(1);
  });

  it("an interrupted step takes a maxParallel slot", () => {
    const s = begin(plan(independent(2), { maxParallel: 1 }), rowsOf("running", "pending"));
    const { actions, next } = decide(s, 0);
    expect(starts(actions)).toEqual([]);
    expect(next.type).toBe("await");
  });

  it("an interrupted step is retried under its policy", () => {
    const s = begin(plan(independent(1)), rowsOf("running"));
    const policy: RetryPolicy = { ...DEFAULT_RETRY, jitter: "none" };
    settle(s, 0, failureOutcome(s, policy, 1, "interrupted", 0, Math.random));
    expect(s.status[0]).toBe("retrying");
    expect(decide(s, 0).next).toEqual({ type: "sleep", until: 1000 });
  });

  it("never starts a succeeded step again, and starts its dependents", () => {
    const s = begin(plan(chainOf(3)), rowsOf("succeeded", "pending", "pending"));
    const { log, next } = drive(s);
    expect(starts(log)).toEqual([1, 2]);
    expect(next).toEqual(finish("completed"));
  });

  it("skips the dependents of a step that had failed before the restart", () => {
    const s = begin(plan([{}, { deps: [0] }, {}]), rowsOf("failed", "pending", "succeeded"));
    const { actions, next } = decide(s, 0);
    expect(skips(actions)).toEqual([[1, "dependency_failed"]]);
    expect(next).toEqual(finish("partial"));
  });

  it("stays halted after a restart when a fail_run step had failed", () => {
    const s = begin(plan([{ onFailure: "fail_run" }, {}]), rowsOf("failed", "pending"));
    const { actions, next } = decide(s, 0);
    expect(starts(actions)).toEqual([]);
    expect(cancels(actions)).toEqual([1]);
    expect(next).toEqual(finish("failed"));
  });

  it("a finished run loads as finished", () => {
    const s = begin(plan(independent(2)), rowsOf("succeeded", "skipped"));
    expect(decide(s, 0)).toEqual({ actions: [], next: finish("completed") });
  });
});

describe("retries and timers", () => {
  it("a retrying row that is due becomes ready at beginIteration", () => {
    const s = begin(plan(independent(1)), rowsOf(["retrying", 1000]), 1000);
    expect(s.status[0]).toBe("pending");
    expect(starts(decide(s, 1000).actions)).toEqual([0]);
  });

  it("a retrying row that is not due yet makes the iteration sleep until its time", () => {
    const s = begin(plan(independent(1)), rowsOf(["retrying", 1000]), 500);
    expect(decide(s, 500)).toEqual({ actions: [], next: { type: "sleep", until: 1000 } });
  });

  it("sleeps until the earliest of several retries", () => {
    const s = begin(
      plan(independent(3)),
      rowsOf(["retrying", 3000], ["retrying", 2000], "succeeded"),
      0,
    );
    expect(decide(s, 0).next).toEqual({ type: "sleep", until: 2000 });
  });

  it("awaits in-flight steps until a retry falls due, then restarts it in the same iteration", () => {
    const s = begin(plan(independent(2)));
    decide(s, 0);
    settle(s, 0, { type: "retry", at: 100 });
    expect(decide(s, 50).next).toEqual({ type: "await", wakeAt: 100 });
    expect(starts(decide(s, 100).actions)).toEqual([0]);
  });

  it("a dependent waits for its dependency's retry", () => {
    const s = begin(plan(chainOf(2)));
    decide(s, 0);
    settle(s, 0, { type: "retry", at: 100 });
    expect(decide(s, 0)).toEqual({ actions: [], next: { type: "sleep", until: 100 } });
    expect(starts(decide(s, 100).actions)).toEqual([0]);
    settle(s, 0, { type: "succeeded" });
    expect(starts(decide(s, 100).actions)).toEqual([1]);
  });

  it("a durable wait resumes at its time and then releases dependents", () => {
    const s = begin(plan(chainOf(2)));
    decide(s, 0);
    settle(s, 0, { type: "wait", at: 500, for: "timer" });
    expect(s.status[0]).toBe("waiting");
    expect(decide(s, 100)).toEqual({ actions: [], next: { type: "sleep", until: 500 } });
    const resumed = decide(s, 500);
    expect(resumed.actions).toEqual([{ type: "resume", step: 0 }]);
    settle(s, 0, { type: "succeeded" });
    expect(starts(decide(s, 500).actions)).toEqual([1]);
  });

  it("a waiting row without a time (approval) sleeps with no alarm", () => {
    const s = begin(plan(independent(1)), rowsOf("waiting"));
    expect(decide(s, 0)).toEqual({ actions: [], next: { type: "sleep", until: null } });
  });

  it("a timer left by an earlier wait does not release a retry scheduled later", () => {
    const s = begin(plan(independent(1)));
    decide(s, 0);
    settle(s, 0, { type: "wait", at: 1000, for: "callback" }); // e.g. a callback with a timeout
    settle(s, 0, { type: "retry", at: 5000 }); // its error arrived first: retry later
    expect(s.status[0]).toBe("retrying");
    expect(decide(s, 1000)).toEqual({ actions: [], next: { type: "sleep", until: 5000 } });
    expect(starts(decide(s, 5000).actions)).toEqual([0]);
  });
});

describe("bounded waves (SPEC 5.1)", () => {
  it("starts only the steps ready at the start of the wave", () => {
    const s = begin(plan([{}, { deps: [0] }, {}]), undefined, 0, true);
    expect(starts(decide(s, 0).actions)).toEqual([0, 2]);
    settle(s, 0, { type: "succeeded" });
    settle(s, 2, { type: "succeeded" });
    const { actions, next } = decide(s, 0);
    expect(starts(actions)).toEqual([]);
    expect(next).toEqual({ type: "sleep", until: 0 });
  });

  it("the next wave starts what the previous one released", () => {
    const s = begin(plan([{}, { deps: [0] }, {}]), undefined, 0, true);
    drive(s);
    beginIteration(s, 10, true);
    expect(starts(decide(s, 10).actions)).toEqual([1]);
  });

  it("a wave wider than maxParallel still starts only its own steps", () => {
    const s = begin(plan([{}, {}, {}, { deps: [0] }], { maxParallel: 1 }), undefined, 0, true);
    const { log, next } = drive(s);
    expect(starts(log)).toEqual([0, 1, 2]);
    expect(next).toEqual({ type: "sleep", until: 0 });
    expect(s.status[3]).toBe("pending");
  });

  it("a retry that falls due during a wave waits for the next wave", () => {
    const s = begin(plan(independent(2)), undefined, 0, true);
    decide(s, 0);
    settle(s, 0, { type: "retry", at: 10 });
    settle(s, 1, { type: "succeeded" });
    expect(decide(s, 20)).toEqual({ actions: [], next: { type: "sleep", until: 10 } });
    beginIteration(s, 20, true);
    expect(starts(decide(s, 20).actions)).toEqual([0]);
  });
});

describe("cancelRun", () => {
  it("starts nothing new and waits for in-flight steps", () => {
    const s = begin(plan(independent(3), { maxParallel: 1 }));
    decide(s, 0);
    cancelRun(s);
    const { actions, next } = decide(s, 0);
    expect(starts(actions)).toEqual([]);
    expect(next.type).toBe("await");
  });

  it("cancels every unfinished step once nothing is in flight, and the run is cancelled", () => {
    const s = begin(plan(independent(3), { maxParallel: 1 }));
    decide(s, 0);
    settle(s, 0, { type: "succeeded" });
    cancelRun(s);
    const { actions, next } = decide(s, 0);
    expect(cancels(actions)).toEqual([1, 2]);
    expect(next).toEqual(finish("cancelled"));
  });

  it("a cancelled run with failures is still cancelled", () => {
    const s = begin(plan(independent(2), { maxParallel: 1 }));
    decide(s, 0);
    settle(s, 0, { type: "failed" });
    cancelRun(s);
    expect(decide(s, 0).next).toEqual(finish("cancelled"));
    expect(finalStatus(s)).toBe("cancelled");
  });

  it("cancels, not skips, the dependents of an aborted in-flight step", () => {
    const s = begin(plan(chainOf(3)));
    decide(s, 0);
    cancelRun(s);
    settle(s, 0, { type: "cancelled" });
    const { actions, next } = decide(s, 0);
    expect(skips(actions)).toEqual([]);
    expect(cancels(actions)).toEqual([1, 2]);
    expect(s.status).toEqual(["cancelled", "cancelled", "cancelled"]);
    expect(next).toEqual(finish("cancelled"));
  });

  it("a step whose dependency was cancelled after fail-fast is cancelled too", () => {
    // 0 fails the run (1 waits for it); 2 never started and is cancelled; 3 waits for 2.
    const p = plan([{ onFailure: "fail_run" }, { deps: [0] }, {}, { deps: [2] }], {
      maxParallel: 1,
    });
    const s = begin(p);
    expect(starts(decide(s, 0).actions)).toEqual([0]);
    settle(s, 0, { type: "failed" });
    const { actions } = decide(s, 0);
    expect(skips(actions)).toEqual([[1, "dependency_failed"]]);
    expect(s.status).toEqual(["failed", "skipped", "cancelled", "cancelled"]);
  });

  it("a failed dependency still wins over a cancelled one", () => {
    // 0 fails the run while 1 runs; 1 is then aborted; 2 waits for both.
    const s = begin(plan([{ onFailure: "fail_run" }, {}, { deps: [0, 1] }], { maxParallel: 2 }));
    decide(s, 0);
    settle(s, 1, { type: "cancelled" });
    settle(s, 0, { type: "failed" });
    expect(skips(decide(s, 0).actions)).toEqual([[2, "dependency_failed"]]);
  });

  it("a dependency cancelled before a restart cancels its pending dependents at load", () => {
    const s = begin(plan(chainOf(2)), rowsOf("cancelled", "pending"));
    cancelRun(s);
    const { actions, next } = decide(s, 0);
    expect(cancels(actions)).toEqual([1]);
    expect(next).toEqual(finish("cancelled"));
  });

  it("cancels retrying and waiting steps and sets no alarm for them", () => {
    const s = begin(plan(independent(3)));
    decide(s, 0);
    settle(s, 0, { type: "retry", at: 100 });
    settle(s, 1, { type: "wait", at: 200, for: "timer" });
    settle(s, 2, { type: "succeeded" });
    cancelRun(s);
    const { actions, next } = decide(s, 1000);
    expect(actions.some((a) => a.type === "resume" || a.type === "start")).toBe(false);
    expect(cancels(actions)).toEqual([0, 1]);
    expect(next).toEqual(finish("cancelled"));
  });
});

describe("large plans: work per step stays flat (no timing)", () => {
  it("runs a 10,000-step chain end to end, one start per decide", () => {
    const n = 10_000;
    const s = begin(plan(chainOf(n)));
    const { log, next, decides, maxRunning } = drive(s);
    expect(next).toEqual(finish("completed"));
    expect(starts(log)).toHaveLength(n);
    expect(starts(log)[n - 1]).toBe(n - 1);
    expect(decides).toBe(n + 1);
    expect(maxRunning).toBe(1);
  });

  it("cascades skips down a 10,000-step chain without recursion", () => {
    const n = 10_000;
    const s = begin(plan(chainOf(n)));
    const { log, next } = drive(s, () => ({ type: "failed" }));
    const skipped = skips(log);
    expect(skipped).toHaveLength(n - 1);
    expect(skipped[0]).toEqual([1, "dependency_failed"]);
    expect(skipped[n - 2]).toEqual([n - 1, "dependency_skipped"]);
    expect(next).toEqual(finish("failed"));
  });

  it("runs 10,000 independent steps under maxParallel 100", () => {
    const s = begin(plan(independent(10_000), { maxParallel: 100 }));
    const { log, next, maxRunning } = drive(s);
    expect(starts(log)).toHaveLength(10_000);
    expect(maxRunning).toBe(100);
    expect(next).toEqual(finish("completed"));
  });

  /** Reads of the per-step status array while a chain of `n` steps runs: the scheduler's work. */
  function statusReadsPerStep(steps: StepOpts[]): number {
    const s = begin(plan(steps, { maxParallel: 10 }));
    let reads = 0;
    s.status = new Proxy(s.status, {
      get(target, key, receiver) {
        if (typeof key === "string" && /^\d+$/.test(key)) reads++;
        return Reflect.get(target, key, receiver);
      },
    });
    const { next } = drive(s);
    expect(next).toEqual(finish("completed"));
    return reads / steps.length;
  }

  it("a chain costs the same per step at 1,000 and 10,000 steps", () => {
    const small = statusReadsPerStep(chainOf(1000));
    const large = statusReadsPerStep(chainOf(10_000));
    expect(large).toBeLessThan(small * 1.2);
    expect(large).toBeLessThan(20);
  });

  it("a wide plan costs the same per step at 1,000 and 10,000 steps", () => {
    const wide = (n: number): StepOpts[] => [
      {},
      ...Array.from({ length: n - 2 }, () => ({ deps: [0] })),
      { deps: [1] },
    ];
    const small = statusReadsPerStep(wide(1000));
    const large = statusReadsPerStep(wide(10_000));
    expect(large).toBeLessThan(small * 1.2);
    expect(large).toBeLessThan(20);
  });
});

describe("quota waits (SPEC 10)", () => {
  const queued = (until: number) =>
    outcomeOf(
      quotaVerdict({
        destination: "api.test",
        reason: "queued",
        until,
        position: 3,
        pausedUntil: null,
      }),
    );

  it("a step waiting for quota sleeps until its time to ask again, and the run is not waiting for answers", () => {
    const s = begin(plan(independent(2)));
    decide(s, 0);
    settle(s, 0, queued(30_000));
    settle(s, 1, { type: "succeeded" });
    expect(s.status[0]).toBe("waiting");
    expect(s.waitingFor[0]).toBe("quota");
    expect(onlyWaitingForAnswers(s)).toBe(false);
    expect(decide(s, 100)).toEqual({ actions: [], next: { type: "sleep", until: 30_000 } });
    expect(decide(s, 30_000).actions).toEqual([{ type: "resume", step: 0 }]);
  });

  it("a grant wakes the step before its time: it runs again, and its old timer is dropped", () => {
    const s = begin(plan(chainOf(2)));
    decide(s, 0);
    settle(s, 0, queued(30_000));
    expect(wakeWaiting(s, 0)).toBe(true);
    expect(s.status[0]).toBe("running");
    expect(s.running).toBe(1);
    settle(s, 0, { type: "succeeded" });
    expect(starts(decide(s, 10).actions)).toEqual([1]);
    settle(s, 1, { type: "succeeded" });
    // The dropped timer neither resumes step 0 nor keeps the run asleep.
    expect(decide(s, 30_000)).toEqual({ actions: [], next: finish("completed") });
  });

  it("only a waiting step can be woken, and not once the run halted", () => {
    const s = begin(plan(independent(2)));
    decide(s, 0);
    expect(wakeWaiting(s, 0)).toBe(false); // running
    settle(s, 1, queued(30_000));
    cancelRun(s);
    expect(wakeWaiting(s, 1)).toBe(false);
    settle(s, 0, { type: "succeeded" });
    expect(cancels(decide(s, 10).actions)).toEqual([1]);
  });

  it("a quota wait loaded from its row counts as a timed wait", () => {
    const rows: StepSnapshot[] = [{ status: "waiting", nextAttemptAt: 2_000, waitingFor: "quota" }];
    const s = begin(plan(independent(1)), rows);
    expect(s.timerWaits).toBe(1);
    expect(s.answerWaits).toBe(0);
    expect(decide(s, 0)).toEqual({ actions: [], next: { type: "sleep", until: 2_000 } });
  });
});

describe("releasesWork", () => {
  it("a step whose end starts a dependent waiting on it alone, or frees a slot for a queued step", () => {
    // 0 and 1 run; 2 waits for both; 3 waits for 1 alone.
    const s = begin(plan([{}, {}, { deps: [0, 1] }, { deps: [1] }]));
    decide(s, 0);
    expect(releasesWork(s, 0)).toBe(false); // 2 still waits for 1
    expect(releasesWork(s, 1)).toBe(true); // 3 waits for 1 alone
    settle(s, 1, { type: "succeeded" });
    expect(releasesWork(s, 0)).toBe(true); // now 2 waits for 0 alone

    const queued = begin(plan(independent(3), { maxParallel: 2 }));
    decide(queued, 0);
    expect(releasesWork(queued, 0)).toBe(true); // step 2 waits for a slot
  });
});
