/**
 * The typed client (src/client/) inside workerd, against the real Worker: every route it
 * covers that the Worker serves, its errors (code, status, issues, Retry-After), the
 * idempotent submission, long polling, and the SSE iterator across dropped connections.
 * The routes of SPEC 6.1 reads and SPEC 8 listing are in test/client-routes.test.ts.
 */
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../src/api/app";
import { secondsToWait } from "../src/client/errors.ts";
import { EdgestepApiError, EdgestepClient, type RunEvent } from "../src/client/index.ts";
import { callsWithRun, drive, unique, upstreamUrl } from "./helpers";

const worker = (request: Request) => exports.default.fetch(request);
const client = new EdgestepClient({ url: "http://edgestep.test", fetch: worker });

const chain = {
  name: "client-chain",
  steps: [
    { id: "a", tool: "pass", params: { value: [1, 2] } },
    { id: "b", tool: "pass", params: { value: "${steps.a.data}" } },
  ],
};

/** The error a call rejects with (fails the test when it resolves). */
async function failure(call: Promise<unknown>): Promise<EdgestepApiError> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(EdgestepApiError);
  return err as EdgestepApiError;
}

describe("the client against the Worker", () => {
  it("health and validation, with warnings and with issues", async () => {
    expect(await client.getHealth()).toEqual({ ok: true });
    const noted = { steps: [{ id: "a", tool: "pass", notes: "an agent's note" }] };
    const valid = await client.validatePlan(noted);
    expect(valid).toMatchObject({
      valid: true,
      order: ["a"],
      warnings: [{ path: "steps.0.notes" }],
    });
    const err = await failure(
      client.validatePlan({
        steps: [
          { id: "a", tool: "pass" },
          { id: "b", tool: "pass", dependsOn: ["x"] },
        ],
      }),
    );
    expect(err).toMatchObject({ code: "invalid_plan", status: 400 });
    expect(err.issues).toEqual([
      { path: "steps.1.dependsOn.0", message: 'unknown dependency "x"' },
    ]);
  });

  it("creates a run, reads its status, steps, results, plan and events", async () => {
    const created = await client.createRun(chain);
    expect(created).toMatchObject({ status: "pending", created: true });
    await drive(created.runId);
    const status = await client.getRun(created.runId);
    expect(status).toMatchObject({ name: "client-chain", status: "completed" });
    expect(status.steps.map((s) => s.status)).toEqual(["succeeded", "succeeded"]);
    expect((await client.getRunSummary(created.runId)).summary.successfulSteps).toBe(2);
    expect(await client.getStep(created.runId, "b")).toMatchObject({
      data: [1, 2],
      attemptLog: [{ attempt: 1 }],
    });
    expect((await client.getResults(created.runId)).map((r) => r.stepId)).toEqual(["a", "b"]);
    const { revision, plan } = await client.getRunPlan(created.runId);
    expect(revision).toBe(0);
    expect(plan.name).toBe("client-chain");
    expect(plan.steps.map((s) => [s.id, s.tool, s.params])).toEqual(
      chain.steps.map((s) => [s.id, s.tool, s.params]),
    );
    const page = await client.listEvents(created.runId, { limit: 2 });
    expect(page.events).toHaveLength(2);
    expect(page.next).toBe(page.events[1]!.seq);
  });

  it("an Idempotency-Key names one run: created once, answered again with created: false", async () => {
    const idempotencyKey = unique("client-key");
    const first = await client.createRun(chain, { idempotencyKey });
    const again = await client.createRun(chain, { idempotencyKey });
    expect(first.created).toBe(true);
    expect(again).toMatchObject({ runId: first.runId, created: false });
  });

  it("submitRun retries a lost answer with the same key, so the plan runs once", async () => {
    const sentKeys: string[] = [];
    let calls = 0;
    // The first POST reaches the Worker (the run is created), but its answer is lost.
    const flaky = async (request: Request) => {
      sentKeys.push(request.headers.get("idempotency-key") ?? "");
      const response = await worker(request);
      if (++calls === 1) throw new TypeError("connection reset");
      return response;
    };
    const submitted = await new EdgestepClient({
      url: "http://edgestep.test",
      fetch: flaky,
    }).submitRun(chain, {
      baseDelayMs: 1,
    });
    expect(sentKeys).toHaveLength(2);
    expect(sentKeys[0]).toBe(sentKeys[1]);
    expect(submitted).toMatchObject({
      idempotencyKey: sentKeys[0],
      created: false,
    });
    expect((await client.getRun(submitted.runId)).name).toBe("client-chain");
  });

  it("submitRun does not retry a client error", async () => {
    let calls = 0;
    const counting = async (request: Request) => (calls++, worker(request));
    const err = await failure(
      new EdgestepClient({ url: "http://edgestep.test", fetch: counting }).submitRun(
        { steps: [] },
        { baseDelayMs: 1 },
      ),
    );
    expect(err.code).toBe("invalid_plan");
    expect(calls).toBe(1);
  });

  it("waitForRun follows a run to its end", async () => {
    const { runId } = await client.createRun(chain);
    const updates: string[] = [];
    const waiting = client.waitForRun(runId, { onUpdate: (r) => updates.push(r.status) });
    await drive(runId);
    expect((await waiting).status).toBe("completed");
    expect(updates.at(-1)).toBe("completed");
  });

  it("waitForRun asks again through a server that went away for a while (a restart)", async () => {
    const { runId } = await client.createRun(chain);
    let refused = 0;
    // The first three reads find no server; the Worker answers the ones after them.
    const flaky = new EdgestepClient({
      url: "http://edgestep.test",
      fetch: (request: Request) =>
        refused < 3 ? (refused++, Promise.reject(new TypeError("fetch failed"))) : worker(request),
    });
    const waiting = flaky.waitForRun(runId);
    await drive(runId);
    expect((await waiting).status).toBe("completed");
    expect(refused).toBe(3);
    // A mistake is not asked again: an unknown run is a 404 at once.
    expect(await failure(flaky.waitForRun(`run_${"0".repeat(32)}`))).toMatchObject({
      status: 404,
    });
  });

  it("answerTimeoutMs: a server that never answers is a retryable network_error; a long poll's wait comes on top", async () => {
    const silent = new EdgestepClient({
      url: "http://edgestep.test",
      answerTimeoutMs: 50,
      fetch: (request: Request) =>
        new Promise<Response>((_, reject) =>
          request.signal.addEventListener("abort", () => reject(request.signal.reason)),
        ),
    });
    const err = await failure(silent.getHealth());
    expect(err).toMatchObject({ code: "network_error", status: 0, retryable: true });
    expect(err.message).toMatch(/no answer within 50 ms$/);
    // Answered after 120 ms: past the timeout alone, within it plus the poll's wait of 100 ms.
    const slow = new EdgestepClient({
      url: "http://edgestep.test",
      answerTimeoutMs: 50,
      fetch: async (request: Request) => {
        await new Promise((r) => setTimeout(r, 120));
        return worker(request);
      },
    });
    const { runId } = await client.createRun(chain);
    expect(await slow.pollRun(runId, { view: "summary", wait: 100 })).toMatchObject({
      changed: true,
    });
  });

  it("waitForRun gives up at its timeout with code timeout", async () => {
    const { runId } = await client.createRun({ steps: [{ id: "gate", tool: "approval" }] });
    await drive(runId);
    expect(await failure(client.waitForRun(runId, { timeoutMs: 50 }))).toMatchObject({
      code: "timeout",
    });
  });
});

describe("controls and callbacks through the client", () => {
  it("approve and deny answer approval steps", async () => {
    const plan = {
      steps: [
        { id: "yes", tool: "approval" },
        { id: "no", tool: "approval" },
      ],
    };
    const { runId } = await client.createRun(plan);
    expect((await drive(runId)).status).toBe("waiting");
    expect(await client.approveRun(runId, { approved: true, stepId: "yes" })).toMatchObject({
      runId,
    });
    await client.denyRun(runId, { stepId: "no", comment: "not today" });
    const s = await drive(runId);
    expect(s.status).toBe("partial");
    expect(s.steps.map((x: any) => x.status)).toEqual(["succeeded", "failed"]);
  });

  it("cancel, then a conflict for a finished run", async () => {
    const { runId } = await client.createRun({ steps: [{ id: "gate", tool: "approval" }] });
    expect(await client.cancelRun(runId)).toEqual({ runId, status: "cancelled" });
    const done = await client.createRun(chain);
    await drive(done.runId);
    expect(await failure(client.cancelRun(done.runId))).toMatchObject({
      code: "conflict",
      status: 409,
    });
  });

  it("resume continues a paused run, retry redrives a failed one", async () => {
    const bounded = { ...chain, config: { mode: { type: "bounded" as const, iterations: 1 } } };
    const { runId } = await client.createRun(bounded);
    expect((await drive(runId)).status).toBe("paused");
    await client.resumeRun(runId, { iterations: 5 });
    expect((await drive(runId)).status).toBe("completed");

    const failing = await client.createRun({
      steps: [
        {
          id: "x",
          tool: "http",
          params: { url: `${upstreamUrl}/script/${unique("cl")}?plan=404,200` },
        },
      ],
    });
    expect((await drive(failing.runId)).status).toBe("failed");
    expect(await client.retryRun(failing.runId)).toMatchObject({ runId: failing.runId });
    expect((await drive(failing.runId)).status).toBe("completed");
  });

  it("replanRun answers a pending repair; an invalid one throws with its issues", async () => {
    const { runId } = await client.createRun({
      replan: { mode: "human" },
      steps: [{ id: "v", tool: "pass", params: { value: [] }, verify: "${output.length}" }],
    });
    expect((await drive(runId)).status).toBe("waiting");
    expect(
      await failure(client.replanRun(runId, { steps: [{ id: "v", tool: "nope" }] })),
    ).toMatchObject({
      code: "invalid_plan",
      status: 400,
      issues: [{ path: "steps.0.tool", message: 'unknown tool "nope"' }],
    });
    const repaired = await client.replanRun(runId, {
      steps: [{ id: "v", tool: "pass", params: { value: [1] }, verify: "${output.length}" }],
    });
    expect(repaired).toEqual({ runId, status: "running" });
    expect((await drive(runId)).status).toBe("completed");
    expect(await failure(client.replanRun(runId, { giveUp: true }))).toMatchObject({
      code: "conflict",
      status: 409,
    });
  });

  it("completeCallback answers a callback step; an unknown token is not_found", async () => {
    const { runId } = await client.createRun({
      steps: [
        { id: "cb", tool: "callback", params: { url: `${upstreamUrl}/echo` }, timeoutMs: 600_000 },
      ],
    });
    await drive(runId);
    const [call] = await callsWithRun("/echo", runId);
    const token = JSON.parse(call.body).token as string;
    expect(await client.completeCallback(token, { output: { done: true } })).toEqual({ ok: true });
    expect((await drive(runId)).status).toBe("completed");
    const err = await failure(client.completeCallback("nope", { output: 1 }));
    expect(err).toMatchObject({ code: "not_found", status: 404 });
  });
});

describe("errors through the client", () => {
  const app = createApp();
  const withEnv = (bindings: Record<string, unknown>, apiKey?: string) =>
    new EdgestepClient({
      url: "http://edgestep.test",
      ...(apiKey !== undefined && { apiKey }),
      fetch: async (request) => app.fetch(request, { ...env, ...bindings }),
    });

  it("not_found for an unknown run, with no Retry-After to honour", async () => {
    const err = await failure(client.getRun(`run_${"0".repeat(32)}`));
    expect(err).toMatchObject({ code: "not_found", status: 404, issues: [] });
    expect(err.retryAfterSeconds).toBeUndefined();
  });

  it("reads Retry-After as seconds or as an HTTP date", () => {
    const now = Date.parse("2026-11-26T10:00:00Z");
    expect(secondsToWait("7", now)).toBe(7);
    expect(secondsToWait("Thu, 26 Nov 2026 10:00:30 GMT", now)).toBe(30);
    expect(secondsToWait("Thu, 26 Nov 2026 09:00:00 GMT", now)).toBe(0);
    for (const unreadable of [null, "", " ", "-1", "soon"])
      expect(secondsToWait(unreadable, now)).toBeUndefined();
  });

  it("unauthorized without the key, and the key sent as a bearer token", async () => {
    const keyed = { API_KEYS: "client-key-1" };
    expect(await failure(withEnv(keyed).validatePlan(chain))).toMatchObject({
      code: "unauthorized",
      status: 401,
    });
    expect((await withEnv(keyed, "client-key-1").validatePlan(chain)).valid).toBe(true);
  });

  it("payload_too_large past MAX_PLAN_BYTES", async () => {
    const err = await failure(
      withEnv({ MAX_PLAN_BYTES: "100" }).validatePlan({ ...chain, name: "n".repeat(200) }),
    );
    expect(err).toMatchObject({ code: "payload_too_large", status: 413 });
  });

  it("rate_limited with the Retry-After it was given", async () => {
    // A key of its own: the per-key quota is shared with no other test.
    const key = unique("rate-limited-key");
    const keyed = withEnv({ API_KEYS: key, RUNS_PER_MINUTE: "1" }, key);
    await keyed.createRun(chain);
    const err = await failure(keyed.createRun(chain));
    expect(err).toMatchObject({ code: "rate_limited", status: 429, retryable: true });
    expect(err.retryAfterSeconds).toBeGreaterThan(0);
  });

  it("auth_not_configured (503) is not retryable: only the deployment's operator can fix it", async () => {
    const unconfigured = withEnv({ API_KEYS: "", REQUIRE_API_KEYS: "true" });
    const err = await failure(unconfigured.createRun(chain));
    expect(err).toMatchObject({ code: "auth_not_configured", status: 503, retryable: false });
  });

  it("network_error (status 0) when the Worker cannot be reached", async () => {
    const down = new EdgestepClient({
      url: "http://edgestep.test",
      fetch: () => Promise.reject(new TypeError("connect ECONNREFUSED")),
    });
    expect(await failure(down.getHealth())).toMatchObject({
      code: "network_error",
      status: 0,
      retryable: true,
    });
  });

  it("invalid_response for a 200 that is not JSON (another service at the URL)", async () => {
    const page = () =>
      new Response("<!doctype html><title>Welcome</title>", {
        headers: { "content-type": "text/html" },
      });
    const elsewhere = new EdgestepClient({
      url: "http://edgestep.test",
      fetch: async () => page(),
    });
    const err = await failure(elsewhere.getRunSummary("run_x"));
    expect(err).toMatchObject({ code: "invalid_response", status: 200, retryable: false });
    expect(err.message).toContain("text/html");
    expect(err.message).toContain("<!doctype html>");
    expect(await failure(elsewhere.pollRun("run_x"))).toMatchObject({ code: "invalid_response" });
  });
});

/** A fetch whose SSE answers break after `bytes` bytes, `times` times: a dropped connection. */
function droppingStreams(bytes: number, times: number) {
  const lastEventIds: (string | null)[] = [];
  let drops = 0;
  const fetch = async (request: Request) => {
    const response = await worker(request);
    if (request.headers.get("accept") !== "text/event-stream") return response;
    lastEventIds.push(request.headers.get("last-event-id"));
    if (response.status !== 200 || drops >= times) return response;
    drops++;
    const reader = response.body!.getReader();
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) return controller.close();
        const room = bytes - sent;
        if (value.byteLength < room) {
          sent += value.byteLength;
          return controller.enqueue(value);
        }
        controller.enqueue(value.slice(0, room)); // mid-message, like a reset connection
        await reader.cancel();
        controller.error(new TypeError("connection reset"));
      },
    });
    return new Response(body, response);
  };
  return { fetch, lastEventIds };
}

describe("the event stream through the client", () => {
  async function collect(stream: AsyncIterable<RunEvent>): Promise<RunEvent[]> {
    const out: RunEvent[] = [];
    for await (const e of stream) out.push(e);
    return out;
  }

  it("yields every event of a finished run, then ends", async () => {
    const { runId } = await client.createRun(chain);
    await drive(runId);
    const all = (await client.listEvents(runId, { limit: 1000 })).events;
    const streamed = await collect(client.events(runId));
    expect(streamed).toEqual(all);
    expect(streamed.at(-1)!.type).toBe("run_finished");
  });

  it("reconnects after dropped connections with Last-Event-ID: no gap, no repeat", async () => {
    const { runId } = await client.createRun(chain);
    await drive(runId);
    const all = (await client.listEvents(runId, { limit: 1000 })).events;
    const dropping = droppingStreams(300, 2);
    const flaky = new EdgestepClient({ url: "http://edgestep.test", fetch: dropping.fetch });
    const streamed = await collect(flaky.events(runId, { reconnectDelayMs: 1 }));
    expect(streamed).toEqual(all);
    // Two drops, then the rest, then a last connection answered 204.
    expect(dropping.lastEventIds).toHaveLength(4);
    expect(dropping.lastEventIds[0]).toBeNull();
    expect(Number(dropping.lastEventIds[1])).toBeGreaterThan(0);
    expect(Number(dropping.lastEventIds[2])).toBeGreaterThan(Number(dropping.lastEventIds[1]));
    expect(Number(dropping.lastEventIds[3])).toBe(all.at(-1)!.seq);
  });

  it("a connection that ends before any event (a proxy closing an idle stream) is not the end: it reconnects", async () => {
    const { runId } = await client.createRun(chain);
    await drive(runId);
    const all = (await client.listEvents(runId, { limit: 1000 })).events;
    let cut = 0;
    const idleCut = async (request: Request) => {
      if (request.headers.get("accept") !== "text/event-stream" || cut++ > 0)
        return worker(request);
      return new Response(": keep-alive\n\n", { headers: { "content-type": "text/event-stream" } });
    };
    const cutting = new EdgestepClient({ url: "http://edgestep.test", fetch: idleCut });
    expect(await collect(cutting.events(runId, { reconnectDelayMs: 1 }))).toEqual(all);
  });

  it("gives up after maxReconnects failures in a row", async () => {
    const { runId } = await client.createRun(chain);
    await drive(runId);
    const dropping = droppingStreams(10, 100);
    const flaky = new EdgestepClient({ url: "http://edgestep.test", fetch: dropping.fetch });
    const err = await collect(flaky.events(runId, { maxReconnects: 2, reconnectDelayMs: 1 })).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(String(err)).toMatch(/connection reset/);
    expect(dropping.lastEventIds).toHaveLength(3);
  });

  it("follows a live run: events that happen while connected arrive", async () => {
    const { runId } = await client.createRun({
      steps: [{ id: "gate", tool: "approval" }, ...chain.steps],
    });
    await drive(runId);
    const seen: string[] = [];
    const following = (async () => {
      for await (const e of client.events(runId)) {
        seen.push(e.type);
        if (e.type === "approval_requested")
          await client.approveRun(runId, { approved: true, stepId: "gate" });
      }
    })();
    const settle = (async () => {
      while (!seen.includes("approval_granted")) await scheduler.wait(20);
      await drive(runId);
    })();
    await Promise.all([following, settle]);
    expect(seen).toContain("approval_granted");
    expect(seen.at(-1)).toBe("run_finished");
  });

  it("a 404 for an unknown run is thrown, not retried", async () => {
    const err = await collect(client.events(`run_${"0".repeat(32)}`)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: "not_found", status: 404 });
  });
});
