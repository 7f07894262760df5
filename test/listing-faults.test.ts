/**
 * The listing never loses a run (SPEC 8.2): the index is fed from each run's checkpoint
 * through a durable outbox, so it catches up after the index failed, was restarted in the
 * middle of an update, or the run's own object restarted. Faults are injected into the
 * test Worker's RunIndex (test/support/test-run-index.ts); each test runs under an API key of
 * its own, so its index is its own. Retries are made due by moving the run's clock and
 * firing its alarm, never by sleeping.
 */
import { describe, expect, it } from "vitest";
import { abortObject, advanceClock, fireAlarm, post, unique } from "./helpers";
import { created, del, gatedPlan, keyApi, keyIndex, listAll, passPlan } from "./listing-helpers";

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
});
