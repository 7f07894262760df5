/**
 * Far-future times (issue 11, item 7): a `wait` lasts at most 365 days, a honoured
 * `Retry-After` is capped at 365 days, and no time handed to the Durable Object's alarm can
 * make `setAlarm` throw (workerd refuses dates after 2189). Before, a `wait` until 9999 or a
 * `Retry-After` of 300 years made `setAlarm` throw at the end of every alarm, so the run
 * was left without an alarm (SPEC 5.5) and the error repeated.
 */
import { describe, expect, it } from "vitest";
import { alarmAt, api, byId, drive, expectReadable, fireAlarm, runStub } from "./helpers";
import { script, started, stepDetail, submit, unique } from "./helpers";

const DAY = 86_400_000;
const MAX_WAIT_MS = 365 * DAY;
const YEAR_9999 = "9999-12-31T23:59:59Z";

const waitStep = (params: Record<string, unknown>) => ({ id: "nap", tool: "wait", params });

/** The alarm is set, and no further than 365 days (plus a little slack for the test's own time). */
async function expectSaneAlarm(runId: string): Promise<void> {
  const at = await alarmAt(runId);
  expect(at).not.toBeNull();
  expect(at!).toBeLessThanOrEqual(Date.now() + MAX_WAIT_MS + 60_000);
}

describe("wait at submission: at most 365 days", () => {
  it.each([
    ["until year 9999", "until", { until: YEAR_9999 }, /365 days/],
    [
      "until 366 days ahead",
      "until",
      { until: new Date(Date.now() + 366 * DAY).toISOString() },
      /365 days/,
    ],
    ["until that is not a time", "until", { until: "next tuesday-ish" }, /not a time/],
    ["ms past 365 days", "ms", { ms: MAX_WAIT_MS + 1 }, /31536000000/],
    ["ms as a string past 365 days", "ms", { ms: "1e20" }, /365 days/],
    ["ms as a string that is not a number", "ms", { ms: "soon" }, /not a number/],
  ])("%s is a 400 naming steps.0.params.%s", async (_, field, params, message) => {
    const { res, body } = await submit({ steps: [waitStep(params)] });
    expect(res.status, JSON.stringify(body)).toBe(400);
    expect(body.error.code).toBe("invalid_plan");
    const issue = body.error.issues.find((i: any) => i.path === `steps.0.params.${field}`);
    expect(issue, JSON.stringify(body.error.issues)).toBeDefined();
    expect(issue.message).toMatch(message);
  });

  it.each([
    ["until 364 days ahead", { until: new Date(Date.now() + 364 * DAY).toISOString() }],
    ["ms of exactly 365 days", { ms: MAX_WAIT_MS }],
    ["ms as a numeric string", { ms: "60000" }],
    ["a templated until", { until: "${input.when}" }],
  ])("%s is accepted", async (_, params) => {
    const { res, body } = await submit({ input: { when: YEAR_9999 }, steps: [waitStep(params)] });
    expect(res.status, JSON.stringify(body)).toBe(202);
    await api(`/v1/runs/${body.runId}/cancel`, { method: "POST" });
  });
});

describe("wait at run time", () => {
  it.each([
    ["until resolved to year 9999", { until: "${input.when}" }, { when: YEAR_9999 }],
    ["ms resolved to 10^20", { ms: "${input.ms}" }, { ms: "1e20" }],
    ["until resolved to a non-time", { until: "${input.when}" }, { when: "never" }],
  ])("%s fails the step as invalid_data; the run ends and reads fine", async (_, params, input) => {
    const runId = await started({ input, steps: [waitStep(params)] });
    const s = await drive(runId);
    expect(s.status).toBe("failed");
    expect(byId(s).nap).toMatchObject({
      status: "failed",
      attempts: 1,
      error: { category: "invalid_data" },
    });
    expect((await stepDetail(runId, "nap")).error.message).toMatch(/wait: /);
    await expectReadable(runId, ["nap"]);
  });

  it("a templated until within 365 days waits until then", async () => {
    const when = new Date(Date.now() + 200 * DAY);
    const runId = await started({
      input: { when: when.toISOString() },
      steps: [waitStep({ until: "${input.when}" })],
    });
    await fireAlarm(runId);
    expect(byId(await (await api(`/v1/runs/${runId}`)).json()).nap.status).toBe("waiting");
    expect(await alarmAt(runId)).toBe(when.getTime());
  });
});

describe("Retry-After far in the future", () => {
  const YEARS_300_SECONDS = String(300 * 365 * 86_400);
  it.each([
    ["300 years in seconds", YEARS_300_SECONDS],
    ["an HTTP date in year 9999", "Fri, 31 Dec 9999 23:59:59 GMT"],
    ["more seconds than a double holds", "9".repeat(400)],
  ])("%s: the retry is scheduled at most 365 days ahead and the alarm is set", async (_, value) => {
    const key = unique("far-retry");
    const q = new URLSearchParams({ plan: "429,200", retryAfter: value });
    const runId = await started({
      steps: [{ id: "s", tool: "http", params: { url: script(key, `?${q}`) } }],
    });
    expect(await fireAlarm(runId)).toBe(true);
    const s = await stepDetail(runId, "s");
    expect(s.status).toBe("retrying");
    const next = Date.parse(s.nextAttemptAt);
    expect(next).toBeGreaterThan(Date.now() + MAX_WAIT_MS - 60_000);
    expect(next).toBeLessThanOrEqual(Date.now() + MAX_WAIT_MS);
    await expectSaneAlarm(runId);
    await expectReadable(runId, ["s"]);
    // A second alarm (early) neither throws nor loses the alarm.
    expect(await fireAlarm(runId)).toBe(true);
    await expectSaneAlarm(runId);
  });
});

describe("a due time past what the alarm accepts (stored by an earlier version)", () => {
  it("is clamped when the alarm is set: the run keeps an alarm and still finishes", async () => {
    const runId = await started({ steps: [waitStep({ ms: 600_000 })] });
    await fireAlarm(runId);
    // What a wait until 9999 stored before the limit existed: no typed seam writes it any more.
    await runStub(runId).storeAsEarlierVersion("nap", { nextAttemptAt: Date.parse(YEAR_9999) });
    expect(await fireAlarm(runId)).toBe(true);
    await expectSaneAlarm(runId);
    expect(byId(await (await api(`/v1/runs/${runId}`)).json()).nap.status).toBe("waiting");
    expect((await api(`/v1/runs/${runId}/cancel`, { method: "POST" })).status).toBe(200);
  });
});
