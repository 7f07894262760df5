/**
 * A crash at any point of a repair (SPEC 9.2) neither loses nor repeats it: the Durable Object
 * is aborted before the planner call (its request committed), during it, and after the repair
 * was applied; each time the run carries on from its checkpoint, the planner is asked again
 * only for a call that was cut off (with the same Idempotency-Key), and the repair applies once.
 */
import { describe, expect, it } from "vitest";
import { abortObject, alarmAt, alarmInBackground, api, byId, events, fireAlarm } from "./helpers";
import { post, runAlarm, runCalls, runStub, started, status, unique, until } from "./helpers";
import { upstreamUrl } from "./helpers";
import { findStep, fixedFind, planner, plannerCalls, replanTo, runToEnd } from "./replan-support";

/** The run's plan revision and how many times a repair was applied. */
async function applied(runId: string): Promise<{ revision: number; events: number }> {
  const plan = (await (await api(`/v1/runs/${runId}/plan`)).json()) as any;
  const log = await events(runId);
  return { revision: plan.revision, events: log.filter((e) => e.type === "replan_applied").length };
}

describe("a crash around a repair (SPEC 9.2)", () => {
  it("before the planner call: the committed request is asked after the restart, once", async () => {
    // Two steps fail together: the second request waits for the cooldown, and the object dies meanwhile.
    const runId = await started({
      replan: { url: `${upstreamUrl}/planner`, cooldownMs: 20_000 },
      steps: [findStep(), { ...findStep(), id: "find2" }],
    });
    await fireAlarm(runId);
    expect(await runCalls(runId, "/planner")).toHaveLength(1);
    await abortObject(runId);
    expect(await alarmAt(runId)).not.toBeNull();

    const run = await runToEnd(runId);
    expect(run.status).toBe("completed");
    const calls = await runCalls(runId, "/planner");
    expect(calls.map((c) => c.idempotencyKey).sort()).toEqual([
      `${runId}:find2:replan:2`,
      `${runId}:find:replan:1`,
    ]);
    expect(run.replans.map((r: any) => [r.n, r.answer, r.attempts])).toEqual([
      [1, "repaired", 1],
      [2, "repaired", 1],
    ]);
    expect(await applied(runId)).toEqual({ revision: 2, events: 2 });
  });

  it("before a retry of the planner call: the retry is made after the restart", async () => {
    const key = unique("retry-crash");
    const runId = await started({
      config: { retry: { baseDelayMs: 60_000, jitter: "none" } },
      replan: replanTo(planner(key, { steps: [fixedFind] }, { plan: "503,200" })),
      steps: [findStep()],
    });
    await fireAlarm(runId);
    expect(byId(await status(runId)).find).toMatchObject({
      status: "waiting",
      waitingFor: "replan",
    });
    await abortObject(runId);
    const run = await runToEnd(runId);
    expect(run.status).toBe("completed");
    expect((await plannerCalls(key)).map((c) => c.attempt)).toEqual([1, 2]);
    expect(await applied(runId)).toEqual({ revision: 1, events: 1 });
  });

  it("during the planner call: the cut-off call is made again with the same key, and applied once", async () => {
    const key = unique("mid-call");
    const runId = await started({
      config: { retry: { baseDelayMs: 0 } },
      replan: replanTo(planner(key, { steps: [fixedFind] }, { delay: 1_500 })),
      steps: [findStep(), { id: "after", tool: "pass", params: { value: "${steps.find.data}" } }],
    });
    const inFlight = alarmInBackground(runId);
    await until(async () => (await plannerCalls(key)).length === 1, "the planner is called");
    await abortObject(runId);
    await inFlight;
    // The step still waits for its repair; the lease keeps an alarm set.
    expect(byId(await status(runId)).find).toMatchObject({
      status: "waiting",
      waitingFor: "replan",
    });
    expect(await alarmAt(runId)).not.toBeNull();

    const run = await runToEnd(runId);
    expect(run.status).toBe("completed");
    const calls = await plannerCalls(key);
    expect(calls).toHaveLength(2);
    expect(new Set(calls.map((c) => c.idempotencyKey))).toEqual(
      new Set([`${runId}:find:replan:1`]),
    );
    expect(calls.map((c) => c.attempt)).toEqual([1, 2]);
    expect(run.replans).toEqual([
      expect.objectContaining({ n: 1, answer: "repaired", attempts: 2 }),
    ]);
    expect(await applied(runId)).toEqual({ revision: 1, events: 1 });
    expect(run.steps.map((s: any) => s.status)).toEqual(["succeeded", "succeeded"]);
  });

  it("after the repair was applied: it is not asked for or applied again", async () => {
    const key = unique("after-apply");
    const runId = await started({
      replan: replanTo(planner(key, { steps: [fixedFind, { id: "extra", tool: "pass" }] })),
      steps: [findStep()],
    });
    await fireAlarm(runId);
    expect(await applied(runId)).toEqual({ revision: 1, events: 1 });
    await abortObject(runId);
    await runAlarm(runId); // a duplicate delivery changes nothing either
    const run = await runToEnd(runId);
    expect(run.status).toBe("completed");
    expect(await plannerCalls(key)).toHaveLength(1);
    expect(await applied(runId)).toEqual({ revision: 1, events: 1 });
    expect(run.steps.map((s: any) => s.id)).toEqual(["find", "extra"]);
    expect(await runCalls(runId, "/facilities")).toHaveLength(2);
  });
});

describe("a run stored before replanning existed (schema version 3)", () => {
  it("is migrated when its object starts again: its status reads, and it replans", async () => {
    const runId = await started({ replan: { mode: "human" }, steps: [findStep()] });
    await runStub(runId).storeAsSchemaVersion3();
    await abortObject(runId);
    const before = await status(runId);
    expect(before.status).toBe("pending");
    expect(before.replans).toEqual([]);
    await fireAlarm(runId);
    expect((await status(runId)).pendingReplan).toHaveLength(1);
    expect((await post(`/v1/runs/${runId}/replan`, { steps: [fixedFind] })).res.status).toBe(200);
    expect((await runToEnd(runId)).status).toBe("completed");
  });
});
