/**
 * StepRows: the reads and writes of a run's step rows and their attempt rows (and the item
 * counts of forEach steps). Each write changes only that step's rows and appends its
 * events, so completing a step never rewrites the plan. RunStore builds on it with the
 * run-level transitions.
 */
import type { AttemptRecord, StepError, StepRecord } from "../src/engine/records";
import type { SkipReason, StepSnapshot, StepStatus } from "../src/engine/scheduler";
import type { EventLog } from "./event-log";
import { raw, type Sql } from "./sql";

const STEP_COLUMNS =
  raw(`idx AS "index", id, tool, status, reason, attempts, started_at AS startedAt,
  ended_at AS endedAt, next_attempt_at AS nextAttemptAt, waiting_for AS waitingFor, data, error,
  http_status AS httpStatus, execution_ms AS executionMs`);

export type ItemCounts = { total: number; succeeded: number; failed: number; running: number };

export class StepRows {
  constructor(
    protected readonly db: Sql,
    protected readonly log: EventLog,
  ) {}

  /** What the scheduler needs, one row per step in plan order. */
  snapshots(): (StepSnapshot & { attempts: number; retryBase: number })[] {
    return this.db.all<StepSnapshot & { attempts: number; retryBase: number }>`SELECT status,
      next_attempt_at AS nextAttemptAt, attempts, retry_base AS retryBase FROM steps ORDER BY idx`;
  }

  steps(): StepRecord[] {
    return this.db.all<StepRecord>`SELECT ${STEP_COLUMNS} FROM steps ORDER BY idx`;
  }

  step(index: number): StepRecord | undefined {
    return this.db.one<StepRecord>`SELECT ${STEP_COLUMNS} FROM steps WHERE idx = ${index}`;
  }

  stepIndex(id: string): number | undefined {
    return this.db.one<{ idx: number }>`SELECT idx FROM steps WHERE id = ${id}`?.idx;
  }

  attempts(index: number): AttemptRecord[] {
    return this.db
      .all<AttemptRecord>`SELECT attempt, started_at AS startedAt, ended_at AS endedAt, category,
      http_status AS httpStatus, message, item_index AS itemIndex FROM attempts WHERE step_idx = ${index}
      ORDER BY item_index, attempt`;
  }

  /** Item progress of forEach steps (one step, or all), by step index. */
  itemCounts(index?: number): Map<number, ItemCounts> {
    const rows = this.db.all<ItemCounts & { i: number }>`SELECT
      step_idx AS i, COUNT(*) AS total, SUM(status = 'succeeded') AS succeeded,
      SUM(status IN ('failed', 'cancelled')) AS failed, SUM(status = 'running') AS running
      FROM items WHERE ${index ?? null} IS NULL OR step_idx = ${index ?? null} GROUP BY step_idx`;
    return new Map(rows.map(({ i, ...counts }) => [i, counts]));
  }

  /**
   * True when some step waits for an approval or a callback and nothing else can move the
   * run on: no step is in flight, scheduled for a retry or sleeping on a timer. (Pending
   * steps are then blocked behind the answers; the caller knows that none is ready now.)
   */
  onlyWaitingForAnswers(): boolean {
    const row = this.db.one<{ busy: number | null; waiting: number | null }>`SELECT
      SUM(status IN ('running', 'retrying') OR (status = 'waiting' AND COALESCE(waiting_for, '') NOT IN ('approval', 'callback'))) AS busy,
      SUM(status = 'waiting' AND waiting_for IN ('approval', 'callback')) AS waiting FROM steps`!;
    return (row.waiting ?? 0) > 0 && (row.busy ?? 0) === 0;
  }

  /** Steps waiting for an approval, by id. */
  waitingForApproval(): string[] {
    return this.db.all<{
      id: string;
    }>`SELECT id FROM steps WHERE status = 'waiting' AND waiting_for = 'approval'
      ORDER BY idx`.map((r) => r.id);
  }

  /** The earliest time a stored row is due (a scheduled retry or a timer), or null. */
  earliestDue(): number | null {
    return this.db.one<{ at: number | null }>`SELECT MIN(next_attempt_at) AS at FROM steps
      WHERE next_attempt_at IS NOT NULL`!.at;
  }

  /** Recorded before the tool is called (SPEC 5.5). */
  startAttempt(index: number, stepId: string, attempt: number, now: number): void {
    this.db.run`UPDATE steps SET status = 'running', attempts = ${attempt}, next_attempt_at = NULL,
      started_at = COALESCE(started_at, ${now}) WHERE idx = ${index}`;
    this.db
      .run`INSERT INTO attempts (step_idx, attempt, started_at) VALUES (${index}, ${attempt}, ${now})`;
    this.log.append("step_started", now, stepId, attempt);
  }

  /** A forEach step starts: its attempts are its items'. */
  fanOutStarted(index: number, stepId: string, now: number): void {
    this.db
      .run`UPDATE steps SET status = 'running', started_at = ${now}, next_attempt_at = NULL WHERE idx = ${index}`;
    this.log.append("step_started", now, stepId, null, { forEach: true });
  }

  /** A forEach step whose items wait for retries runs them: the step is running again. */
  fanOutResumed(index: number): void {
    this.db.run`UPDATE steps SET status = 'running', next_attempt_at = NULL WHERE idx = ${index}`;
  }

  setAttempts(index: number, attempts: number): void {
    this.db.run`UPDATE steps SET attempts = ${attempts} WHERE idx = ${index}`;
  }

  endAttempt(
    index: number,
    attempt: number,
    now: number,
    error?: StepError,
    httpStatus?: number | null,
  ): void {
    this.db.run`UPDATE attempts SET ended_at = ${now}, category = ${error?.category ?? null},
      http_status = ${error?.status ?? httpStatus ?? null}, message = ${error?.message ?? null}
      WHERE step_idx = ${index} AND item_index = -1 AND attempt = ${attempt}`;
  }

  stepSucceeded(
    index: number,
    stepId: string,
    attempt: number,
    data: string,
    httpStatus: number | null,
    executionMs: number,
    now: number,
  ): void {
    this.db
      .run`UPDATE steps SET status = 'succeeded', ended_at = ${now}, data = ${data}, error = NULL,
      waiting_for = NULL, next_attempt_at = NULL,
      http_status = ${httpStatus}, execution_ms = ${executionMs} WHERE idx = ${index}`;
    this.endAttempt(index, attempt, now, undefined, httpStatus);
    this.log.append("step_succeeded", now, stepId, attempt, { executionMs });
  }

  stepFailed(
    index: number,
    stepId: string,
    attempt: number | null,
    error: StepError,
    now: number,
  ): void {
    this.db.run`UPDATE steps SET status = 'failed', ended_at = ${now}, next_attempt_at = NULL,
      error = ${JSON.stringify(error)}, http_status = ${error.status ?? null} WHERE idx = ${index}`;
    this.log.append("step_failed", now, stepId, attempt, error);
  }

  stepRetrying(
    index: number,
    stepId: string,
    attempt: number,
    error: StepError,
    at: number,
    now: number,
  ): void {
    this.db
      .run`UPDATE steps SET status = 'retrying', next_attempt_at = ${at}, error = ${JSON.stringify(error)},
      http_status = ${error.status ?? null} WHERE idx = ${index}`;
    this.log.append("step_retry_scheduled", now, stepId, attempt, {
      ...error,
      nextAttemptAt: new Date(at).toISOString(),
    });
  }

  /** The attempt suspends durably until `until` (the row is the timer; the alarm points at it). */
  stepWaiting(
    index: number,
    stepId: string,
    attempt: number,
    waitingFor: string,
    until: number | null,
    now: number,
  ): void {
    this.db
      .run`UPDATE steps SET status = 'waiting', waiting_for = ${waitingFor}, next_attempt_at = ${until}
      WHERE idx = ${index}`;
    this.log.append("step_waiting", now, stepId, attempt, {
      waitingFor,
      ...(until !== null && { until: new Date(until).toISOString() }),
    });
  }

  stepEnded(
    index: number,
    stepId: string,
    status: Extract<StepStatus, "skipped" | "cancelled">,
    reason: SkipReason | null,
    now: number,
  ): void {
    this.db.run`UPDATE steps SET status = ${status}, reason = ${reason}, ended_at = ${now},
      next_attempt_at = NULL WHERE idx = ${index}`;
    if (status === "skipped") this.log.append("step_skipped", now, stepId, null, { reason });
  }
}
