/**
 * The header's elapsed time and ETA at `now`. The status document holds them as of its read;
 * between reads (a run waiting on a timer sends no events, so nothing reads it again) they
 * are aged from `readAt` on the page's own clock, so they tick. A final run's stay put.
 */
import type { RunStatus } from "../types";

export type Outcome = "succeeded" | "failed" | "skipped" | "cancelled";

export interface ProgressShape {
  /** The bar's segments, left to right: the share of the plan's steps that ended each way. */
  parts: { outcome: Outcome; count: number; percent: number }[];
  text: string;
}

/**
 * The header's progress bar and its words. "Done" is not "succeeded": a run denied at its
 * risk gate has every step done (cancelled), which a green bar at 100 % would misread, so
 * the bar is split by how the steps ended, and the words name the outcomes once any step
 * ended otherwise than succeeded.
 */
export function progressShape(s: Pick<RunStatus, "summary" | "progress">): ProgressShape {
  const { successfulSteps, failedSteps, skippedSteps, cancelledSteps } = s.summary;
  const { completedSteps, totalSteps, percentage } = s.progress;
  const counts: [Outcome, number][] = [
    ["succeeded", successfulSteps],
    ["failed", failedSteps],
    ["skipped", skippedSteps],
    ["cancelled", cancelledSteps],
  ];
  const parts = counts
    .filter(([, count]) => count > 0)
    .map(([outcome, count]) => ({
      outcome,
      count,
      percent: totalSteps > 0 ? (count / totalSteps) * 100 : 0,
    }));
  const others = counts.slice(1).filter(([, count]) => count > 0);
  const text =
    others.length === 0
      ? `${completedSteps}/${totalSteps} steps · ${percentage}%`
      : [`${successfulSteps} succeeded`, ...others.map(([o, n]) => `${n} ${o}`)].join(" · ") +
        ` of ${totalSteps} steps`;
  return { parts, text };
}

export interface LiveProgress {
  elapsedMs: number;
  /**
   * 0: no estimate (nothing finished yet to average, the run is final, or it waits: for a
   * person, a callback, a timer or a resume, which the steps' average says nothing of).
   */
  etaMs: number;
}

export function liveProgress(
  s: Pick<RunStatus, "status" | "startedAt" | "endedAt" | "progress">,
  readAt: number,
  now: number,
): LiveProgress {
  const { elapsedMs, estimatedTimeRemainingMs } = s.progress;
  if (s.endedAt !== null) return { elapsedMs, etaMs: 0 };
  const age = Math.max(0, now - readAt);
  const estimate = s.status === "waiting" || s.status === "paused" ? 0 : estimatedTimeRemainingMs;
  return {
    // A run that has not started yet has no elapsed time to age.
    elapsedMs: s.startedAt === null ? elapsedMs : elapsedMs + age,
    etaMs: estimate > 0 ? Math.max(0, estimate - age) : 0,
  };
}
