import { describe, expect, it } from "vitest";
import {
  COALESCE_MS,
  STATUS_COALESCE_MS,
  decodeCursor,
  encodeCursor,
  listingAlarmDue,
  listingBackoff,
  listingState,
  listingUpdateDue,
  NOTHING_ACKED,
  type ListingOutboxState,
} from "./listing";
import type { RunRecord } from "./records";
import { DAY_MS, retentionDue } from "./retention";
import { runRecord } from "./test-records";

const T0 = Date.parse("2026-11-01T00:00:00Z");
const RUN_ID = `run_${"ab".repeat(16)}`;

function run(overrides: Partial<RunRecord> = {}): RunRecord {
  return runRecord({
    id: RUN_ID,
    createdAt: T0,
    version: 3,
    counts: { ...runRecord().counts, total: 4, succeeded: 1, running: 1 },
    ...overrides,
  });
}

/** The outbox after the index acknowledged `acked` at `sentAt`. */
function acked(
  acked: RunRecord,
  sentAt: number,
  retryAt: number | null = null,
): ListingOutboxState {
  return {
    ackedState: listingState(acked),
    ackedStatus: acked.status,
    sentAt,
    retryAt,
    failures: 0,
  };
}

describe("the listing cursor", () => {
  it("names a position and reads back as it", () => {
    const cursor = encodeCursor({ createdAt: T0, runId: RUN_ID });
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor)).toEqual({ createdAt: T0, runId: RUN_ID });
  });

  it("is null for anything this API did not give out", () => {
    const b64 = (v: unknown) => btoa(JSON.stringify(v)).replace(/=+$/, "");
    for (const bad of [
      "",
      "not a cursor",
      "%%%",
      b64([T0]),
      b64([T0, RUN_ID, 1]),
      b64({ createdAt: T0, runId: RUN_ID }),
      b64([T0 + 0.5, RUN_ID]),
      b64([String(T0), RUN_ID]),
      b64([T0, "run_x"]),
      "x".repeat(201),
    ]) {
      expect(decodeCursor(bad), bad).toBeNull();
    }
  });
});

describe("when the index is due an update", () => {
  it("never for a run it is current on", () => {
    const r = run();
    expect(listingUpdateDue(r, acked(r, T0))).toBeNull();
    expect(listingAlarmDue(r, acked(r, T0))).toBeNull();
  });

  it("at once for a run it has never seen, and for a final status", () => {
    const r = run();
    expect(listingUpdateDue(r, NOTHING_ACKED)).toBe(T0);
    const done = run({ status: "completed", endedAt: T0 + 50, version: 9 });
    // due at the run's creation: already past, so sent at once (not a second after T0 + 40)
    expect(listingUpdateDue(done, acked(r, T0 + 40))).toBe(T0);
    expect(listingAlarmDue(done, acked(r, T0 + 40))).toBe(T0);
  });

  it("for a run that became running, a moment after the last update, and the alarm is not woken for it", () => {
    const r = run({ status: "pending" });
    const started = run({ status: "running", startedAt: T0 + 5, version: 4 });
    expect(listingUpdateDue(started, acked(r, T0 + 2))).toBe(T0 + 2 + STATUS_COALESCE_MS);
    expect(listingAlarmDue(started, acked(r, T0 + 2))).toBeNull();
    // well within the 2 s SPEC 8.2 allows a change of status to reach listings
    expect(STATUS_COALESCE_MS).toBeLessThan(COALESCE_MS);
    // any other status goes at once, and is woken for
    const waiting = run({ status: "waiting", version: 4 });
    expect(listingUpdateDue(waiting, acked(started, T0 + 10))).toBe(T0);
    expect(listingAlarmDue(waiting, acked(started, T0 + 10))).toBe(T0);
  });

  it("for progress alone, a second after the last update, and the alarm is not woken for it", () => {
    const before = run();
    const later = run({ counts: { ...before.counts, succeeded: 2 }, version: 5 });
    expect(listingUpdateDue(later, acked(before, T0 + 300))).toBe(T0 + 300 + COALESCE_MS);
    expect(listingAlarmDue(later, acked(before, T0 + 300))).toBeNull();
  });

  it("never before a retry time (a failure's backoff, or a claim), which the alarm keeps", () => {
    const before = run();
    const later = run({ status: "waiting" });
    const outbox = acked(before, T0, T0 + 8000);
    expect(listingUpdateDue(later, outbox)).toBe(T0 + 8000);
    expect(listingAlarmDue(later, outbox)).toBe(T0 + 8000);
    const progress = run({ counts: { ...before.counts, skipped: 1 } });
    expect(listingAlarmDue(progress, outbox)).toBe(T0 + 8000);
  });

  it("for a run being deleted: its removal, whatever the index holds", () => {
    const r = run({ status: "completed", endedAt: T0, deleteRequestedAt: T0 + 10 });
    expect(listingUpdateDue(r, acked(r, T0))).toBe(T0 + 10);
    expect(listingAlarmDue(r, acked(r, T0, T0 + 2000))).toBe(T0 + 2000);
  });

  it("backs off 1 s, 2 s, 4 s ... at most 60 s after failures in a row", () => {
    expect([1, 2, 3, 4, 7, 8, 30].map(listingBackoff)).toEqual([
      1000, 2000, 4000, 8000, 60_000, 60_000, 60_000,
    ]);
  });
});

describe("retention", () => {
  it("ends the plan's days, else the Worker's, after a final run ended", () => {
    const ended = { status: "failed" as const, endedAt: T0 };
    expect(retentionDue(ended, undefined, 30)).toBe(T0 + 30 * DAY_MS);
    expect(retentionDue(ended, 2, 30)).toBe(T0 + 2 * DAY_MS);
    expect(retentionDue({ status: "cancelled", endedAt: T0 }, undefined, 1)).toBe(T0 + DAY_MS);
  });

  it("does not apply to a run that is not final", () => {
    for (const status of ["pending", "running", "waiting", "paused"] as const)
      expect(retentionDue({ status, endedAt: null }, 1, 1)).toBeNull();
  });
});
