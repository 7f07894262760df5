import { describe, expect, it } from "vitest";
import { MAX_DELAY_MS, alarmTime, waitEnd, waitMsProblem, waitUntilProblem } from "./time-limits";

const NOW = Date.parse("2026-01-01T00:00:00Z");
const DAY = 86_400_000;

describe("alarmTime", () => {
  it("keeps times up to 365 days ahead, and past ones", () => {
    expect(alarmTime(NOW + 1000, NOW)).toBe(NOW + 1000);
    expect(alarmTime(NOW + MAX_DELAY_MS, NOW)).toBe(NOW + MAX_DELAY_MS);
    expect(alarmTime(NOW - 1000, NOW)).toBe(NOW - 1000);
  });

  it("brings what workerd would refuse within range", () => {
    expect(alarmTime(Date.parse("9999-12-31T23:59:59Z"), NOW)).toBe(NOW + MAX_DELAY_MS);
    expect(alarmTime(Infinity, NOW)).toBe(NOW + MAX_DELAY_MS);
    expect(alarmTime(NaN, NOW)).toBe(NOW);
    expect(alarmTime(-Infinity, NOW)).toBe(0);
  });
});

describe("wait limits", () => {
  it.each([
    [0, null],
    [MAX_DELAY_MS, null],
    ["60000", null],
    [MAX_DELAY_MS + 1, /too long: a wait lasts at most 365 days/],
    ["1e20", /too long/],
    [-1, /not a number of milliseconds/],
    ["soon", /not a number/],
    ["", /not a number/],
    [NaN, /not a number/],
  ])("ms %j -> %s", (ms, problem) => {
    const found = waitMsProblem(ms);
    if (problem === null) expect(found).toBeNull();
    else expect(found).toMatch(problem);
  });

  it("until: at most 365 days after now, and a time", () => {
    expect(waitUntilProblem(new Date(NOW + 365 * DAY).toISOString(), NOW)).toBeNull();
    expect(waitUntilProblem("2001-01-01T00:00:00Z", NOW)).toBeNull();
    expect(waitUntilProblem(new Date(NOW + 365 * DAY + 1).toISOString(), NOW)).toMatch(
      /too far ahead/,
    );
    expect(waitUntilProblem("9999-12-31T23:59:59Z", NOW)).toMatch(/too far ahead/);
    expect(waitUntilProblem("x".repeat(500), NOW)).toMatch(/^"x{60}\.\.\." is not a time/);
  });

  it("until: only an ISO-8601 date and time with its zone (Date.parse reads far more)", () => {
    for (const loose of ["1", "Dec 25 2026", "2026-02-01 09:00", "2026-02-01T09:00", "2026-02-01"])
      expect(waitUntilProblem(loose, NOW)).toMatch(
        /is not a time: write an ISO-8601 date and time/,
      );
    for (const exact of [
      "2026-02-01T09:00Z",
      "2026-02-01T09:00:00.5Z",
      "2026-02-01T10:00:00+01:00",
    ])
      expect(waitUntilProblem(exact, NOW)).toBeNull();
  });

  it("waitEnd: the end time, or the problem", () => {
    expect(waitEnd({ ms: 1000 }, NOW)).toEqual({ at: NOW + 1000 });
    expect(waitEnd({ ms: "1000" }, NOW)).toEqual({ at: NOW + 1000 });
    expect(waitEnd({ until: "2026-02-01T00:00:00Z" }, NOW)).toEqual({
      at: Date.parse("2026-02-01T00:00:00Z"),
    });
    expect(waitEnd({ until: "9999-01-01" }, NOW)).toMatchObject({ problem: expect.any(String) });
  });
});
