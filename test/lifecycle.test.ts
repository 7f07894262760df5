/**
 * Run lifecycle (SPEC 5.1, 5.8, 6): bounded mode with pause and resume, the continuous
 * iteration limit, redrive (`POST /retry`) and cancel. Alarms are fired by the test, and
 * rows are made due by moving the run's clock: nothing here waits for wall-clock time.
 */
import { describe, expect, it } from "vitest";
import { api, byId, eventTypes, events, execute, post, started, status, submit } from "./helpers";
import { advanceClock, advanceToAlarm, drive, fireAlarm, runAlarm, runStub } from "./helpers";
import { unique, upstreamCalls, upstreamUrl } from "./helpers";

function chain(n: number, config: Record<string, unknown> = {}) {
  return {
    name: unique("chain"),
    config,
    steps: Array.from({ length: n }, (_, i) => ({
      id: `s${i}`,
      tool: "pass",
      params: { value: i },
      ...(i > 0 && { dependsOn: [`s${i - 1}`] }),
    })),
  };
}

function succeeded(s: any): string[] {
  return s.steps.filter((st: any) => st.status === "succeeded").map((st: any) => st.id);
}

const bounded = (iterations: number) => ({ mode: { type: "bounded", iterations } });

describe("bounded mode", () => {
  it("runs one wave per iteration and pauses after `iterations` iterations", async () => {
    const runId = await started(chain(5, bounded(2)));
    const s = await drive(runId);
    expect(s.status).toBe("paused");
    expect(s.iterations).toBe(2);
    expect(succeeded(s)).toEqual(["s0", "s1"]);
    expect(s.steps.slice(2).map((st: any) => st.status)).toEqual(["pending", "pending", "pending"]);
    expect(s.endedAt).toBeNull();
  });

  it("pauses after `iterations` iterations even when the clock moves within an iteration", async () => {
    const runId = await started(chain(5, bounded(2)));
    await runStub(runId).tickClock();
    const s = await drive(runId);
    expect(s.status).toBe("paused");
    expect(s.iterations).toBe(2);
    expect(succeeded(s)).toEqual(["s0", "s1"]);
  });

  it("records a run_paused event when it pauses", async () => {
    const runId = await started(chain(5, bounded(2)));
    await drive(runId);
    const types = await eventTypes(runId);
    expect(types).toContain("run_paused");
    expect(types).not.toContain("run_finished");
    expect(types.filter((t) => t === "iteration_started")).toHaveLength(2);
  });

  it("leaves no alarm set while paused", async () => {
    const runId = await started(chain(5, bounded(2)));
    await drive(runId);
    expect(await fireAlarm(runId)).toBe(false);
    expect(succeeded(await status(runId))).toHaveLength(2);
  });

  it("reports iterationsRemaining: 0 when paused", async () => {
    const runId = await started(chain(5, bounded(2)));
    const s = await drive(runId);
    expect(s.iterationsRemaining).toBe(0);
  });

  it("reports the iterations left before the first pause", async () => {
    const runId = await started(chain(5, bounded(3)));
    expect((await status(runId)).iterationsRemaining).toBe(3);
    await fireAlarm(runId);
    const s = await status(runId);
    expect(s.status).toBe("running");
    expect(s.iterationsRemaining).toBe(2);
  });

  it("resume without a body grants the plan's `iterations` again, then the run completes", async () => {
    const runId = await started(chain(5, bounded(2)));
    await drive(runId);

    const first = await post(`/v1/runs/${runId}/resume`);
    expect(first.res.status).toBe(200);
    expect(first.body).toEqual({ runId, status: "running" });
    let s = await drive(runId);
    // two more iterations: two more steps, then paused again with one step left
    expect(s.status).toBe("paused");
    expect(succeeded(s)).toEqual(["s0", "s1", "s2", "s3"]);

    expect((await post(`/v1/runs/${runId}/resume`)).res.status).toBe(200);
    s = await drive(runId);
    expect(s.status).toBe("completed");
    expect(succeeded(s)).toEqual(["s0", "s1", "s2", "s3", "s4"]);
    expect(s.iterations).toBe(5);
  });

  it("resume { iterations: 1 } advances by exactly one step", async () => {
    const runId = await started(chain(5, bounded(2)));
    await drive(runId);
    const { res } = await post(`/v1/runs/${runId}/resume`, { iterations: 1 });
    expect(res.status).toBe(200);
    const s = await drive(runId);
    expect(s.status).toBe("paused");
    expect(succeeded(s)).toEqual(["s0", "s1", "s2"]);
    expect(s.iterations).toBe(3);
  });

  it("records run_resumed and then a second run_paused", async () => {
    const runId = await started(chain(5, bounded(2)));
    await drive(runId);
    await post(`/v1/runs/${runId}/resume`, { iterations: 1 });
    await drive(runId);
    const types = (await eventTypes(runId)).filter(
      (t) => t === "run_paused" || t === "run_resumed",
    );
    expect(types).toEqual(["run_paused", "run_resumed", "run_paused"]);
  });

  it("reports the granted iterations in iterationsRemaining after a resume", async () => {
    const runId = await started(chain(5, bounded(2)));
    await drive(runId);
    await post(`/v1/runs/${runId}/resume`, { iterations: 3 });
    const s = await status(runId);
    expect(s.status).toBe("running");
    expect(s.iterationsRemaining).toBe(3);
  });

  it("resume on a run that is not paused is 409", async () => {
    const done = await execute(chain(2));
    expect(done.status).toBe("completed");
    const completed = await post(`/v1/runs/${done.runId}/resume`);
    expect(completed.res.status).toBe(409);
    expect(completed.body.error.code).toBe("conflict");

    const pending = await started(chain(2, bounded(1)));
    expect((await post(`/v1/runs/${pending}/resume`)).res.status).toBe(409);
  });

  it("resume with a bad body is 400 with an issue path", async () => {
    const runId = await started(chain(5, bounded(2)));
    await drive(runId);
    const { res, body } = await post(`/v1/runs/${runId}/resume`, { iterations: 0 });
    expect(res.status).toBe(400);
    expect(body.error.issues.map((i: any) => i.path)).toContain("body.iterations");
    expect((await status(runId)).status).toBe("paused");
  });
});

describe("an outside answer that finishes the last step", () => {
  const approval = (mode: unknown) => ({
    config: { mode },
    steps: [{ id: "ok", tool: "approval" }],
  });
  const approve = (runId: string) =>
    post(`/v1/runs/${runId}/approve`, { approved: true, stepId: "ok" });

  it("completes a continuous run that used its iterations (nothing is left to iterate for)", async () => {
    const runId = await started(approval({ type: "continuous", maxIterations: 1 }));
    expect(await fireAlarm(runId)).toBe(true);
    expect((await status(runId)).status).toBe("waiting");
    expect((await approve(runId)).res.status).toBe(200);
    const s = await drive(runId);
    expect([s.status, s.iterations, s.error]).toEqual(["completed", 1, undefined]);
    expect(await eventTypes(runId)).toContain("run_finished");
  });

  it("ends a paused bounded run without POST /resume", async () => {
    const runId = await started(approval({ type: "bounded", iterations: 1 }));
    expect(await fireAlarm(runId)).toBe(true);
    expect((await status(runId)).status).toBe("paused");
    expect((await approve(runId)).res.status).toBe(200);
    const s = await drive(runId);
    expect([s.status, s.iterations, s.progress.percentage]).toEqual(["completed", 1, 100]);
  });
});

describe("continuous mode iteration limit", () => {
  it("fails the run with iteration_limit_exceeded when it needs more than maxIterations", async () => {
    const key = unique("itlimit");
    const runId = await started({
      config: { mode: { type: "continuous", maxIterations: 1 } },
      steps: [
        {
          id: "flaky",
          tool: "http",
          params: { url: `${upstreamUrl}/script/${key}?plan=503,200` },
          retry: { maxRetries: 3, baseDelayMs: 60_000, jitter: "none" },
        },
      ],
    });
    expect(await fireAlarm(runId)).toBe(true);
    let s = await status(runId);
    expect(s.status).toBe("running");
    expect(s.steps[0].status).toBe("retrying");

    await advanceToAlarm(runId);
    expect(await fireAlarm(runId)).toBe(true);
    s = await status(runId);
    expect(s.status).toBe("failed");
    expect(s.error.category).toBe("iteration_limit_exceeded");
    const log = ((await (await api(`/v1/runs/${runId}/events?limit=1000`)).json()) as any).events;
    const finished = log.find((e: any) => e.type === "run_finished");
    expect(finished.data).toMatchObject({
      status: "failed",
      error: { category: "iteration_limit_exceeded" },
    });
    expect(s.endedAt).not.toBeNull();
    expect(s.steps[0].status).toBe("cancelled");
    // the second attempt never ran
    expect(await upstreamCalls(`/script/${key}`)).toHaveLength(1);

    // a redrive grants the iteration allowance afresh: the run can finish
    expect((await post(`/v1/runs/${runId}/retry`)).res.status).toBe(200);
    s = await status(runId);
    expect(s.iterations).toBe(1);
    expect(s.iterationsRemaining).toBe(1);
    s = await drive(runId);
    expect(s.status).toBe("completed");
    expect(await upstreamCalls(`/script/${key}`)).toHaveLength(2);
  });
});

describe("redrive (POST /retry)", () => {
  function failingPlan(keyA: string, keyB: string) {
    return {
      steps: [
        { id: "a", tool: "http", params: { url: `${upstreamUrl}/script/${keyA}?plan=200` } },
        {
          id: "b",
          tool: "http",
          params: { url: `${upstreamUrl}/script/${keyB}?plan=404,200` },
          retry: { maxRetries: 0 },
        },
        { id: "c", tool: "pass", params: { value: "${steps.b.data.status}" }, dependsOn: ["b"] },
      ],
    };
  }

  it("ends partial when an independent branch fails", async () => {
    const s = await execute(failingPlan(unique("a"), unique("b")));
    expect(s.status).toBe("partial");
    const byId = Object.fromEntries(s.steps.map((st: any) => [st.id, st]));
    expect(byId.a.status).toBe("succeeded");
    expect(byId.b.status).toBe("failed");
    expect(byId.b.error.category).toBe("client_error");
    expect(byId.c.status).toBe("skipped");
    expect(byId.c.reason).toBe("dependency_failed");
  });

  it("re-runs the failed step and its skipped dependents, keeping succeeded results", async () => {
    const keyA = unique("a");
    const keyB = unique("b");
    const first = await execute(failingPlan(keyA, keyB));
    expect(first.status).toBe("partial");
    const runId = first.runId;

    const { res, body } = await post(`/v1/runs/${runId}/retry`);
    expect(res.status).toBe(200);
    expect(body.runId).toBe(runId);

    const s = await drive(runId);
    expect(s.status).toBe("completed");
    expect(s.steps.map((st: any) => st.status)).toEqual(["succeeded", "succeeded", "succeeded"]);
    expect(await upstreamCalls(`/script/${keyA}`)).toHaveLength(1);
    expect(await upstreamCalls(`/script/${keyB}`)).toHaveLength(2);
    const results = (await (await api(`/v1/runs/${runId}/results`)).json()) as any[];
    expect(results[2].data).toBe(200);
  });

  it("results say each step's status (a skipped step is no failure); a failed one has its attempt's time, a skipped one none", async () => {
    const { runId } = await execute(failingPlan(unique("a"), unique("b")));
    const results = (await (await api(`/v1/runs/${runId}/results`)).json()) as any[];
    const [a, b, c] = results.map((r) => r.metadata.executionTime);
    expect(a).toEqual(expect.any(Number));
    expect(results[1]).toMatchObject({ success: false, metadata: { status: 404 } });
    expect(b).toEqual(expect.any(Number));
    expect(b).toBeGreaterThanOrEqual(0);
    expect(c).toBeNull();
    expect(results.map((r) => [r.success, r.status, r.reason])).toEqual([
      [true, "succeeded", undefined],
      [false, "failed", undefined],
      [false, "skipped", "dependency_failed"],
    ]);
  });

  it("keeps the failed attempt in the step's attemptLog next to the new one", async () => {
    const first = await execute(failingPlan(unique("a"), unique("b")));
    const runId = first.runId;
    await post(`/v1/runs/${runId}/retry`);
    await drive(runId);
    const b = (await (await api(`/v1/runs/${runId}/steps/b`)).json()) as any;
    expect(b.status).toBe("succeeded");
    expect(b.attemptLog).toHaveLength(2);
    expect(b.attemptLog[0]).toMatchObject({ attempt: 1, category: "client_error", status: 404 });
    expect(b.attemptLog[1].attempt).toBe(2);
    expect(b.attemptLog[1].category).toBeUndefined();
    expect(b.attemptLog[1].endedAt).not.toBeNull();
  });

  it("re-runs the steps that fail-fast cancelled", async () => {
    const keyB = unique("ff-b");
    const runId = await started({
      config: { failFast: true, maxParallel: 1 },
      steps: [
        {
          id: "bad",
          tool: "http",
          params: { url: `${upstreamUrl}/script/${keyB}?plan=404,200` },
          retry: { maxRetries: 0 },
        },
        { id: "later", tool: "pass", params: { value: 1 } },
      ],
    });
    const first = await drive(runId);
    expect(first.status).toBe("failed");
    expect(first.steps.map((st: any) => st.status)).toEqual(["failed", "cancelled"]);
    expect((await post(`/v1/runs/${runId}/retry`)).res.status).toBe(200);
    const s = await drive(runId);
    expect(s.status).toBe("completed");
    expect(s.steps.map((st: any) => st.status)).toEqual(["succeeded", "succeeded"]);
  });

  it("leaves a step skipped because of a person's skip as it is: only what failed, and what it held up, runs again", async () => {
    const key = unique("redrive-skip");
    const { runId } = await submit({
      config: { requireApprovalForRisk: "high" },
      steps: [
        { id: "x", tool: "pass", params: { value: 1 }, risk: "high" },
        { id: "y", tool: "pass", params: { value: 2 }, dependsOn: ["x"] },
        { id: "w", tool: "pass", params: { value: 3 } },
        {
          id: "z",
          tool: "http",
          params: { url: `${upstreamUrl}/script/${key}?plan=404,200` },
          retry: { maxRetries: 0 },
        },
      ],
    }).then((r) => r.body);
    expect(
      (await post(`/v1/runs/${runId}/approve`, { approved: true, skipSteps: ["x"] })).res.status,
    ).toBe(200);
    const first = await drive(runId);
    expect(first.status).toBe("partial");
    expect(byId(first).y).toMatchObject({ status: "skipped", reason: "dependency_skipped" });

    expect((await post(`/v1/runs/${runId}/retry`)).res.status).toBe(200);
    const resumed = (await events(runId)).filter((e: any) => e.type === "run_resumed");
    expect(resumed.at(-1).data).toMatchObject({ redrive: true, steps: 1 });
    const s = await drive(runId);
    expect(s.status).toBe("completed");
    expect(byId(s).y).toMatchObject({ status: "skipped", reason: "dependency_skipped" });
    expect(
      (await events(runId)).filter((e: any) => e.type === "step_skipped" && e.stepId === "y"),
    ).toHaveLength(1);
  });

  it("a redriven bounded run gets its `iterations` again", async () => {
    const runId = await started({ ...failingPlan(unique("a"), unique("b")), config: bounded(5) });
    const first = await drive(runId);
    expect(first.status).toBe("partial");
    expect((await post(`/v1/runs/${runId}/retry`)).res.status).toBe(200);
    expect((await status(runId)).iterationsRemaining).toBe(5);
    expect((await drive(runId)).status).toBe("completed");
  });

  it("retry on a completed run is 409", async () => {
    const s = await execute(chain(2));
    expect(s.status).toBe("completed");
    const { res, body } = await post(`/v1/runs/${s.runId}/retry`);
    expect(res.status).toBe(409);
    expect(body.error.code).toBe("conflict");
  });

  it("retry on a running run is 409", async () => {
    const runId = await started({ steps: [{ id: "w", tool: "wait", params: { ms: 600_000 } }] });
    await fireAlarm(runId);
    expect((await post(`/v1/runs/${runId}/retry`)).res.status).toBe(409);
  });
});

describe("cancel", () => {
  function waitingPlan() {
    return {
      name: unique("cancel"),
      steps: [
        { id: "w", tool: "wait", params: { ms: 600_000 } },
        { id: "after", tool: "pass", params: { value: 1 }, dependsOn: ["w"] },
      ],
    };
  }

  async function waitingRun(): Promise<string> {
    const runId = await started(waitingPlan());
    await fireAlarm(runId);
    const s = await status(runId);
    expect(s.steps[0].status).toBe("waiting");
    return runId;
  }

  it("cancels a run whose step waits on a timer: run and steps cancelled", async () => {
    const runId = await waitingRun();
    const { res, body } = await post(`/v1/runs/${runId}/cancel`);
    expect(res.status).toBe(200);
    expect(body).toEqual({ runId, status: "cancelled" });
    const s = await status(runId);
    expect(s.status).toBe("cancelled");
    expect(s.endedAt).not.toBeNull();
    expect(s.steps.map((st: any) => st.status)).toEqual(["cancelled", "cancelled"]);
    expect(s.summary.cancelledSteps).toBe(2);
  });

  it("records run_cancelled then run_finished", async () => {
    const runId = await waitingRun();
    await post(`/v1/runs/${runId}/cancel`);
    const types = await eventTypes(runId);
    expect(types.slice(-2)).toEqual(["run_cancelled", "run_finished"]);
  });

  it("a cancelled run does not resume when its alarm fires", async () => {
    const runId = await waitingRun();
    await post(`/v1/runs/${runId}/cancel`);
    await advanceClock(runId, 600_000);
    await runAlarm(runId);
    const s = await status(runId);
    expect(s.status).toBe("cancelled");
    expect(s.steps.map((st: any) => st.status)).toEqual(["cancelled", "cancelled"]);
  });

  it("cancels a run while an attempt is in flight: the attempt is aborted and the alarm returns", async () => {
    const key = unique("hang");
    const runId = await started({
      name: unique("cancel"),
      steps: [
        {
          id: "slow",
          tool: "http",
          params: { url: `${upstreamUrl}/hang?key=${key}` },
          timeoutMs: 900_000,
        },
        { id: "after", tool: "pass", params: { value: 1 }, dependsOn: ["slow"] },
      ],
    });
    const alarm = fireAlarm(runId);
    // the attempt is in flight once the upstream has seen it
    for (let i = 0; (await upstreamCalls("/hang")).every((c) => !c.query.includes(key)); i++) {
      if (i > 1000) throw new Error("the attempt never started");
    }
    const { res, body } = await post(`/v1/runs/${runId}/cancel`);
    expect(res.status).toBe(200);
    expect(body.status).toBe("cancelled");
    expect(await alarm).toBe(true);
    const s = await status(runId);
    expect(s.status).toBe("cancelled");
    // like a cancel between iterations: a step that never started is cancelled, not skipped
    expect(s.steps.map((st: any) => [st.status, st.reason])).toEqual([
      ["cancelled", undefined],
      ["cancelled", undefined],
    ]);
  });

  it("cancel again is 200", async () => {
    const runId = await waitingRun();
    await post(`/v1/runs/${runId}/cancel`);
    const again = await post(`/v1/runs/${runId}/cancel`);
    expect(again.res.status).toBe(200);
    expect(again.body.status).toBe("cancelled");
  });

  it("cancel on a completed run is 409", async () => {
    const s = await execute(chain(1));
    expect(s.status).toBe("completed");
    const { res, body } = await post(`/v1/runs/${s.runId}/cancel`);
    expect(res.status).toBe(409);
    expect(body.error.code).toBe("conflict");
    expect((await status(s.runId)).status).toBe("completed");
  });

  it("cancel on an unknown run is 404", async () => {
    const unknown = `run_${crypto.randomUUID().replaceAll("-", "")}`;
    const { res } = await post(`/v1/runs/${unknown}/cancel`);
    expect(res.status).toBe(404);
  });
});
