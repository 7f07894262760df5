/**
 * Durability (SPEC 5.5): the Durable Object is aborted in the middle of an attempt; the
 * stored checkpoint carries the run on. Steps that succeeded are never called again,
 * the interrupted attempt is failed as `interrupted` and retried with the same
 * Idempotency-Key, and a run with work left always has an alarm set.
 */
import { describe, expect, it } from "vitest";
import { DAY_MS } from "../src/engine/retention";
import { api, byId, events, started, status, stepDetail, submit } from "./helpers";
import { abortObject, advanceToAlarm, alarmAt, alarmInBackground, drive } from "./helpers";
import { fireAlarm, runAlarm, runStub, until } from "./helpers";
import { gate, script, unique, upstreamCalls } from "./helpers";

/** Step statuses by id, from the API (it answers while an iteration is in flight). */
async function stepStatuses(runId: string): Promise<Record<string, string>> {
  return Object.fromEntries(
    Object.entries(byId(await status(runId))).map(([id, s]) => [id, s.status]),
  );
}

/** Waits (bounded) until `stepId` is `running`, i.e. its attempt is in flight. */
async function untilRunning(runId: string, stepId: string): Promise<void> {
  await until(async () => (await stepStatuses(runId))[stepId] === "running", `${stepId} runs`);
}

describe("a restart in the middle of an attempt (SPEC 5.5)", () => {
  it("resumes the run: succeeded steps are not called again, the interrupted one is retried with the same key", async () => {
    const key = unique("dur");
    const held = gate("dur-b"); // b's calls answer once the test has restarted the object
    const runId = await started({
      steps: [
        { id: "a", tool: "http", params: { url: script(`${key}-a`) } },
        {
          id: "b",
          tool: "http",
          params: { url: held.url },
          dependsOn: ["a"],
          retry: { baseDelayMs: 0 },
        },
        { id: "c", tool: "http", params: { url: script(`${key}-c`) }, dependsOn: ["b"] },
      ],
    });

    // One iteration, not awaited: it runs `a`, then starts `b` and waits on it.
    const inFlight = alarmInBackground(runId);
    await untilRunning(runId, "b");
    expect((await stepStatuses(runId)).a).toBe("succeeded");
    await abortObject(runId);
    await inFlight;
    await held.open();

    // The attempt was recorded as started before the call; the run still has an alarm.
    expect((await stepStatuses(runId)).b).toBe("running");
    expect(await alarmAt(runId)).not.toBeNull();

    const final = await drive(runId);
    expect(final.status).toBe("completed");

    const b = await stepDetail(runId, "b");
    expect(b.status).toBe("succeeded");
    expect(b.attempts).toBe(2);
    expect(b.attemptLog).toHaveLength(2);
    expect(b.attemptLog[0]).toMatchObject({ attempt: 1, category: "interrupted" });
    expect(typeof b.attemptLog[0].endedAt).toBe("string");
    expect(b.attemptLog[1].attempt).toBe(2);
    expect(b.attemptLog[1].category).toBeUndefined();
    expect(b.metadata).toMatchObject({ attempts: 2, retries: 1 });

    const a = await stepDetail(runId, "a");
    expect(a.attempts).toBe(1);
    expect(a.attemptLog).toHaveLength(1);

    const aCalls = await upstreamCalls(`/script/${key}-a`);
    expect(aCalls).toHaveLength(1);
    // Whether the aborted attempt's request reached the upstream is a race: one or two calls, one key.
    const bCalls = await upstreamCalls(held.path);
    expect(bCalls.length).toBeGreaterThanOrEqual(1);
    expect(bCalls.length).toBeLessThanOrEqual(2);
    expect(new Set(bCalls.map((c) => c.idempotencyKey))).toEqual(new Set([`${runId}:b`]));
    expect(bCalls[bCalls.length - 1]!.attempt).toBe(2);
    expect(await upstreamCalls(`/script/${key}-c`)).toHaveLength(1);
  });

  it("the iteration a restart cut off goes on uncounted: a crash costs the run no iteration", async () => {
    const held = gate("dur-iter");
    const runId = await started({
      config: { mode: { type: "continuous", maxIterations: 1 } },
      steps: [
        {
          id: "a",
          tool: "http",
          params: { url: held.url },
          retry: { baseDelayMs: 0, jitter: "none" },
        },
      ],
    });
    const inFlight = alarmInBackground(runId);
    await untilRunning(runId, "a");
    await abortObject(runId);
    await inFlight;
    await held.open();

    const final = await drive(runId);
    expect(final).toMatchObject({ status: "completed", iterations: 1 });
    const types = (await events(runId)).map((e: any) => e.type);
    expect(types.filter((t: string) => t === "iteration_started")).toHaveLength(1);
    expect(types.filter((t: string) => t === "iteration_finished")).toHaveLength(1);
  });

  it("an interrupted attempt counts against maxRetries", async () => {
    const held = gate("dur-max");
    const runId = await started({
      steps: [
        {
          id: "b",
          tool: "http",
          params: { url: held.url },
          retry: { maxRetries: 0 },
        },
      ],
    });
    const inFlight = alarmInBackground(runId);
    await untilRunning(runId, "b");
    await abortObject(runId);
    await inFlight;
    await held.open();

    const final = await drive(runId);
    expect(final.status).toBe("failed");
    const b = await stepDetail(runId, "b");
    expect(b.status).toBe("failed");
    expect(b.attempts).toBe(1);
    expect(b.error).toMatchObject({ category: "interrupted" });
    expect(b.attemptLog).toEqual([
      expect.objectContaining({ attempt: 1, category: "interrupted" }),
    ]);
  });
});

describe("alarm() is idempotent (SPEC 5.5)", () => {
  it("firing the alarm again after completion runs nothing and changes nothing", async () => {
    const key = unique("idem");
    const runId = await started({
      steps: [
        { id: "a", tool: "http", params: { url: script(`${key}-a`) } },
        { id: "b", tool: "http", params: { url: script(`${key}-b`) }, dependsOn: ["a"] },
      ],
    });
    const final = await drive(runId);
    expect(final.status).toBe("completed");
    const before = await status(runId);

    await runAlarm(runId);
    await runAlarm(runId);

    expect(await upstreamCalls(`/script/${key}-a`)).toHaveLength(1);
    expect(await upstreamCalls(`/script/${key}-b`)).toHaveLength(1);
    const after = await status(runId);
    expect(after.status).toBe("completed");
    expect(after.iterations).toBe(before.iterations);
    expect(after.steps).toEqual(before.steps);
  });

  it("firing the alarm twice while a retry is pending does not re-run a succeeded step", async () => {
    const key = unique("idem-mid");
    const runId = await started({
      steps: [
        { id: "a", tool: "http", params: { url: script(`${key}-a`) } },
        {
          id: "b",
          tool: "http",
          params: { url: script(`${key}-b`, "?plan=503,200&retryAfter=60") },
        },
      ],
    });
    await fireAlarm(runId);
    await runAlarm(runId);
    await runAlarm(runId);

    expect(await upstreamCalls(`/script/${key}-a`)).toHaveLength(1);
    expect(await upstreamCalls(`/script/${key}-b`)).toHaveLength(1);
    const s = await status(runId);
    expect(s.steps.map((st: any) => st.status)).toEqual(["succeeded", "retrying"]);
    expect(s.steps[0].attempts).toBe(1);
  });
});

describe("a run with work left always has an alarm (SPEC 5.5)", () => {
  it("creating a run sets an alarm", async () => {
    const runId = await started({ steps: [{ id: "a", tool: "pass", params: { value: 1 } }] });
    const alarm = await alarmAt(runId);
    expect(alarm).not.toBeNull();
    expect(alarm!).toBeLessThanOrEqual(Date.now() + 1000);
    expect((await status(runId)).status).toBe("pending");
  });

  it("a scheduled retry keeps an alarm at its due time; a finished run only its retention's", async () => {
    const key = unique("alarm-retry");
    const runId = await started({
      steps: [
        {
          id: "s",
          tool: "http",
          params: { url: script(key, "?plan=429,200&retryAfter=60") },
          retry: { baseDelayMs: 0 },
        },
      ],
    });
    await fireAlarm(runId);
    const s = await stepDetail(runId, "s");
    expect(s.status).toBe("retrying");
    expect(await alarmAt(runId)).toBe(Date.parse(s.nextAttemptAt));

    await advanceToAlarm(runId);
    const done = await drive(runId);
    expect(done.status).toBe("completed");
    // what is left is the end of its retention (SPEC 8.3)
    expect(await alarmAt(runId)).toBe(Date.parse(done.endedAt) + 30 * DAY_MS);
  });

  it("while an attempt is in flight the alarm is set (a lease), so a crash resumes the run", async () => {
    const held = gate("alarm-lease");
    const runId = await started({
      steps: [{ id: "b", tool: "http", params: { url: held.url } }],
    });
    const inFlight = fireAlarm(runId);
    await untilRunning(runId, "b");
    const lease = await alarmAt(runId);
    expect(lease).not.toBeNull();
    expect(lease!).toBeGreaterThan(Date.now());
    await held.open();
    await inFlight;
    const done = await status(runId);
    expect(done.status).toBe("completed");
    expect(await alarmAt(runId)).toBe(Date.parse(done.endedAt) + 30 * DAY_MS);
  });
});

describe("the alarm while attempts are in flight", () => {
  it("points at a retry due before the lease ends, so after a crash the retry runs on time", async () => {
    const key = unique("lease-retry");
    const held = gate("lease-retry-a"); // a stays in flight until the object has restarted
    const runId = await started({
      steps: [
        {
          id: "a",
          tool: "http",
          params: { url: held.url },
          // Its interrupted attempt's retry is far off: with the default full jitter it could
          // fall due while b's retry is in flight and run in the same iteration.
          retry: { baseDelayMs: 60_000, jitter: "none" },
        },
        {
          id: "b",
          tool: "http",
          params: { url: script(`${key}-b`, "?plan=503,200") },
          retry: { maxRetries: 1, baseDelayMs: 3000, jitter: "none" },
        },
      ],
    });
    const inFlight = alarmInBackground(runId);
    await until(async () => (await stepStatuses(runId)).b === "retrying", "b waits for its retry");
    const retryAt = Date.parse(byId(await status(runId)).b.nextAttemptAt);
    expect(await alarmAt(runId)).toBe(retryAt); // not the lease, 10 s ahead

    await abortObject(runId); // nobody holds b's retry in memory any more
    expect(await inFlight).toBe("rejected");
    await held.open();
    expect(await advanceToAlarm(runId)).toBe(retryAt);
    await fireAlarm(runId);
    const s = await status(runId);
    expect(byId(s).b).toMatchObject({ status: "succeeded", attempts: 2 });
    expect(byId(s).a).toMatchObject({ status: "retrying", attempts: 1 }); // interrupted
    await advanceToAlarm(runId);
    expect((await drive(runId)).status).toBe("completed");
  });
});

describe("completing a step writes only that step's rows (SPEC 5.5)", () => {
  /** Updates of each step row while `n` steps run (counted by a trigger installed before any ran). */
  async function stepRowUpdates(n: number, chain: boolean): Promise<number[]> {
    const { res, body } = await submit({
      config: { requireApprovalForRisk: "high" }, // holds the run until the trigger is in place
      steps: Array.from({ length: n }, (_, i) => ({
        id: `s${i}`,
        tool: "pass",
        params: { value: i },
        ...(i === 0 && { risk: "high" }),
        ...(chain && i > 0 && { dependsOn: [`s${i - 1}`] }),
      })),
    });
    expect(res.status).toBe(202);
    const runId = body.runId as string;
    await runStub(runId).countStepRowUpdates();
    expect(
      (await api(`/v1/runs/${runId}/approve`, { method: "POST", body: '{"approved":true}' }))
        .status,
    ).toBe(200);
    expect((await drive(runId)).status).toBe("completed");
    return runStub(runId).stepRowUpdates();
  }

  it("each step row is updated the same few times, however many steps the plan has", async () => {
    for (const chain of [true, false]) {
      const small = await stepRowUpdates(3, chain);
      const large = await stepRowUpdates(60, chain);
      const perStep = small[0]!;
      expect(perStep).toBeGreaterThan(0);
      expect(perStep).toBeLessThanOrEqual(3);
      // no step row is touched when other steps complete
      expect(new Set([...small, ...large])).toEqual(new Set([perStep]));
    }
  });
});

describe("a plan larger than one stored value (Durable Object values hold at most 2 MB)", () => {
  it("is stored in parts and read back whole after a restart", async () => {
    const text = "é😀".repeat(150); // multi-byte characters and surrogate pairs across the part boundaries
    const steps = Array.from({ length: 1000 }, (_, i) => ({
      id: `s${i}`,
      tool: "pass",
      params: { value: `${i}:${text}` },
    }));
    const { res, body } = await submit({ steps });
    expect(res.status).toBe(202);
    const runId = body.runId as string;
    const parts = await runStub(runId).planParts();
    expect(parts).toBeGreaterThan(1);
    await abortObject(runId); // the next alarm reads the plan from storage, not from memory
    expect((await drive(runId)).status).toBe("completed");
    const results = (await (await api(`/v1/runs/${runId}/results`)).json()) as { data: unknown }[];
    expect(results.map((r) => r.data)).toEqual(steps.map((s) => s.params.value));
  });
});
