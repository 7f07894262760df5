/**
 * A call the runtime lost (workerd drops what an object started under a request that was
 * cancelled, the call's timeout included) must not hold its run for good: the alarm, which
 * keeps firing at the lease while work is in flight, restarts the object once a call is
 * still in flight CALL_GRACE_MS after its timeout, and the run goes on as after a crash.
 * `lost-*` hosts lose their first call to each URL (test/support/loopback-hosts.ts). A timer
 * of the live iteration that does not fire is served when the alarm fires (it nudges it).
 */
import { describe, expect, it } from "vitest";
import { CALL_GRACE_MS } from "../src/engine/call-watch";
import {
  advanceClock,
  advanceToAlarm,
  alarmAt,
  alarmInBackground,
  byId,
  drive,
  fireAlarm,
  hostUrl,
  post,
  upstreamUrl,
} from "./helpers";
import { script, started, status, stepDetail, unique, until, upstreamCalls } from "./helpers";
import { findStep, fixedFind, plannerCalls, runToEnd } from "./replan-support";

const TIMEOUT_MS = 1_000;

/** A step whose first call is lost: it never settles, though its timeout aborts it. */
function lostStep(id: string, key: string) {
  return {
    id,
    tool: "http",
    params: { url: hostUrl(`lost-${key}`, `/script/${key}`) },
    timeoutMs: TIMEOUT_MS,
    retry: { baseDelayMs: 0, jitter: "none" },
  };
}

async function untilStatus(runId: string, stepId: string, want: string): Promise<void> {
  const check = async () => byId(await status(runId))[stepId]?.status === want;
  await until(check, `${stepId} ${want}`);
}

describe("what the runtime loses: a call, a timer (the watchdog)", () => {
  it("restarts the run's object once the call outlived its timeout by the grace; the step is retried", async () => {
    const key = unique("lost");
    const runId = await started({ steps: [lostStep("a", key)] });
    const iteration = alarmInBackground(runId);
    await untilStatus(runId, "a", "running");

    // Within its timeout and the grace, the alarm only renews the lease: nothing restarts.
    await advanceClock(runId, TIMEOUT_MS + CALL_GRACE_MS - 1_000);
    expect(await fireAlarm(runId)).toBe(true);
    expect(byId(await status(runId)).a.status).toBe("running");

    // Past it, the alarm restarts the object: the iteration waiting on the call ends with it.
    await advanceClock(runId, 1_001);
    await expect(fireAlarm(runId)).rejects.toThrow(/the call was lost/);
    expect(await iteration).toBe("rejected");

    const final = await drive(runId);
    expect(final.status).toBe("completed");
    const a = await stepDetail(runId, "a");
    expect(a.attemptLog).toHaveLength(2);
    expect(a.attemptLog[0]).toMatchObject({ attempt: 1, category: "interrupted" });
    expect(a.attemptLog[1].attempt).toBe(2);
    expect(a.attemptLog[1].category).toBeUndefined();
    expect(await upstreamCalls(`/script/${key}`)).toHaveLength(1);
  });

  it("a lost compensation does not hold the rollback (nor every alarm after it) for good", async () => {
    const key = unique("undo-lost");
    const runId = await started({
      config: { rollback: true },
      steps: [
        {
          id: "a",
          tool: "http",
          params: { url: script(`${key}-a`) },
          timeoutMs: TIMEOUT_MS,
          compensate: { tool: "http", params: lostStep("", key).params },
        },
        {
          id: "b",
          tool: "http",
          params: { url: script(`${key}-b`, "?plan=404") },
          dependsOn: ["a"],
          onFailure: "fail_run",
        },
      ],
    });
    const rollback = alarmInBackground(runId);
    await until(async () => (await status(runId)).rollback?.state === "running", "rollback runs");

    // At the lease, within the grace: the alarm renews the lease (it does not wait behind the
    // rollback that holds the run), so it comes back to look again.
    await advanceClock(runId, TIMEOUT_MS + CALL_GRACE_MS - 1_000);
    expect(await fireAlarm(runId)).toBe(true);
    expect(await alarmAt(runId)).not.toBeNull();
    await advanceClock(runId, 1_001);
    await expect(fireAlarm(runId)).rejects.toThrow(/the call was lost/);
    expect(await rollback).toBe("rejected");

    // The next instance finds the compensation interrupted and retries it after its backoff.
    expect(await fireAlarm(runId)).toBe(true);
    expect((await status(runId)).rollback.steps[0]).toMatchObject({ status: "retrying" });
    await advanceToAlarm(runId);
    const final = await drive(runId);
    expect(final.status).toBe("failed");
    expect(final.rollback).toMatchObject({
      state: "completed",
      steps: [{ stepId: "a", status: "succeeded", attempts: 2 }],
    });
    const undoCalls = (await upstreamCalls(`/script/${key}`)).filter(
      (c) => c.path === `/script/${key}`,
    );
    expect(undoCalls).toHaveLength(1);
  });

  it("a lost planner call does not hold the repair (SPEC 9.2) for good", async () => {
    const key = unique("plan-lost");
    const body = new URLSearchParams({ body: JSON.stringify({ steps: [fixedFind] }) });
    const url = hostUrl(`lost-${key}`, `/planner/answer/${key}?${body}`);
    const runId = await started({
      replan: { url, cooldownMs: 0, timeoutMs: TIMEOUT_MS },
      steps: [findStep()],
    });
    const iteration = alarmInBackground(runId);
    await untilStatus(runId, "find", "waiting");

    await advanceClock(runId, TIMEOUT_MS + CALL_GRACE_MS + 1);
    await expect(fireAlarm(runId)).rejects.toThrow(
      /step "find:replan:1" attempt 1 .* the call was lost/,
    );
    expect(await iteration).toBe("rejected");

    const final = await runToEnd(runId);
    expect(final.status).toBe("completed");
    expect(final.replans).toMatchObject([{ n: 1, answer: "repaired", attempts: 2 }]);
    expect(await plannerCalls(key)).toHaveLength(1);
  });

  it("a cancel sent while a lost call holds the run is a 503 to retry when the object restarts; sent again, it cancels", async () => {
    const key = unique("lost-cancel");
    const runId = await started({ steps: [lostStep("a", key)] });
    const iteration = alarmInBackground(runId);
    await untilStatus(runId, "a", "running");
    const first = post(`/v1/runs/${runId}/cancel`);

    await advanceClock(runId, TIMEOUT_MS + CALL_GRACE_MS + 1);
    await expect(fireAlarm(runId)).rejects.toThrow(/the call was lost/);
    expect(await iteration).toBe("rejected");
    const refused = await first;
    expect(refused.res.status).toBe(503);
    expect(refused.res.headers.get("Retry-After")).toBe("1");
    expect(refused.body.error).toEqual({
      code: "unavailable",
      message:
        "the Durable Object serving this request restarted before it answered: send the request again",
    });

    const again = await post(`/v1/runs/${runId}/cancel`);
    expect(again.res.status).toBe(200);
    expect(again.body.status).toBe("cancelled");
    expect((await status(runId)).status).toBe("cancelled");
  });

  it("a live iteration whose timer did not fire serves the wait that fell due when the alarm fires", async () => {
    const runId = await started({
      steps: [
        // Its timer in the iteration is a minute of real time: as good as dropped here.
        { id: "w", tool: "wait", params: { ms: 60_000 } },
        // Keeps the iteration live (no answer) for longer than the minute the clock moves.
        { id: "held", tool: "http", params: { url: `${upstreamUrl}/hang` }, timeoutMs: 120_000 },
      ],
    });
    const iteration = alarmInBackground(runId);
    await untilStatus(runId, "held", "running");
    await untilStatus(runId, "w", "waiting");

    await advanceClock(runId, 60_001);
    expect(await fireAlarm(runId)).toBe(true);
    await untilStatus(runId, "w", "succeeded");
    // Served by the same iteration, its other call still in flight; a cancel then ends it.
    expect(byId(await status(runId)).held.status).toBe("running");
    expect((await post(`/v1/runs/${runId}/cancel`)).body.status).toBe("cancelled");
    expect(await iteration).toBe("settled");
  });
});
