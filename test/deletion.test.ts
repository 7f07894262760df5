/**
 * Cleaning up runs (SPEC 8.3): `DELETE /v1/runs/:id` (204 / 409 / 404), after which every
 * route, callback token and listing forgets the run; an Idempotency-Key that named a deleted
 * run creates a new one; retention by the run's own alarm, fired on demand with the run's
 * clock moved forward (no sleeping), and restarted by a redrive.
 */
import { describe, expect, it } from "vitest";
import { DAY_MS } from "../src/engine/retention";
import {
  api,
  drive,
  advanceClock,
  fireAlarm,
  post,
  status,
  submit,
  unique,
  upstreamCalls,
  upstreamUrl,
} from "./helpers";
import {
  created,
  del,
  failingPlan,
  gatedPlan,
  listedIds,
  passPlan,
  testTag,
} from "./listing-helpers";

/** Every route that names the run answers 404 (and changes nothing). */
async function expectForgotten(runId: string): Promise<void> {
  const reads = ["", "?view=summary", "/steps", "/steps/p", "/results", "/events"];
  for (const path of reads) {
    const res = await api(`/v1/runs/${runId}${path}`);
    expect(res.status, `GET ${path}`).toBe(404);
  }
  const controls: [string, unknown][] = [
    ["cancel", undefined],
    ["resume", undefined],
    ["retry", undefined],
    ["approve", { approved: true }],
  ];
  for (const [control, body] of controls) {
    expect((await post(`/v1/runs/${runId}/${control}`, body)).res.status, control).toBe(404);
  }
  expect((await del(runId)).status).toBe(404);
}

describe("DELETE /v1/runs/:id", () => {
  it("deletes a final run: 204, then every route answers 404 and listings forget it", async () => {
    const { tag, tags } = testTag();
    const runId = await created(passPlan({ tags }));
    const kept = await created(passPlan({ tags }));
    expect((await drive(runId)).status).toBe("completed");
    expect((await del(runId)).status).toBe(204);
    await expectForgotten(runId);
    expect(await listedIds({ tag })).toEqual([kept]);
    // what is left holds no alarm that could bring it back
    expect(await fireAlarm(runId)).toBe(false);
  });

  it("deletes failed and cancelled runs too", async () => {
    const failed = await created(failingPlan());
    expect((await drive(failed)).status).toBe("failed");
    const cancelled = await created(gatedPlan());
    await post(`/v1/runs/${cancelled}/cancel`);
    expect((await del(failed)).status).toBe(204);
    expect((await del(cancelled)).status).toBe(204);
    await expectForgotten(cancelled);
  });

  it("is a 409 for a run that is not final (cancel it first), and changes nothing", async () => {
    const { tag, tags } = testTag();
    const waiting = await created(gatedPlan({ tags }));
    expect(await del(waiting)).toEqual({ status: 409, code: "conflict" });
    expect((await status(waiting)).status).toBe("waiting");
    expect(await listedIds({ tag })).toEqual([waiting]);
    const paused = await created(
      passPlan({
        config: { mode: { type: "bounded", iterations: 1 } },
        steps: [
          { id: "a", tool: "pass" },
          { id: "b", tool: "pass", dependsOn: ["a"] },
        ],
      }),
    );
    expect((await drive(paused)).status).toBe("paused");
    expect((await del(paused)).status).toBe(409);
    await post(`/v1/runs/${waiting}/cancel`);
    expect((await del(waiting)).status).toBe(204);
  });

  it("is a 404 for an unknown run and for an id that is not a run id", async () => {
    expect(await del(`run_${"0".repeat(32)}`)).toEqual({ status: 404, code: "not_found" });
    expect((await del("nope")).status).toBe(404);
  });

  it("makes the run's callback tokens answer 404", async () => {
    const runId = await created({
      steps: [
        {
          id: "cb",
          tool: "callback",
          params: { url: `${upstreamUrl}/echo`, body: { n: 1 } },
          timeoutMs: 600_000,
        },
      ],
    });
    await drive(runId);
    const [call] = (await upstreamCalls("/echo")).filter(
      (c) => typeof c.body === "string" && c.body.includes(runId),
    );
    const { token } = JSON.parse(call.body);
    await post(`/v1/runs/${runId}/cancel`);
    expect((await del(runId)).status).toBe(204);
    const answered = await post(`/v1/callbacks/${token}`, { output: 1 });
    expect(answered.res.status).toBe(404);
  });

  it("an Idempotency-Key that named a deleted run creates a new run, with a new id", async () => {
    const { tag, tags } = testTag();
    const headers = { "idempotency-key": unique("key") };
    const first = await created(passPlan({ tags }), headers);
    const again = await submit(passPlan({ tags }), headers);
    expect([again.res.status, again.body.runId]).toEqual([200, first]);
    await drive(first);
    expect((await del(first)).status).toBe(204);

    const second = await created(passPlan({ tags }), headers);
    expect(second).not.toBe(first);
    expect((await submit(passPlan({ tags }), headers)).body.runId).toBe(second);
    await drive(second);
    expect((await del(second)).status).toBe(204);

    const third = await created(passPlan({ tags }), headers);
    expect(new Set([first, second, third]).size).toBe(3);
    expect((await submit(passPlan({ tags }), headers)).body.runId).toBe(third);
    expect(await listedIds({ tag })).toEqual([third]);
    await expectForgotten(first);
  });
});

describe("retention (SPEC 8.3): the run's own alarm deletes a final run", () => {
  it("after config.retentionDays, not before", async () => {
    const { tag, tags } = testTag();
    const runId = await created(passPlan({ tags, config: { retentionDays: 2 } }));
    expect((await drive(runId)).status).toBe("completed");
    await advanceClock(runId, 2 * DAY_MS - 60_000);
    await fireAlarm(runId);
    expect((await status(runId)).status).toBe("completed");
    expect(await listedIds({ tag })).toEqual([runId]);

    await advanceClock(runId, 60_000);
    expect(await fireAlarm(runId)).toBe(true);
    await expectForgotten(runId);
    expect(await listedIds({ tag })).toEqual([]);
  });

  it("after RUN_RETENTION_DAYS (30 by default) when the plan sets none", async () => {
    const runId = await created(failingPlan());
    expect((await drive(runId)).status).toBe("failed");
    await advanceClock(runId, 29 * DAY_MS);
    await fireAlarm(runId);
    expect((await status(runId)).status).toBe("failed");
    await advanceClock(runId, DAY_MS);
    await fireAlarm(runId);
    expect((await api(`/v1/runs/${runId}`)).status).toBe(404);
  });

  it("keeps a run that is not final, however long", async () => {
    const runId = await created({
      config: { retentionDays: 1 },
      steps: [{ id: "w", tool: "wait", params: { ms: 300 * DAY_MS } }],
    });
    expect((await drive(runId, 2)).status).toBe("running");
    await advanceClock(runId, 200 * DAY_MS);
    expect(await fireAlarm(runId)).toBe(true);
    expect((await status(runId)).status).toBe("running");
  });

  it("restarts its clock when a redrive makes the run active again", async () => {
    const key = unique("redrive");
    const url = `${upstreamUrl}/script/${key}?plan=500,500,500,404`;
    const runId = await created({
      config: { retentionDays: 1, retry: { maxRetries: 0 } },
      steps: [{ id: "s", tool: "http", params: { url } }],
    });
    expect((await drive(runId)).status).toBe("failed");
    await advanceClock(runId, 20 * 3_600_000);
    expect((await post(`/v1/runs/${runId}/retry`)).res.status).toBe(200);
    expect((await drive(runId)).status).toBe("failed");
    // a day after the first end, but not after the second
    await advanceClock(runId, 20 * 3_600_000);
    await fireAlarm(runId);
    expect((await status(runId)).status).toBe("failed");
    await advanceClock(runId, 5 * 3_600_000);
    await fireAlarm(runId);
    expect((await api(`/v1/runs/${runId}`)).status).toBe(404);
  });
});
