/**
 * The console's pure models: the waterfall built from an event log, the playground's
 * preview graph (explicit and template dependencies), and the critical path.
 */
import { describe, expect, it } from "vitest";
import { criticalPathOf, graphOf } from "../console/src/graph/model";
import { listUpTo } from "../console/src/pages/list-up-to";
import { previewSteps } from "../console/src/pages/plan-graph";
import { buildTimeline } from "../console/src/run/timeline-model";
import type { RunEvent, StepStatus } from "../console/src/types";

const t0 = Date.parse("2026-01-01T00:00:00.000Z");
let seq = 0;
const ev = (
  ms: number,
  type: string,
  stepId?: string,
  attempt?: number,
  data?: unknown,
): RunEvent => ({
  seq: ++seq,
  type,
  at: new Date(t0 + ms).toISOString(),
  ...(stepId !== undefined && { stepId }),
  ...(attempt !== undefined && { attempt }),
  ...(data !== undefined && { data }),
});

describe("buildTimeline", () => {
  it("shows failed attempts, the backoff before a retry, waits, skips and compensations", () => {
    const tl = buildTimeline([
      ev(0, "run_started"),
      ev(0, "step_started", "a", 1),
      ev(100, "step_retry_scheduled", "a", 1, { category: "server_error", nextAttemptAt: "x" }),
      ev(600, "step_started", "a", 2),
      ev(700, "step_succeeded", "a", 2),
      ev(700, "step_started", "gate", 1),
      ev(710, "step_waiting", "gate", 1, { waitingFor: "approval" }),
      ev(900, "step_succeeded", "gate", 1),
      ev(900, "step_skipped", "maybe", undefined, { reason: "condition_false" }),
      ev(950, "step_started", "b", 1),
      ev(990, "step_failed", "b", 1, { category: "client_error" }),
      ev(1000, "run_finished", undefined, undefined, { status: "failed" }),
      ev(1010, "compensation_started", "a", 1),
      ev(1050, "compensation_finished", "a", 1, { status: "succeeded" }),
    ]);
    expect(tl.start).toBe(t0);
    expect(tl.end).toBe(t0 + 1050);
    expect(tl.lanes.map((l) => l.stepId)).toEqual(["a", "gate", "maybe", "b"]);
    const [a, gate, maybe, b] = tl.lanes;
    expect(a!.segments.map((s) => [s.kind, s.start - t0, s.end! - t0, s.outcome])).toEqual([
      ["attempt", 0, 100, "failed"],
      ["backoff", 100, 600, undefined],
      ["attempt", 600, 700, "succeeded"],
      ["compensation", 1010, 1050, "succeeded"],
    ]);
    expect(a!.segments[0]!.label).toBe("attempt 1: server_error");
    expect(gate!.segments.map((s) => [s.kind, s.label, s.end! - t0])).toEqual([
      ["attempt", "attempt 1", 710],
      ["wait", "waiting for approval", 900],
    ]);
    expect(maybe!.skipped).toEqual({ at: t0 + 900, reason: "condition_false" });
    expect(b!.segments[0]).toMatchObject({ outcome: "failed", label: "attempt 1: client_error" });
  });

  it("shows a step's wait for quota before its attempt; an item's wait stays inside the step's", () => {
    const tl = buildTimeline([
      ev(0, "run_started"),
      ev(0, "quota_wait", "q", undefined, { destination: "api.test", reason: "queued" }),
      ev(400, "step_started", "q", 1),
      ev(500, "step_succeeded", "q", 1),
      ev(500, "step_started", "each", undefined, { forEach: true }),
      ev(510, "quota_wait", "each", undefined, { destination: "api.test", item: 3 }),
      ev(900, "step_succeeded", "each", 0),
    ]);
    const segments = (id: string) =>
      tl.lanes.find((l) => l.stepId === id)!.segments.map((s) => [s.kind, s.start, s.end, s.label]);
    expect(segments("q")).toEqual([
      ["wait", t0, t0 + 400, "waiting for quota"],
      ["attempt", t0 + 400, t0 + 500, "attempt 1"],
    ]);
    expect(segments("each")).toEqual([["attempt", t0 + 500, t0 + 900, "items"]]);
  });

  it("closes what was still going when the run is cancelled, and leaves a live attempt open", () => {
    const cancelled = buildTimeline([
      ev(0, "step_started", "w", 1),
      ev(5, "step_waiting", "w", 1, { waitingFor: "timer" }),
      ev(50, "run_cancelled"),
    ]);
    expect(cancelled.lanes[0]!.segments.at(-1)).toMatchObject({
      kind: "wait",
      outcome: "cancelled",
      end: t0 + 50,
    });
    const live = buildTimeline([ev(0, "step_started", "x", 1)]);
    expect(live.lanes[0]!.segments[0]!.end).toBeNull();
  });
});

describe("buildTimeline's attempts before a wait", () => {
  const kinds = (events: RunEvent[]) =>
    buildTimeline(events).lanes[0]!.segments.map((s) => [s.kind, s.outcome, s.category]);

  it("draws an attempt that led to a repair as failed, with its category", () => {
    expect(
      kinds([
        ev(0, "step_started", "v", 1),
        ev(10, "verification_failed", "v", 1, { category: "verification_failed" }),
        ev(10, "step_waiting", "v", undefined, { waitingFor: "replan" }),
        ev(10, "replan_requested", "v", undefined, { n: 1, error: { category: "x" } }),
      ]),
    ).toEqual([
      ["attempt", "failed", "verification_failed"],
      ["wait", undefined, undefined],
    ]);
    expect(
      kinds([
        ev(0, "step_started", "h", 1),
        ev(10, "step_waiting", "h", undefined, { waitingFor: "replan" }),
        ev(10, "replan_requested", "h", undefined, { n: 1, error: { category: "client_error" } }),
      ]),
    ).toEqual([
      ["attempt", "failed", "client_error"],
      ["wait", undefined, undefined],
    ]);
  });

  it("closes the attempt that hands over to a callback or a timer; the wait stays open", () => {
    for (const waitingFor of ["callback", "timer", "approval"])
      expect(
        kinds([ev(0, "step_started", "c", 1), ev(5, "step_waiting", "c", 1, { waitingFor })]),
      ).toEqual([
        ["attempt", "succeeded", undefined],
        ["wait", undefined, undefined],
      ]);
  });
});

describe("buildTimeline's span", () => {
  it("ends at the run's end: webhook deliveries after it do not stretch the axis", () => {
    const timeline = buildTimeline([
      ev(0, "run_started"),
      ev(0, "step_started", "x", 1),
      ev(1500, "step_succeeded", "x", 1),
      ev(1500, "run_finished", undefined, undefined, { status: "completed" }),
      ev(32_000, "webhook_failed", undefined, undefined, { attempt: 6 }),
    ]);
    expect([timeline.start, timeline.end]).toEqual([t0, t0 + 1500]);
  });
});

describe("previewSteps", () => {
  it("takes dependencies from dependsOn (ids, indices, depends_on) and from templates", () => {
    const steps = previewSteps({
      steps: [
        { id: "a", tool: "pass" },
        { tool: "pass", depends_on: [0] },
        { id: "c", tool: "pass", params: { x: "${steps.a.data}", y: ["${step[1].data.*.id}"] } },
        { id: "d.e", tool: "pass", when: "${steps['c'].data}", forEach: "${input.list}" },
        { id: "f", tool: "pass", dependsOn: ["d.e", "c"], params: { own: "${steps.f.data}" } },
      ],
    });
    expect(steps.map((s) => [s.id, s.dependsOn])).toEqual([
      ["a", []],
      ["1", ["a"]],
      ["c", ["a", "1"]],
      ["d.e", ["c"]],
      ["f", ["d.e", "c"]],
    ]);
    expect(steps[3]).toMatchObject({ when: "${steps['c'].data}", forEach: "${input.list}" });
  });

  it("draws nothing for a document without steps", () => {
    const digits = previewSteps({
      steps: [
        { id: "a", tool: "pass" },
        { id: "b", tool: "pass", dependsOn: ["0"] },
      ],
    });
    expect(digits.map((s) => s.dependsOn)).toEqual([[], ["a"]]);
    expect(previewSteps({ name: "x" })).toEqual([]);
    expect(previewSteps(null)).toEqual([]);
  });
});

describe("criticalPathOf", () => {
  const model = graphOf([
    { id: "start", dependsOn: [] },
    { id: "slow", dependsOn: ["start"] },
    { id: "fast1", dependsOn: ["start"] },
    { id: "fast2", dependsOn: ["fast1"] },
    { id: "end", dependsOn: ["slow", "fast2"] },
  ]);
  const step = (i: number, startMs: number | null, endMs: number | null): StepStatus => ({
    id: model.ids[i]!,
    index: i,
    tool: "pass",
    status: endMs === null ? "running" : "succeeded",
    attempts: 1,
    startedAt: startMs === null ? null : new Date(t0 + startMs).toISOString(),
    endedAt: endMs === null ? null : new Date(t0 + endMs).toISOString(),
    durationMs: null,
  });
  const ids = (path: number[]) => path.map((i) => model.ids[i]);

  it("is the longest chain by step count before anything ran", () => {
    expect(ids(criticalPathOf(model, null, t0))).toEqual(["start", "fast1", "fast2", "end"]);
  });

  it("is the chain that took longest once steps ran", () => {
    const steps = [
      step(0, 0, 10),
      step(1, 10, 500),
      step(2, 10, 20),
      step(3, 20, 30),
      step(4, 500, 510),
    ];
    expect(ids(criticalPathOf(model, steps, t0 + 600))).toEqual(["start", "slow", "end"]);
  });
});

describe("the runs list's refresh (listUpTo)", () => {
  it("reads as many runs as the page shows, page after page of at most 200", async () => {
    const all = Array.from({ length: 450 }, (_, i) => ({ runId: `r${i}` }) as never);
    const asked: { cursor?: string | null; limit?: number }[] = [];
    const list = async (q: { cursor?: string | null; limit?: number }) => {
      asked.push({ cursor: q.cursor, limit: q.limit });
      const from = Number(q.cursor ?? 0);
      const to = from + q.limit!;
      return { runs: all.slice(from, to), next: to < all.length ? String(to) : null };
    };
    const shown = await listUpTo(list, { status: "" }, 241);
    expect(shown.runs).toHaveLength(241);
    expect(shown.next).toBe("241");
    expect(asked).toEqual([
      { cursor: undefined, limit: 200 },
      { cursor: "200", limit: 41 },
    ]);
    expect((await listUpTo(list, {}, 50)).runs).toHaveLength(50);
    expect((await listUpTo(list, {}, 1000)).next).toBeNull();
  });
});
