import { describe, expect, it } from "vitest";
import type { CompiledPlan } from "./plan";
import { configSchema } from "./plan-schema";
import type { RunRecord, StepRecord } from "./records";
import { countSteps, runView, stepResult, stepResultJson, stepView } from "./status";
import { runRecord } from "./test-records";
import type { StepStatus } from "./records";

const T0 = Date.parse("2026-01-01T00:00:00Z");

/** runView reads only the plan's name and mode (and the run's step counts, as storage keeps them). */
function plan(): CompiledPlan {
  return { name: "p", tags: {}, input: null, config: configSchema.parse({}), steps: [] };
}

function run(overrides: Partial<RunRecord> = {}, steps: StepRecord[] = []): RunRecord {
  return runRecord({ createdAt: T0, counts: countSteps(steps), ...overrides });
}

/** A step record: `ms` is its duration when it has ended. */
function step(
  index: number,
  status: StepStatus,
  ms: number | null = null,
  attempts = 1,
): StepRecord {
  const ended = ms !== null;
  return {
    index,
    id: `s${index}`,
    tool: "pass",
    status,
    reason: status === "skipped" ? "condition_false" : null,
    attempts: status === "pending" ? 0 : attempts,
    startedAt: status === "pending" || status === "skipped" ? null : T0,
    endedAt: ended ? T0 + ms : null,
    nextAttemptAt: null,
    waitingFor: null,
    data: status === "succeeded" ? "1" : null,
    error:
      status === "failed"
        ? JSON.stringify({ category: "client_error", message: "HTTP 404" })
        : null,
    httpStatus: null,
    executionMs: ended ? ms : null,
  };
}

describe("runView: progress (SPEC 5.8)", () => {
  const steps = [
    step(0, "succeeded", 100),
    step(1, "failed", 300),
    step(2, "skipped"),
    step(3, "running"),
    step(4, "pending"),
    step(5, "pending"),
    step(6, "cancelled"),
    step(7, "retrying"),
  ];
  const view = runView(run({}, steps), plan(), steps, T0 + 1_000);

  it("completedSteps counts succeeded, failed, skipped and cancelled steps", () => {
    expect(view.progress.completedSteps).toBe(4);
    expect(view.progress.totalSteps).toBe(8);
    expect(view.progress.percentage).toBe(50);
  });

  it("averageStepDurationMs averages the steps that ran to an end (succeeded or failed)", () => {
    expect(view.progress.averageStepDurationMs).toBe(200);
  });

  it("estimatedTimeRemainingMs is the unfinished steps times the average", () => {
    expect(view.progress.estimatedTimeRemainingMs).toBe(4 * 200);
  });

  it("elapsedMs runs from the start to now while the run is live", () => {
    expect(view.progress.elapsedMs).toBe(1_000);
  });

  it("runningSteps counts the steps with an attempt in flight", () => {
    expect(view.progress.runningSteps).toBe(1);
  });

  it("summary counts each final status", () => {
    expect(view.summary).toEqual({
      totalSteps: 8,
      successfulSteps: 1,
      failedSteps: 1,
      skippedSteps: 1,
      cancelledSteps: 1,
    });
  });

  it("a finished run: elapsedMs stops at its end, no time remains", () => {
    const steps = [step(0, "succeeded", 100), step(1, "pending")];
    const ended = runView(
      run({ status: "partial", endedAt: T0 + 500 }, steps),
      plan(),
      steps,
      T0 + 9_000,
    );
    expect(ended.progress.elapsedMs).toBe(500);
    expect(ended.progress.estimatedTimeRemainingMs).toBe(0);
  });

  it("a run not started yet has elapsedMs 0 and no average", () => {
    const steps = [step(0, "pending")];
    const fresh = runView(
      run({ status: "pending", startedAt: null }, steps),
      plan(),
      steps,
      T0 + 5,
    );
    expect(fresh.progress).toMatchObject({ elapsedMs: 0, averageStepDurationMs: 0, percentage: 0 });
  });

  it("percentage is rounded to two decimals", () => {
    const steps = [step(0, "succeeded", 1), step(1, "pending"), step(2, "pending")];
    const third = runView(run({}, steps), plan(), steps, T0);
    expect(third.progress.percentage).toBe(33.33);
  });
});

describe("stepResult: metadata", () => {
  it("retries are the attempts after the first", () => {
    expect(stepResult(step(0, "succeeded", 10, 3)).metadata).toMatchObject({
      attempts: 3,
      retries: 2,
    });
  });

  it("a forEach step's retries are its item attempts beyond one per item", () => {
    expect(stepResult(step(0, "succeeded", 10, 3), 3).metadata).toMatchObject({
      attempts: 3,
      retries: 0,
    });
    expect(stepResult(step(0, "succeeded", 10, 5), 3).metadata.retries).toBe(2);
  });
});

describe("stored values no view can show (written by an earlier version)", () => {
  it("a time past what a Date holds reads as null instead of throwing", () => {
    const row = { ...step(0, "retrying"), nextAttemptAt: Infinity };
    expect(stepView(row).nextAttemptAt).toBeNull();
    expect(stepView({ ...row, nextAttemptAt: 9e15 }).nextAttemptAt).toBeNull();
    expect(stepView({ ...row, nextAttemptAt: T0 }).nextAttemptAt).toBe("2026-01-01T00:00:00.000Z");
  });

  it("an output nested deeper than 1000 levels reads as a placeholder", () => {
    const row = { ...step(0, "succeeded", 5), data: `${"[".repeat(1001)}${"]".repeat(1001)}` };
    expect(stepResult(row).data).toBe("[not shown: nested deeper than 1000 levels]");
  });
});

describe("stepResultJson", () => {
  it("is the JSON of stepResult, with the stored output spliced in as stored", () => {
    const cases = [
      step(0, "succeeded", 10, 2),
      step(1, "failed", 5),
      step(2, "pending"),
      { ...step(3, "succeeded", 1), data: '{"a":[1,2,{"b":"c"}]}', httpStatus: 201 },
    ];
    for (const s of cases) {
      expect(JSON.parse(stepResultJson(s, 1))).toEqual(stepResult(s, 1));
      expect(stepResultJson(s)).toBe(JSON.stringify(stepResult(s)));
    }
  });
});
