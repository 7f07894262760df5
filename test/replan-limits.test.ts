/**
 * Replanning's loop limits (SPEC 9.2): `maxReplansPerStep` counts repairs of one step id,
 * `maxTotalReplans` repairs in the run, and at least `cooldownMs` pass between two repairs
 * (measured on the run's clock); limits used up fail the step with `replan_limit_reached`.
 * And what `replan` accepts at submission.
 */
import { describe, expect, it } from "vitest";
import { alarmAt, api, byId, events, fireAlarm, runCalls, started, status } from "./helpers";
import { submit, unique, upstreamUrl } from "./helpers";
import { findStep, fixedFind, planner, plannerCalls, replanTo, runToEnd } from "./replan-support";

describe("loop limits (SPEC 9.2)", () => {
  it("maxReplansPerStep 0: the step fails with replan_limit_reached, the planner is never asked", async () => {
    const key = unique("zero");
    const runId = await started({
      replan: replanTo(planner(key, { steps: [fixedFind] }), { maxReplansPerStep: 0 }),
      steps: [findStep()],
    });
    const run = await runToEnd(runId);
    expect(run.status).toBe("failed");
    const error = byId(run).find.error;
    expect(error.category).toBe("replan_limit_reached");
    expect(error.message).toContain("maxReplansPerStep 0");
    expect(error.message).toContain("verification_failed");
    expect(await plannerCalls(key)).toEqual([]);
    expect(run.replans).toEqual([]);
    const log = await events(runId);
    const failed = log.find((e) => e.type === "replan_failed");
    expect(failed).toMatchObject({ stepId: "find", data: { category: "replan_limit_reached" } });
    // The attempt still failed its verify: said so in the events and in its attempt log.
    const types = log.filter((e) => e.stepId === "find").map((e) => e.type);
    expect(types).toEqual(["step_started", "verification_failed", "replan_failed", "step_failed"]);
    const detail: any = await (await api(`/v1/runs/${runId}/steps/find`)).json();
    expect(detail.attemptLog.map((a: any) => a.category)).toEqual(["verification_failed"]);
  });

  it("maxTotalReplans 0 does the same for every step", async () => {
    const key = unique("zero-total");
    const runId = await started({
      replan: replanTo(planner(key, { steps: [fixedFind] }), { maxTotalReplans: 0 }),
      steps: [findStep()],
    });
    const run = await runToEnd(runId);
    expect(byId(run).find.error.message).toContain("maxTotalReplans 0");
    expect(await plannerCalls(key)).toEqual([]);
  });

  it("maxReplansPerStep 2: a step that keeps failing is repaired twice, then fails", async () => {
    const key = unique("per-step");
    // The planner's "repair" keeps the misspelt city: every new definition fails again.
    const runId = await started({
      replan: replanTo(planner(key, { steps: [findStep("Berlni")] }), { maxReplansPerStep: 2 }),
      steps: [findStep()],
    });
    const run = await runToEnd(runId);
    expect(run.status).toBe("failed");
    expect(byId(run).find.error.category).toBe("replan_limit_reached");
    expect(run.replans.map((r: any) => [r.n, r.stepId, r.answer])).toEqual([
      [1, "find", "repaired"],
      [2, "find", "repaired"],
    ]);
    const calls = await plannerCalls(key);
    expect(calls.map((c) => c.idempotencyKey)).toEqual([
      `${runId}:find:replan:1`,
      `${runId}:find:replan:2`,
    ]);
    // The second request carries the first in its history.
    expect(JSON.parse(calls[1].body).replans).toEqual([
      expect.objectContaining({ n: 1, answer: "repaired" }),
    ]);
    expect((await status(runId)).steps[0].attempts).toBe(3);
  });

  it("maxTotalReplans 1: the second step to fail in the run gets no repair", async () => {
    const key = unique("total");
    const runId = await started({
      replan: replanTo(planner(key, { steps: [fixedFind] }), { maxTotalReplans: 1 }),
      steps: [findStep(), { ...findStep(), id: "late", dependsOn: ["find"] }],
    });
    const run = await runToEnd(runId);
    expect(run.status).toBe("partial");
    expect(byId(run).find.status).toBe("succeeded");
    expect(byId(run).late.error).toMatchObject({ category: "replan_limit_reached" });
    expect(byId(run).late.error.message).toContain("maxTotalReplans 1");
    expect(await plannerCalls(key)).toHaveLength(1);
  });

  it("cooldownMs spaces two repairs on the run's clock: the second is asked once it is over", async () => {
    // Two steps fail in the same iteration; the demo planner repairs whichever it is asked for.
    const runId = await started({
      replan: { url: `${upstreamUrl}/planner`, cooldownMs: 30_000 },
      steps: [findStep(), { ...findStep(), id: "find2" }],
    });
    await fireAlarm(runId); // both fail; one repair is asked and applied
    await fireAlarm(runId); // the repaired step runs
    const s = await status(runId);
    // The other repair waits for the cooldown: the alarm points at its end.
    expect(s.replans).toHaveLength(1);
    const first = s.replans[0];
    expect(byId(s)[first.stepId].status).toBe("succeeded");
    expect(await runCalls(runId, "/planner")).toHaveLength(1);
    expect(await alarmAt(runId)).toBe(Date.parse(first.at) + 30_000);
    // Fired early, the alarm asks nothing.
    await fireAlarm(runId);
    expect(await runCalls(runId, "/planner")).toHaveLength(1);

    const run = await runToEnd(runId);
    expect(run.status).toBe("completed");
    const [a, b] = run.replans;
    expect([a.stepId, b.stepId].sort()).toEqual(["find", "find2"]);
    expect(Date.parse(b.at) - Date.parse(a.at)).toBeGreaterThanOrEqual(30_000);
    expect(await runCalls(runId, "/planner")).toHaveLength(2);
  });
});

describe("cooldownMs in the events", () => {
  it("a repair held back by the cooldown says until when in a step_waiting event", async () => {
    // Two pass steps fail their verify in the same turn: the second repair is asked for
    // before the first is sent, and only then held back by the cooldown.
    const failing = (id: string) => ({
      id,
      tool: "pass",
      params: { value: 0 },
      verify: "${output}",
    });
    const runId = await started({
      replan: { url: `${upstreamUrl}/planner`, cooldownMs: 30_000 },
      steps: [failing("a"), failing("b")],
    });
    await fireAlarm(runId);
    const s = await status(runId);
    expect(s.replans).toHaveLength(1);
    const [first] = s.replans;
    const other = first.stepId === "a" ? "b" : "a";
    const waits = (await events(runId)).filter(
      (e) => e.type === "step_waiting" && e.stepId === other,
    );
    expect(Date.parse(waits.at(-1)!.data.until)).toBe(Date.parse(first.at) + 30_000);
    expect(await alarmAt(runId)).toBe(Date.parse(first.at) + 30_000);
  });
});

describe("replan at submission (SPEC 9.2)", () => {
  it.each([
    [{ url: `${upstreamUrl}/p`, maxReplansPerStep: 11 }, "replan.maxReplansPerStep"],
    [{ url: `${upstreamUrl}/p`, maxReplansPerStep: -1 }, "replan.maxReplansPerStep"],
    [{ url: `${upstreamUrl}/p`, maxTotalReplans: 51 }, "replan.maxTotalReplans"],
    [{ url: `${upstreamUrl}/p`, cooldownMs: 600_001 }, "replan.cooldownMs"],
    [{ url: `${upstreamUrl}/p`, cooldownMs: 1.5 }, "replan.cooldownMs"],
    [{ maxReplansPerStep: 1 }, "replan.url"],
    [{ mode: "human", url: `${upstreamUrl}/p` }, "replan.url"],
    [{ mode: "robot" }, "replan.mode"],
    [{ url: "ftp://planner.example.com" }, "replan.url"],
    [{ url: `${upstreamUrl}/p?x=\${input.x}` }, "replan.url"],
    [{ url: `${upstreamUrl}/p`, maxReplans: 2 }, "replan.maxReplans"],
  ])("%j is a 400 at %s", async (replan, path) => {
    const { res, body } = await submit({ replan, steps: [{ tool: "pass" }] });
    expect(res.status).toBe(400);
    expect(body.error.issues.map((i: any) => i.path)).toContain(path);
  });

  it.each([
    [{ url: `${upstreamUrl}/p`, maxReplansPerStep: 10, maxTotalReplans: 50, cooldownMs: 600_000 }],
    [{ url: `${upstreamUrl}/p`, maxReplansPerStep: 0, maxTotalReplans: 0, cooldownMs: 0 }],
    [{ mode: "human" }],
  ])("%j is accepted, with the defaults filled in", async (replan) => {
    const { res, body } = await submit({ replan, steps: [{ tool: "pass" }] });
    expect(res.status).toBe(202);
    const plan = (await (await api(`/v1/runs/${body.runId}/plan`)).json()) as any;
    expect(plan.plan.replan).toEqual({
      mode: "url",
      maxReplansPerStep: 3,
      maxTotalReplans: 5,
      cooldownMs: 1000,
      ...replan,
    });
  });
});
