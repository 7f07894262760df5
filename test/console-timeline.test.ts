/**
 * The waterfall of a forEach step (console/src/run/timeline-model.ts, item-timeline.ts): its
 * items' attempts come from the step's attempt log, not from the events, which only mark the
 * step's rounds of retries. And a compensation's retries, on any step's row.
 */
import { describe, expect, it } from "vitest";
import type { AttemptLog } from "../console/src/run/item-timeline";
import { buildTimeline, type Segment } from "../console/src/run/timeline-model";
import type { RunEvent } from "../console/src/types";

const t0 = Date.parse("2026-01-01T00:00:00.000Z");
const iso = (ms: number) => new Date(t0 + ms).toISOString();
let seq = 0;
const ev = (ms: number, type: string, attempt?: number, data?: unknown): RunEvent => ({
  seq: ++seq,
  type,
  at: iso(ms),
  stepId: "each",
  ...(attempt !== undefined && { attempt }),
  ...(data !== undefined && { data }),
});
const attempt = (
  item: number,
  n: number,
  start: number,
  end: number | null,
  category?: string,
) => ({
  item,
  attempt: n,
  startedAt: iso(start),
  endedAt: end === null ? null : iso(end),
  ...(category && { category }),
});
const shape = (segments: Segment[]) =>
  segments.map((s) => [s.kind, s.start - t0, s.end === null ? null : s.end - t0, s.outcome]);

// Item 0 fails at 100 and retries at 600; item 1 fails at 300 and retries at 400. The step's
// rounds: nothing runs from 300 (next at 400), nor from 500 (next at 600).
const events = [
  ev(0, "step_started", undefined, { forEach: true }),
  ev(300, "step_retry_scheduled", 2, { category: "server_error", nextAttemptAt: iso(400) }),
  ev(500, "step_retry_scheduled", 3, { category: "server_error", nextAttemptAt: iso(600) }),
  ev(700, "step_succeeded", 0),
];
const log: AttemptLog = [
  attempt(0, 1, 0, 100, "server_error"),
  attempt(1, 1, 50, 300, "server_error"),
  attempt(1, 2, 400, 500),
  attempt(0, 2, 600, 700),
];

describe("buildTimeline of a forEach step", () => {
  it("draws each item's attempts with backoff only between that item's own attempts", () => {
    const [lane] = buildTimeline(events, new Map([["each", log]])).lanes;
    expect(lane!.items!.map((i) => [i.item, shape(i.segments)])).toEqual([
      [
        0,
        [
          ["attempt", 0, 100, "failed"],
          ["backoff", 100, 600, undefined],
          ["attempt", 600, 700, "succeeded"],
        ],
      ],
      [
        1,
        [
          ["attempt", 50, 300, "failed"],
          ["backoff", 300, 400, undefined],
          ["attempt", 400, 500, "succeeded"],
        ],
      ],
    ]);
  });

  it("shows on the step's row the union of the attempts, and backoff only where none runs", () => {
    const [lane] = buildTimeline(events, new Map([["each", log]])).lanes;
    expect(shape(lane!.segments)).toEqual([
      ["attempt", 0, 300, "failed"],
      ["backoff", 300, 400, undefined],
      ["attempt", 400, 500, "succeeded"],
      ["backoff", 500, 600, undefined],
      ["attempt", 600, 700, "succeeded"],
    ]);
    expect(lane!.segments[0]!.label).toBe("2 item attempts, 2 failed");
  });

  it("leaves an attempt still running open, on its item and on the row", () => {
    const running = [attempt(0, 1, 0, 100), attempt(1, 1, 50, null)];
    const [lane] = buildTimeline(events.slice(0, 1), new Map([["each", running]])).lanes;
    expect(shape(lane!.segments)).toEqual([["attempt", 0, null, undefined]]);
    expect(shape(lane!.items![1]!.segments)).toEqual([["attempt", 50, null, undefined]]);
  });

  it("without the attempt log, is one bar from the step's start to its end", () => {
    const [lane] = buildTimeline(events).lanes;
    expect(shape(lane!.segments)).toEqual([["attempt", 0, 700, "succeeded"]]);
    expect(lane!.items).toBeUndefined();
  });
});

describe("buildTimeline of a compensation that is retried", () => {
  // The step ends at 700, the run fails at 800; its compensation is cut off by a restart at
  // 1000 and succeeds on its second attempt, from 1200 to 1300.
  const rollback = [
    ev(800, "run_finished", undefined, { status: "failed" }),
    ev(900, "compensation_started", 1),
    ev(1000, "step_retry_scheduled", 1, {
      category: "interrupted",
      nextAttemptAt: iso(1200),
      compensation: true,
    }),
    ev(1200, "compensation_started", 2),
    ev(1300, "compensation_finished", 2, { status: "succeeded" }),
  ];
  const compensation = [
    ["compensation", 900, 1000, "failed"],
    ["backoff", 1000, 1200, undefined],
    ["compensation", 1200, 1300, "succeeded"],
  ];

  it("draws the failed attempt, its backoff and the retry, each closed", () => {
    const plain = [ev(0, "step_started", 1), ev(700, "step_succeeded", 1), ...rollback];
    const [lane] = buildTimeline(plain).lanes;
    expect(shape(lane!.segments)).toEqual([["attempt", 0, 700, "succeeded"], ...compensation]);
    expect(lane!.segments[1]!.category).toBe("interrupted");
  });

  it("keeps them on a forEach step's row, after its items", () => {
    const [lane] = buildTimeline([...events, ...rollback], new Map([["each", log]])).lanes;
    expect(shape(lane!.segments).slice(-3)).toEqual(compensation);
    expect(shape(lane!.segments)[0]).toEqual(["attempt", 0, 300, "failed"]);
  });
});
