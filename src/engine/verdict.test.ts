import { describe, expect, it } from "vitest";
import { DEFAULT_RETRY } from "./retry";
import {
  answerVerdict,
  attemptVerdict,
  destinationPause,
  itemsOutputTooLarge,
  quotaVerdict,
  type VerdictRules,
} from "./verdict";

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

  it("an answer that fails its checks keeps the HTTP status of the call on the error", () => {
    const v = attemptVerdict({ ok: true, data: "x".repeat(200), status: 200 }, rules());
    expect(v).toMatchObject({
      type: "failed",
      error: { category: "output_too_large", status: 200 },
    });
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

describe("destinationPause (SPEC 10)", () => {
  const failure = (status: number, retryAfterMs?: number) => ({
    ok: false as const,
    category: status === 429 ? ("rate_limited" as const) : ("server_error" as const),
    message: `HTTP ${status}`,
    status,
    ...(retryAfterMs !== undefined && { retryAfterMs }),
  });

  it("a 429 pauses its destination for its Retry-After, else for the shortest pause", () => {
    expect(destinationPause(failure(429, 2_000))).toBe(2_000);
    expect(destinationPause(failure(429))).toBe(1_000);
  });

  it("a 503 pauses it only when it names a Retry-After", () => {
    expect(destinationPause(failure(503, 5_000))).toBe(5_000);
    expect(destinationPause(failure(503))).toBeNull();
  });

  it("other answers pause nothing", () => {
    expect(destinationPause(failure(500, 5_000))).toBeNull();
    expect(destinationPause({ ok: true, data: null, status: 200 })).toBeNull();
    expect(destinationPause({ suspend: { waitingFor: "approval" } })).toBeNull();
    expect(
      destinationPause({ ok: false, category: "timeout", message: "no response within 1 ms" }),
    ).toBeNull();
  });
});

describe("quotaVerdict (SPEC 10)", () => {
  it("suspends the step for quota until its time to ask again: no attempt, no retry", () => {
    const wait = {
      destination: "api.test",
      reason: "paused" as const,
      until: 31_000,
      position: 1,
      pausedUntil: 3_000,
    };
    expect(quotaVerdict(wait)).toEqual({
      type: "suspended",
      suspension: { waitingFor: "quota", ...wait },
    });
  });
});
