/**
 * The steps table on the storage of a scratch object: a step's entry (what the full status
 * and a page of steps show) leaves the step's result out; its row and the results have it.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { unique } from "../../test/helpers";
import { migrate } from "./schema";
import { Sql } from "./sql";
import { StepTable } from "./step-table";

async function withSteps(test: (steps: StepTable) => void): Promise<void> {
  const stub = env.RUNS.get(env.RUNS.idFromName(unique("steps")));
  await runInDurableObject(stub, (_, state) => {
    const db = new Sql(state.storage.sql);
    migrate(db);
    const steps = new StepTable(db);
    steps.insertAll([
      { index: 0, id: "a", tool: "http" },
      { index: 1, id: "b", tool: "pass" },
    ]);
    test(steps);
  });
}

describe("StepTable: entries and rows", () => {
  it("an entry is the row without the result; the row and the results have it", () =>
    withSteps((steps) => {
      const output = JSON.stringify({ page: "x".repeat(100_000) });
      steps.attemptStarted(0, 1, 1_000);
      steps.succeeded(0, output, 200, 5, 1_005);
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
});
