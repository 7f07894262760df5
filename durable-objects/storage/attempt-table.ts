/**
 * AttemptTable (owns `attempts`): one row per attempt of a step or of a forEach item (SPEC
 * 5.2: number, start, end, category, HTTP status), kept across retries and redrives. A step's
 * own attempt starts and succeeds with its step's row (StepTable's views: one statement).
 */
import type { AttemptRecord, StepError } from "../../src/engine/records";
import { heldRowsTrigger, type Sql } from "./sql";

/** The item index of a step's own attempts. */
export const STEP_ATTEMPT = -1;

/** Writes the attempts held back by `ran` (Sql.later): `[step, item, attempt, at, httpStatus]`. */
export const ATTEMPTS_RAN_HELD = heldRowsTrigger(
  "attempts.ran",
  `INSERT INTO attempts (step_idx, item_index, attempt, started_at, ended_at, http_status)
    VALUES (NEW.f0, NEW.f1, NEW.f2, NEW.f3, NEW.f3,
      NEW.f4)`,
);

export class AttemptTable {
  constructor(private readonly db: Sql) {}

  started(step: number, item: number, attempt: number, now: number): void {
    this.db.run`INSERT INTO attempts (step_idx, item_index, attempt, started_at)
      VALUES (${step}, ${item}, ${attempt}, ${now})`;
  }

  /** An attempt that succeeded as soon as it started (a tool that answers at once). */
  ran(step: number, item: number, attempt: number, now: number, httpStatus: number | null): void {
    // Held back: a chain of such attempts is written in one statement (Sql.later).
    this.db.later("attempts.ran", [step, item, attempt, now, httpStatus]);
  }

  /** Closes an attempt: with `error` it failed, else it succeeded (with its HTTP status). */
  ended(
    step: number,
    item: number,
    attempt: number,
    now: number,
    error?: StepError,
    httpStatus?: number | null,
  ): void {
    this.db.run`UPDATE attempts SET ended_at = ${now}, category = ${error?.category ?? null},
      http_status = ${error?.status ?? httpStatus ?? null}, message = ${error?.message ?? null}
      WHERE step_idx = ${step} AND item_index = ${item} AND attempt = ${attempt}`;
  }

  ofStep(step: number): AttemptRecord[] {
    return this.db
      .all<AttemptRecord>`SELECT attempt, started_at AS startedAt, ended_at AS endedAt, category,
      http_status AS httpStatus, message, item_index AS itemIndex FROM attempts WHERE step_idx = ${step}
      ORDER BY item_index, attempt`;
  }

  /** The highest attempt number of the step's forEach items (0: none): a repaired step's items number on from it. */
  lastItemAttempt(step: number): number {
    return (
      this.db.one<{ n: number | null }>`SELECT MAX(attempt) AS n FROM attempts
      WHERE step_idx = ${step} AND item_index >= 0`!.n ?? 0
    );
  }

  /** The run was cancelled: every open attempt ends as cancelled. */
  cancelOpen(now: number): void {
    this.db
      .run`UPDATE attempts SET ended_at = ${now}, category = 'cancelled', message = 'the run was cancelled'
      WHERE ended_at IS NULL`;
  }
}
