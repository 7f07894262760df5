/**
 * What this isolate knows of destinations' pauses (SPEC 10), so that a call to a destination
 * that is neither limited nor paused starts without asking anyone: a Map lookup, no round trip.
 * It learns of a pause from every 429 (or 503 with Retry-After) a run of this isolate receives,
 * at once, and from the pause board (PauseBoard), read in the background at most every
 * REFRESH_MS while calls are being made: a pause another isolate found reaches this one within
 * about that long (the trade-off for keeping the call's path free of round trips).
 *
 * One per isolate (module state), shared by the runs it hosts; times are those runs' clocks.
 */
import { extendPause } from "../../src/engine/flow-control";
import type { PauseNotice } from "./pause-board";

/** How often, at most, an isolate that is making calls reads the pause board. */
export const REFRESH_MS = 1_000;

export class PauseCache {
  private readonly until = new Map<string, number>();
  private readAt = Number.NEGATIVE_INFINITY;
  private reading = false;

  /** No pause is known: every call to an unlisted destination may go. */
  get empty(): boolean {
    return this.until.size === 0;
  }

  /** When the destination's known pause ends, or null when none is known to last past `now`. */
  pausedUntil(destination: string, now: number): number | null {
    const until = this.until.get(destination);
    if (until === undefined) return null;
    if (until > now) return until;
    this.until.delete(destination);
    return null;
  }

  /** A pause of `ms` reported at `now` (within the bounds every destination applies). */
  note(destination: string, ms: number, now: number): void {
    this.until.set(destination, extendPause(this.until.get(destination) ?? 0, now, ms));
  }

  /**
   * Reads the board in the background when it was last read REFRESH_MS ago or more (never
   * waited for; a failed read is tried again after REFRESH_MS). `read` is null where there is
   * nothing to read (tests, whose runs all share this isolate).
   */
  refresh(
    now: number,
    read: (() => Promise<PauseNotice[]>) | null,
    clock: () => number,
    beside: (work: Promise<void>) => void,
  ): void {
    if (read === null || this.reading || now - this.readAt < REFRESH_MS) return;
    this.reading = true;
    this.readAt = now;
    beside(
      read()
        .then((notices) => this.apply(notices, clock()))
        .catch((err: unknown) => console.error("edgestep: reading the pause board failed", err))
        .finally(() => {
          this.reading = false;
        }),
    );
  }

  /** Pauses read from the board (remaining durations, applied on this isolate's clock). */
  apply(notices: readonly PauseNotice[], now: number): void {
    for (const { destination, remainingMs } of notices) {
      const until = now + remainingMs;
      if (until > (this.until.get(destination) ?? 0)) this.until.set(destination, until);
    }
  }
}

/** This isolate's. */
export const pauseCache = new PauseCache();
