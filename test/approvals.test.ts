/**
 * Approvals (SPEC 4 `approval`, 5.4, 5.7, 5.8, 6): the risk gate holds a run `waiting`
 * before anything starts until `POST /approve` starts it (with user-skipped steps) or
 * cancels it; an `approval` step waits, while independent branches go on, until
 * `POST /approve` answers it. A waiting run has no alarm; the answer re-arms it.
 */
import { evictDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { byId, events, post, start, started, status, stepDetail } from "./helpers";
import { abortObject, alarmAt, alarmInBackground, drive, fireAlarm, runStub } from "./helpers";
import { gate, until } from "./helpers";
import { runCalls, script, unique, upstreamCalls, upstreamUrl } from "./helpers";

/** A plan whose steps x (high risk) and y (high risk, readonly) sit behind the risk gate. */
function gated(key: string, config: Record<string, unknown> = {}) {
  return {
    config: { requireApprovalForRisk: "high", ...config },
    steps: [
      {
        id: "read",
        tool: "http",
        params: { url: script(`${key}-read`) },
        risk: "high",
        readonly: true,
      },
      { id: "x", tool: "http", params: { url: script(`${key}-x`) }, risk: "high" },
      { id: "after_x", tool: "http", params: { url: script(`${key}-after_x`) }, dependsOn: ["x"] },
      { id: "low", tool: "http", params: { url: script(`${key}-low`) }, risk: "medium" },
    ],
  };
}

const approve = (runId: string, body: unknown) => post(`/v1/runs/${runId}/approve`, body);

/** Fires the alarm that delivers the webhooks; checks `hook` got one call, run.waiting for this run. */
async function waitingWebhook(runId: string, hook: string): Promise<any[]> {
  await fireAlarm(runId);
  const calls = await upstreamCalls(hook);
  expect(calls).toHaveLength(1);
  expect(JSON.parse(calls[0].body)).toMatchObject({
    type: "run.waiting",
    runId,
    status: "waiting",
  });
  return calls;
}

describe("risk gate", () => {
  it("holds the run waiting right after POST: nothing runs and no alarm is set", async () => {
    const key = unique("gate");
    const created = await start(gated(key));
    expect(created.status).toBe("waiting");
    const s = await status(created.runId);
    expect(s.status).toBe("waiting");
    expect(s.pendingApproval).toEqual([{ gate: "risk", stepIds: ["x"] }]);
    expect(s.steps.map((st: any) => st.status)).toEqual([
      "pending",
      "pending",
      "pending",
      "pending",
    ]);
    expect(await alarmAt(created.runId)).toBeNull();
    expect(await fireAlarm(created.runId)).toBe(false);
    expect(await runCalls(created.runId)).toHaveLength(0);
  });

  it("an approval naming a step while the run waits at the gate is a 409 that says how to answer the gate", async () => {
    const { runId } = await start(gated(unique("gate-step")));
    const answer = await approve(runId, { approved: true, stepId: "x" });
    expect(answer.res.status).toBe(409);
    expect(answer.body.error.message).toMatch(/risk gate, answered without stepId/);
    expect((await status(runId)).status).toBe("waiting");
  });

  it("lists readonly high-risk steps too when autoApproveReadonly is false", async () => {
    const { runId } = await start(gated(unique("gate-ro"), { autoApproveReadonly: false }));
    expect((await status(runId)).pendingApproval).toEqual([
      { gate: "risk", stepIds: ["read", "x"] },
    ]);
  });

  it("a medium threshold gates medium and high steps", async () => {
    const { runId } = await start(gated(unique("gate-med"), { requireApprovalForRisk: "medium" }));
    expect((await status(runId)).pendingApproval).toEqual([
      { gate: "risk", stepIds: ["x", "low"] },
    ]);
  });

  it("a plan whose risky steps are all readonly starts at once", async () => {
    const created = await start({
      config: { requireApprovalForRisk: "high" },
      steps: [{ id: "read", tool: "pass", params: { value: 1 }, risk: "high", readonly: true }],
    });
    expect(created.status).toBe("pending");
    expect((await status(created.runId)).pendingApproval).toBeUndefined();
    expect((await drive(created.runId)).status).toBe("completed");
  });

  it("records an approval_requested event naming the gate and its steps", async () => {
    const { runId } = await start(gated(unique("gate-ev")));
    const requested = (await events(runId)).filter((e) => e.type === "approval_requested");
    expect(requested).toEqual([
      expect.objectContaining({ data: { gate: "risk", stepIds: ["x"] } }),
    ]);
  });

  it("approve { approved: true } starts the run and it completes", async () => {
    const key = unique("gate-ok");
    const { runId } = await start(gated(key));
    const answer = await approve(runId, { approved: true });
    expect(answer.res.status).toBe(200);
    expect(answer.body).toEqual({ runId, status: "pending" });
    expect(await alarmAt(runId)).not.toBeNull();
    const s = await drive(runId);
    expect(s.status).toBe("completed");
    expect(s.pendingApproval).toBeUndefined();
    expect(await upstreamCalls(`/script/${key}-x`)).toHaveLength(1);
    expect((await events(runId)).map((e) => e.type)).toContain("approval_granted");
  });

  it("skipSteps: the listed steps are skipped_by_user, their dependents skipped, the rest runs", async () => {
    const key = unique("gate-skip");
    const { runId } = await start(gated(key));
    expect((await approve(runId, { approved: true, skipSteps: ["x"] })).res.status).toBe(200);
    const s = await drive(runId);
    const steps = byId(s);
    expect(steps.x).toMatchObject({ status: "skipped", reason: "skipped_by_user" });
    expect(steps.after_x).toMatchObject({ status: "skipped", reason: "dependency_skipped" });
    expect(steps.read.status).toBe("succeeded");
    expect(steps.low.status).toBe("succeeded");
    expect(s.status).toBe("completed");
    expect(await upstreamCalls(`/script/${key}-x`)).toHaveLength(0);
    expect(await upstreamCalls(`/script/${key}-after_x`)).toHaveLength(0);
  });

  it("deny cancels the run; nothing ran", async () => {
    const key = unique("gate-deny");
    const { runId } = await start(gated(key));
    const answer = await approve(runId, { approved: false, comment: "not today" });
    expect(answer.res.status).toBe(200);
    expect(answer.body.status).toBe("cancelled");
    const s = await status(runId);
    expect(s.status).toBe("cancelled");
    expect(s.steps.every((st: any) => st.status === "cancelled")).toBe(true);
    expect(await runCalls(runId)).toHaveLength(0);
    const types = (await events(runId)).map((e) => e.type);
    expect(types).toContain("approval_denied");
    expect(types).toContain("run_finished");
  });

  it("a denied run no longer lists a pending approval, and a later approve is a 409 that changes nothing", async () => {
    const key = unique("gate-deny-again");
    const { runId } = await start(gated(key));
    await approve(runId, { approved: false });
    expect((await status(runId)).pendingApproval).toBeUndefined();
    const again = await approve(runId, { approved: true });
    expect(again.res.status).toBe(409);
    await drive(runId);
    expect((await status(runId)).status).toBe("cancelled");
    expect(await runCalls(runId)).toHaveLength(0);
  });

  it("a run cancelled at the gate cannot be approved afterwards", async () => {
    const key = unique("gate-cancel");
    const { runId } = await start(gated(key));
    expect((await post(`/v1/runs/${runId}/cancel`)).res.status).toBe(200);
    expect((await approve(runId, { approved: true })).res.status).toBe(409);
    await drive(runId);
    expect((await status(runId)).status).toBe("cancelled");
    expect(await runCalls(runId)).toHaveLength(0);
  });

  it("an unknown step in skipSteps is a 400 and the gate stays closed", async () => {
    const { runId } = await start(gated(unique("gate-unknown")));
    const answer = await approve(runId, { approved: true, skipSteps: ["nope"] });
    expect(answer.res.status).toBe(400);
    expect(answer.body.error.code).toBe("invalid_request");
    const s = await status(runId);
    expect(s.status).toBe("waiting");
    expect(s.pendingApproval).toEqual([{ gate: "risk", stepIds: ["x"] }]);
  });

  it("skipSteps with approved: false is a 400 (a rejection skips nothing) and the gate stays closed", async () => {
    const { runId } = await start(gated(unique("gate-deny-skip")));
    const answer = await approve(runId, { approved: false, skipSteps: ["x"] });
    expect(answer.res.status).toBe(400);
    expect(answer.body.error.message).toContain("a rejected run skips nothing");
    expect((await status(runId)).status).toBe("waiting");
    expect((await approve(runId, { approved: false, skipSteps: [] })).res.status).toBe(200);
    expect((await status(runId)).status).toBe("cancelled");
  });

  it("a malformed body is a 400", async () => {
    const { runId } = await start(gated(unique("gate-bad")));
    expect((await approve(runId, { approved: "yes" })).res.status).toBe(400);
    expect((await approve(runId, {})).res.status).toBe(400);
  });

  it("sends a run.waiting webhook when the run waits at the gate", async () => {
    const hook = `/script/${unique("gate-hook")}`;
    const { runId } = await start({
      ...gated(unique("gate-hook")),
      webhook: { url: `${upstreamUrl}${hook}` },
    });
    const calls = await waitingWebhook(runId, hook);
    expect((await status(runId)).status).toBe("waiting");
  });
});

/** approval step `gate`, its dependent `after`, and an independent slow branch `other`. */
function approvalPlan(key: string, extra: Record<string, unknown> = {}) {
  return {
    steps: [
      { id: "gate", tool: "approval", params: { message: "ship it?" } },
      { id: "after", tool: "http", params: { url: script(`${key}-after`) }, dependsOn: ["gate"] },
      { id: "other", tool: "http", params: { url: script(`${key}-other`, "?delay=100") } },
    ],
    ...extra,
  };
}

describe("approval step", () => {
  it("a templated message that is not text fails the step as invalid_data when it runs", async () => {
    const runId = await started({
      input: { m: 5 },
      steps: [{ id: "gate", tool: "approval", params: { message: "${input.m}" } }],
    });
    const s = await drive(runId);
    expect(s.status).toBe("failed");
    const gate = await stepDetail(runId, "gate");
    expect(gate.error).toMatchObject({ category: "invalid_data" });
    expect(gate.error.message).toMatch(/^invalid approval params: message: /);
  });

  it("waits (waitingFor approval) while an independent branch runs and finishes; then the run is waiting", async () => {
    const key = unique("appr");
    const runId = await started(approvalPlan(key));
    const s = await drive(runId);
    const steps = byId(s);
    expect(steps.gate).toMatchObject({ status: "waiting", waitingFor: "approval" });
    expect(steps.other.status).toBe("succeeded");
    expect(steps.after.status).toBe("pending");
    expect(s.status).toBe("waiting");
    expect(s.pendingApproval).toEqual([{ gate: "step", stepIds: ["gate"] }]);
    expect(await alarmAt(runId)).toBeNull();
    expect(await upstreamCalls(`/script/${key}-after`)).toHaveLength(0);
    const requested = (await events(runId)).filter((e) => e.type === "approval_requested");
    expect(requested).toEqual([expect.objectContaining({ stepId: "gate", attempt: 1 })]);
  });

  it("the run stays running while something other than the approval is unfinished", async () => {
    const runId = await started({
      steps: [
        { id: "gate", tool: "approval", params: {} },
        { id: "nap", tool: "wait", params: { ms: 600_000 } },
      ],
    });
    const s = await drive(runId);
    expect(byId(s).gate.status).toBe("waiting");
    expect(byId(s).nap.status).toBe("waiting");
    expect(s.status).toBe("running");
    expect(await alarmAt(runId)).not.toBeNull();
  });

  it("approve { approved: true, stepId, comment }: the step succeeds with { approved, comment } and dependents run", async () => {
    const key = unique("appr-yes");
    const runId = await started(approvalPlan(key));
    await drive(runId);
    const answer = await approve(runId, { approved: true, stepId: "gate", comment: "lgtm" });
    expect(answer.res.status).toBe(200);
    expect(await alarmAt(runId)).not.toBeNull();
    const s = await drive(runId);
    expect(s.status).toBe("completed");
    expect(s.pendingApproval).toBeUndefined();
    const gate = await stepDetail(runId, "gate");
    expect(gate.status).toBe("succeeded");
    expect(gate.data).toEqual({ approved: true, comment: "lgtm" });
    expect(gate.attempts).toBe(1);
    expect(typeof gate.attemptLog[0].endedAt).toBe("string");
    expect(await upstreamCalls(`/script/${key}-after`)).toHaveLength(1);
    const granted = (await events(runId)).filter((e) => e.type === "approval_granted");
    expect(granted).toEqual([
      expect.objectContaining({ stepId: "gate", data: { comment: "lgtm" } }),
    ]);
  });

  it("approve without stepId answers the only waiting approval; comment defaults to null", async () => {
    const key = unique("appr-only");
    const runId = await started(approvalPlan(key));
    await drive(runId);
    expect((await approve(runId, { approved: true })).res.status).toBe(200);
    expect((await drive(runId)).status).toBe("completed");
    expect((await stepDetail(runId, "gate")).data).toEqual({ approved: true, comment: null });
  });

  it("approve { approved: false } fails the step as approval_denied; dependents are skipped", async () => {
    const key = unique("appr-no");
    const runId = await started(approvalPlan(key));
    await drive(runId);
    expect(
      (await approve(runId, { approved: false, stepId: "gate", comment: "no" })).res.status,
    ).toBe(200);
    const s = await drive(runId);
    const steps = byId(s);
    expect(steps.gate.status).toBe("failed");
    expect(steps.gate.error.category).toBe("approval_denied");
    expect(steps.after).toMatchObject({ status: "skipped", reason: "dependency_failed" });
    expect(s.status).toBe("partial");
    expect(await upstreamCalls(`/script/${key}-after`)).toHaveLength(0);
    expect((await events(runId)).filter((e) => e.type === "approval_denied")).toEqual([
      expect.objectContaining({ stepId: "gate" }),
    ]);
  });

  it("approving when nothing waits is a 409", async () => {
    const runId = await started({ steps: [{ id: "a", tool: "pass", params: { value: 1 } }] });
    await drive(runId);
    const answer = await approve(runId, { approved: true });
    expect(answer.res.status).toBe(409);
    expect(answer.body.error.code).toBe("conflict");
    expect(answer.body.error.message).toMatch(/nothing waits for approval: the run is completed$/);
  });

  it("approving a step that is not waiting is a 409; an unknown step is a 400", async () => {
    const key = unique("appr-which");
    const runId = await started(approvalPlan(key));
    await drive(runId);
    const other = await approve(runId, { approved: true, stepId: "other" });
    expect(other.res.status).toBe(409);
    expect(other.body.error.message).toMatch(
      /step "other" is not waiting for approval: it is \w+, and the run is waiting$/,
    );
    expect((await approve(runId, { approved: true, stepId: "nope" })).res.status).toBe(400);
    expect(byId(await status(runId)).gate.status).toBe("waiting");
  });

  it("approving the same step twice: the second answer is a 409 and changes nothing", async () => {
    const key = unique("appr-twice");
    const runId = await started(approvalPlan(key));
    await drive(runId);
    expect((await approve(runId, { approved: true, stepId: "gate" })).res.status).toBe(200);
    expect((await approve(runId, { approved: false, stepId: "gate" })).res.status).toBe(409);
    expect((await drive(runId)).status).toBe("completed");
    expect((await stepDetail(runId, "gate")).data).toEqual({ approved: true, comment: null });
  });

  it("two approval steps waiting and no stepId is a 400; naming one answers only it", async () => {
    const runId = await started({
      steps: [
        { id: "one", tool: "approval", params: {} },
        { id: "two", tool: "approval", params: {} },
      ],
    });
    const s = await drive(runId);
    expect(s.status).toBe("waiting");
    expect(s.pendingApproval).toEqual([{ gate: "step", stepIds: ["one", "two"] }]);
    const answer = await approve(runId, { approved: true });
    expect(answer.res.status).toBe(400);
    expect(answer.body.error.message).toMatch(/one, two/);
    expect(answer.body.error.issues.map((i: any) => i.path)).toEqual(["body.stepId"]);

    expect((await approve(runId, { approved: true, stepId: "two" })).res.status).toBe(200);
    const after = await drive(runId);
    expect(byId(after).two.status).toBe("succeeded");
    expect(byId(after).one.status).toBe("waiting");
    expect(after.status).toBe("waiting");
    expect(after.pendingApproval).toEqual([{ gate: "step", stepIds: ["one"] }]);
  });

  it("an answer that arrives while the iteration is live is applied in that iteration", async () => {
    // `slow` answers once `after` has run: the iteration is live until then, whatever the load.
    const slow = gate("appr-live");
    const runId = await started({
      steps: [
        { id: "gate", tool: "approval", params: {} },
        { id: "after", tool: "pass", params: { value: "${steps.gate.data.approved}" } },
        { id: "slow", tool: "http", params: { url: slow.url } },
      ],
    });
    const inFlight = alarmInBackground(runId);
    await until(
      async () => byId(await status(runId)).gate.status === "waiting",
      "the approval step waits",
    );
    expect((await approve(runId, { approved: true, stepId: "gate" })).res.status).toBe(200);
    await until(async () => byId(await status(runId)).after.status === "succeeded", "after ran");
    await slow.open();
    expect(await inFlight).toBe("settled");
    const s = await status(runId);
    expect(s.status).toBe("completed");
    expect(s.iterations).toBe(1);
    expect((await stepDetail(runId, "after")).data).toBe(true);
  });

  it("survives eviction while waiting: approve, then drive", async () => {
    // pass steps only: evictDurableObject waits for the http tool's pending timeout timers
    const runId = await started({
      steps: [
        { id: "gate", tool: "approval", params: {} },
        { id: "after", tool: "pass", params: { value: "${steps.gate.data.approved}" } },
        { id: "other", tool: "pass", params: { value: 1 } },
      ],
    });
    expect((await drive(runId)).status).toBe("waiting");
    await evictDurableObject(runStub(runId));
    expect((await approve(runId, { approved: true, stepId: "gate" })).res.status).toBe(200);
    expect((await drive(runId)).status).toBe("completed");
    expect((await stepDetail(runId, "after")).data).toBe(true);
    expect((await stepDetail(runId, "other")).attempts).toBe(1);
  });

  it("survives an abort while waiting: approve, then drive", async () => {
    const key = unique("appr-abort");
    const runId = await started(approvalPlan(key));
    await drive(runId);
    await abortObject(runId);
    expect(byId(await status(runId)).gate.status).toBe("waiting");
    expect((await approve(runId, { approved: true })).res.status).toBe(200);
    expect((await drive(runId)).status).toBe("completed");
    const gate = await stepDetail(runId, "gate");
    expect(gate.attempts).toBe(1);
  });

  it("sends a run.waiting webhook when the run starts waiting, once", async () => {
    const key = unique("appr-hook");
    const hook = `/script/${unique("appr-hook")}`;
    const runId = await started(approvalPlan(key, { webhook: { url: `${upstreamUrl}${hook}` } }));
    await drive(runId);
    const calls = await waitingWebhook(runId, hook);
    expect(calls[0].headers["x-edgestep-event-id"]).toBeTruthy();

    await approve(runId, { approved: true });
    expect((await drive(runId)).status).toBe("completed");
    const types = (await upstreamCalls(hook)).map((c) => JSON.parse(c.body).type);
    expect(types).toEqual(["run.waiting", "run.completed"]);
  });
});
