/**
 * Replanning with a planner (SPEC 9.2, `replan.url`): a step that fails for good waits for a
 * repair instead of failing; the planner gets a signed request and its repair is merged into
 * the plan, validated like a submission, and run: succeeded steps never run again, the failed
 * step's new definition and new steps run under the usual rules.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { verifyEdgestepSignature } from "../examples/verify-webhook";
import { api, byId, events, eventTypes, fireAlarm, runCalls, started, status } from "./helpers";
import { stepDetail, unique, upstreamUrl } from "./helpers";
import { findStep, fixedFind, planner, plannerCalls, replanTo } from "./replan-support";
import { runToEnd as drive } from "./replan-support";

const listShipments = {
  id: "ship",
  tool: "http",
  params: {
    url: `${upstreamUrl}/shipments`,
    query: { facility_id: "${steps.find.data.*.id}" },
  },
};

describe("a repair from the planner (SPEC 9.2)", () => {
  it("redefines the failed step, keeps succeeded steps, and runs the dependents on the new data", async () => {
    const key = unique("repair");
    const runId = await started({
      replan: replanTo(planner(key, { steps: [fixedFind] })),
      steps: [
        { id: "first", tool: "http", params: { url: `${upstreamUrl}/inspections` } },
        { ...findStep(), dependsOn: ["first"] },
        listShipments,
      ],
    });
    const run = await drive(runId);
    expect(run.status).toBe("completed");
    expect(byId(run).ship.status).toBe("succeeded");

    // The planner was asked once; `first` ran once; `find` ran twice (old and new definition).
    const calls = await plannerCalls(key);
    expect(calls).toHaveLength(1);
    expect(await runCalls(runId, "/inspections")).toHaveLength(1);
    const finds = await runCalls(runId, "/facilities");
    expect(finds.map((c) => new URLSearchParams(c.query).get("location"))).toEqual([
      "Berln",
      "Berlin",
    ]);
    const ship = await stepDetail(runId, "ship");
    expect(ship.data.map((s: any) => s.id)).toEqual(["S1", "S3", "S4"]);

    // Its old attempt stays in its log; the new definition counts its retries afresh.
    const find = await stepDetail(runId, "find");
    expect(find.attemptLog).toEqual([
      expect.objectContaining({ attempt: 1, category: "verification_failed" }),
      expect.objectContaining({ attempt: 2 }),
    ]);
    expect(find.attemptLog[1].category).toBeUndefined();
    expect(find.data).toHaveLength(2);

    expect(run.replans).toEqual([
      expect.objectContaining({
        n: 1,
        stepId: "find",
        answer: "repaired",
        newStepIds: [],
        attempts: 1,
        diagnosis: expect.stringContaining("verification_failed"),
      }),
    ]);
    const types = await eventTypes(runId);
    const order = ["verification_failed", "replan_requested", "replan_applied", "run_finished"];
    expect(order.map((t) => types.indexOf(t))).toEqual(
      [...order.map((t) => types.indexOf(t))].sort((a, b) => a - b),
    );
    expect(types).not.toContain("replan_failed");
    const applied = (await events(runId)).find((e) => e.type === "replan_applied");
    expect(applied).toMatchObject({ stepId: "find", data: { n: 1, revision: 1, newStepIds: [] } });
  });

  it("sends the planner a signed request with everything SPEC 9.2 lists, keyed <runId>:<stepId>:replan:<n>", async () => {
    const key = unique("request");
    const runId = await started({
      name: "signed",
      replan: replanTo(planner(key, { steps: [fixedFind] })),
      steps: [
        { id: "first", tool: "pass", params: { value: { city: "Berlin" } } },
        {
          ...findStep(),
          params: {
            ...findStep().params,
            headers: { Authorization: "Bearer plan-token" },
          },
          dependsOn: ["first"],
        },
      ],
    });
    await drive(runId);
    const [call] = await plannerCalls(key);
    expect(call.method).toBe("POST");
    expect(call.idempotencyKey).toBe(`${runId}:find:replan:1`);
    expect(call.attempt).toBe(1);
    expect(
      await verifyEdgestepSignature(
        env.WEBHOOK_SECRET!,
        call.headers["x-edgestep-signature"],
        call.body,
      ),
    ).toBe(true);
    expect(call.body).not.toContain("plan-token");
    const request = JSON.parse(call.body);
    expect(request).toMatchObject({
      runId,
      n: 1,
      stepId: "find",
      attempt: 1,
      error: { category: "verification_failed" },
      diagnosis: expect.stringContaining('step "find"'),
      step: { id: "find", tool: "http", dependsOn: ["first"], verify: "${output.length}" },
      params: {
        url: `${upstreamUrl}/facilities`,
        query: { location: "Berln" },
        headers: { Authorization: "[redacted]" },
      },
      output: [],
      completed: { first: { city: "Berlin" } },
      plan: { name: "signed", steps: [{ id: "first" }, { id: "find" }] },
      revision: 0,
      replans: [],
    });
  });

  it("runs new steps the repair adds, which the failed step may depend on and templates may read", async () => {
    const key = unique("add");
    const repair = {
      steps: [
        { id: "city", tool: "pass", params: { value: "Berlin" } },
        {
          ...findStep("${steps.city.data}"),
          dependsOn: ["city"],
        },
      ],
    };
    const runId = await started({
      replan: replanTo(planner(key, repair)),
      steps: [findStep(), listShipments],
    });
    const run = await drive(runId);
    expect(run.status).toBe("completed");
    expect(run.steps.map((s: any) => [s.id, s.index, s.status])).toEqual([
      ["find", 0, "succeeded"],
      ["ship", 1, "succeeded"],
      ["city", 2, "succeeded"],
    ]);
    expect(run.summary.totalSteps).toBe(3);
    expect(run.progress).toMatchObject({ completedSteps: 3, totalSteps: 3, percentage: 100 });
    expect(run.replans[0]).toMatchObject({ answer: "repaired", newStepIds: ["city"] });

    // The plan as stored is the merged one, and it validates as a plan again.
    const plan = (await (await api(`/v1/runs/${runId}/plan`)).json()) as any;
    expect(plan.revision).toBe(1);
    expect(plan.plan.steps.map((s: any) => [s.id, s.dependsOn])).toEqual([
      ["find", ["city"]],
      ["ship", ["find"]],
      ["city", []],
    ]);
    expect(plan.plan.replan).toMatchObject({ url: expect.stringContaining(key), mode: "url" });
    const revalidated = await api("/v1/plans/validate", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(plan.plan),
    });
    expect(revalidated.status).toBe(200);
    const results = (await (await api(`/v1/runs/${runId}/results`)).json()) as any[];
    expect(results.map((r) => r.stepId)).toEqual(["find", "ship", "city"]);
  });
});

describe("a repair that fails (SPEC 9.2)", () => {
  async function failedRepair(answer: unknown, extra: Record<string, unknown> = {}) {
    const key = unique("bad");
    const runId = await started({
      replan: replanTo(planner(key, answer)),
      steps: [
        { id: "ok", tool: "pass", params: { value: 1 } },
        findStep(),
        { id: "after", tool: "pass", params: { value: "${steps.find.data}" } },
      ],
      ...extra,
    });
    const run = await drive(runId);
    return { runId, run, key, find: byId(run).find };
  }

  it.each([
    [
      "an unknown tool",
      { steps: [{ ...fixedFind, tool: "no_such_tool" }] },
      'steps.0.tool: unknown tool "no_such_tool"',
    ],
    [
      "a cycle",
      {
        steps: [
          { ...fixedFind, dependsOn: ["loop"] },
          { id: "loop", tool: "pass", params: { value: 1 }, dependsOn: ["find"] },
        ],
      },
      "dependency cycle",
    ],
    [
      "a step that depends on its own dependent",
      { steps: [{ ...fixedFind, dependsOn: ["after"] }] },
      "dependency cycle",
    ],
    [
      "no new definition of the failed step",
      { steps: [{ id: "other", tool: "pass", params: { value: 1 } }] },
      'the repair has no step "find"',
    ],
    [
      "a redefinition of a step that is not the failed one",
      { steps: [fixedFind, { id: "ok", tool: "pass", params: { value: 2 } }] },
      'step "ok" already exists',
    ],
    [
      "a reference to an unknown step",
      { steps: [{ ...fixedFind, params: { url: "${steps.nope.data}" } }] },
      'unknown step "nope"',
    ],
    ["an answer that is no repair", { repaired: true }, "not a repair"],
  ])("%s fails the step with replan_invalid; the run goes on", async (_, answer, message) => {
    const { run, runId, find } = await failedRepair(answer);
    expect(run.status).toBe("partial");
    expect(find.status).toBe("failed");
    expect(find.error.category).toBe("replan_invalid");
    expect(find.error.message).toContain(message);
    expect(byId(run).after).toMatchObject({ status: "skipped", reason: "dependency_failed" });
    expect(run.replans).toEqual([
      expect.objectContaining({
        n: 1,
        answer: "invalid",
        reason: expect.stringContaining(message),
      }),
    ]);
    const plan = (await (await api(`/v1/runs/${runId}/plan`)).json()) as any;
    expect(plan.revision).toBe(0);
    expect(plan.plan.steps).toHaveLength(3);
    const failed = (await events(runId)).find((e) => e.type === "replan_failed");
    expect(failed).toMatchObject({ stepId: "find", data: { n: 1, answer: "invalid" } });
    // The data that failed verification is still the step's.
    expect((await stepDetail(runId, "find")).data).toEqual([]);
  });

  it("giveUp fails the step with replan_declined and its reason", async () => {
    const { run, find } = await failedRepair({ giveUp: true, reason: "no such city" });
    expect(run.status).toBe("partial");
    expect(find.error).toMatchObject({
      category: "replan_declined",
      message: "the repair was declined: no such city",
    });
    expect(run.replans[0]).toMatchObject({ answer: "declined" });
  });

  it("a failed repair of a fail_run step fails the run", async () => {
    const { run } = await failedRepair({ giveUp: true }, { config: { failFast: true } });
    expect(run.status).toBe("failed");
  });
});

describe("the planner call (SPEC 9.2)", () => {
  it("500s are retried under the run's retry policy with the same Idempotency-Key, then the repair applies", async () => {
    const key = unique("flaky");
    const runId = await started({
      config: { retry: { baseDelayMs: 100, jitter: "none" } },
      replan: replanTo(planner(key, { steps: [fixedFind] }, { plan: "500,503,200" })),
      steps: [findStep()],
    });
    const run = await drive(runId);
    expect(run.status).toBe("completed");
    const calls = await plannerCalls(key);
    expect(calls.map((c) => c.attempt)).toEqual([1, 2, 3]);
    expect(new Set(calls.map((c) => c.idempotencyKey))).toEqual(
      new Set([`${runId}:find:replan:1`]),
    );
    // Backoff: 100 ms, then 200 ms, on the run's clock (drive fires early; the alarm says when).
    expect(run.replans[0]).toMatchObject({ n: 1, answer: "repaired", attempts: 3 });
  });

  it("a planner that keeps failing fails the step with replan_unavailable", async () => {
    const key = unique("down");
    const runId = await started({
      config: { retry: { maxRetries: 1, baseDelayMs: 0 } },
      replan: replanTo(planner(key, {}, { plan: "500" })),
      steps: [findStep()],
    });
    const run = await drive(runId);
    expect(run.status).toBe("failed");
    expect(byId(run).find.error).toMatchObject({ category: "replan_unavailable", status: 500 });
    expect(await plannerCalls(key)).toHaveLength(2);
    expect(run.replans[0]).toMatchObject({ answer: "unavailable", attempts: 2 });
  });

  it("a planner that never answers times out and fails the step with replan_unavailable", async () => {
    const runId = await started({
      config: { retry: { maxRetries: 0 } },
      replan: replanTo(`${upstreamUrl}/hang`, { timeoutMs: 200 }),
      steps: [findStep()],
    });
    const run = await drive(runId);
    expect(run.status).toBe("failed");
    expect(byId(run).find.error.category).toBe("replan_unavailable");
    expect(byId(run).find.error.message).toContain("timeout");
  });

  it("a 4xx from the planner is not retried", async () => {
    const key = unique("4xx");
    const runId = await started({
      replan: replanTo(planner(key, {}, { plan: "404" })),
      steps: [findStep()],
    });
    const run = await drive(runId);
    expect(byId(run).find.error).toMatchObject({ category: "replan_unavailable", status: 404 });
    expect(await plannerCalls(key)).toHaveLength(1);
  });

  it("while the planner is asked, the step is waiting for replan", async () => {
    const key = unique("wait");
    const runId = await started({
      config: { retry: { baseDelayMs: 60_000, jitter: "none" } },
      replan: replanTo(planner(key, { steps: [fixedFind] }, { plan: "500,200" })),
      steps: [findStep()],
    });
    await fireAlarm(runId);
    const s = await status(runId);
    expect(s.status).toBe("running");
    expect(byId(s).find).toMatchObject({
      status: "waiting",
      waitingFor: "replan",
      error: { category: "verification_failed" },
    });
    expect(s.replans).toEqual([]);
    expect(s.pendingReplan).toBeUndefined();
  });
});
