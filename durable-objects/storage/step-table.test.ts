/**
 * The steps table on the storage of a scratch object: a step's entry (what the full status
 * and a page of steps show) leaves the step's result out; its row and the results have it.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { unique } from "../../test/helpers";
import { AttemptTable } from "./attempt-table";
import { EventTable } from "./event-table";
import { migrate, TRIGGERED_WRITES } from "./schema";
import { HELD_BATCH_BYTES, Sql } from "./sql";
import { StepTable } from "./step-table";

async function withSteps(
  test: (steps: StepTable, attempts: AttemptTable, db: Sql) => void,
): Promise<void> {
  const stub = env.RUNS.get(env.RUNS.idFromName(unique("steps")));
  await runInDurableObject(stub, (_, state) => {
    const db = new Sql(state.storage.sql, TRIGGERED_WRITES);
    migrate(db);
    const steps = new StepTable(db);
    steps.insertAll([
      { index: 0, id: "a", tool: "http" },
      { index: 1, id: "b", tool: "pass" },
    ]);
    test(steps, new AttemptTable(db), db);
  });
}

describe("StepTable: entries and rows", () => {
  it("an entry is the row without the result; the row and the results have it", () =>
    withSteps((steps) => {
      const output = JSON.stringify({ page: "x".repeat(100_000) });
      steps.attemptStarted(0, 1, 1_000);
      steps.succeeded(0, 1, output, 200, 5, 1_005);
      const entry = {
        index: 0,
        id: "a",
        tool: "http",
        status: "succeeded",
        reason: null,
        attempts: 1,
        startedAt: 1_000,
        endedAt: 1_005,
        nextAttemptAt: null,
        waitingFor: null,
        error: null,
      };
      const pending = {
        ...entry,
        index: 1,
        id: "b",
        tool: "pass",
        status: "pending",
        attempts: 0,
        startedAt: null,
        endedAt: null,
      };

      expect(steps.views()).toEqual([entry, pending]);
      expect(steps.viewsOf([0])).toEqual([entry]);
      expect(steps.viewPage(["succeeded"], -1, 10)).toEqual([entry]);
      expect(steps.viewPage(null, 0, 10)).toEqual([pending]);

      expect(steps.get(0)).toEqual({ ...entry, data: output, httpStatus: 200, executionMs: 5 });
      expect(steps.page(-1, 1)).toEqual([steps.get(0)]);
    }));

  it("a step's start and success write its attempt's row with its own", () =>
    withSteps((steps, attempts) => {
      steps.attemptStarted(0, 1, 1_000);
      const started = { attempt: 1, startedAt: 1_000, endedAt: null, itemIndex: -1 };
      expect(attempts.ofStep(0)).toMatchObject([started]);
      expect(steps.get(0)).toMatchObject({ status: "running", attempts: 1, startedAt: 1_000 });

      steps.attemptStarted(0, 2, 1_010); // a retry: the step keeps its first start
      steps.succeeded(0, 2, "{}", 201, 4, 1_014);
      expect(attempts.ofStep(0)).toEqual([
        { ...started, category: null, httpStatus: null, message: null },
        {
          attempt: 2,
          startedAt: 1_010,
          endedAt: 1_014,
          category: null,
          httpStatus: 201,
          message: null,
          itemIndex: -1,
        },
      ]);
      expect(steps.get(0)).toMatchObject({
        status: "succeeded",
        attempts: 2,
        startedAt: 1_000,
        endedAt: 1_014,
      });
    }));

  it("a step that succeeded at once is written whole, a large output on its own", () =>
    withSteps((steps) => {
      const large = JSON.stringify("x".repeat(HELD_BATCH_BYTES / 2));
      steps.succeededAtOnce(0, 1, large, null, 2_000);
      steps.succeededAtOnce(1, 1, "7", null, 2_000);
      const done = { status: "succeeded", attempts: 1, startedAt: 2_000, endedAt: 2_000 };
      expect(steps.get(0)).toMatchObject({ ...done, data: large, executionMs: 0 });
      expect(steps.get(1)).toMatchObject({ ...done, data: "7", executionMs: 0 });
    }));

  it("a hop (a step's success, its dependent's start, their events) is one statement", () =>
    withSteps((steps, _, db) => {
      const events = new EventTable(db, () => {});
      steps.attemptStarted(0, 1, 1_000);
      db.flushHeld();
      const before = db.statements;
      steps.succeeded(0, 1, "{}", 200, 5, 1_005);
      events.append("step_succeeded", 1_005, "a", 1, { executionMs: 5 });
      steps.attemptStarted(1, 1, 1_005);
      events.append("step_started", 1_005, "b", 1);
      db.flushHeld();
      expect(db.statements - before).toBe(1);
      expect(steps.get(0)).toMatchObject({ status: "succeeded", data: "{}", httpStatus: 200 });
      expect(steps.get(1)).toMatchObject({ status: "running", attempts: 1, startedAt: 1_005 });
      expect(events.after(0, 10)).toMatchObject([
        { type: "step_succeeded", stepId: "a", attempt: 1, data: '{"executionMs":5}' },
        { type: "step_started", stepId: "b", attempt: 1, data: null },
      ]);
    }));
});
