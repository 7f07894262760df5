/**
 * Rollback (SPEC 5.6): with `config.rollback`, a run that ends `failed` runs the
 * `compensate` action of every succeeded step that has one, in reverse order of
 * completion; a failed compensation is recorded and the others still run. Status shows
 * `rollback: { state, steps }`. Retry delays are made due by moving the run's clock.
 */
import { describe, expect, it } from "vitest";
import { DAY_MS } from "../src/engine/retention";
import { events, post, started, status } from "./helpers";
import { abortObject, advanceToAlarm, alarmAt, alarmInBackground, drive } from "./helpers";
import { fireAlarm, until } from "./helpers";
import { script, unique, upstreamCalls, upstreamUrl } from "./helpers";

/**
 * a -> b -> c: a and b succeed (b after a), c fails with 404 and fails the run.
 * `undo` gives each compensation's script query (e.g. "?plan=500").
 */
function plan(
  key: string,
  opts: {
    rollback?: boolean;
    failRun?: boolean;
    undo?: Record<string, string>;
    retry?: unknown;
  } = {},
) {
  const { rollback = true, failRun = true, undo = {}, retry } = opts;
  const compensate = (id: string) => ({
    tool: "http",
    params: { url: script(`${key}-undo-${id}`, undo[id] ?? "") },
  });
  return {
    config: { rollback },
    steps: [
      {
        id: "a",
        tool: "http",
        params: { url: script(`${key}-a`) },
        compensate: compensate("a"),
        ...(retry !== undefined && { retry }),
      },
      {
        id: "b",
        tool: "http",
        params: { url: script(`${key}-b`) },
        dependsOn: ["a"],
        compensate: compensate("b"),
        ...(retry !== undefined && { retry }),
      },
      {
        id: "c",
        tool: "http",
        params: { url: script(`${key}-c`, "?plan=404") },
        dependsOn: ["b"],
        compensate: compensate("c"),
        ...(failRun && { onFailure: "fail_run" }),
      },
    ],
  };
}

async function undoCalls(key: string): Promise<string[]> {
  return (await upstreamCalls(`/script/${key}-undo-`)).map((c) =>
    c.path.slice(`/script/${key}-undo-`.length),
  );
}

describe("rollback on failure", () => {
  it("a failed run compensates its succeeded steps in reverse completion order", async () => {
    const key = unique("rb");
    const runId = await started(plan(key));
    const s = await drive(runId);
    expect(s.status).toBe("failed");
    expect(await undoCalls(key)).toEqual(["b", "a"]);
    expect(s.rollback).toEqual({
      state: "completed",
      steps: [
        expect.objectContaining({ stepId: "b", tool: "http", status: "succeeded", attempts: 1 }),
        expect.objectContaining({ stepId: "a", tool: "http", status: "succeeded", attempts: 1 }),
      ],
    });
    expect(typeof s.rollback.steps[0].startedAt).toBe("string");
    expect(typeof s.rollback.steps[0].endedAt).toBe("string");
    // the failed step is not compensated
    expect(await upstreamCalls(`/script/${key}-undo-c`)).toHaveLength(0);
    // nothing is due but the end of the run's retention (SPEC 8.3)
    expect(await alarmAt(runId)).toBe(Date.parse(s.endedAt) + 30 * DAY_MS);
  });

  it("a forEach step that failed after some items succeeded is compensated; one whose items all failed is not", async () => {
    const key = unique("rb-fe");
    const fanOut = (id: string, items: string[]) => ({
      id,
      tool: "http",
      forEach: items,
      retry: { maxRetries: 0 },
      params: { url: script(`${key}-${id}-\${index}`), query: { plan: "${item}" } },
      compensate: { tool: "http", params: { url: script(`${key}-undo-${id}`) } },
    });
    const runId = await started({
      config: { rollback: true, failFast: false },
      steps: [fanOut("some", ["200", "404"]), fanOut("none", ["404"])],
    });
    const s = await drive(runId);
    expect(s.status).toBe("failed");
    expect(await undoCalls(key)).toEqual(["some"]);
    expect(s.rollback.steps.map((r: any) => r.stepId)).toEqual(["some"]);
  });

  it("steps that complete within one millisecond are undone dependents first, whatever their plan order", async () => {
    const key = unique("rb-tie");
    const undo = (id: string) => ({ tool: "http", params: { url: script(`${key}-undo-${id}`) } });
    const step = (id: string, dependsOn: string[]) => ({
      id,
      tool: "pass",
      params: { value: id },
      dependsOn,
      compensate: undo(id),
    });
    const runId = await started({
      config: { rollback: true, failFast: true },
      // c depends on b, b on a: declared the other way round, so plan order is c, b, a.
      steps: [
        step("c", ["b"]),
        step("b", ["a"]),
        step("a", []),
        {
          id: "d",
          tool: "http",
          params: { url: script(`${key}-d`, "?plan=404") },
          dependsOn: ["c"],
        },
      ],
    });
    expect((await drive(runId)).status).toBe("failed");
    expect(await undoCalls(key)).toEqual(["c", "b", "a"]);
  });

  it("compensations carry their own Idempotency-Key", async () => {
    const key = unique("rb-key");
    const runId = await started(plan(key));
    await drive(runId);
    const [undoB] = await upstreamCalls(`/script/${key}-undo-b`);
    expect(undoB.idempotencyKey).toBe(`${runId}:b:compensate`);
    expect(undoB.attempt).toBe(1);
  });

  it("records compensation_started and compensation_finished events, after run_finished", async () => {
    const key = unique("rb-ev");
    const runId = await started(plan(key));
    await drive(runId);
    const all = await events(runId);
    const comp = all.filter((e) => e.type.startsWith("compensation_"));
    expect(comp.map((e) => [e.type, e.stepId])).toEqual([
      ["compensation_started", "b"],
      ["compensation_finished", "b"],
      ["compensation_started", "a"],
      ["compensation_finished", "a"],
    ]);
    expect(comp[1].data).toEqual({ status: "succeeded" });
    const finished = all.findIndex((e) => e.type === "run_finished");
    expect(finished).toBeGreaterThanOrEqual(0);
    expect(all.indexOf(comp[0])).toBeGreaterThan(finished);
  });

  it("the run.failed webhook goes out before the rollback, not once it is over", async () => {
    const key = unique("rb-hook");
    const hook = `/script/${key}-hook`;
    const runId = await started({
      ...plan(key, { undo: { b: "?delay=2500" } }),
      webhook: { url: `${upstreamUrl}${hook}` },
    });
    const inFlight = alarmInBackground(runId);
    await until(async () => (await upstreamCalls(hook)).length > 0, "the webhook arrived");
    // b's compensation (2.5 s) is still in flight: the event did not wait for the rollback.
    expect((await status(runId)).rollback.state).toBe("running");
    expect(JSON.parse((await upstreamCalls(hook))[0].body)).toMatchObject({ type: "run.failed" });
    await inFlight;
    expect((await status(runId)).rollback.state).toBe("completed");
    expect(await upstreamCalls(hook)).toHaveLength(1);
  });

  it("a compensation that fails for good is recorded failed; the others still run; state failed", async () => {
    const key = unique("rb-fail");
    const runId = await started(
      plan(key, { undo: { b: "?plan=500" }, retry: { maxRetries: 1, baseDelayMs: 0 } }),
    );
    const s = await drive(runId);
    expect(s.status).toBe("failed");
    expect(await undoCalls(key)).toEqual(["b", "b", "a"]);
    expect(s.rollback.state).toBe("failed");
    expect(s.rollback.steps).toEqual([
      expect.objectContaining({
        stepId: "b",
        status: "failed",
        attempts: 2,
        error: expect.objectContaining({ category: "server_error", status: 500 }),
      }),
      expect.objectContaining({ stepId: "a", status: "succeeded", attempts: 1 }),
    ]);
    const finished = (await events(runId)).filter((e) => e.type === "compensation_finished");
    expect(finished.map((e) => [e.stepId, e.data.status])).toEqual([
      ["b", "failed"],
      ["a", "succeeded"],
    ]);
  });

  it("a compensation retried after a 503 waits for its retry by alarm, then succeeds", async () => {
    const key = unique("rb-retry");
    const runId = await started(
      plan(key, {
        undo: { b: "?plan=503,200" },
        retry: { maxRetries: 2, baseDelayMs: 600_000, maxDelayMs: 600_000, jitter: "none" },
      }),
    );
    let s = await drive(runId);
    expect(s.status).toBe("failed");
    expect(s.rollback.state).toBe("running");
    expect(s.rollback.steps).toEqual([
      expect.objectContaining({ stepId: "b", status: "retrying", attempts: 1 }),
      expect.objectContaining({ stepId: "a", status: "pending", attempts: 0 }),
    ]);
    // a waits behind b: compensations run one at a time, in order
    expect(await undoCalls(key)).toEqual(["b"]);
    const alarm = await alarmAt(runId);
    expect(alarm).not.toBeNull();
    expect(alarm!).toBeGreaterThan(Date.now() + 500_000);

    await advanceToAlarm(runId);
    expect(await fireAlarm(runId)).toBe(true);
    s = await status(runId);
    expect(s.status).toBe("failed");
    expect(s.rollback.state).toBe("completed");
    expect(s.rollback.steps).toEqual([
      expect.objectContaining({ stepId: "b", status: "succeeded", attempts: 2 }),
      expect.objectContaining({ stepId: "a", status: "succeeded", attempts: 1 }),
    ]);
    expect(await undoCalls(key)).toEqual(["b", "b", "a"]);
    expect(await alarmAt(runId)).toBe(Date.parse(s.endedAt) + 30 * DAY_MS);
    const retries = (await events(runId)).filter((e) => e.type === "step_retry_scheduled");
    expect(retries).toEqual([
      expect.objectContaining({
        stepId: "b",
        attempt: 1,
        data: {
          category: "server_error",
          message: expect.stringContaining("503"),
          status: 503,
          nextAttemptAt: new Date(alarm!).toISOString(),
          compensation: true,
        },
      }),
    ]);
  });

  it("compensate params can read the step's own result", async () => {
    const key = unique("rb-own");
    const runId = await started({
      config: { rollback: true },
      steps: [
        {
          id: "a",
          tool: "http",
          params: { url: script(`${key}-a`) },
          compensate: {
            tool: "http",
            params: {
              url: `${upstreamUrl}/echo`,
              method: "POST",
              body: { undo: "${steps.a.data.key}", call: "${steps.a.data.call}" },
            },
          },
        },
        {
          id: "c",
          tool: "http",
          params: { url: script(`${key}-c`, "?plan=404") },
          dependsOn: ["a"],
          onFailure: "fail_run",
        },
      ],
    });
    const s = await drive(runId);
    expect(s.rollback.state).toBe("completed");
    const echo = (await upstreamCalls("/echo")).find(
      (c) => c.idempotencyKey === `${runId}:a:compensate`,
    );
    expect(echo).toBeDefined();
    expect(JSON.parse(echo.body)).toEqual({ undo: `${key}-a`, call: 1 });
  });

  it("failFast fails the run and rolls back too", async () => {
    const key = unique("rb-ff");
    const p = plan(key, { failRun: false });
    const runId = await started({ ...p, config: { rollback: true, failFast: true } });
    const s = await drive(runId);
    expect(s.status).toBe("failed");
    expect(await undoCalls(key)).toEqual(["b", "a"]);
  });
});

describe("rollback durability", () => {
  it("a compensation interrupted by a restart is retried; the rollback completes", async () => {
    const key = unique("rb-dur");
    const runId = await started(
      plan(key, { undo: { b: "?delay=400" }, retry: { maxRetries: 2, baseDelayMs: 0 } }),
    );
    const inFlight = alarmInBackground(runId);
    await until(
      async () => (await status(runId)).rollback?.steps[0]?.status === "running",
      "b's compensation is in flight",
    );
    expect(await alarmAt(runId)).not.toBeNull();
    await abortObject(runId);
    await inFlight;

    expect(await fireAlarm(runId)).toBe(true);
    const s = await status(runId);
    expect(s.status).toBe("failed");
    expect(s.rollback.state).toBe("completed");
    expect(s.rollback.steps[0]).toMatchObject({ stepId: "b", status: "succeeded", attempts: 2 });
    // The log says why b's compensation started twice.
    const b = (await events(runId)).filter((e) => e.stepId === "b" && e.type !== "step_started");
    expect(b.map((e) => [e.type, e.attempt, e.data?.category])).toEqual([
      ["step_succeeded", 1, undefined],
      ["compensation_started", 1, undefined],
      ["step_retry_scheduled", 1, "interrupted"],
      ["compensation_started", 2, undefined],
      ["compensation_finished", 2, undefined],
    ]);
    const calls = await upstreamCalls(`/script/${key}-undo-b`);
    expect(new Set(calls.map((c) => c.idempotencyKey))).toEqual(new Set([`${runId}:b:compensate`]));
    expect(calls[calls.length - 1].attempt).toBe(2);
    expect(await upstreamCalls(`/script/${key}-undo-a`)).toHaveLength(1);
  });
});

describe("no rollback", () => {
  it("when config.rollback is false", async () => {
    const key = unique("rb-off");
    const runId = await started(plan(key, { rollback: false }));
    const s = await drive(runId);
    expect(s.status).toBe("failed");
    expect(s.rollback).toBeUndefined();
    expect(await undoCalls(key)).toEqual([]);
    expect((await events(runId)).some((e) => e.type.startsWith("compensation_"))).toBe(false);
  });

  it("when the run ends partial", async () => {
    const key = unique("rb-partial");
    const runId = await started(plan(key, { failRun: false }));
    const s = await drive(runId);
    expect(s.status).toBe("partial");
    expect(s.rollback).toBeUndefined();
    expect(await undoCalls(key)).toEqual([]);
  });

  it("when the run completes", async () => {
    const key = unique("rb-ok");
    const p = plan(key);
    p.steps[2]!.params = { url: script(`${key}-c`) };
    const runId = await started(p);
    const s = await drive(runId);
    expect(s.status).toBe("completed");
    expect(s.rollback).toBeUndefined();
    expect(await undoCalls(key)).toEqual([]);
  });

  it("when the run is cancelled", async () => {
    const key = unique("rb-cancel");
    const runId = await started({
      config: { rollback: true },
      steps: [
        {
          id: "a",
          tool: "pass",
          params: { value: 1 },
          compensate: { tool: "http", params: { url: script(`${key}-undo-a`) } },
        },
        { id: "nap", tool: "wait", params: { ms: 600_000 }, dependsOn: ["a"] },
      ],
    });
    await drive(runId);
    expect((await post(`/v1/runs/${runId}/cancel`)).res.status).toBe(200);
    await drive(runId);
    const s = await status(runId);
    expect(s.status).toBe("cancelled");
    expect(s.rollback).toBeUndefined();
    expect(await undoCalls(key)).toEqual([]);
  });
});

describe("rollback and redrive", () => {
  it("a rolled-back run cannot be retried: 409, and nothing changes", async () => {
    const key = unique("rb-redrive");
    const runId = await started(plan(key));
    expect((await drive(runId)).status).toBe("failed");
    expect(await undoCalls(key)).toEqual(["b", "a"]);
    const before = await status(runId);
    const { res, body } = await post(`/v1/runs/${runId}/retry`);
    expect(res.status).toBe(409);
    expect(body.error.message).toMatch(/rolled back/);
    const after = await drive(runId);
    expect(after.status).toBe("failed");
    expect(after.steps).toEqual(before.steps);
    expect(await undoCalls(key)).toEqual(["b", "a"]);
  });

  it("a failed run with rollback on but nothing to compensate can be retried", async () => {
    const key = unique("rb-nothing");
    const p = plan(key, { failRun: true });
    for (const step of p.steps) delete (step as { compensate?: unknown }).compensate;
    const runId = await started(p);
    expect((await drive(runId)).status).toBe("failed");
    expect((await post(`/v1/runs/${runId}/retry`)).res.status).toBe(200);
  });
});
