/**
 * Replanning by a person (SPEC 9.2, `replan.mode` human): the run waits with `pendingReplan`
 * until `POST /v1/runs/:id/replan` brings the repair; one that does not validate is a 400 with
 * its paths and the run keeps waiting; the route is a 409 when no repair is pending.
 */
import { describe, expect, it } from "vitest";
import { alarmInBackground, byId, drive, events, fireAlarm, post, runCalls } from "./helpers";
import { gate, started, status, until, upstreamUrl } from "./helpers";
import { findStep, fixedFind, runToEnd } from "./replan-support";

const human = { mode: "human" as const };

/** A run whose `find` failed its verify and waits for a person's repair. */
async function waitingForPerson(extra: Record<string, unknown> = {}) {
  const runId = await started({
    replan: human,
    steps: [findStep(), { id: "after", tool: "pass", params: { value: "${steps.find.data}" } }],
    ...extra,
  });
  await fireAlarm(runId);
  return runId;
}

describe("a person's repair (SPEC 9.2, mode human)", () => {
  it("the run waits with pendingReplan, a repair is applied, and the run completes", async () => {
    const runId = await waitingForPerson();
    const waiting = await status(runId);
    expect(waiting.status).toBe("waiting");
    expect(byId(waiting).find).toMatchObject({ status: "waiting", waitingFor: "replan" });
    expect(waiting.pendingReplan).toEqual([
      {
        n: 1,
        stepId: "find",
        error: expect.objectContaining({ category: "verification_failed" }),
        diagnosis: expect.stringContaining('step "find"'),
      },
    ]);
    expect(waiting.replans).toEqual([]);

    const { res, body } = await post(`/v1/runs/${runId}/replan`, { steps: [fixedFind] });
    expect(res.status).toBe(200);
    expect(body).toEqual({ runId, status: "running" });
    const run = await drive(runId);
    expect(run.status).toBe("completed");
    expect(run.pendingReplan).toBeUndefined();
    expect(run.replans).toEqual([
      expect.objectContaining({ n: 1, answer: "repaired", attempts: 0 }),
    ]);
    expect(byId(run).after.status).toBe("succeeded");
    expect(await runCalls(runId, "/facilities")).toHaveLength(2);
  });

  it("a repair that does not validate is a 400 with its paths, and the run keeps waiting", async () => {
    const runId = await waitingForPerson();
    const bad = await post(`/v1/runs/${runId}/replan`, {
      steps: [
        { ...fixedFind, tool: "nope" },
        { id: "x", tool: "pass", dependsOn: ["ghost"] },
      ],
    });
    expect(bad.res.status).toBe(400);
    expect(bad.body.error.code).toBe("invalid_plan");
    expect(bad.body.error.issues).toEqual(
      expect.arrayContaining([
        { path: "steps.0.tool", message: 'unknown tool "nope"' },
        { path: "steps.1.dependsOn.0", message: 'unknown dependency "ghost"' },
      ]),
    );
    const shape = await post(`/v1/runs/${runId}/replan`, { stepz: [] });
    expect(shape.res.status).toBe(400);
    expect(shape.body.error.issues.map((i: any) => i.path)).toEqual(
      expect.arrayContaining(["steps", "stepz"]),
    );
    const cycle = await post(`/v1/runs/${runId}/replan`, {
      steps: [{ ...fixedFind, dependsOn: ["after"] }],
    });
    expect(cycle.res.status).toBe(400);
    expect(cycle.body.error.issues[0].message).toContain("dependency cycle");

    const still = await status(runId);
    expect(still.status).toBe("waiting");
    expect(still.pendingReplan).toHaveLength(1);
    expect(still.replans).toEqual([]);
    expect((await post(`/v1/runs/${runId}/replan`, { steps: [fixedFind] })).res.status).toBe(200);
    expect((await drive(runId)).status).toBe("completed");
  });

  it("giveUp fails the step with replan_declined and the run goes on", async () => {
    const runId = await waitingForPerson();
    const { res } = await post(`/v1/runs/${runId}/replan`, { giveUp: true, reason: "not today" });
    expect(res.status).toBe(200);
    const run = await drive(runId);
    expect(run.status).toBe("failed");
    expect(byId(run).find.error).toMatchObject({ category: "replan_declined" });
    expect(byId(run).after).toMatchObject({ status: "skipped", reason: "dependency_failed" });
    expect(run.replans).toEqual([
      expect.objectContaining({ answer: "declined", reason: expect.stringContaining("not today") }),
    ]);
  });

  it("409 when no repair is pending, and for a run whose repairs come from a planner", async () => {
    const runId = await waitingForPerson();
    expect((await post(`/v1/runs/${runId}/replan`, { steps: [fixedFind] })).res.status).toBe(200);
    const again = await post(`/v1/runs/${runId}/replan`, { steps: [fixedFind] });
    expect(again.res.status).toBe(409);
    expect(again.body.error.message).toContain("no repair is pending");

    const plain = await started({ steps: [{ id: "s", tool: "pass", params: { value: 1 } }] });
    expect((await post(`/v1/runs/${plain}/replan`, { giveUp: true })).res.status).toBe(409);
    const planned = await started({
      replan: { url: `${upstreamUrl}/hang` },
      steps: [{ id: "s", tool: "pass", params: { value: 1 } }],
    });
    const refused = await post(`/v1/runs/${planned}/replan`, { giveUp: true });
    expect(refused.res.status).toBe(409);
    expect((await post(`/v1/runs/run_${"0".repeat(32)}/replan`, { giveUp: true })).res.status).toBe(
      404,
    );
    // A body that is no repair is a 400 first, as for every control (README, Deletion).
    for (const target of [plain, `run_${"0".repeat(32)}`]) {
      const malformed = await post(`/v1/runs/${target}/replan`, { giveUp: "yes" });
      expect([malformed.res.status, malformed.body.error.issues[0].path]).toEqual([400, "giveUp"]);
    }
  });

  it("with several repairs pending, stepId names the one answered", async () => {
    const runId = await started({
      replan: { ...human, cooldownMs: 0 },
      steps: [findStep(), { ...findStep(), id: "find2" }],
    });
    await fireAlarm(runId);
    const s = await status(runId);
    expect(s.pendingReplan.map((p: any) => p.stepId)).toEqual(["find", "find2"]);
    const unnamed = await post(`/v1/runs/${runId}/replan`, { giveUp: true });
    expect(unnamed.res.status).toBe(400);
    expect(unnamed.body.error.issues).toEqual([expect.objectContaining({ path: "stepId" })]);
    const named = await post(`/v1/runs/${runId}/replan`, {
      stepId: "find2",
      steps: [{ ...fixedFind, id: "find2" }],
    });
    expect(named.res.status).toBe(200);
    const after = await status(runId);
    expect(after.pendingReplan.map((p: any) => p.stepId)).toEqual(["find"]);
    expect(
      (await post(`/v1/runs/${runId}/replan`, { stepId: "find2", giveUp: true })).res.status,
    ).toBe(409);
    await post(`/v1/runs/${runId}/replan`, { giveUp: true });
    const run = await drive(runId);
    expect(run.status).toBe("partial");
    expect(byId(run).find2.status).toBe("succeeded");
  });

  it("a repair posted while other steps are in flight runs once they settle", async () => {
    // `slow` answers once the repair has been posted: it is in flight until then, whatever the load.
    const slow = gate("replan-slow");
    const runId = await started({
      replan: human,
      steps: [findStep(), { id: "slow", tool: "http", params: { url: slow.url } }],
    });
    const inFlight = alarmInBackground(runId);
    await until(async () => byId(await status(runId)).find.status === "waiting", "find waits");
    expect(byId(await status(runId)).slow.status).toBe("running");
    const { res } = await post(`/v1/runs/${runId}/replan`, { steps: [fixedFind] });
    expect(res.status).toBe(200);
    await slow.open();
    expect(await inFlight).toBe("settled");
    const run = await drive(runId);
    expect(run.status).toBe("completed");
    expect(run.replans).toEqual([expect.objectContaining({ answer: "repaired" })]);
    const types = (await events(runId)).map((e) => e.type);
    expect(types.filter((t) => t === "run_finished")).toHaveLength(1);
  });

  it("the cooldown holds a second repair back: it opens once its time comes", async () => {
    const runId = await started({
      replan: { ...human, cooldownMs: 5_000 },
      steps: [findStep()],
    });
    await fireAlarm(runId);
    // The repair keeps the misspelt city: the step fails again and asks for a second repair.
    expect(
      (await post(`/v1/runs/${runId}/replan`, { steps: [findStep("Berlni")] })).res.status,
    ).toBe(200);
    await fireAlarm(runId);
    const cooling = await status(runId);
    expect(byId(cooling).find).toMatchObject({ status: "waiting", waitingFor: "replan" });
    expect(cooling.pendingReplan).toBeUndefined();
    expect((await post(`/v1/runs/${runId}/replan`, { steps: [fixedFind] })).res.status).toBe(409);
    const run = await runToEnd(runId, 1);
    expect(run.pendingReplan).toEqual([expect.objectContaining({ n: 2 })]);
    expect((await post(`/v1/runs/${runId}/replan`, { steps: [fixedFind] })).res.status).toBe(200);
    const done = await drive(runId);
    expect(done.status).toBe("completed");
    const [first, second] = done.replans;
    expect(Date.parse(second.at) - Date.parse(first.at)).toBeGreaterThanOrEqual(5_000);
  });
});
