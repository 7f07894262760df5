/**
 * ReplanTable (owns `replans`): one row per repair the run asked for (SPEC 9.2), numbered `n`
 * from 1 in the run (the planner's `Idempotency-Key` ends in it). A row is `waiting` (for its
 * cooldown, or a retry of the planner call), `calling` (a planner call is in flight), `open`
 * (a person may answer), then settled: `repaired`, `invalid`, `declined`, `unavailable`, or
 * `cancelled` with its step. When it is due lives on its step's row (the step's timer).
 */
import type { StepError } from "../../src/engine/records";
import { raw, type Sql } from "./sql";

export type RepairState =
  | "waiting"
  | "calling"
  | "open"
  | "repaired"
  | "invalid"
  | "declined"
  | "unavailable"
  | "cancelled";

/** How a settled repair ended, as the run's status shows it. */
export type RepairAnswerKind = "repaired" | "invalid" | "declined" | "unavailable";

const OPEN = "('waiting', 'calling', 'open')";

export interface RepairRow {
  n: number;
  stepIndex: number;
  stepId: string;
  mode: "url" | "human";
  state: RepairState;
  /** JSON of the step's StepError that asked for the repair. */
  error: string;
  diagnosis: string;
  /** Planner calls made. */
  attempts: number;
  requestedAt: number;
  /** When the planner was first called, or a person could first answer. */
  askedAt: number | null;
  answeredAt: number | null;
  /** Why it ended as it did (a giveUp's reason, the issues, the planner's last error). */
  reason: string | null;
  /** JSON list of the step ids a repair added. */
  newStepIds: string | null;
}

const COLUMNS = `n, step_idx AS stepIndex, step_id AS stepId, mode, state, error, diagnosis, attempts,
  requested_at AS requestedAt, asked_at AS askedAt, answered_at AS answeredAt, reason,
  new_step_ids AS newStepIds`;

export class ReplanTable {
  constructor(private readonly db: Sql) {}

  /** Asks for a repair of a step: the new row's number. */
  request(r: {
    stepIndex: number;
    stepId: string;
    mode: "url" | "human";
    error: StepError;
    diagnosis: string;
    now: number;
  }): number {
    const n = this.db.one<{ n: number }>`SELECT COALESCE(MAX(n), 0) + 1 AS n FROM replans`!.n;
    this.db
      .run`INSERT INTO replans (n, step_idx, step_id, mode, state, error, diagnosis, requested_at)
      VALUES (${n}, ${r.stepIndex}, ${r.stepId}, ${r.mode}, 'waiting', ${JSON.stringify(r.error)},
      ${r.diagnosis}, ${r.now})`;
    return n;
  }

  get(n: number): RepairRow | undefined {
    return this.db.one<RepairRow>`SELECT ${raw(COLUMNS)} FROM replans WHERE n = ${n}`;
  }

  /** The repair a step waits for, if any. */
  openOf(stepIndex: number): RepairRow | undefined {
    return this.db.one<RepairRow>`SELECT ${raw(COLUMNS)} FROM replans
      WHERE step_idx = ${stepIndex} AND state IN ${raw(OPEN)}`;
  }

  /** Repairs a person may answer now (SPEC 9.2 `pendingReplan`), by n. */
  answerable(): RepairRow[] {
    return this.db
      .all<RepairRow>`SELECT ${raw(COLUMNS)} FROM replans WHERE state = 'open' ORDER BY n`;
  }

  /** Settled repairs (cancelled ones left out), by n: the run's `replans` history. */
  history(): RepairRow[] {
    return this.db.all<RepairRow>`SELECT ${raw(COLUMNS)} FROM replans
      WHERE state NOT IN ${raw(OPEN)} AND state != 'cancelled' ORDER BY n`;
  }

  /** Repairs asked for (cancelled ones left out): of step id `stepId`, and in the run. */
  counts(stepId: string): { byStep: number; total: number } {
    return this.db.one<{ byStep: number; total: number }>`SELECT
      COALESCE(SUM(step_id = ${stepId}), 0) AS byStep, COUNT(*) AS total
      FROM replans WHERE state != 'cancelled'`!;
  }

  /** When the latest repair (other than `n`) was asked, or null: the cooldown counts from it. */
  latestAsked(except = 0): number | null {
    return this.db.one<{ at: number | null }>`SELECT MAX(asked_at) AS at FROM replans
      WHERE n != ${except}`!.at;
  }

  /** A planner call (number `attempt`) is about to be made: recorded first, like an attempt. */
  calling(n: number, attempt: number, now: number): void {
    this.db.run`UPDATE replans SET state = 'calling', attempts = ${attempt},
      asked_at = COALESCE(asked_at, ${now}) WHERE n = ${n}`;
  }

  /** A person may answer from now on. */
  opened(n: number, now: number): void {
    this.db.run`UPDATE replans SET state = 'open', asked_at = COALESCE(asked_at, ${now})
      WHERE n = ${n}`;
  }

  /** Waits again (a retry of the planner call, or the cooldown); `reason`: the last call's error. */
  waiting(n: number, reason: string | null): void {
    this.db.run`UPDATE replans SET state = 'waiting', reason = COALESCE(${reason}, reason)
      WHERE n = ${n}`;
  }

  settled(
    n: number,
    answer: RepairAnswerKind,
    now: number,
    reason: string | null,
    newStepIds: string[] | null = null,
  ): void {
    const ids = newStepIds === null ? null : JSON.stringify(newStepIds);
    this.db.run`UPDATE replans SET state = ${answer}, answered_at = ${now}, reason = ${reason},
      new_step_ids = ${ids} WHERE n = ${n}`;
  }

  /** The step stopped waiting for its repair (it was cancelled). */
  cancelOf(stepIndex: number, now: number): void {
    this.db.run`UPDATE replans SET state = 'cancelled', answered_at = ${now}
      WHERE step_idx = ${stepIndex} AND state IN ${raw(OPEN)}`;
  }

  /** The run stopped: no repair is waited for any more. */
  cancelOpen(now: number): void {
    this.db.run`UPDATE replans SET state = 'cancelled', answered_at = ${now}
      WHERE state IN ${raw(OPEN)}`;
  }
}
