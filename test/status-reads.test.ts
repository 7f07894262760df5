/**
 * Cheap status reads (SPEC 6.1): `?view=summary`, `ETag` / `If-None-Match` → 304, the long
 * poll `?wait=`, and `GET /v1/runs/:id/steps` paging with a status filter. The counts a
 * summary shows are kept by storage as steps change; they must equal the steps' own.
 */
import { describe, expect, it } from "vitest";
import { countSteps } from "../src/engine/status";
import { advanceToAlarm, api, drive, execute, fireAlarmOnly, post, submit } from "./helpers";
import { unique, until, upstreamUrl } from "./helpers";

function chain(n: number, extra: Record<string, unknown> = {}) {
  return {
    name: unique("reads"),
    ...extra,
    steps: Array.from({ length: n }, (_, i) => ({
      id: `s${i}`,
      tool: "pass",
      params: { value: i },
      ...(i > 0 && { dependsOn: [`s${i - 1}`] }),
    })),
  };
}

/** A run waiting at an approval step, after a first step that succeeded. */
async function waitingRun(): Promise<string> {
  const { res, body } = await submit({
    name: unique("gate"),
    steps: [
      { id: "a", tool: "pass", params: { value: 1 } },
      { id: "gate", tool: "approval", dependsOn: ["a"] },
    ],
  });
  expect(res.status).toBe(202);
  expect((await drive(body.runId)).status).toBe("waiting");
  return body.runId;
}

async function read(path: string, headers: Record<string, string> = {}) {
  const res = await api(path, { headers });
  const text = await res.text();
  return { res, text, body: text === "" ? null : JSON.parse(text) };
}

describe("GET /v1/runs/:id?view=summary", () => {
  it("answers every field of the full document but steps", async () => {
    const s = await execute(chain(3));
    const full = await read(`/v1/runs/${s.runId}`);
    const summary = await read(`/v1/runs/${s.runId}?view=summary`);
    expect(summary.res.status).toBe(200);
    expect(summary.body).not.toHaveProperty("steps");
    const { steps, ...rest } = full.body;
    expect(steps).toHaveLength(3);
    expect(summary.body).toEqual(rest);
  });

  it("has the same size for 5 steps and for 500", async () => {
    const small = await execute(chain(5, { name: "same-name" }));
    const large = await execute(chain(500, { name: "same-name" }), 200);
    expect(large.status).toBe("completed");
    const a = await read(`/v1/runs/${small.runId}?view=summary`);
    const b = await read(`/v1/runs/${large.runId}?view=summary`);
    // Only the digits of counts and times may differ.
    expect(Math.abs(a.text.length - b.text.length)).toBeLessThan(24);
    expect(b.body.progress.totalSteps).toBe(500);
  });

  it("counts steps as the steps themselves do, through retries, skips and failures", async () => {
    const s = await execute({
      name: unique("counts"),
      config: { retry: { maxRetries: 1, baseDelayMs: 0 } },
      steps: [
        { id: "ok", tool: "pass", params: { value: 1 } },
        { id: "skip", tool: "pass", when: false, dependsOn: ["ok"] },
        { id: "bad", tool: "unknown_endpoint" },
        { id: "after-bad", tool: "pass", dependsOn: ["bad"] },
      ],
    });
    const full = await read(`/v1/runs/${s.runId}`);
    const records = full.body.steps.map((st: any) => ({
      status: st.status,
      startedAt: st.startedAt && Date.parse(st.startedAt),
      endedAt: st.endedAt && Date.parse(st.endedAt),
    }));
    const counts = countSteps(records);
    expect(full.body.summary).toEqual({
      totalSteps: counts.total,
      successfulSteps: counts.succeeded,
      failedSteps: counts.failed,
      skippedSteps: counts.skipped,
      cancelledSteps: counts.cancelled,
    });
    expect(full.body.summary).toMatchObject({
      successfulSteps: 1,
      failedSteps: 1,
      skippedSteps: 2,
    });
    expect(full.body.progress.averageStepDurationMs).toBe(
      Math.round(counts.durationSum / counts.durationCount),
    );
  });
});

describe("the full document's steps", () => {
  /** The full document's steps against a page read straight from the rows. */
  async function expectSameSteps(runId: string) {
    const full = await read(`/v1/runs/${runId}`);
    const page = await read(`/v1/runs/${runId}/steps?limit=1000`);
    expect(full.body.steps).toEqual(page.body.steps);
    return full.body;
  }

  it("stay equal to the rows through waits, fan-out, failures, cancels and a redrive", async () => {
    const { res, body } = await submit({
      name: unique("views"),
      config: { retry: { maxRetries: 0 } },
      steps: [
        { id: "gate", tool: "approval" },
        { id: "each", tool: "pass", forEach: [1, 2, 3], params: { value: "${item}" } },
        { id: "bad", tool: "unknown_endpoint", dependsOn: ["gate"] },
        { id: "after", tool: "pass", dependsOn: ["bad"] },
      ],
    });
    expect(res.status).toBe(202);
    const runId = body.runId;
    await expectSameSteps(runId);
    expect((await drive(runId)).status).toBe("waiting");
    await expectSameSteps(runId);
    expect((await post(`/v1/runs/${runId}/approve`, { approved: true })).res.status).toBe(200);
    await expectSameSteps(runId);
    expect((await drive(runId)).status).toBe("partial");
    const ended = await expectSameSteps(runId);
    expect(ended.steps.map((st: any) => st.status)).toEqual([
      "succeeded",
      "succeeded",
      "failed",
      "skipped",
    ]);
    expect(ended.steps[1].items).toEqual({
      total: 3,
      succeeded: 3,
      failed: 0,
      cancelled: 0,
      running: 0,
    });
    expect((await post(`/v1/runs/${runId}/retry`)).res.status).toBe(200);
    const redriven = await expectSameSteps(runId);
    expect(redriven.steps.slice(2).map((st: any) => st.status)).toEqual(["pending", "pending"]);
  });
});

describe("ETag and If-None-Match (SPEC 6.1)", () => {
  it("answers 304 without a body while nothing changed, and 200 with a new tag after a change", async () => {
    const runId = await waitingRun();
    const first = await read(`/v1/runs/${runId}`);
    const etag = first.res.headers.get("etag")!;
    expect(etag).toMatch(/^W\/".+"$/);
    const again = await read(`/v1/runs/${runId}`, { "if-none-match": etag });
    expect(again.res.status).toBe(304);
    expect(again.text).toBe("");
    expect(again.res.headers.get("etag")).toBe(etag);

    expect((await post(`/v1/runs/${runId}/approve`, { approved: true })).res.status).toBe(200);
    const changed = await read(`/v1/runs/${runId}`, { "if-none-match": etag });
    expect(changed.res.status).toBe(200);
    expect(changed.res.headers.get("etag")).not.toBe(etag);
  });

  it("keeps its tag while a webhook delivery is under way: only a made attempt shows", async () => {
    const hook = `${upstreamUrl}/script/${unique("hook")}?plan=500,200&delay=0,2000`;
    const { res, body } = await submit({ ...chain(1), webhook: { url: hook } });
    expect(res.status).toBe(202);
    await drive(body.runId); // completed; its first delivery answered 500, the next is due in 1 s
    const path = `/v1/runs/${body.runId}?view=summary`;
    const before = await read(path);
    expect(before.body.webhook.deliveries).toHaveLength(1);
    await advanceToAlarm(body.runId);
    await fireAlarmOnly(body.runId); // the second attempt is claimed and sent: answered in 2 s
    const etag = before.res.headers.get("etag")!;
    expect((await read(path, { "if-none-match": etag })).res.status).toBe(304);
    await until(
      async () => (await read(path)).body.webhook.state === "delivered",
      "the second attempt is made",
    );
    expect((await read(path, { "if-none-match": etag })).res.status).toBe(200);
  });

  it("tags the summary and the full document apart", async () => {
    const runId = await waitingRun();
    const full = (await read(`/v1/runs/${runId}`)).res.headers.get("etag")!;
    const summary = await read(`/v1/runs/${runId}?view=summary`, { "if-none-match": full });
    expect(summary.res.status).toBe(200);
    expect(summary.res.headers.get("etag")).not.toBe(full);
  });
});

describe("long poll ?wait= (SPEC 6.1)", () => {
  it("answers as soon as the run changes", async () => {
    const runId = await waitingRun();
    const etag = (await read(`/v1/runs/${runId}?view=summary`)).res.headers.get("etag")!;
    const poll = read(`/v1/runs/${runId}?view=summary&wait=30000`, { "if-none-match": etag });
    expect((await post(`/v1/runs/${runId}/approve`, { approved: true })).res.status).toBe(200);
    const answer = await poll;
    expect(answer.res.status).toBe(200);
    expect(answer.res.headers.get("etag")).not.toBe(etag);
    expect(answer.body.pendingApproval).toBeUndefined();
  });

  it("answers 304 when nothing changed by the deadline", async () => {
    const runId = await waitingRun();
    const etag = (await read(`/v1/runs/${runId}`)).res.headers.get("etag")!;
    const answer = await read(`/v1/runs/${runId}?wait=50`, { "if-none-match": etag });
    expect(answer.res.status).toBe(304);
    expect(answer.res.headers.get("etag")).toBe(etag);
  });

  it("answers at once without If-None-Match", async () => {
    const runId = await waitingRun();
    const answer = await read(`/v1/runs/${runId}?view=summary&wait=30000`);
    expect(answer.res.status).toBe(200);
    expect(answer.body.status).toBe("waiting");
  });

  it.each([
    ["wait=0", "query.wait"],
    ["wait=30001", "query.wait"],
    ["wait=soon", "query.wait"],
    ["view=tiny", "query.view"],
    ["view=summary&view=full", "query.view"],
    ["veiw=summary", "query.veiw"],
  ])("rejects %s with a 400 naming %s", async (query, path) => {
    const runId = await waitingRun();
    const answer = await read(`/v1/runs/${runId}?${query}`);
    expect(answer.res.status).toBe(400);
    expect(answer.body.error.issues.map((i: any) => i.path)).toContain(path);
  });
});

describe("GET /v1/runs/:id/steps (SPEC 6.1)", () => {
  it("pages through the steps in plan order", async () => {
    const s = await execute(chain(5));
    const first = await read(`/v1/runs/${s.runId}/steps?limit=2`);
    expect(first.body.steps.map((st: any) => st.id)).toEqual(["s0", "s1"]);
    expect(first.body.next).toBe(1);
    const second = await read(`/v1/runs/${s.runId}/steps?limit=2&after=${first.body.next}`);
    expect(second.body.steps.map((st: any) => st.id)).toEqual(["s2", "s3"]);
    const last = await read(`/v1/runs/${s.runId}/steps?limit=2&after=${second.body.next}`);
    expect(last.body).toEqual({ steps: [expect.objectContaining({ id: "s4" })], next: null });
  });

  it("filters by status, and the entries are those of the full document", async () => {
    const s = await execute({
      name: unique("filter"),
      steps: [
        { id: "a", tool: "pass", params: { value: 1 } },
        { id: "bad", tool: "unknown_endpoint" },
        { id: "b", tool: "pass", dependsOn: ["bad"] },
        { id: "c", tool: "pass", params: { value: 2 } },
      ],
    });
    const page = await read(`/v1/runs/${s.runId}/steps?status=failed,skipped`);
    expect(page.body.steps.map((st: any) => [st.id, st.status])).toEqual([
      ["bad", "failed"],
      ["b", "skipped"],
    ]);
    expect(page.body.next).toBeNull();
    const full = await read(`/v1/runs/${s.runId}`);
    expect(page.body.steps[0]).toEqual(full.body.steps[1]);
  });

  it.each([
    ["status=done", "query.status"],
    ["status=", "query.status"],
    ["limit=0", "query.limit"],
    ["limit=1001", "query.limit"],
    ["after=-1", "query.after"],
    ["after=", "query.after"],
    ["after=0x1", "query.after"],
    ["status=failed&status=succeeded", "query.status"],
    ["limit=+5", "query.limit"],
    ["colour=red", "query.colour"],
  ])("rejects %s with a 400 naming %s", async (query, path) => {
    const s = await execute(chain(1));
    const answer = await read(`/v1/runs/${s.runId}/steps?${query}`);
    expect(answer.res.status).toBe(400);
    expect(answer.body.error.issues.map((i: any) => i.path)).toContain(path);
  });

  it("answers 404 for an unknown run", async () => {
    const answer = await read(`/v1/runs/run_${"0".repeat(32)}/steps`);
    expect(answer.res.status).toBe(404);
  });
});
