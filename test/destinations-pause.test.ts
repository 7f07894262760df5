/**
 * Shared backoff (SPEC 10): a 429, or a 503 with Retry-After, pauses its destination for every
 * run, listed or not: a call about to start waits for quota (no attempt, no retry) until the
 * time the destination named, instead of being sent into the same wall. Each test's
 * destination is a host of its own (`hostUrl`); the destinations' clocks move only when a test
 * says (TestDestinationObject).
 */
import { describe, expect, it } from "vitest";
import { destinationListSchema } from "../src/api/schemas";
import {
  advanceDestinationClock,
  advanceToAlarm,
  alarmAt,
  api,
  byId,
  destinationState,
  drive,
  eventTypes,
  events,
  fireAlarm,
  fireDestinationAlarm,
  hostUrl,
  runCalls,
  started,
  status,
  unique,
  until,
} from "./helpers";

/** A run whose one step calls `/script/<key>` on host `<label>.upstream.test`, answered as `plan` says. */
async function scripted(label: string, plan: string, retryAfter?: string) {
  const query = new URLSearchParams({ plan, ...(retryAfter !== undefined && { retryAfter }) });
  return started({
    steps: [
      {
        id: "hit",
        tool: "http",
        params: { url: hostUrl(label, `/script/${unique("k")}?${query}`) },
        retry: { baseDelayMs: 0, jitter: "none" },
      },
    ],
  });
}

/** A run whose one step calls `/work` on `<label>.upstream.test`, fired once: where it stands. */
async function nextCall(label: string) {
  const runId = await started({
    steps: [{ id: "call", tool: "http", params: { url: hostUrl(label, "/work?ms=1") } }],
  });
  await fireAlarm(runId);
  return { runId, step: byId(await status(runId)).call };
}

/** The listing's entry for `destination`, once the pause board has it. */
async function listed(destination: string) {
  let entry: any;
  await until(async () => {
    const res = await api("/v1/destinations");
    const list = destinationListSchema.parse(await res.json());
    entry = list.find((d) => d.destination === destination);
    return entry !== undefined;
  }, `${destination} is listed`);
  return entry;
}

describe("a 429 pauses its destination for every run", () => {
  it("another run's call waits for quota until the pause ends, spending no attempt and no retry", async () => {
    const label = unique("paused");
    const host = `${label}.upstream.test`;
    const a = await scripted(label, "429,200", "2");
    await fireAlarm(a);
    expect(byId(await status(a)).hit).toMatchObject({ status: "retrying", attempts: 1 });

    const { runId: b, step } = await nextCall(label);
    expect(step).toMatchObject({ status: "waiting", waitingFor: "quota", attempts: 0 });
    expect(await runCalls(b)).toEqual([]);
    const wait = (await events(b)).find((e) => e.type === "quota_wait");
    expect(wait).toMatchObject({ stepId: "call", data: { destination: host, reason: "paused" } });
    const pausedUntil = Date.parse(wait.data.pausedUntil);
    expect(pausedUntil).toBeGreaterThan(Date.now() + 1_000);
    expect(await destinationState(host)).toMatchObject({ waiting: 1, inFlight: 0 });
    expect(await listed(host)).toMatchObject({ limits: {}, waiting: 1, inFlight: 0 });

    // Early, nothing moves: the call still waits, and still has not been sent.
    await fireDestinationAlarm(host);
    await fireAlarm(b);
    expect(byId(await status(b)).call).toMatchObject({ waitingFor: "quota", attempts: 0 });

    // The pause ends: the destination grants the call, which wakes its run.
    await advanceDestinationClock(host, 2_000);
    await fireDestinationAlarm(host);
    await until(async () => (await alarmAt(b))! <= Date.now(), "the grant made the step due");
    const done = await drive(b);
    expect(done.status).toBe("completed");
    expect(byId(done).call).toMatchObject({ attempts: 1 });
    expect(await eventTypes(b)).not.toContain("step_retry_scheduled");
    expect(await runCalls(b)).toHaveLength(1);
    expect(await destinationState(host)).toMatchObject({ inFlight: 0, waiting: 0 });
  });

  it("the run that met the 429 retries at its Retry-After without waiting again", async () => {
    const label = unique("own");
    const a = await scripted(label, "429,200", "3");
    await fireAlarm(a);
    const retryAt = Date.parse(byId(await status(a)).hit.nextAttemptAt);
    expect(retryAt).toBeGreaterThanOrEqual(Date.now() + 2_000);
    await advanceToAlarm(a);
    const done = await drive(a);
    expect(done.status).toBe("completed");
    expect(byId(done).hit.attempts).toBe(2);
    expect(await eventTypes(a)).not.toContain("quota_wait");
  });

  it("a 429 without Retry-After pauses for a second", async () => {
    const label = unique("short");
    const a = await scripted(label, "429,200");
    await fireAlarm(a);
    const { step, runId: b } = await nextCall(label);
    expect(step).toMatchObject({ waitingFor: "quota" });
    const wait = (await events(b)).find((e) => e.type === "quota_wait");
    const left = Date.parse(wait.data.pausedUntil) - Date.parse(wait.at);
    expect(left).toBeGreaterThan(500);
    expect(left).toBeLessThanOrEqual(1_000);
  });
});

describe("a 503 pauses its destination only with Retry-After", () => {
  it("with Retry-After: the next call waits for quota", async () => {
    const label = unique("busy");
    const a = await scripted(label, "503,200", "5");
    await fireAlarm(a);
    expect((await nextCall(label)).step).toMatchObject({ status: "waiting", waitingFor: "quota" });
  });

  it("without: the next call goes at once", async () => {
    const label = unique("down");
    const a = await scripted(label, "503,200");
    await fireAlarm(a);
    // Retried at once (baseDelayMs 0), not held back by a pause.
    expect(byId(await status(a)).hit).toMatchObject({ status: "succeeded", attempts: 2 });
    expect(await eventTypes(a)).not.toContain("quota_wait");
    const { runId: b, step } = await nextCall(label);
    expect(step).toMatchObject({ status: "succeeded", attempts: 1 });
    expect(await runCalls(b)).toHaveLength(1);
  });
});

describe("a listed destination", () => {
  it("holds every call while paused, free slots or not, then grants them in the order they asked", async () => {
    const host = "paused.upstream.test"; // concurrency 5
    const a = await scripted("paused", "429,200", "1");
    await fireAlarm(a);
    const b = await nextCall("paused");
    const c = await nextCall("paused");
    for (const run of [b, c]) expect(run.step).toMatchObject({ waitingFor: "quota", attempts: 0 });
    const positions = await Promise.all(
      [b, c].map(async (r) => (await events(r.runId)).find((e) => e.type === "quota_wait").data),
    );
    expect(positions).toMatchObject([
      { reason: "paused", position: 1 },
      { reason: "paused", position: 2 },
    ]);
    await advanceDestinationClock(host, 1_000);
    await fireDestinationAlarm(host);
    for (const run of [b, c]) {
      await until(async () => (await alarmAt(run.runId))! <= Date.now(), "granted");
      expect((await drive(run.runId)).status).toBe("completed");
    }
  });
});
