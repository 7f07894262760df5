import { describe, expect, it } from "vitest";
import { boolVar, settings, type Env } from "./env";
import { ConfigurationError } from "./errors";

const envOf = (vars: Record<string, string | number>) => vars as unknown as Env;

describe("settings: limits from variables", () => {
  it("uses the documented defaults", () => {
    const s = settings(envOf({}));
    expect(s).toMatchObject({
      maxStepsPerPlan: 1000,
      maxPlanBytes: 1_048_576,
      maxOutputBytes: 262_144,
      maxEventsPerRun: 50_000,
      webhookMaxAttempts: 6,
      runsPerMinute: 600,
      maxJsonDepth: 64,
      maxOutputDepth: 128,
      retentionDays: 30,
    });
  });

  it("caps values at what the platform allows", () => {
    const s = settings(
      envOf({
        MAX_STEPS_PER_PLAN: "20000",
        MAX_OUTPUT_BYTES: "5000000",
        WEBHOOK_MAX_ATTEMPTS: "50",
        MAX_JSON_DEPTH: "100000",
        MAX_OUTPUT_DEPTH: "5000",
        RUN_RETENTION_DAYS: "5000",
      }),
    );
    expect(s).toMatchObject({
      maxStepsPerPlan: 10_000,
      maxOutputBytes: 1_048_576,
      webhookMaxAttempts: 20,
      maxJsonDepth: 1000,
      maxOutputDepth: 1000,
      retentionDays: 3650,
    });
  });

  it("a value that is not a positive integer is a deployment error naming the variable", () => {
    expect(() => settings(envOf({ MAX_OUTPUT_BYTES: "lots" }))).toThrow(/MAX_OUTPUT_BYTES/);
    expect(() => settings(envOf({ MAX_EVENTS_PER_RUN: "0" }))).toThrow(/MAX_EVENTS_PER_RUN/);
    expect(() => settings(envOf({ RUN_RETENTION_DAYS: "1.5" }))).toThrow(/RUN_RETENTION_DAYS/);
    expect(() => settings(envOf({ MAX_STEPS_PER_PLAN: "abc" }))).toThrow(ConfigurationError);
    for (const spelling of ["1e3", "0x10", "+5", "5 5", "-0"])
      expect(() => settings(envOf({ MAX_EVENTS_PER_RUN: spelling })), spelling).toThrow(
        /MAX_EVENTS_PER_RUN must be a positive integer/,
      );
    expect(settings(envOf({ MAX_EVENTS_PER_RUN: " 7 " })).maxEventsPerRun).toBe(7);
  });

  it("RUN_RETENTION_DAYS sets how long final runs are kept", () => {
    expect(settings(envOf({ RUN_RETENTION_DAYS: "1" })).retentionDays).toBe(1);
  });

  it("RUNS_PER_MINUTE=0 turns the rate limit off", () => {
    for (const off of ["0", "00", " 0", 0])
      expect(settings(envOf({ RUNS_PER_MINUTE: off })).runsPerMinute, String(off)).toBe(0);
    expect(() => settings(envOf({ RUNS_PER_MINUTE: "-1" }))).toThrow(
      /RUNS_PER_MINUTE must be a whole number \(0 or more\)/,
    );
  });

  it.each([
    [true, true],
    ["true", true],
    [" TRUE ", true],
    ["1", true],
    [false, false],
    ["false", false],
    ["0", false],
    ["", false],
    [undefined, false],
  ])("a yes/no variable reads %j as %j", (value, expected) => {
    expect(boolVar(value, "REQUIRE_API_KEYS")).toBe(expected);
  });

  it("a yes/no variable that is neither is a deployment error naming it", () => {
    expect(() => boolVar("yes please", "REQUIRE_API_KEYS")).toThrow(ConfigurationError);
    expect(() => boolVar("yes please", "REQUIRE_API_KEYS")).toThrow(/REQUIRE_API_KEYS must be/);
  });
});
