/**
 * A tool that answers at once (`pass`, Tool.answerNow): its attempt is recorded together with
 * its outcome. What a reader sees is the same as for any tool: one attempt with its start and
 * end, `step_started` then the outcome's events, the counters of the status.
 */
import { describe, expect, it } from "vitest";
import { byId, events, execute, results, stepDetail, upstreamUrl } from "./helpers";

// The workers project leaves MAX_OUTPUT_BYTES at its default (vitest.config.ts does not set it).
const MAX_OUTPUT_BYTES = 262_144;

const stepEvents = async (runId: string, stepId: string) =>
  (await events(runId))
    .filter((e) => e.stepId === stepId)
    .map((e) => ({ type: e.type, attempt: e.attempt, data: e.data }));

describe("steps whose tool answers at once", () => {
  it("succeed with one attempt, its events in order, and the status counted", async () => {
    const run = await execute({
      steps: [
        { id: "a", tool: "pass", params: { value: { n: 1 } } },
        { id: "b", tool: "pass", params: { value: "${steps.a.data.n}" } },
        { id: "c", tool: "pass", params: { value: ["${steps.b.data}"] } },
      ],
    });
    expect(run.status).toBe("completed");
    expect(run.progress).toMatchObject({ completedSteps: 3, runningSteps: 0 });
    expect(run.summary).toMatchObject({ totalSteps: 3, successfulSteps: 3 });
    const b = await stepDetail(run.runId, "b");
    expect(b).toMatchObject({ status: "succeeded", attempts: 1, data: 1 });
    expect(b.startedAt).toBe(b.endedAt);
    expect(b.attemptLog).toEqual([
      expect.objectContaining({ attempt: 1, startedAt: b.startedAt, endedAt: b.endedAt }),
    ]);
    expect(b.attemptLog[0].category ?? null).toBeNull();
    expect(await stepEvents(run.runId, "b")).toEqual([
      { type: "step_started", attempt: 1, data: undefined },
      { type: "step_succeeded", attempt: 1, data: { executionMs: 0 } },
    ]);
    expect(byId(run).c.durationMs).toBe(0);
  });

  it("that fail their verify record the attempt as failed, as any tool's", async () => {
    const run = await execute({
      steps: [{ id: "s", tool: "pass", params: { value: 0 }, verify: "${output}" }],
    });
    expect(run.status).toBe("failed");
    const s = await stepDetail(run.runId, "s");
    expect(s).toMatchObject({ status: "failed", attempts: 1, data: 0 });
    expect(s.error.category).toBe("verification_failed");
    expect(s.attemptLog).toEqual([
      expect.objectContaining({ attempt: 1, category: "verification_failed" }),
    ]);
    expect((await stepEvents(run.runId, "s")).map((e) => e.type)).toEqual([
      "step_started",
      "verification_failed",
      "step_failed",
    ]);
  });

  it("whose output is too large fail as output_too_large, the attempt recorded", async () => {
    const run = await execute({
      steps: [{ id: "s", tool: "pass", params: { value: "x".repeat(MAX_OUTPUT_BYTES) } }],
    });
    expect(run.status).toBe("failed");
    const s = await stepDetail(run.runId, "s");
    expect(s.error.category).toBe("output_too_large");
    expect(s.attemptLog).toEqual([
      expect.objectContaining({ attempt: 1, category: "output_too_large" }),
    ]);
    expect(run.progress.runningSteps).toBe(0);
  });
});

describe("a dependency's result, as templates read it", () => {
  it("is what its stored row says: data and metadata, after retries too", async () => {
    const key = `memo-${crypto.randomUUID()}`;
    const run = await execute({
      steps: [
        {
          id: "a",
          tool: "http",
          params: { url: `${upstreamUrl}/script/${key}?plan=500,200` },
          retry: { maxRetries: 2, baseDelayMs: 0 },
        },
        {
          id: "b",
          tool: "pass",
          params: { value: { data: "${steps.a.data}", meta: "${steps.a.metadata}" } },
        },
        { id: "c", tool: "pass", params: { value: "${steps.b.metadata}" } },
      ],
    });
    expect(run.status).toBe("completed");
    const stored = Object.fromEntries((await results(run.runId)).map((r) => [r.stepId, r]));
    expect(stored.a.metadata).toMatchObject({ attempts: 2, retries: 1, status: 200 });
    expect(stored.b.data).toEqual({ data: stored.a.data, meta: stored.a.metadata });
    expect(stored.c.data).toEqual(stored.b.metadata);
  });
});
