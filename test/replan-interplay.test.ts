/**
 * Everything else keeps working with a replanned plan (SPEC 9.2, issue 15 point 3): redrive,
 * rollback of steps of any revision, forEach steps, cancel and fail-fast while a repair is
 * awaited, callbacks and approvals.
 */
import { describe, expect, it } from "vitest";
import { alarmInBackground, byId, callsWithRun, drive, fireAlarm, post } from "./helpers";
import { script, started, status, stepDetail, unique, until, upstreamCalls } from "./helpers";
import { upstreamUrl } from "./helpers";
import { findStep, fixedFind, planner, plannerCalls, replanTo, runToEnd } from "./replan-support";

describe("a replanned run and the rest of edgestep", () => {
  it("redrive re-runs a failed step under its repaired definition", async () => {
    const key = unique("redrive");
    const repaired = {
      ...fixedFind,
      tool: "http",
      params: { url: script(`${key}-new`, "?plan=404,200") },
      verify: undefined,
    };
    const runId = await started({
      replan: replanTo(planner(key, { steps: [repaired] }), { maxReplansPerStep: 1 }),
      steps: [findStep()],
    });
    const failed = await runToEnd(runId);
    expect(failed.status).toBe("failed");
    expect(byId(failed).find.error.category).toBe("replan_limit_reached");
    expect((await post(`/v1/runs/${runId}/retry`)).res.status).toBe(200);
    const run = await runToEnd(runId);
    expect(run.status).toBe("completed");
    expect(await upstreamCalls(`/script/${key}-new`)).toHaveLength(2);
    expect(await plannerCalls(key)).toHaveLength(1);
  });

  it("rollback compensates the steps of every revision", async () => {
    const key = unique("rollback");
    const undo = (id: string) => ({ tool: "http", params: { url: script(`${key}-undo-${id}`) } });
    const repair = {
      steps: [
        { ...fixedFind, compensate: undo("find"), dependsOn: ["extra"] },
        { id: "extra", tool: "pass", params: { value: 1 }, compensate: undo("extra") },
      ],
    };
    const runId = await started({
      config: { rollback: true, failFast: true },
      replan: replanTo(planner(key, repair), { maxTotalReplans: 1 }),
      steps: [
        findStep(),
        {
          id: "boom",
          tool: "http",
          params: { url: script(`${key}-boom`, "?plan=404") },
          dependsOn: ["find"],
        },
      ],
    });
    const run = await runToEnd(runId);
    expect(run.status).toBe("failed");
    expect(byId(run).boom.error.category).toBe("replan_limit_reached");
    expect(run.rollback).toEqual({
      state: "completed",
      steps: [
        expect.objectContaining({ stepId: "find", status: "succeeded" }),
        expect.objectContaining({ stepId: "extra", status: "succeeded" }),
      ],
    });
    const undone = (await upstreamCalls(`/script/${key}-undo-`)).map(
      (c) => c.path.split("-undo-")[1],
    );
    expect(undone).toEqual(["find", "extra"]);
  });

  it("a forEach step is repaired: its items resolve again and number their attempts on", async () => {
    const key = unique("foreach");
    const each = (cities: string[]) => ({
      id: "each",
      tool: "http",
      forEach: cities,
      params: { url: `${upstreamUrl}/facilities`, query: { location: "${item}" } },
      verify: "${output[0].length}",
    });
    const runId = await started({
      replan: replanTo(planner(key, { steps: [each(["Berlin", "Munich"])] })),
      steps: [each(["Berln", "Munich"])],
    });
    const run = await runToEnd(runId);
    expect(run.status).toBe("completed");
    expect(byId(run).each.items).toEqual({
      total: 2,
      succeeded: 2,
      failed: 0,
      cancelled: 0,
      running: 0,
    });
    const detail = await stepDetail(runId, "each");
    expect(detail.data.map((d: any[]) => d.length)).toEqual([2, 1]);
    expect(detail.attemptLog.map((a: any) => [a.item, a.attempt])).toEqual([
      [0, 1],
      [0, 2],
      [1, 1],
      [1, 2],
    ]);
  });

  it("cancel while a person's repair is awaited: the run ends cancelled and no repair is pending", async () => {
    const runId = await started({ replan: { mode: "human" }, steps: [findStep()] });
    await fireAlarm(runId);
    expect((await status(runId)).pendingReplan).toHaveLength(1);
    expect((await post(`/v1/runs/${runId}/cancel`)).res.status).toBe(200);
    const s = await status(runId);
    expect(s.status).toBe("cancelled");
    expect(byId(s).find.status).toBe("cancelled");
    expect(s.pendingReplan).toBeUndefined();
    expect(s.replans).toEqual([]);
    expect((await post(`/v1/runs/${runId}/replan`, { steps: [fixedFind] })).res.status).toBe(409);
  });

  it("cancel during a planner call aborts it: the step ends cancelled", async () => {
    const key = unique("cancel-call");
    const runId = await started({
      replan: replanTo(planner(key, { steps: [fixedFind] }, { delay: 5_000 })),
      steps: [findStep()],
    });
    const inFlight = alarmInBackground(runId);
    await until(async () => (await plannerCalls(key)).length === 1, "the planner is called");
    expect((await post(`/v1/runs/${runId}/cancel`)).body.status).toBe("cancelled");
    expect(await inFlight).toBe("settled");
    const s = await status(runId);
    expect(byId(s).find.status).toBe("cancelled");
    expect(s.replans).toEqual([]);
  });

  it("fail-fast while a repair is awaited: the waiting step is cancelled, the run fails", async () => {
    const key = unique("failfast");
    const runId = await started({
      config: { retry: { baseDelayMs: 60_000, jitter: "none" } },
      replan: replanTo(planner(key, { steps: [fixedFind] }, { plan: "503,200" }), {
        maxReplansPerStep: 1,
        maxTotalReplans: 1,
      }),
      steps: [
        findStep(),
        {
          id: "boom",
          tool: "http",
          params: { url: script(`${key}-boom`, "?plan=404&delay=100") },
          onFailure: "fail_run",
        },
      ],
    });
    const run = await runToEnd(runId);
    expect(run.status).toBe("failed");
    expect(byId(run).boom.error.category).toBe("replan_limit_reached");
    expect(byId(run).find.status).toBe("cancelled");
    expect(run.replans).toEqual([]);
    expect(await plannerCalls(key)).toHaveLength(1);
  });

  it("a failed callback asks for a repair; a denied approval does not", async () => {
    const runId = await started({
      replan: { mode: "human" },
      steps: [
        { id: "cb", tool: "callback", params: { url: `${upstreamUrl}/echo` } },
        { id: "ok", tool: "approval", dependsOn: ["cb"] },
      ],
    });
    await drive(runId);
    const [call] = await callsWithRun("/echo", runId);
    const token = JSON.parse(call.body).token;
    expect(
      (await post(`/v1/callbacks/${token}`, { error: { message: "job failed" } })).res.status,
    ).toBe(200);
    const waiting = await status(runId);
    expect(waiting.pendingReplan).toEqual([
      expect.objectContaining({
        stepId: "cb",
        error: { category: "callback_failed", message: "job failed" },
      }),
    ]);
    const repair = { steps: [{ id: "cb", tool: "pass", params: { value: "done" } }] };
    expect((await post(`/v1/runs/${runId}/replan`, repair)).res.status).toBe(200);
    await drive(runId);
    expect(byId(await status(runId)).ok).toMatchObject({
      status: "waiting",
      waitingFor: "approval",
    });
    expect((await post(`/v1/runs/${runId}/approve`, { approved: false })).res.status).toBe(200);
    const run = await drive(runId);
    expect(run.status).toBe("partial");
    expect(byId(run).ok.error.category).toBe("approval_denied");
    expect(run.pendingReplan).toBeUndefined();
  });
});
