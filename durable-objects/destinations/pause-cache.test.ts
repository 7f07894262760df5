import { describe, expect, it } from "vitest";
import { PauseCache, REFRESH_MS } from "./pause-cache";
import type { PauseNotice } from "./pause-board";

/** Runs `beside` work at once and lets the test await it. */
function besides() {
  const work: Promise<void>[] = [];
  return { beside: (p: Promise<void>) => void work.push(p), settled: () => Promise.all(work) };
}

describe("PauseCache", () => {
  it("knows a reported pause until it ends (at least 1 s), then forgets it", () => {
    const cache = new PauseCache();
    expect(cache.empty).toBe(true);
    cache.note("api.test", 2_000, 10_000);
    expect(cache.empty).toBe(false);
    expect(cache.pausedUntil("api.test", 11_999)).toBe(12_000);
    expect(cache.pausedUntil("other.test", 11_000)).toBeNull();
    expect(cache.pausedUntil("api.test", 12_000)).toBeNull();
    expect(cache.empty).toBe(true);
    cache.note("api.test", 0, 0);
    expect(cache.pausedUntil("api.test", 0)).toBe(1_000);
  });

  it("a later report extends a pause, an earlier one does not shorten it", () => {
    const cache = new PauseCache();
    cache.note("api.test", 5_000, 0);
    cache.note("api.test", 1_000, 1_000);
    expect(cache.pausedUntil("api.test", 0)).toBe(5_000);
    cache.note("api.test", 9_000, 1_000);
    expect(cache.pausedUntil("api.test", 0)).toBe(10_000);
  });

  it("reads the board in the background at most every REFRESH_MS, on its own clock", async () => {
    const cache = new PauseCache();
    const reads: number[] = [];
    let notices: PauseNotice[] = [{ destination: "far.test", remainingMs: 3_000 }];
    const read = async () => {
      reads.push(reads.length);
      return notices;
    };
    const { beside, settled } = besides();
    cache.refresh(100, read, () => 150, beside);
    cache.refresh(100 + REFRESH_MS - 1, read, () => 0, beside); // too soon: not read again
    await settled();
    expect(reads).toHaveLength(1);
    expect(cache.pausedUntil("far.test", 150)).toBe(3_150);
    notices = [];
    cache.refresh(100 + REFRESH_MS, read, () => 0, beside);
    await settled();
    expect(reads).toHaveLength(2);
    // What the board no longer lists lasts as long as it was known to.
    expect(cache.pausedUntil("far.test", 3_000)).toBe(3_150);
  });

  it("a failed read is tried again after REFRESH_MS; no board, no read", async () => {
    const cache = new PauseCache();
    let calls = 0;
    const failing = async (): Promise<PauseNotice[]> => {
      calls++;
      throw new Error("board unreachable");
    };
    const { beside, settled } = besides();
    cache.refresh(0, failing, () => 0, beside);
    await settled();
    cache.refresh(REFRESH_MS, failing, () => 0, beside);
    await settled();
    expect(calls).toBe(2);
    cache.refresh(10 * REFRESH_MS, null, () => 0, beside);
    expect(calls).toBe(2);
  });
});
