/// <reference types="vite/client" />
/**
 * Webhooks (SPEC 5.7): a run reaching a final status or `paused` POSTs an event to
 * `webhook.url`, signed with the plan's secret or else the Worker's WEBHOOK_SECRET; failures
 * are retried by alarm with backoff up to WEBHOOK_MAX_ATTEMPTS, and every attempt shows in
 * the run's status. Alarms are fired by the test, and the next delivery is made due by moving
 * the run's clock to the alarm.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../src/api/app";
import { verifyEdgestepSignature } from "../examples/verify-webhook";
import { api, events, started, status } from "./helpers";
import { DAY_MS } from "../src/engine/retention";
import { advanceToAlarm, alarmAt, drive, fireAlarm, fireAlarmOnly } from "./helpers";
import { unique, upstreamCalls, upstreamUrl } from "./helpers";

const SECRET = "s3cret";
/** The test Worker's WEBHOOK_SECRET (vitest.config.ts): signs the webhooks of plans without a secret. */
const WORKER_SECRET = env.WEBHOOK_SECRET!;
const MAX_ATTEMPTS = 6; // WEBHOOK_MAX_ATTEMPTS is not set in the test Worker: the default

function plan(
  hookUrl: string,
  extra: Record<string, unknown> = {},
  secret: string | null = SECRET,
) {
  return {
    name: unique("hook"),
    webhook: { url: hookUrl, ...(secret !== null && { secret }) },
    steps: [
      { id: "a", tool: "pass", params: { value: 1 } },
      { id: "b", tool: "pass", params: { value: "${steps.a.data}" } },
    ],
    ...extra,
  };
}

/** Fires the run's alarms until it is `until`, without waiting for webhook deliveries. */
async function driveOnly(runId: string, until: string): Promise<any> {
  for (let i = 0; i < 20; i++) {
    const s = await status(runId);
    if (s.status === until) return s;
    await fireAlarmOnly(runId);
  }
  return status(runId);
}

function receiver(statuses: string): { path: string; url: string } {
  const path = `/script/${unique("hook")}`;
  return { path, url: `${upstreamUrl}${path}?plan=${statuses}` };
}

/**
 * Makes the pending delivery due (the clock moves to the alarm) and fires the alarm, until no
 * delivery is pending or `max` alarms ran. (A finished run's alarm then points at the end of
 * its retention, SPEC 8.3: moving the clock there would delete the run.)
 */
async function deliverAll(runId: string, max = 20): Promise<number> {
  let fired = 0;
  for (; fired < max; fired++) {
    if ((await status(runId)).webhook?.state !== "pending") break;
    await advanceToAlarm(runId);
    if (!(await fireAlarm(runId))) break;
  }
  return fired;
}

describe("webhook delivery", () => {
  it("does not follow a redirect: the attempt fails and the redirect's target is never called", async () => {
    const target = receiver("200");
    const hook = `${upstreamUrl}/redirect?to=${encodeURIComponent(target.url)}`;
    const runId = await started(plan(hook, { webhook: { url: hook, secret: SECRET } }));
    expect(await fireAlarm(runId)).toBe(true);
    const s = await status(runId);
    expect(s.webhook.deliveries).toEqual([
      expect.objectContaining({
        attempt: 1,
        status: 307,
        error: expect.stringMatching(/redirect/),
      }),
    ]);
    expect(await upstreamCalls(target.path)).toEqual([]);
  });

  it("a receiver answering 500, 500, then 200 gets the event on the third attempt, signed verifiably", async () => {
    const hook = receiver("500,500,200");
    const runId = await started(plan(hook.url));
    expect((await drive(runId)).status).toBe("completed");
    await deliverAll(runId);
    const s = await status(runId);
    expect(s.webhook.state).toBe("delivered");
    expect(s.webhook.deliveries.map((d: any) => [d.attempt, d.status])).toEqual([
      [1, 500],
      [2, 500],
      [3, 200],
    ]);
    const calls = await upstreamCalls(hook.path);
    expect(calls).toHaveLength(3);
    const third = calls[2];
    expect(JSON.parse(third.body)).toMatchObject({
      type: "run.completed",
      runId,
      status: "completed",
    });
    expect(
      await verifyEdgestepSignature(SECRET, third.headers["x-edgestep-signature"], third.body),
    ).toBe(true);
  });

  it("makes the first attempt in the alarm that finishes the run", async () => {
    const hook = receiver("500,500,200");
    const runId = await started(plan(hook.url));
    expect(await fireAlarm(runId)).toBe(true);
    const s = await status(runId);
    expect(s.status).toBe("completed");
    const calls = await upstreamCalls(hook.path);
    expect(calls).toHaveLength(1);
    expect(calls[0].method).toBe("POST");
    expect(s.webhook.state).toBe("pending");
    expect(s.webhook.deliveries).toEqual([expect.objectContaining({ attempt: 1, status: 500 })]);
  });

  it("retries a failing receiver by alarm until it accepts, with one eventId throughout", async () => {
    const hook = receiver("500,500,200");
    const runId = await started(plan(hook.url));
    expect((await drive(runId)).status).toBe("completed");
    await deliverAll(runId);
    const calls = await upstreamCalls(hook.path);
    expect(calls).toHaveLength(3);
    expect(calls.every((c) => c.method === "POST")).toBe(true);
    const ids = new Set(calls.map((c) => c.headers["x-edgestep-event-id"]));
    expect(ids.size).toBe(1);
    expect([...ids][0]).toMatch(/\S/);
    expect(new Set(calls.map((c) => c.body)).size).toBe(1);
  });

  it("posts { type, eventId, runId, status, summary, startedAt, endedAt }", async () => {
    const hook = receiver("200");
    const runId = await started(plan(hook.url));
    const s = await drive(runId);
    expect(s.status).toBe("completed");
    const [call] = await upstreamCalls(hook.path);
    expect(call.headers["content-type"]).toMatch(/^application\/json/);
    const body = JSON.parse(call.body);
    expect(Object.keys(body).sort()).toEqual([
      "endedAt",
      "eventId",
      "runId",
      "startedAt",
      "status",
      "summary",
      "type",
    ]);
    expect(body).toEqual({
      type: "run.completed",
      eventId: call.headers["x-edgestep-event-id"],
      runId,
      status: "completed",
      summary: s.summary,
      startedAt: s.startedAt,
      endedAt: s.endedAt,
    });
    expect(body.summary.successfulSteps).toBe(2);
  });

  it("signs the raw body: examples/verify-webhook.ts accepts it, and rejects a tampered body or a wrong secret", async () => {
    const hook = receiver("200");
    const runId = await started(plan(hook.url));
    await drive(runId);
    const [call] = await upstreamCalls(hook.path);
    const signature = call.headers["x-edgestep-signature"];
    expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(await verifyEdgestepSignature(SECRET, signature, call.body)).toBe(true);
    expect(
      await verifyEdgestepSignature(SECRET, signature, call.body.replace("completed", "failed")),
    ).toBe(false);
    expect(await verifyEdgestepSignature(SECRET, signature, `${call.body} `)).toBe(false);
    expect(await verifyEdgestepSignature("wrong-secret", signature, call.body)).toBe(false);
    // One signature, one spelling: a trailing digit or a non-hex pair is refused, not trimmed or read as 0.
    const v1 = signature.split("v1=")[1];
    for (const altered of [`${signature}f`, signature.replace(v1, `${v1.slice(0, 62)}0g`)])
      expect(await verifyEdgestepSignature(SECRET, altered, call.body)).toBe(false);
  });

  it("signs every retry, each verifiable", async () => {
    const hook = receiver("500,200");
    const runId = await started(plan(hook.url));
    await drive(runId);
    await deliverAll(runId);
    const calls = await upstreamCalls(hook.path);
    expect(calls).toHaveLength(2);
    for (const call of calls) {
      expect(
        await verifyEdgestepSignature(SECRET, call.headers["x-edgestep-signature"], call.body),
      ).toBe(true);
    }
  });

  it("signs with the Worker's WEBHOOK_SECRET when the plan's webhook has no secret", async () => {
    const hook = receiver("200");
    const runId = await started(plan(hook.url, {}, null));
    await drive(runId);
    const [call] = await upstreamCalls(hook.path);
    const signature = call.headers["x-edgestep-signature"];
    expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(await verifyEdgestepSignature(WORKER_SECRET, signature, call.body)).toBe(true);
  });

  it("signs with the plan's secret, not WEBHOOK_SECRET, when the plan has one", async () => {
    const hook = receiver("200");
    const runId = await started(plan(hook.url));
    await drive(runId);
    const [call] = await upstreamCalls(hook.path);
    const signature = call.headers["x-edgestep-signature"];
    expect(await verifyEdgestepSignature(SECRET, signature, call.body)).toBe(true);
    expect(await verifyEdgestepSignature(WORKER_SECRET, signature, call.body)).toBe(false);
  });

  it("sends no signature when neither the plan nor the Worker has a secret", async () => {
    // The test Worker has a WEBHOOK_SECRET, so the run goes to a Worker without one: the app
    // given a RUNS namespace whose objects see no WEBHOOK_SECRET (vitest.config.ts).
    const hook = receiver("200");
    const unsigned = { ...env, WEBHOOK_SECRET: undefined, RUNS: env.RUNS_WITHOUT_WEBHOOK_SECRET };
    const res = await createApp().fetch(
      new Request("http://edgestep.test/v1/runs", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(plan(hook.url, {}, null)),
      }),
      unsigned,
    );
    expect(res.status).toBe(202);
    const { runId } = (await res.json()) as { runId: string };
    const runs = env.RUNS_WITHOUT_WEBHOOK_SECRET;
    expect(await runs.get(runs.idFromName(runId)).fireAlarm()).toBe(true);
    const [call] = await upstreamCalls(hook.path);
    expect(JSON.parse(call.body)).toMatchObject({ type: "run.completed", runId });
    expect(call.headers["x-edgestep-event-id"]).toBeTruthy();
    expect(call.headers["x-edgestep-signature"]).toBeUndefined();
  });

  it("shows every attempt in the run's status: webhook { url, state: delivered, deliveries }", async () => {
    const hook = receiver("500,500,200");
    const runId = await started(plan(hook.url));
    await drive(runId);
    await deliverAll(runId);
    const s = await status(runId);
    expect(s.webhook.url).toBe(hook.url);
    expect(s.webhook.state).toBe("delivered");
    expect(s.webhook.deliveries.map((d: any) => [d.attempt, d.status])).toEqual([
      [1, 500],
      [2, 500],
      [3, 200],
    ]);
    for (const d of s.webhook.deliveries) expect(new Date(d.at).toISOString()).toBe(d.at);
  });

  it("records a webhook_delivered event once delivered", async () => {
    const hook = receiver("500,200");
    const runId = await started(plan(hook.url));
    await drive(runId);
    await deliverAll(runId);
    const delivered = (await events(runId)).filter((e) => e.type === "webhook_delivered");
    expect(delivered).toHaveLength(1);
    expect(delivered[0].data).toMatchObject({ type: "run.completed", attempt: 2 });
  });

  it("schedules retries with backoff 1 s, 2 s, 4 s", async () => {
    const hook = receiver("500");
    const runId = await started(plan(hook.url));
    await drive(runId);
    const gaps: number[] = [];
    for (let k = 1; k <= 3; k++) {
      const attempts = (await status(runId)).webhook.deliveries.map((d: any) => Date.parse(d.at));
      const lastAt = Math.max(...attempts);
      const alarm = await alarmAt(runId);
      expect(alarm).not.toBeNull();
      gaps.push(alarm! - lastAt);
      await deliverAll(runId, 1);
    }
    expect(gaps).toEqual([1000, 2000, 4000]);
  });

  it("gives up after WEBHOOK_MAX_ATTEMPTS attempts: state failed and a webhook_failed event", async () => {
    const hook = receiver("500");
    const runId = await started(plan(hook.url));
    await drive(runId);
    await deliverAll(runId);
    expect(await upstreamCalls(hook.path)).toHaveLength(MAX_ATTEMPTS);
    const s = await status(runId);
    expect(s.status).toBe("completed");
    expect(s.webhook.state).toBe("failed");
    expect(s.webhook.deliveries.map((d: any) => d.attempt)).toEqual([1, 2, 3, 4, 5, 6]);
    const failed = (await events(runId)).filter((e) => e.type === "webhook_failed");
    expect(failed).toHaveLength(1);
    expect(failed[0].data).toMatchObject({ type: "run.completed", attempt: MAX_ATTEMPTS });
  });

  it("leaves no alarm for it once it has given up (only the run's retention's)", async () => {
    const hook = receiver("500");
    const runId = await started(plan(hook.url));
    const { endedAt } = await drive(runId);
    await deliverAll(runId);
    expect((await status(runId)).webhook.state).toBe("failed");
    expect(await alarmAt(runId)).toBe(Date.parse(endedAt) + 30 * DAY_MS);
  });

  it("records a network failure as an attempt with an error", async () => {
    // port 9 (discard) on loopback: nothing listens there, so the connection is refused
    const runId = await started(plan("http://127.0.0.1:9/hook"));
    await drive(runId);
    const s = await status(runId);
    expect(s.webhook.state).toBe("pending");
    expect(s.webhook.deliveries).toHaveLength(1);
    expect(s.webhook.deliveries[0].status).toBeUndefined();
    expect(s.webhook.deliveries[0].error).toMatch(/\S/);
  });
});

describe("a receiver that never answers", () => {
  it("never delays the run: the next step starts while the delivery is still in flight", async () => {
    const hook = `${upstreamUrl}/hang?k=${unique("hang")}`;
    const runId = await started({
      name: unique("hang"),
      webhook: { url: hook },
      steps: [
        { id: "gate", tool: "approval" },
        { id: "after", tool: "pass", params: { value: 1 }, dependsOn: ["gate"] },
      ],
    });
    // The run.waiting delivery is sent beside the run; its receiver holds it (10 s timeout).
    expect((await driveOnly(runId, "waiting")).status).toBe("waiting");
    await api(`/v1/runs/${runId}/approve`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ approved: true }),
    });
    const s = await driveOnly(runId, "completed");
    expect(s.status).toBe("completed");
    // No delivery attempt has come back yet: the run finished while the receiver held it.
    expect(s.webhook.deliveries).toEqual([]);
    expect(s.webhook.state).toBe("pending");
  });
});

describe("webhook events", () => {
  it("a paused (bounded) run sends run.paused", async () => {
    const hook = receiver("200");
    const runId = await started(
      plan(hook.url, { config: { mode: { type: "bounded", iterations: 1 } } }),
    );
    expect((await drive(runId)).status).toBe("paused");
    const calls = await upstreamCalls(hook.path);
    expect(calls).toHaveLength(1);
    const body = JSON.parse(calls[0].body);
    expect(body).toMatchObject({ type: "run.paused", runId, status: "paused", endedAt: null });
    expect(body.summary.successfulSteps).toBe(1);
  });

  it("a paused run that is resumed and completes sends run.completed as a new event", async () => {
    const hook = receiver("200");
    const runId = await started(
      plan(hook.url, { config: { mode: { type: "bounded", iterations: 1 } } }),
    );
    await drive(runId);
    const resumed = await api(`/v1/runs/${runId}/resume`, { method: "POST" });
    expect(resumed.status).toBe(200);
    expect((await drive(runId)).status).toBe("completed");
    const calls = await upstreamCalls(hook.path);
    expect(calls.map((c) => JSON.parse(c.body).type)).toEqual(["run.paused", "run.completed"]);
    expect(new Set(calls.map((c) => c.headers["x-edgestep-event-id"])).size).toBe(2);
    expect((await status(runId)).webhook.state).toBe("delivered");
  });

  it("the state is the latest event's, also when an earlier event's retry comes after it", async () => {
    const hook = receiver("500,200,500");
    const runId = await started(
      plan(hook.url, { config: { mode: { type: "bounded", iterations: 1 } } }),
    );
    await drive(runId); // run.paused: its first attempt answered 500
    expect((await api(`/v1/runs/${runId}/resume`, { method: "POST" })).status).toBe(200);
    expect((await drive(runId)).status).toBe("completed"); // run.completed: delivered
    await advanceToAlarm(runId);
    expect(await fireAlarm(runId)).toBe(true); // run.paused's second attempt: 500 again
    const calls = await upstreamCalls(hook.path);
    expect(calls.map((c) => JSON.parse(c.body).type)).toEqual([
      "run.paused",
      "run.completed",
      "run.paused",
    ]);
    expect((await status(runId)).webhook.state).toBe("delivered");
  });

  it("a failed run sends run.failed with its summary", async () => {
    const hook = receiver("200");
    const runId = await started({
      name: unique("hook"),
      webhook: { url: hook.url, secret: SECRET },
      steps: [
        // 400 is a client error: not retried
        {
          id: "a",
          tool: "http",
          params: { url: `${upstreamUrl}/script/${unique("hook-step")}?plan=400` },
        },
        { id: "b", tool: "pass", params: { value: "${steps.a.data}" } },
      ],
    });
    const s = await drive(runId);
    expect(s.status).toBe("failed");
    const [call] = await upstreamCalls(hook.path);
    expect(JSON.parse(call.body)).toEqual({
      type: "run.failed",
      eventId: call.headers["x-edgestep-event-id"],
      runId,
      status: "failed",
      summary: {
        totalSteps: 2,
        successfulSteps: 0,
        failedSteps: 1,
        skippedSteps: 1,
        cancelledSteps: 0,
      },
      startedAt: s.startedAt,
      endedAt: s.endedAt,
    });
  });

  it("a partial run sends run.partial with its summary", async () => {
    const hook = receiver("200");
    const runId = await started({
      name: unique("hook"),
      webhook: { url: hook.url, secret: SECRET },
      steps: [
        { id: "a", tool: "pass", params: { value: 1 } },
        {
          id: "b",
          tool: "http",
          params: { url: `${upstreamUrl}/script/${unique("hook-step")}?plan=400` },
        },
      ],
    });
    const s = await drive(runId);
    expect(s.status).toBe("partial");
    const [call] = await upstreamCalls(hook.path);
    expect(JSON.parse(call.body)).toEqual({
      type: "run.partial",
      eventId: call.headers["x-edgestep-event-id"],
      runId,
      status: "partial",
      summary: {
        totalSteps: 2,
        successfulSteps: 1,
        failedSteps: 1,
        skippedSteps: 0,
        cancelledSteps: 0,
      },
      startedAt: s.startedAt,
      endedAt: s.endedAt,
    });
  });

  it("a cancelled run sends run.cancelled", async () => {
    const hook = receiver("200");
    const runId = await started({
      name: unique("hook"),
      webhook: { url: hook.url, secret: SECRET },
      steps: [{ id: "w", tool: "wait", params: { ms: 600_000 } }],
    });
    await fireAlarm(runId);
    expect((await api(`/v1/runs/${runId}/cancel`, { method: "POST" })).status).toBe(200);
    await deliverAll(runId);
    const calls = await upstreamCalls(hook.path);
    expect(calls).toHaveLength(1);
    expect(JSON.parse(calls[0].body)).toMatchObject({
      type: "run.cancelled",
      runId,
      status: "cancelled",
    });
  });
});

describe("README", () => {
  it("contains examples/verify-webhook.ts verbatim", async () => {
    const { default: snippet } = await import("../examples/verify-webhook.ts?raw");
    const { default: readme } = await import("../README.md?raw");
    expect(snippet).toContain("verifyEdgestepSignature");
    expect(readme).toContain(snippet.trim());
  });
});
