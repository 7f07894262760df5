/**
 * Callbacks (SPEC 4 `callback`, 5.5, 6): the step POSTs `{ runId, stepId, token,
 * callbackUrl, input }` to `params.url` and waits until `POST /v1/callbacks/:token`
 * answers it or its timeout passes. Tokens are single use; the callback route needs no
 * API key. Timeouts are made due by moving the run's clock to the alarm, never waited for.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../src/api/app";
import { byId, events, post, started, status, stepDetail } from "./helpers";
import { abortObject, advanceToAlarm, alarmAt, alarmInBackground, drive } from "./helpers";
import { fireAlarm, gate, until } from "./helpers";
import { callsWithRun, unique, upstreamCalls, upstreamUrl } from "./helpers";

/** Long enough that no timeout fires by itself during a test. */
const TEN_MINUTES = 600_000;

function callbackPlan(
  extra: Record<string, unknown> = {},
  stepExtra: Record<string, unknown> = {},
) {
  return {
    steps: [
      {
        id: "cb",
        tool: "callback",
        params: { url: `${upstreamUrl}/echo`, body: { order: 42 } },
        timeoutMs: TEN_MINUTES,
        ...stepExtra,
      },
      { id: "after", tool: "pass", params: { value: "${steps.cb.data}" } },
    ],
    ...extra,
  };
}

/** The bodies the callback tool POSTed for this run, oldest first. */
async function sent(runId: string, prefix = "/echo"): Promise<any[]> {
  return (await callsWithRun(prefix, runId)).map((c) => JSON.parse(c.body));
}

async function tokenOf(runId: string, n = 0): Promise<string> {
  const bodies = await sent(runId);
  expect(bodies.length).toBeGreaterThan(n);
  return bodies[n].token;
}

const answer = (token: string, body: unknown) => post(`/v1/callbacks/${token}`, body);

/** Starts the plan and fires its first alarm: the callback step is then waiting. */
async function waitingRun(
  extra: Record<string, unknown> = {},
  stepExtra: Record<string, unknown> = {},
): Promise<string> {
  const runId = await started(callbackPlan(extra, stepExtra));
  await drive(runId);
  return runId;
}

describe("callback step: the outbound POST and the wait", () => {
  it("POSTs { runId, stepId, token, callbackUrl, input } to params.url", async () => {
    const runId = await waitingRun();
    const [body] = await sent(runId);
    expect(body).toEqual({
      runId,
      stepId: "cb",
      token: expect.stringMatching(/^cb_[0-9a-f]{32}_[0-9a-f]{64}$/),
      callbackUrl: `http://edgestep.test/v1/callbacks/${body.token}`,
      input: { order: 42 },
    });
    const call = (await upstreamCalls("/echo")).find(
      (c) => typeof c.body === "string" && c.body.includes(runId),
    );
    expect(call.method).toBe("POST");
    expect(call.idempotencyKey).toBe(`${runId}:cb`);
  });

  it("the step is waiting (waitingFor callback), the run is waiting, and the alarm points at the timeout", async () => {
    const runId = await waitingRun();
    const s = await status(runId);
    expect(byId(s).cb).toMatchObject({ status: "waiting", waitingFor: "callback", attempts: 1 });
    expect(byId(s).after.status).toBe("pending");
    expect(s.status).toBe("waiting");
    const startedAt = Date.parse(byId(s).cb.startedAt);
    const alarm = await alarmAt(runId);
    expect(alarm).not.toBeNull();
    expect(Math.abs(alarm! - (startedAt + TEN_MINUTES))).toBeLessThanOrEqual(1000);
    const waiting = (await events(runId)).find((e) => e.type === "step_waiting");
    expect(waiting).toMatchObject({ stepId: "cb", data: { waitingFor: "callback" } });
  });

  it("tokens differ between runs", async () => {
    const a = await waitingRun();
    const b = await waitingRun();
    expect(await tokenOf(a)).not.toBe(await tokenOf(b));
  });
});

describe("POST /v1/callbacks/:token", () => {
  it("{ output } answers 200; the step succeeds with that data and dependents run", async () => {
    const runId = await waitingRun();
    const token = await tokenOf(runId);
    const res = await answer(token, { output: { shipped: true, id: "S1" } });
    expect(res.res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    const s = await drive(runId);
    expect(s.status).toBe("completed");
    const cb = await stepDetail(runId, "cb");
    expect(cb.status).toBe("succeeded");
    expect(cb.data).toEqual({ shipped: true, id: "S1" });
    expect(cb.attempts).toBe(1);
    expect(typeof cb.attemptLog[0].endedAt).toBe("string");
    expect((await stepDetail(runId, "after")).data).toEqual({ shipped: true, id: "S1" });
  });

  it("a second POST with the same token is a 409 and changes nothing", async () => {
    const runId = await waitingRun();
    const token = await tokenOf(runId);
    expect((await answer(token, { output: { n: 1 } })).res.status).toBe(200);
    const second = await answer(token, { output: { n: 2 } });
    expect(second.res.status).toBe(409);
    expect(second.body.error.code).toBe("conflict");
    await drive(runId);
    expect((await stepDetail(runId, "cb")).data).toEqual({ n: 1 });
    // and once more after the run finished
    expect((await answer(token, { error: { message: "late" } })).res.status).toBe(409);
    expect((await stepDetail(runId, "cb")).status).toBe("succeeded");
  });

  it("an unknown token is a 404, well-formed or malformed", async () => {
    const runId = await waitingRun();
    const real = await tokenOf(runId);
    const wellFormed = `${real.slice(0, -64)}${"0".repeat(64)}`;
    expect((await answer(wellFormed, { output: 1 })).res.status).toBe(404);
    const otherRun = `cb_${"ab".repeat(16)}_${"cd".repeat(32)}`;
    expect((await answer(otherRun, { output: 1 })).res.status).toBe(404);
    const malformed = await answer("not-a-token", { output: 1 });
    expect(malformed.res.status).toBe(404);
    expect(malformed.body.error.code).toBe("not_found");
    expect(byId(await status(runId)).cb.status).toBe("waiting");
  });

  it("a malformed body is a 400 and leaves the token usable", async () => {
    const runId = await waitingRun();
    const token = await tokenOf(runId);
    expect((await answer(token, { result: 1 })).res.status).toBe(400);
    expect((await answer(token, { error: "boom" })).res.status).toBe(400);
    expect((await answer(token, { output: "fine" })).res.status).toBe(200);
    await drive(runId);
    expect((await stepDetail(runId, "cb")).data).toBe("fine");
  });

  it("{ error: { message } } fails the step as callback_failed; dependents are skipped", async () => {
    const runId = await waitingRun();
    const token = await tokenOf(runId);
    expect((await answer(token, { error: { message: "the warehouse said no" } })).res.status).toBe(
      200,
    );
    const s = await drive(runId);
    expect(byId(s).cb.status).toBe("failed");
    expect(byId(s).cb.error).toMatchObject({
      category: "callback_failed",
      message: "the warehouse said no",
    });
    expect(byId(s).after).toMatchObject({ status: "skipped", reason: "dependency_failed" });
    expect(s.status).toBe("failed");
    // an answer is final: not retried
    expect(await sent(runId)).toHaveLength(1);
  });

  it("needs no API key even when API_KEYS is set", async () => {
    const runId = await waitingRun();
    const token = await tokenOf(runId);
    const app = createApp();
    const req = new Request(`http://edgestep.test/v1/callbacks/${token}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ output: { via: "no key" } }),
    });
    const res = await app.fetch(req, { ...env, API_KEYS: "k" });
    expect(res.status).toBe(200);
    // other routes still need one
    const other = await app.fetch(new Request(`http://edgestep.test/v1/runs/${runId}`), {
      ...env,
      API_KEYS: "k",
    });
    expect(other.status).toBe(401);
    await drive(runId);
    expect((await stepDetail(runId, "cb")).data).toEqual({ via: "no key" });
  });
});

describe("callback timeout", () => {
  it("a due timeout fails the attempt as timeout and retries with a new token; the old token gets 409", async () => {
    const runId = await waitingRun({}, { retry: { maxRetries: 2, baseDelayMs: 0 } });
    const first = await tokenOf(runId);
    await advanceToAlarm(runId);
    expect(await fireAlarm(runId)).toBe(true);

    const bodies = await sent(runId);
    expect(bodies).toHaveLength(2);
    const second = bodies[1].token;
    expect(second).not.toBe(first);
    const cb = await stepDetail(runId, "cb");
    expect(cb).toMatchObject({ status: "waiting", waitingFor: "callback", attempts: 2 });
    expect(cb.attemptLog[0]).toMatchObject({ attempt: 1, category: "timeout" });
    expect(cb.attemptLog[1].attempt).toBe(2);

    expect((await answer(first, { output: "stale" })).res.status).toBe(409);
    expect((await answer(second, { output: "fresh" })).res.status).toBe(200);
    expect((await drive(runId)).status).toBe("completed");
    expect((await stepDetail(runId, "cb")).data).toBe("fresh");
  });

  it("an outbound POST that fails is retried with the same token, which the job may hold", async () => {
    const key = unique("cb-post-fail");
    const runId = await started({
      steps: [
        {
          id: "cb",
          tool: "callback",
          params: { url: `${upstreamUrl}/script/${key}?plan=500,200` },
          timeoutMs: TEN_MINUTES,
          retry: { maxRetries: 1, baseDelayMs: 0 },
        },
      ],
    });
    await drive(runId);
    const bodies = (await upstreamCalls(`/script/${key}`)).map((c) => JSON.parse(c.body));
    expect(bodies).toHaveLength(2);
    const [first, second] = bodies.map((b) => b.token);
    expect(second).toBe(first);
    const cb = await stepDetail(runId, "cb");
    expect(cb).toMatchObject({ status: "waiting", attempts: 2 });
    expect(cb.attemptLog[0]).toMatchObject({ attempt: 1, category: "server_error", status: 500 });

    expect((await answer(first, { output: "ok" })).res.status).toBe(200);
    expect((await answer(first, { output: "again" })).res.status).toBe(409);
    expect((await drive(runId)).status).toBe("completed");
    expect((await stepDetail(runId, "cb")).data).toBe("ok");
  });

  it("a timeout after the last retry fails the step as timeout", async () => {
    const runId = await waitingRun({}, { retry: { maxRetries: 0 } });
    const token = await tokenOf(runId);
    await advanceToAlarm(runId);
    const s = await drive(runId);
    expect(byId(s).cb.status).toBe("failed");
    expect(byId(s).cb.error.category).toBe("timeout");
    expect(s.status).toBe("failed");
    expect((await answer(token, { output: 1 })).res.status).toBe(409);
  });

  it("an alarm fired before the timeout changes nothing", async () => {
    const runId = await waitingRun();
    const before = await alarmAt(runId);
    expect(await fireAlarm(runId)).toBe(true);
    const s = await status(runId);
    expect(byId(s).cb.status).toBe("waiting");
    expect(s.status).toBe("waiting");
    expect(await sent(runId)).toHaveLength(1);
    expect(await alarmAt(runId)).toBe(before);
  });
});

describe("callback durability", () => {
  it("survives an abort while waiting: the callback completes it, then drive", async () => {
    const runId = await waitingRun();
    const token = await tokenOf(runId);
    await abortObject(runId);
    expect(byId(await status(runId)).cb.status).toBe("waiting");
    expect((await answer(token, { output: { after: "restart" } })).res.status).toBe(200);
    expect((await drive(runId)).status).toBe("completed");
    expect((await stepDetail(runId, "cb")).data).toEqual({ after: "restart" });
    expect(await sent(runId)).toHaveLength(1);
  });

  it("a callback that arrives before the outbound POST returns is kept and applied", async () => {
    const post = gate("early-kept");
    const { runId, token, inFlight } = await postInFlight(post.url);
    // the POST is still in flight: the step is running, not waiting
    expect((await stepDetail(runId, "cb")).status).toBe("running");
    expect((await answer(token, { output: { early: true } })).res.status).toBe(200);
    expect((await answer(token, { output: { early: false } })).res.status).toBe(409);
    await post.open();
    expect(await inFlight).toBe("settled");
    const s = await drive(runId);
    expect(s.status).toBe("completed");
    expect((await stepDetail(runId, "cb")).data).toEqual({ early: true });
    expect((await stepDetail(runId, "after")).data).toEqual({ early: true });
  });

  /**
   * A run whose callback POST goes to `url`, held there (a gate) until the test opens it; the
   * token once the POST arrived.
   */
  async function postInFlight(
    url: string,
    stepExtra: Record<string, unknown> = {},
  ): Promise<{ runId: string; token: string; inFlight: Promise<string> }> {
    const runId = await started({
      steps: [
        {
          id: "cb",
          tool: "callback",
          params: { url },
          timeoutMs: TEN_MINUTES,
          ...stepExtra,
        },
        { id: "after", tool: "pass", params: { value: "${steps.cb.data}" } },
      ],
    });
    const inFlight = alarmInBackground(runId);
    let token = "";
    await until(async () => {
      token = (await sent(runId, new URL(url).pathname))[0]?.token ?? "";
      return token !== "";
    }, "the outbound POST reached the upstream");
    return { runId, token, inFlight };
  }

  /** postInFlight, then the answer to its token, while the POST is still in flight. */
  async function earlyAnswered(url: string) {
    const posted = await postInFlight(url);
    expect((await answer(posted.token, { output: { early: true } })).res.status).toBe(200);
    return posted;
  }

  it("an early answer decides the step even when the outbound POST then fails", async () => {
    const post = gate("early-500");
    const { runId, inFlight } = await earlyAnswered(`${post.url}?status=500`);
    await post.open();
    expect(await inFlight).toBe("settled");
    expect((await drive(runId)).status).toBe("completed");
    expect((await stepDetail(runId, "cb")).data).toEqual({ early: true });
    expect(await sent(runId, post.path)).toHaveLength(1); // answered, so never retried
  });

  it("an early answer survives a restart in the middle of the outbound POST", async () => {
    const post = gate("early-abort");
    const { runId, inFlight } = await earlyAnswered(post.url);
    await abortObject(runId);
    await inFlight;
    await post.open();
    expect((await drive(runId)).status).toBe("completed");
    expect((await stepDetail(runId, "cb")).data).toEqual({ early: true });
    expect(await sent(runId, post.path)).toHaveLength(1); // not interrupted and retried
  });

  it("a restart in the middle of the outbound POST retries it with the same token: the job's answer to it completes the step", async () => {
    const post = gate("cb-abort");
    const { runId, token, inFlight } = await postInFlight(post.url, {
      retry: { maxRetries: 2, baseDelayMs: 0 },
    });
    await abortObject(runId);
    await inFlight;
    await post.open();
    await drive(runId);
    expect((await sent(runId, post.path)).map((b) => b.token)).toEqual([token, token]);
    const cb = await stepDetail(runId, "cb");
    expect(cb).toMatchObject({ status: "waiting", waitingFor: "callback", attempts: 2 });
    expect(cb.attemptLog[0]).toMatchObject({ attempt: 1, category: "interrupted" });

    expect((await answer(token, { output: { job: "done" } })).res.status).toBe(200);
    expect((await drive(runId)).status).toBe("completed");
    expect((await stepDetail(runId, "after")).data).toEqual({ job: "done" });
  });

  it("a callback that arrives while the iteration is live (another step in flight) is applied in it", async () => {
    // `slow` answers once the callback has been: the iteration is live until then, whatever the load.
    const slow = gate("cb-live");
    const runId = await started({
      steps: [
        {
          id: "cb",
          tool: "callback",
          params: { url: `${upstreamUrl}/echo` },
          timeoutMs: TEN_MINUTES,
        },
        { id: "after", tool: "pass", params: { value: "${steps.cb.data}" } },
        { id: "slow", tool: "http", params: { url: slow.url } },
      ],
    });
    const inFlight = alarmInBackground(runId);
    await until(async () => (await stepDetail(runId, "cb")).status === "waiting", "cb waits");
    expect((await answer(await tokenOf(runId), { output: "live" })).res.status).toBe(200);
    await until(async () => (await stepDetail(runId, "after")).status === "succeeded", "after ran");
    await slow.open();
    expect(await inFlight).toBe("settled");
    const s = await status(runId);
    expect(s.status).toBe("completed");
    expect(s.iterations).toBe(1);
    expect((await stepDetail(runId, "after")).data).toBe("live");
  });

  it("cancelling a waiting run expires its token (409)", async () => {
    const runId = await waitingRun();
    const token = await tokenOf(runId);
    expect((await post(`/v1/runs/${runId}/cancel`)).res.status).toBe(200);
    expect((await status(runId)).status).toBe("cancelled");
    expect((await answer(token, { output: 1 })).res.status).toBe(409);
  });

  it("a run.waiting webhook is sent when the run waits for the callback", async () => {
    const hook = `/script/${unique("cb-hook")}`;
    const runId = await waitingRun({ webhook: { url: `${upstreamUrl}${hook}` } });
    const calls = await upstreamCalls(hook);
    expect(calls.map((c) => JSON.parse(c.body).type)).toEqual(["run.waiting"]);
  });
});
