import { describe, expect, it } from "vitest";
import { DEFAULT_RETRY } from "./retry";
import { answerVerdict, attemptVerdict, itemsOutputTooLarge, type VerdictRules } from "./verdict";

const limits = { maxOutputBytes: 100, maxOutputDepth: 8 };

const rules = (over: Partial<VerdictRules> = {}): VerdictRules => ({
  retry: { ...DEFAULT_RETRY, jitter: "none" },
  counted: 1,
  halted: false,
  cancelled: false,
  output: limits,
  item: false,
  noSuspend: null,
  now: 1_000,
  rand: () => 0.5,
  ...over,
});

describe("attemptVerdict", () => {
  it("a success stores its output as JSON text with its HTTP status", () => {
    expect(attemptVerdict({ ok: true, data: { a: 1 }, status: 200 }, rules())).toEqual({
      type: "succeeded",
      data: '{"a":1}',
      status: 200,
    });
  });

  it("an output over the cap fails the attempt as output_too_large, not retried", () => {
    const v = attemptVerdict({ ok: true, data: "x".repeat(200) }, rules());
    expect(v).toMatchObject({ type: "failed", error: { category: "output_too_large" } });
    expect(v.type === "failed" && v.error.message).toBe(
      "output is 202 bytes, more than MAX_OUTPUT_BYTES (100)",
    );
  });

  it("a retryable failure is retried after the policy's delay, never before Retry-After", () => {
    const failure = { ok: false as const, category: "rate_limited" as const, message: "429" };
    expect(attemptVerdict(failure, rules())).toMatchObject({ type: "retry", at: 2_000 });
    expect(attemptVerdict({ ...failure, retryAfterMs: 5_000 }, rules())).toMatchObject({
      type: "retry",
      at: 6_000,
    });
  });

  it("retries stop after maxRetries, counted from the last redrive", () => {
    const failure = { ok: false as const, category: "server_error" as const, message: "500" };
    expect(attemptVerdict(failure, rules({ counted: 4 })).type).toBe("failed");
    expect(attemptVerdict(failure, rules({ counted: 3 })).type).toBe("retry");
  });

  it("a halted run makes every failure final; a cancelled one makes it cancelled", () => {
    const failure = { ok: false as const, category: "network" as const, message: "reset" };
    expect(attemptVerdict(failure, rules({ halted: true })).type).toBe("failed");
    expect(attemptVerdict(failure, rules({ halted: true, cancelled: true })).type).toBe(
      "cancelled",
    );
    const aborted = { ok: false as const, category: "cancelled" as const, message: "aborted" };
    expect(attemptVerdict(aborted, rules()).type).toBe("cancelled");
  });

  it("a suspension waits, unless the attempt may not wait (forEach items, compensations)", () => {
    const wait = { suspend: { waitingFor: "timer" as const, until: 5_000 } };
    expect(attemptVerdict(wait, rules())).toEqual({
      type: "suspended",
      suspension: wait.suspend,
    });
    expect(attemptVerdict(wait, rules({ noSuspend: "this tool cannot run per item" }))).toEqual({
      type: "failed",
      error: { category: "invalid_data", message: "this tool cannot run per item" },
    });
  });
});

describe("answerVerdict", () => {
  it("an approval succeeds with its comment; a denial fails as approval_denied", () => {
    expect(answerVerdict({ type: "approval", approved: true, comment: "ok" }, limits)).toEqual({
      type: "succeeded",
      data: '{"approved":true,"comment":"ok"}',
      status: null,
    });
    expect(answerVerdict({ type: "approval", approved: false }, limits)).toEqual({
      type: "failed",
      error: { category: "approval_denied", message: "approval denied" },
    });
  });

  it("a callback's output is bounded like any output; its error fails as callback_failed", () => {
    const big = { type: "callback" as const, token: "t", answer: { output: "x".repeat(200) } };
    expect(answerVerdict(big, limits)).toMatchObject({ error: { category: "output_too_large" } });
    const failed = { type: "callback" as const, token: "t", answer: { error: { message: "no" } } };
    expect(answerVerdict(failed, limits)).toEqual({
      type: "failed",
      error: { category: "callback_failed", message: "no" },
    });
  });
});

describe("output caps", () => {
  it("an output nested past MAX_OUTPUT_DEPTH fails as invalid_data, not retried", () => {
    let deep: unknown = 1;
    for (let i = 0; i < 9; i++) deep = [deep];
    expect(attemptVerdict({ ok: true, data: deep }, rules())).toMatchObject({
      type: "failed",
      error: { category: "invalid_data" },
    });
  });

  it("a forEach step's assembled array counts brackets and commas", () => {
    expect(itemsOutputTooLarge(3, 3, 7)).toBeNull(); // [1,2,3]
    expect(itemsOutputTooLarge(3, 3, 6)?.message).toBe(
      "the 3 items' outputs total 7 bytes, more than MAX_OUTPUT_BYTES (6)",
    );
  });
});
