import { describe, expect, it } from "vitest";
import { CALL_GRACE_MS, lostCallMessage, watchCalls, type CallInFlight } from "./call-watch";

const call = (stepId: string, startedAt: number, timeoutMs = 1_000): CallInFlight => ({
  stepId,
  attempt: 1,
  startedAt,
  timeoutMs,
});

describe("watchCalls", () => {
  it("is healthy with no call in flight, and while every call is within its timeout and the grace", () => {
    expect(watchCalls([], 5_000)).toEqual({ type: "healthy" });
    const deadline = 1_000 + 1_000 + CALL_GRACE_MS;
    expect(watchCalls([call("a", 1_000)], deadline)).toEqual({ type: "healthy" });
  });

  it("finds a call that outlived its timeout by more than the grace", () => {
    const now = 1_000 + 1_000 + CALL_GRACE_MS + 1;
    expect(watchCalls([call("a", 1_000)], now)).toEqual({
      type: "lost",
      call: call("a", 1_000),
      overdueMs: CALL_GRACE_MS + 1,
    });
  });

  it("names the call overdue longest, by its own timeout", () => {
    const calls = [call("short", 0, 100), call("long", 0, 60_000), call("later", 50, 100)];
    const verdict = watchCalls(calls, 20_000);
    expect(verdict).toMatchObject({ type: "lost", call: { stepId: "short" }, overdueMs: 19_900 });
  });

  it("takes the grace it is given", () => {
    expect(watchCalls([call("a", 0)], 1_500, 400).type).toBe("lost");
    expect(watchCalls([call("a", 0)], 1_400, 400).type).toBe("healthy");
  });
});

describe("lostCallMessage", () => {
  it("names the run, the step, its item and attempt, and the times, nothing of the call's params", () => {
    const verdict = { call: { ...call("fetch", 0), itemIndex: 3, attempt: 2 }, overdueMs: 12_000 };
    expect(lostCallMessage("run_1", verdict)).toBe(
      'edgestep: run run_1: step "fetch" (item 3) attempt 2 is still in flight 12000 ms after its ' +
        "1000 ms timeout: the call was lost; restarting the run's object, as after a crash (its " +
        "calls in flight are retried)",
    );
  });
});
