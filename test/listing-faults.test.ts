/**
 * The listing never loses a run (SPEC 8.2): the index is fed from each run's checkpoint
 * through a durable outbox, so it catches up after the index failed, was restarted in the
 * middle of an update, or the run's own object restarted. Faults are injected into the
 * test Worker's RunIndex (test/support/test-run-index.ts); each test runs under an API key of
 * its own, so its index is its own. Retries are made due by moving the run's clock and
 * firing its alarm, never by sleeping.
 */
import { describe, expect, it } from "vitest";
import { ownerOf } from "../src/api/auth";
import { idempotentRunId } from "../src/ids";
import { abortObject, advanceClock, alarmAt, fireAlarm, post, unique, until } from "./helpers";
import {
  created,
  del,
  gatedPlan,
  keyApi,
  keyIndex,
  listAll,
  passPlan,
  submitVia,
} from "./listing-helpers";

/** Past any backoff of the outbox (at most 60 s). */
const PAST_BACKOFF = 61_000;

/** A key of this test's own: its API, and its index. */
async function tenant() {
  const key = unique("key");
  return { via: keyApi(key), index: await keyIndex(key) };
}

/** Fires the run's alarm with its clock moved past any backoff, until `done()` or `max` tries. */
async function retryUntil(runId: string, done: () => Promise<boolean>, max = 5) {
  for (let i = 0; i < max && !(await done()); i++) {
    await advanceClock(runId, PAST_BACKOFF);
    await fireAlarm(runId);
  }
  expect(await done()).toBe(true);
}

const statuses = async (via: ReturnType<typeof keyApi>) =>
  (await listAll({}, via)).map((r) => [r.runId, r.status]);

describe("the listing catches up after faults", () => {
  it("a run is created while its index cannot be reached; the outbox lists it", async () => {
    const { via, index } = await tenant();
    await index.failUpdates(3);
    const runId = await created(passPlan(), {}, via);
    expect((await via(`/v1/runs/${runId}`)).status).toBe(200);
    await retryUntil(runId, async () => (await statuses(via)).length === 1);
    await retryUntil(runId, async () => (await statuses(via))[0]?.[1] === "completed", 10);
    expect(await statuses(via)).toEqual([[runId, "completed"]]);
  });

  it("a POST is answered when the index hangs; the run is listed once the index is back", async () => {
    const { via, index } = await tenant();
    await index.holdUpdates();
    const runId = await created(gatedPlan(), {}, via); // a 202, although the index never answers
    expect((await via(`/v1/runs/${runId}`)).status).toBe(200);
    await index.restart().catch(() => {});
    await retryUntil(runId, async () => (await statuses(via))[0]?.[1] === "waiting");
  });

  it("a crash while a new run waits for its index leaves a run that is still listed (its alarm was set with it)", async () => {
    const key = unique("key");
    const [via, index] = [keyApi(key), await keyIndex(key)];
    const headers = { "idempotency-key": unique("idem") };
    const runId = await idempotentRunId(await ownerOf(key), headers["idempotency-key"]);
    await index.holdUpdates();
    const posting = submitVia(via, gatedPlan(), headers);
    await until(async () => (await via(`/v1/runs/${runId}`)).status === 200, "the run is stored");
    expect(await alarmAt(runId)).not.toBeNull();
    await abortObject(runId); // the POST in flight fails with the object: a 503 to retry
    const failed = await posting;
    expect([failed.res.status, failed.body.error.code]).toEqual([503, "unavailable"]);
    expect(failed.res.headers.get("Retry-After")).toBe("1");
    await index.restart().catch(() => {});
    await retryUntil(runId, async () => (await statuses(via))[0]?.[1] === "waiting");
    const retried = await submitVia(via, gatedPlan(), headers); // the client's safe retry
    expect([retried.res.status, retried.body.runId]).toEqual([200, runId]);
  });

  it("a DELETE is answered when the index hangs; the run is gone at once, and unlisted by its alarm after a crash", async () => {
    const { via, index } = await tenant();
    const runId = await created(gatedPlan(), {}, via);
    await via(`/v1/runs/${runId}/cancel`, { method: "POST" });
    await index.holdUpdates();
    expect((await del(runId, via)).status).toBe(204);
    expect((await via(`/v1/runs/${runId}`)).status).toBe(404);
    expect(await alarmAt(runId)).not.toBeNull(); // the rest of the deletion
    await abortObject(runId);
    await index.restart().catch(() => {});
    await retryUntil(runId, async () => (await statuses(via)).length === 0);
    expect(await fireAlarm(runId)).toBe(false);
  });

  it("an index restarted in the middle of an update: the update is sent again", async () => {
    const { via, index } = await tenant();
    const runId = await created(gatedPlan(), {}, via);
    expect(await statuses(via)).toEqual([[runId, "waiting"]]);
    await index.holdUpdates();
    expect((await post(`/v1/runs/${runId}/cancel`)).res.status).toBe(404); // another key's run
    const cancelled = await via(`/v1/runs/${runId}/cancel`, { method: "POST" });
    expect(cancelled.status).toBe(200);
    expect(await statuses(via)).toEqual([[runId, "waiting"]]); // the update hangs
    await index.restart().catch(() => {}); // the update in flight fails with the old instance
    await retryUntil(runId, async () => (await statuses(via))[0]?.[1] === "cancelled");
  });

  it("a run restarted before its update was sent: its alarm sends it", async () => {
    const { via, index } = await tenant();
    const runId = await created(gatedPlan(), {}, via);
    await index.failUpdates(1);
    expect((await via(`/v1/runs/${runId}/cancel`, { method: "POST" })).status).toBe(200);
    await abortObject(runId);
    expect(await statuses(via)).toEqual([[runId, "waiting"]]);
    await retryUntil(runId, async () => (await statuses(via))[0]?.[1] === "cancelled");
  });

  it("a run deleted while its index cannot be reached is gone at once, and unlisted by its alarm", async () => {
    const { via, index } = await tenant();
    const runId = await created(gatedPlan(), {}, via);
    const kept = await created(gatedPlan(), {}, via);
    await via(`/v1/runs/${runId}/cancel`, { method: "POST" });
    await index.failUpdates(1);
    expect((await del(runId, via)).status).toBe(204);
    expect((await via(`/v1/runs/${runId}`)).status).toBe(404);
    expect((await statuses(via)).map(([id]) => id)).toContain(runId); // still listed, for now
    await retryUntil(runId, async () => (await statuses(via)).length === 1);
    expect((await statuses(via)).map(([id]) => id)).toEqual([kept]);
    expect(await fireAlarm(runId)).toBe(false); // the deletion is done
  });

  it("a listing or stats read the index cannot answer is a 503 to retry, then works", async () => {
    const { via, index } = await tenant();
    const runId = await created(passPlan(), {}, via);
    await index.failReads(2);
    for (const path of ["/v1/runs", "/v1/stats"]) {
      const res = await via(path);
      expect(res.status, path).toBe(503);
      expect(res.headers.get("retry-after")).toBe("1");
      expect(await res.json()).toMatchObject({ error: { code: "unavailable" } });
    }
    expect((await listAll({}, via)).map((r) => r.runId)).toEqual([runId]);
  });
});
