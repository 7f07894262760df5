import { describe, expect, it } from "vitest";
import { settings, type Env } from "./env";
import { ConfigurationError } from "./errors";

const envOf = (vars: Record<string, string>) => vars as unknown as Env;

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
  });

  it("RUN_RETENTION_DAYS sets how long final runs are kept", () => {
    expect(settings(envOf({ RUN_RETENTION_DAYS: "1" })).retentionDays).toBe(1);
  });

  it("RUNS_PER_MINUTE=0 turns the rate limit off", () => {
    expect(settings(envOf({ RUNS_PER_MINUTE: "0" })).runsPerMinute).toBe(0);
  });
});
