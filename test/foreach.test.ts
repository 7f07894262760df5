/**
 * forEach fan-out (SPEC 2.1, 4, 5.2, 5.5): a step runs once per item with `${item}` and
 * `${index}`, at most `maxConcurrency` items in flight, each item its own attempt series
 * (own Idempotency-Key, own retries); `data` is the item data in item order.
 */
import { describe, expect, it } from "vitest";
import { byId, events, execute, post, started, status, stepDetail } from "./helpers";
import { abortObject, advanceToAlarm, alarmAt, alarmInBackground, drive } from "./helpers";
import { fireAlarm, gate, runStub, until } from "./helpers";
import { runCalls, script, unique, upstreamCalls, upstreamUrl } from "./helpers";

/** Item queries for `scriptedEach`: the upstream's answers (and delay) come from the item. */
const PLAN = { plan: "${item}" };
const PLAN_AND_DELAY = { plan: "${item.plan}", delay: "${item.delay}" };
/** An item for PLAN_AND_DELAY: the upstream answers `plan` after `delay` ms. */
const scripted = (plan: string, delay: number) => ({ plan, delay });

/** Starts a run of one forEach `pass` step `each` whose items' outputs are the items. */
const passEach = (forEach: unknown[]) =>
  started({ steps: [{ id: "each", tool: "pass", forEach, params: { value: "${item}" } }] });

/** A forEach `http` step `each` over `forEach`, each item calling with `params`. */
function httpEach(
  forEach: unknown,
  params: Record<string, unknown>,
  more: Record<string, unknown> = {},
) {
  return { id: "each", tool: "http", forEach, params, ...more };
}

/** A forEach `http` step `each` whose item k calls `/script/<key>-<k>` with `query` (templates of the item). */
function scriptedEach(
  key: string,
  forEach: unknown[],
  query: Record<string, string>,
  more: Record<string, unknown> = {},
) {
  return httpEach(forEach, { url: script(`${key}-\${index}`), query }, more);
}

/** The largest number of logged calls whose [at, endedAt] intervals overlap at one instant. */
function maxOverlap(calls: { at: number; endedAt: number }[]): number {
  const points = calls.flatMap((c) => [
    [c.at, 1],
    [c.endedAt, -1],
  ]);
  // ends before starts at the same instant: a call starting as another ended does not overlap it
  points.sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
  let now = 0;
  let max = 0;
  for (const [, d] of points) max = Math.max(max, (now += d!));
  return max;
}

describe("forEach: items and data", () => {
  it("runs once per element of `${steps.x.data.*.id}`, with ${item} and ${index} in params", async () => {
    const runId = await started({
      steps: [
        { id: "x", tool: "pass", params: { value: [{ id: "a" }, { id: "b" }, { id: "c" }] } },
        {
          id: "each",
          tool: "http",
          forEach: "${steps.x.data.*.id}",
          params: {
            url: `${upstreamUrl}/echo`,
            query: { id: "${item}", at: "${index}", label: "${item}-${index}" },
          },
        },
      ],
    });
    const s = await drive(runId);
    expect(s.status).toBe("completed");
    const each = await stepDetail(runId, "each");
    expect(each.status).toBe("succeeded");
    expect(each.data.map((d: any) => d.query)).toEqual([
      { id: "a", at: "0", label: "a-0" },
      { id: "b", at: "1", label: "b-1" },
      { id: "c", at: "2", label: "c-2" },
    ]);
  });

  it("runs over a literal array; ${item} keeps its JSON type when it is the whole value", async () => {
    const runId = await started({
      steps: [
        {
          id: "each",
          tool: "pass",
          forEach: [{ n: 1 }, "two", 3, null],
          params: { value: { item: "${item}", index: "${index}" } },
        },
      ],
    });
    await drive(runId);
    const each = await stepDetail(runId, "each");
    expect(each.data).toEqual([
      { item: { n: 1 }, index: 0 },
      { item: "two", index: 1 },
      { item: 3, index: 2 },
      { item: null, index: 3 },
    ]);
    // The step succeeds as a whole (its items made the attempts): its event names no attempt.
    const succeeded = (await events(runId)).filter((e) => e.type === "step_succeeded");
    expect(succeeded).toEqual([expect.not.objectContaining({ attempt: expect.anything() })]);
    expect(succeeded[0].stepId).toBe("each");
  });

  it("a later step reads the forEach data as an array", async () => {
    const runId = await started({
      steps: [
        { id: "each", tool: "pass", forEach: [1, 2, 3], params: { value: { v: "${item}" } } },
        { id: "after", tool: "pass", params: { value: "${steps.each.data.*.v}" } },
      ],
    });
    await drive(runId);
    expect((await stepDetail(runId, "after")).data).toEqual([1, 2, 3]);
  });

  it("data is in item order even when items complete in another order", async () => {
    // Item 0 answers only once items 1-3 have been recorded: they complete first, whatever the load.
    const first = gate("each-gate");
    const later = ["/delay/0", "/delay/20", "/delay/0"].map((path) => `${upstreamUrl}${path}`);
    const runId = await started({
      steps: [
        {
          id: "each",
          tool: "http",
          forEach: [first.url, ...later],
          params: { url: "${item}", query: { i: "${index}" } },
        },
      ],
    });
    const iteration = alarmInBackground(runId);
    const answered = async () =>
      (await stepDetail(runId, "each")).attemptLog
        .filter((a: any) => a.endedAt)
        .map((a: any) => a.item);
    await until(async () => (await answered()).length === 3, "items 1-3 answered");
    expect((await answered()).sort()).toEqual([1, 2, 3]);
    await first.open();
    expect(await iteration).toBe("settled");
    await drive(runId);
    const each = await stepDetail(runId, "each");
    expect(each.status).toBe("succeeded");
    expect(each.data.map((d: any) => d.query.i)).toEqual(["0", "1", "2", "3"]);
    expect(each.data.map((d: any) => d.key ?? d.ms)).toEqual([first.key, 0, 20, 0]);
  });

  it("an empty array succeeds with data []", async () => {
    const runId = await started({
      steps: [
        { id: "x", tool: "pass", params: { value: [] } },
        {
          id: "each",
          tool: "http",
          forEach: "${steps.x.data}",
          params: { url: `${upstreamUrl}/echo` },
        },
        { id: "after", tool: "pass", params: { value: "${steps.each.data}" } },
      ],
    });
    const s = await drive(runId);
    expect(s.status).toBe("completed");
    expect((await stepDetail(runId, "each")).data).toEqual([]);
    expect((await stepDetail(runId, "after")).data).toEqual([]);
    expect(await runCalls(runId)).toHaveLength(0);
  });

  it("a wildcard matching nothing is an empty array: data []", async () => {
    const runId = await started({
      steps: [
        { id: "x", tool: "pass", params: { value: { list: [] } } },
        {
          id: "each",
          tool: "pass",
          forEach: "${steps.x.data.list.*.id}",
          params: { value: "${item}" },
        },
      ],
    });
    expect((await drive(runId)).status).toBe("completed");
    expect((await stepDetail(runId, "each")).data).toEqual([]);
  });

  it("forEach that does not resolve to an array fails the step as invalid_data; dependents are skipped", async () => {
    const runId = await started({
      steps: [
        { id: "x", tool: "pass", params: { value: { not: "a list" } } },
        { id: "each", tool: "pass", forEach: "${steps.x.data}", params: { value: "${item}" } },
        { id: "after", tool: "pass", params: { value: 1 }, dependsOn: ["each"] },
      ],
    });
    const s = await drive(runId);
    const steps = byId(s);
    expect(steps.each.status).toBe("failed");
    expect(steps.each.error.category).toBe("invalid_data");
    expect(steps.after).toMatchObject({ status: "skipped", reason: "dependency_failed" });
    expect(s.status).toBe("partial");
    expect(steps.each.error.message).toBe("forEach resolved to object, not an array");
  });

  it("forEach resolving to null says null, not object", async () => {
    const s = await drive(
      await started({
        input: { nothing: null },
        steps: [{ id: "each", tool: "pass", forEach: "${input.nothing}", params: { value: 1 } }],
      }),
    );
    expect(byId(s).each.error).toMatchObject({
      category: "invalid_data",
      message: "forEach resolved to null, not an array",
    });
  });

  it("forEach naming a path that does not exist fails the step as template_unresolved", async () => {
    const runId = await started({
      steps: [
        { id: "x", tool: "pass", params: { value: { list: [1] } } },
        {
          id: "each",
          tool: "pass",
          forEach: "${steps.x.data.missing}",
          params: { value: "${item}" },
        },
      ],
    });
    const s = await drive(runId);
    expect(byId(s).each.status).toBe("failed");
    expect(byId(s).each.error.category).toBe("template_unresolved");
    expect(s.status).toBe("partial");
  });
  it("items whose params do not resolve fail as template_unresolved (the iteration does not stall)", async () => {
    const runId = await started({
      steps: [
        { id: "each", tool: "pass", forEach: [{ b: 1 }, { b: 2 }], params: { value: "${item.a}" } },
      ],
    });
    const s = await drive(runId);
    expect(byId(s).each.status).toBe("failed");
    expect(byId(s).each.error.category).toBe("template_unresolved");
    expect(byId(s).each.items).toEqual({
      total: 2,
      succeeded: 0,
      failed: 2,
      cancelled: 0,
      running: 0,
    });
    expect(s.status).toBe("failed");
  });
});

describe("forEach: concurrency and keys", () => {
  it("maxConcurrency: 2 never has more than 2 item calls in flight", async () => {
    const tag = unique("fe-conc");
    const runId = await started({
      steps: [
        httpEach(
          [0, 1, 2, 3, 4, 5],
          { url: `${upstreamUrl}/work`, query: { ms: 120, tag, i: "${index}" } },
          { maxConcurrency: 2 },
        ),
      ],
    });
    expect((await drive(runId)).status).toBe("completed");
    const calls = (await upstreamCalls("/work")).filter((c) => c.query.includes(tag));
    expect(calls).toHaveLength(6);
    expect(calls.every((c) => typeof c.endedAt === "number")).toBe(true);
    expect(maxOverlap(calls)).toBe(2);
  });

  it("without maxConcurrency, config.maxParallel bounds the items in flight", async () => {
    const tag = unique("fe-par");
    const runId = await started({
      config: { maxParallel: 3 },
      steps: [
        {
          id: "each",
          tool: "http",
          forEach: [0, 1, 2, 3, 4, 5, 6],
          params: { url: `${upstreamUrl}/work`, query: { ms: 100, tag } },
        },
      ],
    });
    expect((await drive(runId)).status).toBe("completed");
    const calls = (await upstreamCalls("/work")).filter((c) => c.query.includes(tag));
    expect(calls).toHaveLength(7);
    expect(maxOverlap(calls)).toBe(3);
  });

  it("each item's Idempotency-Key is <runId>:<stepId>:<itemIndex>", async () => {
    const key = unique("fe-key");
    const runId = await started({
      steps: [
        {
          id: "each",
          tool: "http",
          forEach: ["p", "q", "r"],
          params: { url: script(`${key}-\${item}`) },
        },
      ],
    });
    await drive(runId);
    for (const [k, item] of ["p", "q", "r"].entries()) {
      const calls = await upstreamCalls(`/script/${key}-${item}`);
      expect(calls.map((c) => c.idempotencyKey)).toEqual([`${runId}:each:${k}`]);
      expect(calls[0].attempt).toBe(1);
    }
  });
});

describe("forEach: failures", () => {
  it("an item that fails once retries on its own, with the same key; the others run once", async () => {
    const key = unique("fe-retry");
    const runId = await started({
      steps: [scriptedEach(key, ["200", "503,200", "200"], PLAN, { retry: { baseDelayMs: 0 } })],
    });
    const s = await drive(runId);
    expect(s.status).toBe("completed");
    expect((await upstreamCalls(`/script/${key}-0`)).map((c) => c.attempt)).toEqual([1]);
    expect((await upstreamCalls(`/script/${key}-2`)).map((c) => c.attempt)).toEqual([1]);
    const retried = await upstreamCalls(`/script/${key}-1`);
    expect(retried.map((c) => c.attempt)).toEqual([1, 2]);
    expect(new Set(retried.map((c) => c.idempotencyKey))).toEqual(new Set([`${runId}:each:1`]));
    const each = await stepDetail(runId, "each");
    expect(each.data.map((d: any) => d.status)).toEqual([200, 200, 200]);
    expect(each.attemptLog.filter((a: any) => a.item === 1)).toEqual([
      expect.objectContaining({ item: 1, attempt: 1, category: "server_error", status: 503 }),
      expect.objectContaining({ item: 1, attempt: 2 }),
    ]);
    expect(each.attemptLog.filter((a: any) => a.item === 1)[1].category).toBeUndefined();
  });

  it("a permanently failing item fails the step only after the other items settle; they are recorded", async () => {
    const key = unique("fe-fail");
    const runId = await started({
      steps: [
        scriptedEach(
          key,
          [scripted("404", 0), scripted("200", 200), scripted("200", 300)],
          PLAN_AND_DELAY,
        ),
        { id: "after", tool: "pass", params: { value: "${steps.each.data}" } },
        { id: "other", tool: "pass", params: { value: 1 } },
      ],
    });
    const s = await drive(runId);
    const steps = byId(s);
    expect(steps.each.status).toBe("failed");
    expect(steps.each.error.category).toBe("client_error");
    expect(steps.each.items).toEqual({
      total: 3,
      succeeded: 2,
      failed: 1,
      cancelled: 0,
      running: 0,
    });
    expect(steps.after).toMatchObject({ status: "skipped", reason: "dependency_failed" });
    expect(s.status).toBe("partial");

    const each = await stepDetail(runId, "each");
    // the step failed after the slowest item (300 ms) ended, not when item 0 failed
    const ends = each.attemptLog.map((a: any) => Date.parse(a.endedAt));
    expect(Date.parse(each.endedAt)).toBeGreaterThanOrEqual(Math.max(...ends));
    expect(each.attemptLog).toEqual([
      expect.objectContaining({ item: 0, attempt: 1, category: "client_error", status: 404 }),
      expect.objectContaining({ item: 1, attempt: 1, status: 200 }),
      expect.objectContaining({ item: 2, attempt: 1, status: 200 }),
    ]);
    // the succeeded items were called once each and their data is stored
    expect(await upstreamCalls(`/script/${key}-1`)).toHaveLength(1);
    expect(await upstreamCalls(`/script/${key}-2`)).toHaveLength(1);
    const items: any[] = await runStub(runId).itemRows();
    expect(items.map((r) => r.status)).toEqual(["failed", "succeeded", "succeeded"]);
    expect(JSON.parse(items[1].data)).toMatchObject({ status: 200 });
  });

  it("an item that exhausts its retries fails the step with its last category", async () => {
    const key = unique("fe-exhaust");
    const runId = await started({
      steps: [
        scriptedEach(key, ["200", "500"], PLAN, { retry: { maxRetries: 2, baseDelayMs: 0 } }),
      ],
    });
    const s = await drive(runId);
    expect(byId(s).each.status).toBe("failed");
    expect(byId(s).each.error.category).toBe("server_error");
    expect((await upstreamCalls(`/script/${key}-1`)).map((c) => c.attempt)).toEqual([1, 2, 3]);
    expect(await upstreamCalls(`/script/${key}-0`)).toHaveLength(1);
    expect(s.status).toBe("failed");
  });
  it("an item retry due later makes the step retrying; once due, only that item runs again", async () => {
    const key = unique("fe-later");
    const runId = await started({
      steps: [
        scriptedEach(key, ["200", "503,200"], PLAN, {
          retry: { baseDelayMs: 600_000, maxDelayMs: 600_000, jitter: "none" },
        }),
      ],
    });
    await fireAlarm(runId);
    let each = byId(await status(runId)).each;
    expect(each.status).toBe("retrying");
    expect(Date.parse(each.nextAttemptAt)).toBeGreaterThan(Date.now() + 500_000); // no wall-clock retry during the test
    expect(each.items).toEqual({ total: 2, succeeded: 1, failed: 0, cancelled: 0, running: 0 });
    expect(await alarmAt(runId)).toBe(Date.parse(each.nextAttemptAt));

    await advanceToAlarm(runId);
    const s = await drive(runId);
    expect(s.status).toBe("completed");
    each = await stepDetail(runId, "each");
    expect(each.data.map((d: any) => d.status)).toEqual([200, 200]);
    expect(await upstreamCalls(`/script/${key}-0`)).toHaveLength(1);
    expect((await upstreamCalls(`/script/${key}-1`)).map((c) => c.attempt)).toEqual([1, 2]);
  });
  it("while a later retry round of items runs, the step shows running (not retrying)", async () => {
    const key = unique("fe-round");
    const runId = await started({
      steps: [
        scriptedEach(key, [scripted("200", 0), scripted("503,200", 300)], PLAN_AND_DELAY, {
          retry: { baseDelayMs: 600_000, maxDelayMs: 600_000, jitter: "none" },
        }),
      ],
    });
    await fireAlarm(runId);
    expect(byId(await status(runId)).each.status).toBe("retrying");
    await advanceToAlarm(runId);
    const inFlight = alarmInBackground(runId);
    let each: any;
    await until(async () => {
      each = byId(await status(runId)).each;
      return each.items.running === 1;
    }, "the retried item is in flight");
    expect(each.status).toBe("running");
    expect(each.nextAttemptAt).toBeUndefined();
    expect(await inFlight).toBe("settled");
    expect((await status(runId)).status).toBe("completed");
  });
  it("fail-fast: in-flight items finish and are recorded, items not started are cancelled, the run fails", async () => {
    const key = unique("fe-ff");
    const runId = await started({
      steps: [
        httpEach(
          [0, 1, 2, 3],
          { url: script(`${key}-\${index}`, "?delay=300") },
          { maxConcurrency: 2 },
        ),
        {
          id: "boom",
          tool: "http",
          params: { url: script(`${key}-boom`, "?plan=404") },
          onFailure: "fail_run",
        },
      ],
    });
    const s = await drive(runId);
    expect(s.status).toBe("failed");
    const each = byId(s).each;
    expect(each.status).toBe("cancelled");
    expect(each.items).toEqual({ total: 4, succeeded: 2, failed: 0, cancelled: 2, running: 0 });
    expect(await upstreamCalls(`/script/${key}-0`)).toHaveLength(1);
    expect(await upstreamCalls(`/script/${key}-1`)).toHaveLength(1);
    expect(await upstreamCalls(`/script/${key}-2`)).toHaveLength(0);
    expect(await upstreamCalls(`/script/${key}-3`)).toHaveLength(0);
  });

  it("failFast: once an item fails for good no new item starts; the rest are cancelled and the step fails", async () => {
    const key = unique("fe-ff-item");
    const urls = [0, 1, 2, 3, 4].map((k) => script(`${key}-${k}`, k === 1 ? "?plan=404" : ""));
    const runId = await started({
      config: { failFast: true },
      steps: [httpEach(urls, { url: "${item}" }, { maxConcurrency: 1 })],
    });
    const s = await drive(runId);
    expect(s.status).toBe("failed");
    const each = byId(s).each;
    expect(each.status).toBe("failed");
    expect(each.error.category).toBe("client_error");
    expect(each.items).toEqual({ total: 5, succeeded: 1, failed: 1, cancelled: 3, running: 0 });
    for (const k of [2, 3, 4]) expect(await upstreamCalls(`/script/${key}-${k}`)).toHaveLength(0);
  });

  it.each([
    ["continue under failFast: every item runs", true, "continue", "partial", 2, 0],
    [
      "fail_run without failFast: the first failure stops new items",
      false,
      "fail_run",
      "failed",
      0,
      2,
    ],
  ] as const)(
    "a step's onFailure decides, not config.failFast: %s",
    async (_, failFast, onFailure, status, succeeded, cancelled) => {
      const key = unique("fe-of-item");
      const urls = [0, 1, 2].map((k) => script(`${key}-${k}`, k === 0 ? "?plan=404" : ""));
      const runId = await started({
        config: { failFast },
        steps: [
          { id: "other", tool: "pass", params: { value: 1 } },
          httpEach(urls, { url: "${item}" }, { maxConcurrency: 1, onFailure }),
        ],
      });
      const s = await drive(runId);
      expect(s.status).toBe(status);
      expect(byId(s).each.items).toEqual({ total: 3, succeeded, failed: 1, cancelled, running: 0 });
    },
  );

  it("a step whose items failed counts its execution time from its start, as one that succeeded", async () => {
    const key = unique("fe-exec");
    const urls = [script(`${key}-slow`, "?delay=60"), script(`${key}-bad`, "?plan=404")];
    const s = await execute({
      steps: [httpEach(urls, { url: "${item}" }, { maxConcurrency: 1, retry: { maxRetries: 0 } })],
    });
    expect(s.status).toBe("failed");
    const each = await stepDetail(s.runId, "each");
    expect(each.status).toBe("failed");
    expect(each.metadata.executionTime).toBeGreaterThanOrEqual(60);
  });

  it("cancelling the run aborts the items in flight; the step is cancelled", async () => {
    const runId = await started({
      steps: [
        httpEach(
          [0, 1, 2],
          { url: `${upstreamUrl}/hang`, query: { i: "${index}" } },
          { maxConcurrency: 2, timeoutMs: 600_000 },
        ),
      ],
    });
    const inFlight = alarmInBackground(runId);
    await until(
      async () => byId(await status(runId)).each.items?.running === 2,
      "two items in flight",
    );
    const res = await post(`/v1/runs/${runId}/cancel`);
    expect(res.res.status).toBe(200);
    expect(res.body.status).toBe("cancelled");
    expect(await inFlight).toBe("settled");
    const each = byId(await status(runId)).each;
    expect(each.status).toBe("cancelled");
    expect(each.items).toEqual({ total: 3, succeeded: 0, failed: 0, cancelled: 3, running: 0 });
    // whether an aborted request reached the upstream is a race; the third item never started
    const calls = await runCalls(runId, "/hang");
    expect(calls.length).toBeLessThanOrEqual(2);
    expect(calls.some((c) => c.query.includes("i=2"))).toBe(false);
    const log = (await stepDetail(runId, "each")).attemptLog;
    expect(log.map((a: any) => [a.item, a.category])).toEqual([
      [0, "cancelled"],
      [1, "cancelled"],
    ]);
  });
  it("redrive (POST /retry) re-runs the failed items and keeps the succeeded ones", async () => {
    const key = unique("fe-redrive");
    const runId = await started({
      steps: [scriptedEach(key, ["200", "404,200"], PLAN)],
    });
    expect((await drive(runId)).status).toBe("failed");
    expect((await post(`/v1/runs/${runId}/retry`)).res.status).toBe(200);
    const s = await drive(runId);
    expect(s.status).toBe("completed");
    expect(byId(s).each.items).toEqual({
      total: 2,
      succeeded: 2,
      failed: 0,
      cancelled: 0,
      running: 0,
    });
    expect(await upstreamCalls(`/script/${key}-0`)).toHaveLength(1);
    expect((await upstreamCalls(`/script/${key}-1`)).map((c) => c.attempt)).toEqual([1, 2]);
    expect((await stepDetail(runId, "each")).data.map((d: any) => d.status)).toEqual([200, 200]);
  });
});

describe("forEach: redrive and the retry policy", () => {
  it("a redriven item gets its retries afresh", async () => {
    const key = unique("fe-redrive-budget");
    const runId = await started({
      steps: [
        scriptedEach(key, ["503,503,503,200"], PLAN, {
          retry: { maxRetries: 1, baseDelayMs: 1, maxDelayMs: 1 },
        }),
      ],
    });
    expect((await drive(runId)).status).toBe("failed");
    expect(await upstreamCalls(`/script/${key}-0`)).toHaveLength(2);
    expect((await post(`/v1/runs/${runId}/retry`)).res.status).toBe(200);
    expect((await drive(runId)).status).toBe("completed");
    expect((await upstreamCalls(`/script/${key}-0`)).map((c) => c.attempt)).toEqual([1, 2, 3, 4]);
  });
});

describe("forEach: status views", () => {
  it("GET /v1/runs/:id shows items { total, succeeded, failed, running } on the step", async () => {
    const runId = await started({
      steps: [
        { id: "each", tool: "pass", forEach: [1, 2, 3, 4], params: { value: "${item}" } },
        { id: "plain", tool: "pass", params: { value: 1 } },
      ],
    });
    const s = await drive(runId);
    expect(byId(s).each.items).toEqual({
      total: 4,
      succeeded: 4,
      failed: 0,
      cancelled: 0,
      running: 0,
    });
    expect(byId(s).plain.items).toBeUndefined();
  });

  it("shows running items while the fan-out is in flight", async () => {
    // The items hold their answers until the test has seen two of them running.
    const held = gate("each-running");
    const runId = await started({
      steps: [httpEach([0, 1, 2], { url: held.url }, { maxConcurrency: 2 })],
    });
    const inFlight = alarmInBackground(runId);
    let seen: any;
    await until(async () => {
      seen = byId(await status(runId)).each;
      return seen.items?.running === 2;
    }, "two items run");
    expect(seen.status).toBe("running");
    expect(seen.items).toEqual({ total: 3, succeeded: 0, failed: 0, cancelled: 0, running: 2 });
    expect(seen.attempts).toBe(2); // item attempts count as they start, not when the step ends
    await held.open();
    await inFlight;
    expect(byId(await drive(runId)).each.items).toEqual({
      total: 3,
      succeeded: 3,
      failed: 0,
      cancelled: 0,
      running: 0,
    });
  });

  it("GET .../steps/:id attemptLog entries carry their item index", async () => {
    const runId = await started({
      steps: [{ id: "each", tool: "pass", forEach: ["a", "b", "c"], params: { value: "${item}" } }],
    });
    await drive(runId);
    const each = await stepDetail(runId, "each");
    expect(each.attemptLog.map((a: any) => [a.item, a.attempt])).toEqual([
      [0, 1],
      [1, 1],
      [2, 1],
    ]);
    expect(each.items).toEqual({ total: 3, succeeded: 3, failed: 0, cancelled: 0, running: 0 });
    expect(each.attempts).toBe(3);
  });
});

describe("forEach: scale and durability", () => {
  it("1,000 items with the pass tool and maxConcurrency 50 complete; data has 1,000 entries in order", async () => {
    const items = Array.from({ length: 1000 }, (_, i) => i);
    const runId = await started({
      steps: [
        {
          id: "each",
          tool: "pass",
          forEach: items,
          maxConcurrency: 50,
          params: { value: { i: "${index}", v: "${item}" } },
        },
      ],
    });
    const s = await drive(runId);
    expect(s.status).toBe("completed");
    expect(byId(s).each.items).toEqual({
      total: 1000,
      succeeded: 1000,
      failed: 0,
      cancelled: 0,
      running: 0,
    });
    const each = await stepDetail(runId, "each");
    expect(each.data).toHaveLength(1000);
    expect(each.data.every((d: any, k: number) => d.i === k && d.v === k)).toBe(true);
  }, 30_000);

  it("survives a restart in the middle of a fan-out: completes, succeeded items are not called again", async () => {
    const key = unique("fe-dur");
    const runId = await started({
      steps: [
        scriptedEach(key, [0, 0, 400, 400], { delay: "${item}" }, { retry: { baseDelayMs: 0 } }),
        { id: "after", tool: "pass", params: { value: "${steps.each.data.*.call}" } },
      ],
    });
    const inFlight = alarmInBackground(runId);
    await until(async () => {
      const items = await runStub(runId).itemRows();
      return items.map((r) => r.status).join() === "succeeded,succeeded,running,running";
    }, "items 0 and 1 succeeded while 2 and 3 are in flight");
    await abortObject(runId);
    await inFlight;
    expect(await alarmAt(runId)).not.toBeNull();

    const s = await drive(runId);
    expect(s.status).toBe("completed");
    expect(await upstreamCalls(`/script/${key}-0`)).toHaveLength(1);
    expect(await upstreamCalls(`/script/${key}-1`)).toHaveLength(1);
    for (const k of [2, 3]) {
      const calls = await upstreamCalls(`/script/${key}-${k}`);
      expect(new Set(calls.map((c) => c.idempotencyKey))).toEqual(new Set([`${runId}:each:${k}`]));
      expect(calls[calls.length - 1].attempt).toBe(2);
    }
    const each = await stepDetail(runId, "each");
    expect(each.items).toEqual({ total: 4, succeeded: 4, failed: 0, cancelled: 0, running: 0 });
    expect(each.attemptLog.filter((a: any) => a.item === 2)).toEqual([
      expect.objectContaining({ item: 2, attempt: 1, category: "interrupted" }),
      expect.objectContaining({ item: 2, attempt: 2 }),
    ]);
    expect(each.data).toHaveLength(4);
    expect((await stepDetail(runId, "after")).status).toBe("succeeded");
  });
});

describe("forEach: output size", () => {
  // The workers project leaves MAX_OUTPUT_BYTES at its default (vitest.config.ts does not set it).
  const MAX_OUTPUT_BYTES = 262_144;

  it("an item whose output is larger than MAX_OUTPUT_BYTES fails as output_too_large and is not stored", async () => {
    const runId = await passEach(["small", "x".repeat(MAX_OUTPUT_BYTES)]);
    const s = await drive(runId);
    const each = byId(s).each;
    expect(each.status).toBe("failed");
    expect(each.error.category).toBe("output_too_large");
    expect(each.items).toEqual({ total: 2, succeeded: 1, failed: 1, cancelled: 0, running: 0 });
    const detail = await stepDetail(runId, "each");
    expect(detail.attemptLog.filter((a: any) => a.item === 1)).toEqual([
      expect.objectContaining({ item: 1, attempt: 1, category: "output_too_large" }),
    ]);
    const items = await runStub(runId).itemRows();
    expect(items).toEqual([
      { status: "succeeded", data: '"small"' },
      { status: "failed", data: null },
    ]);
  });

  it("items each under the limit whose total is over it fail the step from the SQL total, before assembly", async () => {
    const runId = await started({
      steps: [
        {
          id: "each",
          tool: "pass",
          forEach: ["a", "b", "c"],
          params: { value: { v: "${item}", pad: "p".repeat(100_000) } },
        },
        { id: "after", tool: "pass", params: { value: 1 }, dependsOn: ["each"] },
      ],
    });
    const s = await drive(runId);
    const each = byId(s).each;
    expect(each.status).toBe("failed");
    expect(each.items).toEqual({ total: 3, succeeded: 3, failed: 0, cancelled: 0, running: 0 });
    // 3 items of {"v":"a","pad":"p…"} (100,018 bytes) + 2 commas + 2 brackets
    expect(each.error).toEqual({
      category: "output_too_large",
      message: `the 3 items' outputs total 300058 bytes, more than MAX_OUTPUT_BYTES (${MAX_OUTPUT_BYTES})`,
    });
    expect(byId(s).after).toMatchObject({ status: "skipped", reason: "dependency_failed" });
  });

  it("the total counts UTF-8 bytes exactly: at MAX_OUTPUT_BYTES the step succeeds", async () => {
    // ["é…","x…"]: 2 brackets + 1 comma + 2×2 quotes + 2 bytes per é + 1 per x
    const e = 100_000;
    const x = MAX_OUTPUT_BYTES - 7 - 2 * e;
    const runId = await passEach(["é".repeat(e), "x".repeat(x)]);
    expect((await drive(runId)).status).toBe("completed");
    const data = (await stepDetail(runId, "each")).data;
    expect(new TextEncoder().encode(JSON.stringify(data)).byteLength).toBe(MAX_OUTPUT_BYTES);
  });

  it("the total counts UTF-8 bytes exactly: one byte over MAX_OUTPUT_BYTES fails the step", async () => {
    const e = 100_000;
    const x = MAX_OUTPUT_BYTES - 7 - 2 * e + 1;
    const runId = await passEach(["é".repeat(e), "x".repeat(x)]);
    const each = byId(await drive(runId)).each;
    expect(each.status).toBe("failed");
    expect(each.error.message).toBe(
      `the 2 items' outputs total ${MAX_OUTPUT_BYTES + 1} bytes, more than MAX_OUTPUT_BYTES (${MAX_OUTPUT_BYTES})`,
    );
  });
});
