/**
 * Slots per destination (SPEC 10): across every run, calls to a listed destination never exceed
 * its concurrency or rate; a call that must wait is `waiting` for `quota` (no attempt, no retry)
 * and goes in the order it asked; slots are leases, given back when a call ends, at once when
 * its run is cancelled, and by expiry when its run crashed. Each test limits a destination of
 * its own (test/test-destinations.ts); the destinations' clocks and alarms move only when a test
 * says (TestDestinationObject), the upstream's log is the referee.
 */
import { describe, expect, it } from "vitest";
import { LEASE_TTL_MS } from "../src/engine/flow-control";
import {
  abortObject,
  advanceDestinationClock,
  alarmInBackground,
  byId,
  destinationState,
  destinationStub,
  drive,
  driveAll,
  events,
  fireAlarm,
  fireDestinationAlarm,
  hostUrl,
  maxInFlight,
  post,
  script,
  started,
  status,
  unique,
  until,
  upstreamCalls,
} from "./helpers";

/** The `/work` calls tagged `t=<tag>`, in the order they arrived. */
async function workCalls(tag: string) {
  const calls = await upstreamCalls("/work");
  return calls.filter((c) => new URLSearchParams(c.query).get("t") === tag);
}

const work = (label: string, tag: string, ms: number, extra = "") =>
  hostUrl(label, `/work?ms=${ms}&t=${tag}${extra}`);

const httpStep = (id: string, url: string, more: Record<string, unknown> = {}) => ({
  id,
  tool: "http",
  params: { url },
  ...more,
});

/** Starts a run holding destination `label`'s only slot with a call that lasts a minute; resolves once the upstream has it. */
async function holdSlot(label: string, tag: string) {
  const holder = await started({ steps: [httpStep("hold", work(label, tag, 60_000))] });
  const alarm = alarmInBackground(holder);
  await until(async () => (await workCalls(tag)).length === 1, "the holder's call arrived");
  return { holder, alarm };
}

describe("concurrency across runs", () => {
  it("4 runs of 4 parallel calls never have more than 2 in flight, and each call is one attempt", async () => {
    const tag = unique("conc");
    const plan = {
      steps: [0, 1, 2, 3].map((n) => httpStep(`c${n}`, work("concurrency", tag, 50))),
    };
    const runs = await Promise.all([1, 2, 3, 4].map(() => started(plan)));
    const finals = await driveAll(runs);
    expect(finals.map((s) => s.status)).toEqual(Array(4).fill("completed"));
    for (const s of finals) for (const step of s.steps) expect(step.attempts).toBe(1);
    const calls = await workCalls(tag);
    expect(calls).toHaveLength(16);
    expect(maxInFlight(calls)).toBeLessThanOrEqual(2);
    const waits = (await Promise.all(runs.map(events)))
      .flat()
      .filter((e) => e.type === "quota_wait");
    expect(waits.length).toBeGreaterThan(0);
    expect(waits[0].data).toMatchObject({
      destination: "concurrency.upstream.test",
      reason: "queued",
    });
    expect(waits[0].data.position).toBeGreaterThanOrEqual(1);
    expect(await destinationState("concurrency.upstream.test")).toEqual({
      inFlight: 0,
      waiting: 0,
      pausedUntil: null,
    });
  });

  it("slots a run gives back go to its own queued calls within the same iteration", async () => {
    const tag = unique("own");
    const runId = await started({
      steps: [0, 1, 2, 3, 4].map((n) => httpStep(`c${n}`, work("concurrency", tag, 20))),
    });
    expect(await fireAlarm(runId)).toBe(true);
    const s = await status(runId);
    expect(s.status).toBe("completed");
    expect(s.iterations).toBe(1);
    expect(maxInFlight(await workCalls(tag))).toBeLessThanOrEqual(2);
  });

  it("a registry tool listed by name is limited whatever its host; a wildcard limits every host under it together", async () => {
    const tag = unique("tool");
    const tool = await started({
      steps: [0, 1, 2].map((n) => ({
        id: `t${n}`,
        tool: "limited_work",
        params: { ms: 100, t: tag },
      })),
    });
    const wildTag = unique("wild");
    const wild = await started({
      steps: [
        httpStep("a", hostUrl("a.wild", `/work?ms=100&t=${wildTag}`)),
        httpStep("b", hostUrl("b.wild", `/work?ms=100&t=${wildTag}`)),
      ],
    });
    const finals = await driveAll([tool, wild]);
    expect(finals.map((s) => s.status)).toEqual(["completed", "completed"]);
    expect(maxInFlight(await workCalls(tag))).toBe(1);
    expect(maxInFlight(await workCalls(wildTag))).toBe(1);
    expect(await destinationStub("limited_work").acquires()).toBeGreaterThanOrEqual(3);
    expect(await destinationStub("*.wild.upstream.test").acquires()).toBeGreaterThanOrEqual(2);
  });

  it("forEach items wait for slots too, each keeping its place among maxConcurrency", async () => {
    const tag = unique("items");
    const runId = await started({
      steps: [
        {
          id: "each",
          tool: "http",
          forEach: [1, 2, 3, 4, 5],
          maxConcurrency: 5,
          params: { url: hostUrl("items", `/work?ms=100&t=${tag}&n=\${item}`) },
        },
      ],
    });
    const done = await drive(runId);
    expect(done.status).toBe("completed");
    expect(byId(done).each).toMatchObject({ status: "succeeded", attempts: 5 });
    const calls = await workCalls(tag);
    expect(calls).toHaveLength(5);
    expect(maxInFlight(calls)).toBeLessThanOrEqual(2);
    const waits = (await events(runId)).filter((e) => e.type === "quota_wait");
    expect(waits.length).toBeGreaterThan(0);
    expect(waits[0]).toMatchObject({
      stepId: "each",
      data: { destination: "items.upstream.test" },
    });
    expect(typeof waits[0].data.item).toBe("number");
  });

  it("a call to a destination that is neither limited nor paused asks no one", async () => {
    const label = unique("free");
    const runId = await started({
      steps: [
        httpStep("free", hostUrl(label, "/work?ms=1")),
        httpStep("listed", hostUrl("unlimited", "/work?ms=1")),
      ],
    });
    expect((await drive(runId)).status).toBe("completed");
    expect(await destinationStub(`${label}.upstream.test`).acquires()).toBe(0);
    expect(await destinationStub("unlimited.upstream.test").acquires()).toBe(0);
    expect((await events(runId)).some((e) => e.type === "quota_wait")).toBe(false);
  });
});

describe("compensations", () => {
  it("wait for a slot like any call, with a quota_wait and no attempt meanwhile", async () => {
    const { holder } = await holdSlot("undo", unique("undo-hold"));
    const tag = unique("undo");
    const runId = await started({
      config: { rollback: true, failFast: true },
      steps: [
        httpStep("deploy", hostUrl(unique("free"), "/work?ms=1"), {
          compensate: { tool: "http", params: { url: work("undo", tag, 1) } },
        }),
        httpStep("boom", script(unique("boom"), "?plan=400"), { dependsOn: ["deploy"] }),
      ],
    });
    const alarm = alarmInBackground(runId); // the run fails, and its rollback waits for the slot
    await until(
      async () => (await events(runId)).some((e) => e.type === "quota_wait"),
      "the compensation waits",
    );
    const wait = (await events(runId)).find((e) => e.type === "quota_wait");
    expect(wait).toMatchObject({
      stepId: "deploy",
      data: { destination: "undo.upstream.test", reason: "queued", compensation: true },
    });
    expect(await workCalls(tag)).toHaveLength(0);
    expect((await events(runId)).map((e) => e.type)).not.toContain("compensation_started");

    await post(`/v1/runs/${holder}/cancel`);
    expect(await alarm).toBe("settled");
    const s = await status(runId);
    expect(s.status).toBe("failed");
    expect(s.rollback).toMatchObject({
      state: "completed",
      steps: [{ stepId: "deploy", attempts: 1 }],
    });
    expect(await workCalls(tag)).toHaveLength(1);
  });
});

describe("first asked, first served", () => {
  it("a run that keeps asking does not pass a call that asked before it", async () => {
    const { holder, alarm } = await holdSlot("fifo", unique("fifo-hold"));
    const tag = unique("fifo");
    // a0 asks now; a1 asks only once a0 is done, after b0 asked.
    const a = await started({
      steps: [
        httpStep("a0", work("fifo", tag, 10, "&n=a0")),
        httpStep("a1", work("fifo", tag, 10, "&n=a1"), { dependsOn: ["a0"] }),
      ],
    });
    await fireAlarm(a);
    const b = await started({ steps: [httpStep("b0", work("fifo", tag, 10, "&n=b0"))] });
    await fireAlarm(b);
    expect(byId(await status(a)).a0).toMatchObject({ waitingFor: "quota", attempts: 0 });
    const bWait = (await events(b)).find((e) => e.type === "quota_wait");
    expect(bWait.data).toMatchObject({ reason: "queued", position: 2 });

    await post(`/v1/runs/${holder}/cancel`); // the slot is free: a0, then b0, then a1
    expect(await alarm).toBe("settled");
    const finals = await driveAll([a, b]);
    expect(finals.map((s) => s.status)).toEqual(["completed", "completed"]);
    const order = (await workCalls(tag)).map((c) => new URLSearchParams(c.query).get("n"));
    expect(order).toEqual(["a0", "b0", "a1"]);
  });
});

describe("leases", () => {
  it("a cancelled run gives its slot back at once: the next call is granted before the cancel answers", async () => {
    const holdTag = unique("cancel-hold");
    const { holder, alarm } = await holdSlot("cancel", holdTag);
    const tag = unique("cancel");
    const next = await started({ steps: [httpStep("next", work("cancel", tag, 10))] });
    await fireAlarm(next);
    expect(await destinationState("cancel.upstream.test")).toMatchObject({
      inFlight: 1,
      waiting: 1,
    });

    const { res } = await post(`/v1/runs/${holder}/cancel`);
    expect(res.status).toBe(200);
    const leases = await destinationStub("cancel.upstream.test").leaseRows();
    expect(leases.map((l) => l.runId)).toEqual([next]);
    expect(await destinationState("cancel.upstream.test")).toMatchObject({
      inFlight: 1,
      waiting: 0,
    });
    expect(await alarm).toBe("settled");
    await until(async () => (await workCalls(holdTag))[0].aborted === true, "the call was aborted");

    const finals = await driveAll([next]);
    expect(finals[0].status).toBe("completed");
    expect((await status(holder)).status).toBe("cancelled");
    expect((await destinationState("cancel.upstream.test")).inFlight).toBe(0);
  });

  it("a run that stops (fail-fast) gives back its places in the queue at once", async () => {
    const { holder, alarm } = await holdSlot("stop", unique("stop-hold"));
    const runId = await started({
      config: { failFast: true },
      steps: [
        httpStep("queued", work("stop", unique("stop"), 1)),
        httpStep("boom", script(unique("boom"), "?plan=400"), { dependsOn: [] }),
      ],
    });
    await fireAlarm(runId);
    const s = await status(runId);
    expect(s.status).toBe("failed");
    expect(byId(s).queued).toMatchObject({ status: "cancelled", attempts: 0 });
    await until(
      async () => (await destinationState("stop.upstream.test")).waiting === 0,
      "the place is given back",
    );
    await post(`/v1/runs/${holder}/cancel`);
    expect(await alarm).toBe("settled");
    expect(await destinationState("stop.upstream.test")).toMatchObject({ inFlight: 0, waiting: 0 });
  });

  it("a bounded run paused while its call waits gives the grant back, and asks again as soon as it is resumed", async () => {
    const { holder, alarm } = await holdSlot("bounded", unique("bounded-hold"));
    const tag = unique("bounded");
    const runId = await started({
      config: { mode: { type: "bounded", iterations: 1 } },
      steps: [httpStep("b", work("bounded", tag, 1))],
    });
    await fireAlarm(runId); // its one iteration: the call queues, and the run pauses
    let s = await status(runId);
    expect(s.status).toBe("paused");
    expect(byId(s).b).toMatchObject({ status: "waiting", waitingFor: "quota", attempts: 0 });

    await post(`/v1/runs/${holder}/cancel`); // the slot goes to the paused run, which gives it back
    expect(await alarm).toBe("settled");
    await until(
      async () => (await destinationState("bounded.upstream.test")).inFlight === 0,
      "the paused run gave the slot back",
    );
    expect(await workCalls(tag)).toHaveLength(0);

    expect((await post(`/v1/runs/${runId}/resume`)).res.status).toBe(200);
    await fireAlarm(runId); // at once: the run's clock has not moved
    s = await status(runId);
    expect(s.status).toBe("completed");
    expect(byId(s).b).toMatchObject({ status: "succeeded", attempts: 1 });
    expect(await workCalls(tag)).toHaveLength(1);
  });

  it("the slot of a run that crashed comes back when its lease expires, within 30 s", async () => {
    const { holder, alarm } = await holdSlot("crash", unique("crash-hold"));
    const tag = unique("crash");
    const next = await started({ steps: [httpStep("next", work("crash", tag, 10))] });
    await fireAlarm(next);
    const slots = destinationStub("crash.upstream.test");
    const [lease] = await slots.leaseRows();
    expect(lease!.runId).toBe(holder);

    await abortObject(holder); // nobody renews the lease any more
    expect(await alarm).toBe("rejected");
    expect(await slots.alarmAt()).toBeLessThanOrEqual(lease!.expiresAt);
    await advanceDestinationClock("crash.upstream.test", LEASE_TTL_MS - 1_000);
    await fireDestinationAlarm("crash.upstream.test");
    expect((await slots.leaseRows()).map((l) => l.runId)).toEqual([holder]);
    await advanceDestinationClock("crash.upstream.test", 1_000);
    await fireDestinationAlarm("crash.upstream.test");
    expect((await slots.leaseRows()).map((l) => l.runId)).toEqual([next]);
    expect(LEASE_TTL_MS).toBeLessThanOrEqual(30_000);

    const finals = await driveAll([next]);
    expect(finals[0].status).toBe("completed");
  });

  it("a renewed lease outlives its first expiry; one no longer renewed expires", async () => {
    const key = `${unique("renew")}.upstream.test`;
    const slots = destinationStub(key);
    expect(await slots.acquire(key, "run_x", "s.0.1")).toEqual({ granted: true });
    await advanceDestinationClock(key, LEASE_TTL_MS - 5_000);
    expect(await slots.renew(key, "run_x", ["s.0.1", "s.9.1"])).toBe(1);
    await advanceDestinationClock(key, 10_000);
    await fireDestinationAlarm(key);
    expect(await slots.leaseRows()).toHaveLength(1);
    await advanceDestinationClock(key, LEASE_TTL_MS);
    await fireDestinationAlarm(key);
    expect(await slots.leaseRows()).toHaveLength(0);
  });
});

describe("ratePerSecond and burst", () => {
  it("burst calls go at once, then one per token: the others wait for quota until the destination's clock allows", async () => {
    // rate.upstream.test: 0.05 per second (a token every 20 s of its clock), burst 2.
    const key = "rate.upstream.test";
    const tag = unique("rate");
    const runId = await started({
      steps: [0, 1, 2, 3].map((n) => httpStep(`r${n}`, work("rate", tag, 1))),
    });
    await fireAlarm(runId);
    expect(await workCalls(tag)).toHaveLength(2);
    const waiting = (await status(runId)).steps.filter((s: any) => s.waitingFor === "quota");
    expect(waiting).toHaveLength(2);
    for (const s of waiting) expect(s.attempts).toBe(0);

    for (const calls of [3, 4]) {
      await fireDestinationAlarm(key); // early: no token yet
      await fireAlarm(runId);
      expect(await workCalls(tag)).toHaveLength(calls - 1);
      await advanceDestinationClock(key, 20_000);
      await fireDestinationAlarm(key); // a token: the next call is granted, and its run woken
      await until(async () => {
        await fireAlarm(runId);
        return (await workCalls(tag)).length === calls;
      }, `call ${calls} arrived`);
    }
    const done = await drive(runId);
    expect(done.status).toBe("completed");
    for (const s of done.steps) expect(s.attempts).toBe(1);
  });
});
