import { describe, expect, it } from "vitest";
import {
  MAX_PAUSE_MS,
  canGrant,
  extendPause,
  initialState,
  nextGrantAt,
  refill,
  take,
} from "./flow-control";

describe("concurrency", () => {
  it("grants while fewer than `concurrency` are in flight", () => {
    const limits = { concurrency: 2 };
    let s = initialState(limits, 0);
    expect(canGrant(s, limits, 0)).toBe(true);
    s = take(take(s, limits), limits);
    expect(s.inFlight).toBe(2);
    expect(canGrant(s, limits, 0)).toBe(false);
    // Only a release can help: no time to wake at.
    expect(nextGrantAt(s, limits, 0, 1)).toBeNull();
  });
});

describe("the token bucket (ratePerSecond, burst)", () => {
  it("starts full: `burst` calls at once, then one every 1/rate", () => {
    const limits = { ratePerSecond: 4, burst: 3 };
    let s = initialState(limits, 0);
    for (let n = 0; n < 3; n++) {
      expect(canGrant(s, limits, 0)).toBe(true);
      s = take(s, limits);
    }
    expect(canGrant(s, limits, 0)).toBe(false);
    expect(nextGrantAt(s, limits, 0, 5)).toBe(250);
    expect(canGrant(refill(s, limits, 249), limits, 249)).toBe(false);
    s = refill(s, limits, 250);
    expect(canGrant(s, limits, 250)).toBe(true);
  });

  it("without burst, calls are spaced 1/rate apart", () => {
    const limits = { ratePerSecond: 20 };
    let s = take(initialState(limits, 0), limits);
    expect(nextGrantAt(s, limits, 0, 1)).toBe(50);
    s = take(refill(s, limits, 50), limits);
    expect(nextGrantAt(s, limits, 50, 1)).toBe(100);
  });

  it("never holds more than `burst` tokens, however long it was quiet", () => {
    const limits = { ratePerSecond: 10, burst: 2 };
    const s = refill({ ...initialState(limits, 0), tokens: 0 }, limits, 3_600_000);
    expect(s.tokens).toBe(2);
  });

  it("averages at most ratePerSecond over many calls", () => {
    const limits = { ratePerSecond: 20, burst: 5 };
    let s = initialState(limits, 0);
    const grants: number[] = [];
    let now = 0;
    while (grants.length < 200) {
      s = refill(s, limits, now);
      if (canGrant(s, limits, now)) {
        s = take(s, limits);
        grants.push(now);
      } else now = nextGrantAt(s, limits, now, 1)!;
    }
    // 5 at once, then 195 more at 20 per second.
    expect(grants.at(-1)).toBeGreaterThanOrEqual((195 / 20) * 1000);
    for (let k = 0; k + 25 < grants.length; k++)
      expect(grants[k + 25]! - grants[k]!).toBeGreaterThanOrEqual(1000);
  });
});

describe("pauses", () => {
  it("no grant until the pause ends, whatever the slots and tokens", () => {
    const limits = { concurrency: 5 };
    const s = { ...initialState(limits, 0), pausedUntil: 2_000 };
    expect(canGrant(s, limits, 1_999)).toBe(false);
    expect(nextGrantAt(s, limits, 0, 1)).toBe(2_000);
    expect(canGrant(s, limits, 2_000)).toBe(true);
    // An unlisted destination (no limits) is held by its pause alone.
    expect(canGrant(s, {}, 1_000)).toBe(false);
    expect(canGrant(s, {}, 2_000)).toBe(true);
  });

  it("a pause lasts at least 1 s and at most an hour, and is never shortened", () => {
    expect(extendPause(0, 10_000, 0)).toBe(11_000);
    expect(extendPause(0, 10_000, 2_500)).toBe(12_500);
    expect(extendPause(0, 0, 10 * MAX_PAUSE_MS)).toBe(MAX_PAUSE_MS);
    expect(extendPause(50_000, 10_000, 2_000)).toBe(50_000);
  });

  it("nothing waiting, nothing to wake for", () => {
    expect(nextGrantAt({ ...initialState({}, 0), pausedUntil: 5_000 }, {}, 0, 0)).toBeNull();
  });
});
