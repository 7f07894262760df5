/**
 * Errors and retries (SPEC 5.2), with `http` steps against the loopback upstream's
 * programmable `/script/<key>?plan=...` endpoint. Backoff waits are alarms: tests fire
 * them early (nothing may start) and make them due by moving the run's clock to the alarm,
 * never by sleeping.
 */
import { describe, expect, it } from "vitest";
import { results, started, status, stepDetail } from "./helpers";
import { advanceToAlarm, alarmAt, drive, fireAlarm } from "./helpers";
import { script, unique, upstreamCalls, upstreamUrl } from "./helpers";

/** Under the key's own host: a 429 pauses that host for every run (SPEC 10), not the shared upstream. */
function scriptUrl(key: string, plan: string, extra: Record<string, string> = {}): string {
  return script(key, `?${new URLSearchParams({ plan, ...extra })}`);
}

const ms = (iso: string) => Date.parse(iso);

/** Starts a run of one `http` step `s` calling `url` under the retry policy `retry`. */
const oneStep = (url: string, retry: Record<string, unknown>) =>
  started({ steps: [{ id: "s", tool: "http", params: { url }, retry }] });

describe("rate limiting: 429 honours Retry-After (SPEC 5.2)", () => {
  it("Retry-After in seconds: no attempt before it, then the retry succeeds", async () => {
    const key = unique("r429s");
    const runId = await oneStep(scriptUrl(key, "429,200", { retryAfter: "1" }), { baseDelayMs: 0 });

    await fireAlarm(runId);
    const first = await stepDetail(runId, "s");
    expect(first.status).toBe("retrying");
    expect(first.attempts).toBe(1);
    expect(first.attemptLog).toHaveLength(1);
    expect(first.attemptLog[0]).toMatchObject({
      attempt: 1,
      category: "rate_limited",
      status: 429,
    });
    expect(first.error).toMatchObject({ category: "rate_limited", status: 429 });
    expect(ms(first.nextAttemptAt)).toBeGreaterThanOrEqual(ms(first.attemptLog[0].endedAt) + 1000);
    // The alarm points at the retry, not earlier.
    expect(await alarmAt(runId)).toBe(ms(first.nextAttemptAt));

    // Fired early, the alarm starts nothing.
    expect(await fireAlarm(runId)).toBe(true);
    expect(await upstreamCalls(`/script/${key}`)).toHaveLength(1);
    const early = await stepDetail(runId, "s");
    expect(early.status).toBe("retrying");
    expect(early.attempts).toBe(1);
    // ...and leaves the alarm pointing at the retry.
    expect(await alarmAt(runId)).toBe(ms(first.nextAttemptAt));

    await advanceToAlarm(runId);
    expect(await fireAlarm(runId)).toBe(true);
    const done = await stepDetail(runId, "s");
    expect(done.status).toBe("succeeded");
    expect(done.attempts).toBe(2);
    expect(done.data).toMatchObject({ key, call: 2 });
    expect((await status(runId)).status).toBe("completed");
    expect(await upstreamCalls(`/script/${key}`)).toHaveLength(2);
  });

  it("Retry-After as an HTTP date: the retry is not scheduled before that date", async () => {
    const key = unique("r429d");
    const at = new Date(Date.now() + 30_000);
    const httpDate = at.toUTCString(); // second precision
    const runId = await oneStep(scriptUrl(key, "429,200", { retryAfter: httpDate }), {
      baseDelayMs: 0,
    });

    await fireAlarm(runId);
    const first = await stepDetail(runId, "s");
    expect(first.status).toBe("retrying");
    expect(first.attemptLog[0]).toMatchObject({ category: "rate_limited", status: 429 });
    expect(ms(first.nextAttemptAt)).toBeGreaterThanOrEqual(Date.parse(httpDate));

    await fireAlarm(runId);
    expect(await upstreamCalls(`/script/${key}`)).toHaveLength(1);

    await advanceToAlarm(runId);
    const final = await drive(runId);
    expect(final.status).toBe("completed");
    expect(await upstreamCalls(`/script/${key}`)).toHaveLength(2);
  });

  it("Retry-After outweighs a shorter backoff delay", async () => {
    const key = unique("r429max");
    const runId = await oneStep(scriptUrl(key, "429,200", { retryAfter: "120" }), {
      baseDelayMs: 5,
      maxDelayMs: 10,
      jitter: "none",
    });
    await fireAlarm(runId);
    const first = await stepDetail(runId, "s");
    expect(first.status).toBe("retrying");
    expect(ms(first.nextAttemptAt)).toBeGreaterThanOrEqual(
      ms(first.attemptLog[0].endedAt) + 120_000,
    );
  });
});

describe("server errors (SPEC 5.2)", () => {
  it("503, 503, then 200: three attempts, each recorded, one Idempotency-Key", async () => {
    const key = unique("r503");
    const runId = await started({
      steps: [
        {
          id: "fetch",
          tool: "http",
          params: { url: scriptUrl(key, "503,503,200") },
          retry: { baseDelayMs: 0 },
        },
      ],
    });
    const final = await drive(runId);
    expect(final.status).toBe("completed");

    const step = await stepDetail(runId, "fetch");
    expect(step.status).toBe("succeeded");
    expect(step.success).toBe(true);
    expect(step.attempts).toBe(3);
    expect(step.metadata).toMatchObject({ attempts: 3, retries: 2, status: 200 });
    expect(step.error).toBeUndefined();
    expect(step.attemptLog.map((a: any) => a.attempt)).toEqual([1, 2, 3]);
    expect(step.attemptLog.map((a: any) => a.category)).toEqual([
      "server_error",
      "server_error",
      undefined,
    ]);
    expect(step.attemptLog[0].status).toBe(503);
    expect(step.attemptLog[1].status).toBe(503);
    expect(step.attemptLog[2].status).toBe(200);
    for (const a of step.attemptLog) {
      expect(typeof a.startedAt).toBe("string");
      expect(typeof a.endedAt).toBe("string");
      expect(ms(a.endedAt)).toBeGreaterThanOrEqual(ms(a.startedAt));
    }

    const calls = await upstreamCalls(`/script/${key}`);
    expect(calls).toHaveLength(3);
    expect(calls.map((c) => c.idempotencyKey)).toEqual([
      `${runId}:fetch`,
      `${runId}:fetch`,
      `${runId}:fetch`,
    ]);
    expect(calls.map((c) => c.attempt)).toEqual([1, 2, 3]);
  });

  it("503 honours Retry-After too", async () => {
    const key = unique("r503ra");
    const runId = await oneStep(scriptUrl(key, "503,200", { retryAfter: "45" }), {
      baseDelayMs: 0,
    });
    await fireAlarm(runId);
    const first = await stepDetail(runId, "s");
    expect(first.status).toBe("retrying");
    expect(first.attemptLog[0]).toMatchObject({ category: "server_error", status: 503 });
    expect(ms(first.nextAttemptAt)).toBeGreaterThanOrEqual(
      ms(first.attemptLog[0].endedAt) + 45_000,
    );
  });

  it.each([500, 502, 504, 408])("HTTP %i is a retried server_error", async (code) => {
    const key = unique(`r${code}`);
    const runId = await oneStep(scriptUrl(key, `${code},200`), { baseDelayMs: 0 });
    expect((await drive(runId)).status).toBe("completed");
    const step = await stepDetail(runId, "s");
    expect(step.attemptLog[0]).toMatchObject({ category: "server_error", status: code });
    expect(step.attempts).toBe(2);
  });

  it("retries exhausted: 500 forever with maxRetries 2 fails after 3 attempts with its last category", async () => {
    const key = unique("r500x");
    const runId = await oneStep(scriptUrl(key, "500"), { maxRetries: 2, baseDelayMs: 0 });
    const final = await drive(runId);
    expect(final.status).toBe("failed");
    const step = await stepDetail(runId, "s");
    expect(step.status).toBe("failed");
    expect(step.success).toBe(false);
    expect(step.attempts).toBe(3);
    expect(step.nextAttemptAt).toBeUndefined();
    expect(step.error).toMatchObject({ category: "server_error", status: 500 });
    expect(step.attemptLog.map((a: any) => a.category)).toEqual([
      "server_error",
      "server_error",
      "server_error",
    ]);
    expect(await upstreamCalls(`/script/${key}`)).toHaveLength(3);
  });

  it("maxRetries 0 means a single attempt", async () => {
    const key = unique("r500z");
    const runId = await oneStep(scriptUrl(key, "500,200"), { maxRetries: 0 });
    expect((await drive(runId)).status).toBe("failed");
    expect((await stepDetail(runId, "s")).attempts).toBe(1);
    expect(await upstreamCalls(`/script/${key}`)).toHaveLength(1);
  });

  it("config.retry applies to every step; a step's retry overrides it", async () => {
    const key = unique("rcfg");
    const runId = await started({
      config: { retry: { maxRetries: 1, baseDelayMs: 0 } },
      steps: [
        { id: "plan-level", tool: "http", params: { url: scriptUrl(`${key}-a`, "500") } },
        {
          id: "step-level",
          tool: "http",
          params: { url: scriptUrl(`${key}-b`, "500") },
          retry: { maxRetries: 3 },
        },
      ],
    });
    expect((await drive(runId)).status).toBe("failed");
    expect(await upstreamCalls(`/script/${key}-a`)).toHaveLength(2);
    expect(await upstreamCalls(`/script/${key}-b`)).toHaveLength(4);
  });
});

describe("errors that are not retried (SPEC 5.2)", () => {
  it("401 is a client_error: one attempt, the run fails", async () => {
    const key = unique("r401");
    const runId = await oneStep(scriptUrl(key, "401,200"), { maxRetries: 5, baseDelayMs: 0 });
    const final = await drive(runId);
    expect(final.status).toBe("failed");
    const step = await stepDetail(runId, "s");
    expect(step.status).toBe("failed");
    expect(step.attempts).toBe(1);
    expect(step.error).toMatchObject({ category: "client_error", status: 401 });
    expect(step.attemptLog).toEqual([
      expect.objectContaining({ attempt: 1, category: "client_error", status: 401 }),
    ]);
    expect(await upstreamCalls(`/script/${key}`)).toHaveLength(1);
  });

  it.each([400, 403, 404, 422])("HTTP %i is a client_error and is not retried", async (code) => {
    const key = unique(`r${code}`);
    const runId = await oneStep(scriptUrl(key, `${code},200`), { baseDelayMs: 0 });
    expect((await drive(runId)).status).toBe("failed");
    expect((await stepDetail(runId, "s")).error).toMatchObject({
      category: "client_error",
      status: code,
    });
    expect(await upstreamCalls(`/script/${key}`)).toHaveLength(1);
  });
});

describe("timeouts (SPEC 5.2)", () => {
  it("an attempt past timeoutMs is a timeout, retried under the policy, then the step fails", async () => {
    const runId = await started({
      steps: [
        {
          id: "slow",
          tool: "http",
          params: { url: `${upstreamUrl}/hang` },
          timeoutMs: 100,
          retry: { maxRetries: 1, baseDelayMs: 0 },
        },
      ],
    });
    const final = await drive(runId);
    expect(final.status).toBe("failed");
    const step = await stepDetail(runId, "slow");
    expect(step.status).toBe("failed");
    expect(step.attempts).toBe(2);
    expect(step.error).toMatchObject({ category: "timeout" });
    expect(step.attemptLog.map((a: any) => a.category)).toEqual(["timeout", "timeout"]);
    for (const a of step.attemptLog)
      expect(ms(a.endedAt) - ms(a.startedAt)).toBeGreaterThanOrEqual(100);
    const calls = (await upstreamCalls("/hang")).filter(
      (c) => c.idempotencyKey === `${runId}:slow`,
    );
    expect(calls.map((c) => c.attempt)).toEqual([1, 2]);
  });

  it("config.stepTimeoutMs applies when the step sets no timeoutMs", async () => {
    const runId = await started({
      config: { stepTimeoutMs: 100, retry: { maxRetries: 0 } },
      steps: [{ id: "slow", tool: "http", params: { url: `${upstreamUrl}/delay/3000` } }],
    });
    expect((await drive(runId)).status).toBe("failed");
    expect((await stepDetail(runId, "slow")).error).toMatchObject({ category: "timeout" });
  });
});

describe("network errors (SPEC 5.2)", () => {
  it("a refused connection is a retried network error", async () => {
    // Port 1 on loopback: nothing listens there.
    const runId = await oneStep("http://127.0.0.1:1/nothing", { maxRetries: 1, baseDelayMs: 0 });
    expect((await drive(runId)).status).toBe("failed");
    const step = await stepDetail(runId, "s");
    expect(step.attempts).toBe(2);
    expect(step.attemptLog.map((a: any) => a.category)).toEqual(["network", "network"]);
  });
});

describe("status while a retry is scheduled (SPEC 5.2, 6)", () => {
  it("GET /v1/runs/:id shows attempt counts, and a retrying step's error and nextAttemptAt together", async () => {
    const key = unique("rstatus");
    const runId = await started({
      steps: [
        { id: "ok", tool: "http", params: { url: scriptUrl(`${key}-ok`, "200") } },
        {
          id: "flaky",
          tool: "http",
          params: { url: scriptUrl(`${key}-flaky`, "503,200", { retryAfter: "60" }) },
        },
        { id: "after", tool: "pass", params: { value: "${steps.flaky.data.call}" } },
      ],
    });
    await fireAlarm(runId);
    const s = await status(runId);
    expect(s.status).toBe("running");
    const byId = Object.fromEntries(s.steps.map((st: any) => [st.id, st]));
    expect(byId.ok).toMatchObject({ status: "succeeded", attempts: 1 });
    expect(byId.ok.error).toBeUndefined();
    expect(byId.ok.nextAttemptAt).toBeUndefined();
    expect(byId.flaky).toMatchObject({
      status: "retrying",
      attempts: 1,
      error: { category: "server_error", status: 503 },
    });
    expect(typeof byId.flaky.error.message).toBe("string");
    expect(ms(byId.flaky.nextAttemptAt)).toBeGreaterThan(Date.now() + 30_000);
    expect(byId.after).toMatchObject({ status: "pending", attempts: 0 });
    expect(s.progress.completedSteps).toBe(1);

    // The retry is due: it succeeds, and the step's error is gone.
    await advanceToAlarm(runId);
    const final = await drive(runId);
    expect(final.status).toBe("completed");
    const flaky = final.steps.find((st: any) => st.id === "flaky");
    expect(flaky).toMatchObject({ status: "succeeded", attempts: 2 });
    expect(flaky.error).toBeUndefined();
    expect(flaky.nextAttemptAt).toBeUndefined();
    expect((await results(runId))[2].data).toBe(2);
  });
});
