/** The run header's elapsed time and ETA between two status reads (console/src/run/progress-model.ts). */
import { describe, expect, it } from "vitest";
import { liveProgress, progressShape } from "../console/src/run/progress-model";

const progress = (elapsedMs: number, estimatedTimeRemainingMs: number) =>
  ({ elapsedMs, estimatedTimeRemainingMs }) as Parameters<typeof liveProgress>[0]["progress"];
const readAt = 1_000_000;

describe("liveProgress", () => {
  it("ages a running run's elapsed time and ETA from when the status was read", () => {
    const s = {
      status: "running",
      startedAt: "x",
      endedAt: null,
      progress: progress(5_000, 4_000),
    } as const;
    expect(liveProgress(s, readAt, readAt)).toEqual({ elapsedMs: 5_000, etaMs: 4_000 });
    expect(liveProgress(s, readAt, readAt + 3_000)).toEqual({ elapsedMs: 8_000, etaMs: 1_000 });
    // The estimate runs out; it does not go negative. A clock behind the read ages nothing.
    expect(liveProgress(s, readAt, readAt + 9_000)).toEqual({ elapsedMs: 14_000, etaMs: 0 });
    expect(liveProgress(s, readAt, readAt - 500)).toEqual({ elapsedMs: 5_000, etaMs: 4_000 });
  });

  it("keeps a final run's figures and a run that has not started at 0 elapsed", () => {
    const final = {
      status: "completed",
      startedAt: "x",
      endedAt: "y",
      progress: progress(5_000, 0),
    } as const;
    expect(liveProgress(final, readAt, readAt + 60_000)).toEqual({ elapsedMs: 5_000, etaMs: 0 });
    const pending = {
      status: "pending",
      startedAt: null,
      endedAt: null,
      progress: progress(0, 0),
    } as const;
    expect(liveProgress(pending, readAt, readAt + 60_000)).toEqual({ elapsedMs: 0, etaMs: 0 });
  });

  it("makes no estimate while the run waits (for a person, a callback, a timer) or is paused", () => {
    for (const status of ["waiting", "paused"] as const) {
      const s = { status, startedAt: "x", endedAt: null, progress: progress(5_000, 4_000) };
      expect(liveProgress(s, readAt, readAt + 1_000)).toEqual({ elapsedMs: 6_000, etaMs: 0 });
    }
  });
});

describe("progressShape", () => {
  const status = (done: [number, number, number, number], total: number) => ({
    summary: {
      successfulSteps: done[0],
      failedSteps: done[1],
      skippedSteps: done[2],
      cancelledSteps: done[3],
    },
    progress: {
      completedSteps: done.reduce((a, b) => a + b),
      totalSteps: total,
      percentage: Math.round((done.reduce((a, b) => a + b) / total) * 100),
    },
  });

  it("draws a run cancelled before anything ran as cancelled, not as a full green bar", () => {
    const shape = progressShape(status([0, 0, 0, 4], 4) as never);
    expect(shape.text).toBe("0 succeeded · 4 cancelled of 4 steps");
    expect(shape.parts).toEqual([{ outcome: "cancelled", count: 4, percent: 100 }]);
  });

  it("splits the bar by outcome, and keeps the plain count while every step succeeded", () => {
    const mixed = progressShape(status([2, 1, 1, 0], 8) as never);
    expect(mixed.text).toBe("2 succeeded · 1 failed · 1 skipped of 8 steps");
    expect(mixed.parts.map((p) => [p.outcome, p.percent])).toEqual([
      ["succeeded", 25],
      ["failed", 12.5],
      ["skipped", 12.5],
    ]);
    expect(progressShape(status([3, 0, 0, 0], 4) as never).text).toBe("3/4 steps · 75%");
  });
});
