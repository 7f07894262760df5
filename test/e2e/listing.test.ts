/**
 * Finding and cleaning up runs end to end (SPEC 8): the built Worker with two API keys, over
 * real HTTP and real alarms. Each key lists, counts and deletes only its own runs; a run's
 * status changes reach the listing by themselves; a deleted run is forgotten by every route
 * and its Idempotency-Key creates a new run.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUpstream, type Upstream } from "../upstream/server.ts";
import { bootWorker, type BootedWorker } from "./worker.ts";

const [KEY_A, KEY_B] = ["listing-key-a", "listing-key-b"];

let upstream: Upstream;
let worker: BootedWorker;

beforeAll(async () => {
  upstream = await startUpstream();
  worker = await bootWorker(upstream.url, { API_KEYS: `${KEY_A},${KEY_B}`, RUNS_PER_MINUTE: "0" });
});

afterAll(async () => {
  await worker?.stop();
  await upstream?.close();
});

/** A request as `key`; the status and the JSON body (null when there is none). */
async function call(key: string, method: string, path: string, body?: unknown, headers = {}) {
  const res = await fetch(`${worker.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body !== undefined && { "content-type": "application/json" }),
      ...headers,
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text === "" ? null : (JSON.parse(text) as any) };
}

async function create(key: string, plan: unknown, headers = {}): Promise<string> {
  const { status, body } = await call(key, "POST", "/v1/runs", plan, headers);
  expect([200, 202]).toContain(status);
  return body.runId;
}

const gated = (tags: Record<string, string> = {}) => ({
  tags,
  config: { requireApprovalForRisk: "high" },
  steps: [{ id: "x", tool: "pass", risk: "high" }],
});

/** Polls `check` every 50 ms until it holds (at most 15 s). */
async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`no ${what} after 15 s`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const listed = async (key: string, query = "") =>
  (await call(key, "GET", `/v1/runs${query}`)).body.runs as any[];

describe("e2e: listings, stats and deletion per API key", () => {
  it("each key lists, counts and deletes only its own runs", async () => {
    const a = [await create(KEY_A, gated()), await create(KEY_A, gated())];
    const b = await create(KEY_B, gated());
    expect((await listed(KEY_A)).map((r) => r.runId).sort()).toEqual([...a].sort());
    expect((await listed(KEY_B)).map((r) => r.runId)).toEqual([b]);
    expect((await call(KEY_A, "GET", "/v1/stats")).body).toEqual({
      total: 2,
      byStatus: { waiting: 2 },
    });
    expect((await call(KEY_B, "GET", "/v1/stats")).body).toEqual({
      total: 1,
      byStatus: { waiting: 1 },
    });
    // b's key cannot delete a's run, and a's run stays
    expect((await call(KEY_B, "DELETE", `/v1/runs/${a[0]}`)).status).toBe(404);
    expect((await call(KEY_A, "DELETE", `/v1/runs/${a[0]}`)).status).toBe(409);
    await call(KEY_A, "POST", `/v1/runs/${a[0]}/cancel`);
    expect((await call(KEY_A, "DELETE", `/v1/runs/${a[0]}`)).status).toBe(204);
    expect((await listed(KEY_A)).map((r) => r.runId)).toEqual([a[1]]);
    expect((await call(KEY_A, "GET", "/v1/stats")).body).toEqual({
      total: 1,
      byStatus: { waiting: 1 },
    });
    expect((await listed(KEY_B)).map((r) => r.runId)).toEqual([b]);
    expect((await call(KEY_A, "GET", "/v1/runs")).status).toBe(200);
    expect((await fetch(`${worker.url}/v1/runs`)).status).toBe(401);
    expect((await fetch(`${worker.url}/v1/stats`)).status).toBe(401);
  });

  it("status changes reach the listing by themselves, as the runs' alarms run them", async () => {
    const tag = `e2e:${Date.now()}`;
    const ids = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        create(KEY_A, {
          tags: { e2e: tag.slice(4) },
          steps: [{ id: "w", tool: "wait", params: { ms: 100 * i } }],
        }),
      ),
    );
    await eventually("listing of five completed runs", async () => {
      const runs = await listed(KEY_A, `?tag=${tag}&status=completed`);
      return runs.length === 5;
    });
    for (const entry of await listed(KEY_A, `?tag=${tag}`)) {
      const run = (await call(KEY_A, "GET", `/v1/runs/${entry.runId}`)).body;
      expect(ids).toContain(entry.runId);
      expect(entry).toMatchObject({
        status: "completed",
        startedAt: run.startedAt,
        endedAt: run.endedAt,
        progress: { completedSteps: 1, totalSteps: 1, percentage: 100 },
      });
    }
  });

  it("a run that starts at once is listed as running by the time its POST answers", async () => {
    const tag = `started-${Date.now()}`;
    const plan = { tags: { e2e: tag }, steps: [{ id: "w", tool: "wait", params: { ms: 60_000 } }] };
    const { status, body } = await call(KEY_A, "POST", "/v1/runs", plan);
    expect(status).toBe(202);
    // Read at once, it is the entry the POST published (a status update would come 250 ms later).
    const [entry] = await listed(KEY_A, `?tag=e2e:${tag}`);
    const run = (await call(KEY_A, "GET", `/v1/runs/${body.runId}`)).body;
    expect(run.status).toBe("running");
    expect(entry).toMatchObject({ runId: body.runId, status: "running", startedAt: run.startedAt });
    expect(entry.startedAt).not.toBeNull();
    await call(KEY_A, "POST", `/v1/runs/${body.runId}/cancel`);
  });

  it("a deleted run is forgotten by every route; its Idempotency-Key creates a new run", async () => {
    const headers = { "idempotency-key": `e2e-${Date.now()}` };
    const first = await create(KEY_B, gated(), headers);
    expect(await create(KEY_B, gated(), headers)).toBe(first);
    await call(KEY_B, "POST", `/v1/runs/${first}/cancel`);
    expect((await call(KEY_B, "DELETE", `/v1/runs/${first}`)).status).toBe(204);
    for (const path of ["", "/steps", "/results", "/events"]) {
      expect((await call(KEY_B, "GET", `/v1/runs/${first}${path}`)).status, path).toBe(404);
    }
    expect((await call(KEY_B, "DELETE", `/v1/runs/${first}`)).status).toBe(404);
    const second = await create(KEY_B, gated(), headers);
    expect(second).not.toBe(first);
    expect((await call(KEY_B, "GET", `/v1/runs/${second}`)).body.status).toBe("waiting");
    expect((await listed(KEY_B)).map((r) => r.runId)).toContain(second);
    expect((await listed(KEY_B)).map((r) => r.runId)).not.toContain(first);
  });
});
