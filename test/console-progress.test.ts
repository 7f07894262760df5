/** The run header's elapsed time and ETA between two status reads (console/src/run/progress-model.ts). */
import { describe, expect, it } from "vitest";
import { liveProgress } from "../console/src/run/progress-model";

const progress = (elapsedMs: number, estimatedTimeRemainingMs: number) =>
  ({ elapsedMs, estimatedTimeRemainingMs }) as Parameters<typeof liveProgress>[0]["progress"];
const readAt = 1_000_000;

describe("liveProgress", () => {
  it("ages a running run's elapsed time and ETA from when the status was read", () => {
    const s = { startedAt: "x", endedAt: null, progress: progress(5_000, 4_000) };
    expect(liveProgress(s, readAt, readAt)).toEqual({ elapsedMs: 5_000, etaMs: 4_000 });
    expect(liveProgress(s, readAt, readAt + 3_000)).toEqual({ elapsedMs: 8_000, etaMs: 1_000 });
    // The estimate runs out; it does not go negative. A clock behind the read ages nothing.
    expect(liveProgress(s, readAt, readAt + 9_000)).toEqual({ elapsedMs: 14_000, etaMs: 0 });
    expect(liveProgress(s, readAt, readAt - 500)).toEqual({ elapsedMs: 5_000, etaMs: 4_000 });
  });

  it("keeps a final run's figures and a run that has not started at 0 elapsed", () => {
    const final = { startedAt: "x", endedAt: "y", progress: progress(5_000, 0) };
    expect(liveProgress(final, readAt, readAt + 60_000)).toEqual({ elapsedMs: 5_000, etaMs: 0 });
    const pending = { startedAt: null, endedAt: null, progress: progress(0, 0) };
    expect(liveProgress(pending, readAt, readAt + 60_000)).toEqual({ elapsedMs: 0, etaMs: 0 });
  });
});
