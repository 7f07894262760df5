/**
 * The header's elapsed time and ETA at `now`. The status document holds them as of its read;
 * between reads (a run waiting on a timer sends no events, so nothing reads it again) they
 * are aged from `readAt` on the page's own clock, so they tick. A final run's stay put.
 */
import type { RunStatus } from "../types";

export interface LiveProgress {
  elapsedMs: number;
  /** 0: no estimate (nothing finished yet to average, or the run is final). */
  etaMs: number;
}

export function liveProgress(
  s: Pick<RunStatus, "startedAt" | "endedAt" | "progress">,
  readAt: number,
  now: number,
): LiveProgress {
  const { elapsedMs, estimatedTimeRemainingMs } = s.progress;
  if (s.endedAt !== null) return { elapsedMs, etaMs: 0 };
  const age = Math.max(0, now - readAt);
  return {
    // A run that has not started yet has no elapsed time to age.
    elapsedMs: s.startedAt === null ? elapsedMs : elapsedMs + age,
    etaMs: estimatedTimeRemainingMs > 0 ? Math.max(0, estimatedTimeRemainingMs - age) : 0,
  };
}
