/**
 * The `wait` tool (SPEC 4, 5.5): a durable sleep. The step row is the timer and the
 * alarm points at it; nothing is held in memory, so the sleep survives eviction. Timers are
 * made due by moving the run's clock to the alarm, never waited for.
 */
import { evictDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, started, status } from "./helpers";
import { advanceToAlarm, alarmAt, fireAlarm, runStub } from "./helpers";
import { unique } from "./helpers";

const TEN_MINUTES = 600_000;

function waitPlan(params: Record<string, unknown>) {
  return {
    name: unique("wait"),
    steps: [
      { id: "nap", tool: "wait", params },
      { id: "after", tool: "pass", params: { value: "${steps.nap.data}" } },
    ],
  };
}

describe("wait { ms }", () => {
  it("after the first alarm the step waits for its timer and the run keeps running", async () => {
    const runId = await started(waitPlan({ ms: TEN_MINUTES }));
    expect(await fireAlarm(runId)).toBe(true);
    const s = await status(runId);
    expect(s.status).toBe("running");
    const nap = s.steps[0];
    expect(nap.status).toBe("waiting");
    expect(nap.waitingFor).toBe("timer");
    expect(s.steps[1].status).toBe("pending");
  });

  it("sets the alarm at the step's start plus ms", async () => {
    const runId = await started(waitPlan({ ms: TEN_MINUTES }));
    await fireAlarm(runId);
    const startedAt = Date.parse((await status(runId)).steps[0].startedAt);
    const at = await alarmAt(runId);
    expect(at).not.toBeNull();
    expect(Math.abs(at! - (startedAt + TEN_MINUTES))).toBeLessThanOrEqual(1000);
  });

  it("records a step_waiting event with the wake-up time", async () => {
    const runId = await started(waitPlan({ ms: TEN_MINUTES }));
    await fireAlarm(runId);
    const page = (await (await api(`/v1/runs/${runId}/events`)).json()) as any;
    const waiting = page.events.find((e: any) => e.type === "step_waiting");
    expect(waiting).toMatchObject({ stepId: "nap", attempt: 1, data: { waitingFor: "timer" } });
    const startedAt = Date.parse((await status(runId)).steps[0].startedAt);
    expect(
      Math.abs(Date.parse(waiting.data.until) - (startedAt + TEN_MINUTES)),
    ).toBeLessThanOrEqual(1000);
  });

  it("an alarm fired early does not complete the wait and keeps the alarm at the timer", async () => {
    const runId = await started(waitPlan({ ms: TEN_MINUTES }));
    await fireAlarm(runId);
    const before = await alarmAt(runId);
    expect(await fireAlarm(runId)).toBe(true);
    const s = await status(runId);
    expect(s.status).toBe("running");
    expect(s.steps[0].status).toBe("waiting");
    expect(s.iterations).toBe(1);
    expect(await alarmAt(runId)).toBe(before);
  });

  it("survives eviction: once due, the alarm completes the step and the run", async () => {
    const runId = await started(waitPlan({ ms: TEN_MINUTES }));
    await fireAlarm(runId);
    expect((await status(runId)).steps[0].status).toBe("waiting");

    await evictDurableObject(runStub(runId));
    await advanceToAlarm(runId);
    expect(await fireAlarm(runId)).toBe(true);

    const s = await status(runId);
    expect(s.steps[0].status).toBe("succeeded");
    expect(s.steps[1].status).toBe("succeeded");
    expect(s.status).toBe("completed");
  });

  it("a completed wait counts one attempt and is not run again", async () => {
    const runId = await started(waitPlan({ ms: TEN_MINUTES }));
    await fireAlarm(runId);
    await advanceToAlarm(runId);
    await fireAlarm(runId);
    const nap = (await (await api(`/v1/runs/${runId}/steps/nap`)).json()) as any;
    expect(nap.status).toBe("succeeded");
    expect(nap.attempts).toBe(1);
    expect(nap.attemptLog).toHaveLength(1);
    const starts = ((await (await api(`/v1/runs/${runId}/events`)).json()) as any).events.filter(
      (e: any) => e.type === "step_started" && e.stepId === "nap",
    );
    expect(starts).toHaveLength(1);
  });
});

describe("wait { until }", () => {
  it("a time in the past completes on the next alarm", async () => {
    const runId = await started(waitPlan({ until: "2001-02-03T04:05:06Z" }));
    expect(await fireAlarm(runId)).toBe(true);
    const s = await status(runId);
    expect(s.steps[0].status).toBe("succeeded");
    expect(s.status).toBe("completed");
  });

  it("a time in the future sets the alarm at that time", async () => {
    const until = new Date(Date.now() + 3 * 86_400_000);
    const runId = await started(waitPlan({ until: until.toISOString() }));
    await fireAlarm(runId);
    const s = await status(runId);
    expect(s.steps[0].status).toBe("waiting");
    expect(await alarmAt(runId)).toBe(until.getTime());
  });

  it("a templated value that is not a time fails the step as invalid_data", async () => {
    // (A literal one is a 400 at submission: test/far-future.test.ts.)
    const runId = await started({
      ...waitPlan({ until: "${input.t}" }),
      input: { t: "not a time" },
    });
    await fireAlarm(runId);
    const s = await status(runId);
    expect(s.steps[0].status).toBe("failed");
    expect(s.steps[0].error.category).toBe("invalid_data");
  });
});
