/**
 * StepTable (owns `steps`): one row per plan step, its status, timers and result. Each write
 * touches one step's row, so completing a step never rewrites the plan (SPEC 5.5). A step's
 * attempt starting or succeeding is held back (Sql.later) and written with the turn's other
 * rows, its attempt's row with it, by the triggers below: a dependency hop (a step succeeds,
 * its dependent starts, their events) is one statement.
 */
import type {
  SkipReason,
  StepError,
  StepRecord,
  StepStatus,
  StepViewRecord,
  WaitingFor,
} from "../../src/engine/records";
import type { CompiledStep } from "../../src/engine/plan";
import type { StepSnapshot } from "../../src/engine/scheduler";
import { heldRowsTrigger, raw, type Sql } from "./sql";

/** A step's entry (StepViewRecord): its row without the result, which status reads never read. */
const ENTRY_COLUMNS = `idx AS "index", id, tool, status, reason, attempts, started_at AS startedAt,
  ended_at AS endedAt, next_attempt_at AS nextAttemptAt, waiting_for AS waitingFor, error`;
const VIEW_COLUMNS = raw(ENTRY_COLUMNS);
const STEP_COLUMNS = raw(
  `${ENTRY_COLUMNS}, data, http_status AS httpStatus, execution_ms AS executionMs`,
);

/** A step's attempt starts (`attemptStarted`): `[index, attempt, at]`. */
const STEP_STARTS_HELD = heldRowsTrigger(
  "step_starts",
  `UPDATE steps SET status = 'running', attempts = NEW.f1, next_attempt_at = NULL,
    started_at = COALESCE(started_at, NEW.f2) WHERE idx = NEW.f0;
  INSERT INTO attempts (step_idx, item_index, attempt, started_at)
    VALUES (NEW.f0, -1, NEW.f1, NEW.f2)`,
);

/**
 * A step succeeds (`succeeded`): `[index, attempt, httpStatus, executionMs, at]`, its output as
 * text. With no attempt (a forEach step, whose items have the attempts) no attempt row matches.
 */
const STEP_SUCCESSES_HELD = heldRowsTrigger(
  "step_successes",
  `UPDATE steps SET status = 'succeeded', ended_at = NEW.f4, data = NEW.text, error = NULL,
    waiting_for = NULL, next_attempt_at = NULL, http_status = NEW.f2,
    execution_ms = NEW.f3 WHERE idx = NEW.f0;
  UPDATE attempts SET ended_at = NEW.f4, category = NULL, http_status = NEW.f2,
    message = NULL WHERE step_idx = NEW.f0 AND item_index = -1 AND attempt = NEW.f1`,
);

/** An attempt succeeded as it started (`succeededAtOnce`): `[index, attempt, at, httpStatus]`, its output as text. */
const SUCCEEDED_AT_ONCE_HELD = heldRowsTrigger(
  "steps.succeededAtOnce",
  `UPDATE steps SET status = 'succeeded', attempts = NEW.f1,
    started_at = COALESCE(started_at, NEW.f2), ended_at = NEW.f2, data = NEW.text,
    error = NULL, waiting_for = NULL, next_attempt_at = NULL, http_status = NEW.f3,
    execution_ms = 0 WHERE idx = NEW.f0`,
);

/** The triggers of the rows StepTable holds back (see Sql.later), for the schema. */
export const STEPS_HELD = [STEP_STARTS_HELD, STEP_SUCCESSES_HELD, SUCCEEDED_AT_ONCE_HELD].join(
  "\n",
);

export type StepLoad = StepSnapshot & { attempts: number; retryBase: number };

export class StepTable {
  constructor(
    private readonly db: Sql,
    /** Told which step's row changed (null: possibly any); views cache what they build from rows. */
    private readonly changed: (index: number | null) => void = () => {},
  ) {}

  insertAll(steps: readonly Pick<CompiledStep, "index" | "id" | "tool">[]): void {
    // One statement for the whole plan: a 10,000-step plan is one call into SQLite, not 10,000.
    const rows = JSON.stringify(steps.map((s) => [s.index, s.id, s.tool]));
    this.db.run`INSERT INTO steps (idx, id, tool, status)
      SELECT value ->> 0, value ->> 1, value ->> 2, 'pending' FROM json_each(${rows})`;
    this.changed(null);
  }

  /** What an iteration loads: one row per step in plan order. */
  load(): StepLoad[] {
    return this.db.all<StepLoad>`SELECT status, next_attempt_at AS nextAttemptAt,
      waiting_for AS waitingFor, attempts, retry_base AS retryBase FROM steps ORDER BY idx`;
  }

  /** Every step's entry, in plan order. */
  views(): StepViewRecord[] {
    return this.db.all<StepViewRecord>`SELECT ${VIEW_COLUMNS} FROM steps ORDER BY idx`;
  }

  /** Up to `limit` whole rows after index `after`, in plan order (results, with their outputs). */
  page(after: number, limit: number): StepRecord[] {
    return this.db.all<StepRecord>`SELECT ${STEP_COLUMNS} FROM steps WHERE idx > ${after}
      ORDER BY idx LIMIT ${limit}`;
  }

  /** Up to `limit` entries after index `after`, in plan order; only those in `statuses` when given. */
  viewPage(statuses: readonly StepStatus[] | null, after: number, limit: number): StepViewRecord[] {
    if (statuses === null)
      return this.db.all<StepViewRecord>`SELECT ${VIEW_COLUMNS} FROM steps WHERE idx > ${after}
        ORDER BY idx LIMIT ${limit}`;
    return this.db.all<StepViewRecord>`SELECT ${VIEW_COLUMNS} FROM steps WHERE idx > ${after}
      AND status IN (SELECT value FROM json_each(${JSON.stringify(statuses)})) ORDER BY idx LIMIT ${limit}`;
  }

  /** The entries of the steps at `indices`, in plan order. */
  viewsOf(indices: readonly number[]): StepViewRecord[] {
    return this.db.all<StepViewRecord>`SELECT ${VIEW_COLUMNS} FROM steps
      WHERE idx IN (SELECT value FROM json_each(${JSON.stringify(indices)})) ORDER BY idx`;
  }

  get(index: number): StepRecord | undefined {
    return this.db.one<StepRecord>`SELECT ${STEP_COLUMNS} FROM steps WHERE idx = ${index}`;
  }

  indexOf(id: string): number | undefined {
    return this.db.one<{ idx: number }>`SELECT idx FROM steps WHERE id = ${id}`?.idx;
  }

  /** Steps waiting for an approval, by id (shared until the next write: frozen). */
  waitingForApproval(): readonly string[] {
    return this.db.memo("steps.waitingForApproval", "steps", () =>
      Object.freeze(
        this.db.all<{
          id: string;
        }>`SELECT id FROM steps WHERE status = 'waiting' AND waiting_for = 'approval'
          ORDER BY idx`.map((r) => r.id),
      ),
    );
  }

  /** The earliest time a row is due (a scheduled retry or a timer), or null. */
  earliestDue(): number | null {
    return this.db.memo(
      "steps.earliestDue",
      "steps",
      () =>
        this.db.one<{ at: number | null }>`SELECT MIN(next_attempt_at) AS at FROM steps
          WHERE next_attempt_at IS NOT NULL`!.at,
    );
  }

  /**
   * The step's row and its attempt's, held back (Sql.later): the caller writes them before the
   * tool is called (SPEC 5.5).
   */
  attemptStarted(index: number, attempt: number, now: number): void {
    this.db.later("step_starts", [index, attempt, now]);
    this.changed(index);
  }

  /** A forEach step runs its items (first, or again after a round of item retries). */
  fanOutRunning(index: number, now: number): void {
    this.db.run`UPDATE steps SET status = 'running', next_attempt_at = NULL,
      started_at = COALESCE(started_at, ${now}) WHERE idx = ${index}`;
    this.changed(index);
  }

  /** A forEach step's attempts are its items': the status counts them live. */
  countAttempt(index: number): void {
    this.db.run`UPDATE steps SET attempts = attempts + 1 WHERE idx = ${index}`;
    this.changed(index);
  }

  setAttempts(index: number, attempts: number): void {
    this.db.run`UPDATE steps SET attempts = ${attempts} WHERE idx = ${index}`;
    this.changed(index);
  }

  /** Held back (Sql.later); with `attempt`, that attempt's row is closed with it. */
  succeeded(
    index: number,
    attempt: number | null,
    data: string,
    httpStatus: number | null,
    executionMs: number,
    now: number,
  ): void {
    this.db.later("step_successes", [index, attempt, httpStatus, executionMs, now], data);
    this.changed(index);
  }

  /** An attempt that succeeded at once: held back, so a chain of them is one statement (Sql.later). */
  succeededAtOnce(
    index: number,
    attempt: number,
    data: string,
    httpStatus: number | null,
    now: number,
  ): void {
    this.db.later("steps.succeededAtOnce", [index, attempt, now, httpStatus], data);
    this.changed(index);
  }

  /**
   * `executionMs`: its last attempt's time, as a success records it (the result's
   * `metadata.executionTime`). `data`: an output that failed the step's `verify` (SPEC 9.1) is kept.
   */
  failed(
    index: number,
    error: StepError,
    executionMs: number,
    now: number,
    data: string | null = null,
  ): void {
    this.db.run`UPDATE steps SET status = 'failed', ended_at = ${now}, next_attempt_at = NULL,
      waiting_for = NULL, error = ${JSON.stringify(error)}, http_status = ${error.status ?? null},
      execution_ms = ${executionMs}, data = COALESCE(${data}, data) WHERE idx = ${index}`;
    this.changed(index);
  }

  /**
   * The step failed for good and waits for a repair (SPEC 9.2), until `until` when the planner
   * is called (or a person may answer); its error, and an output that failed `verify`, show meanwhile.
   */
  waitingForRepair(index: number, error: StepError, data: string | null, until: number | null) {
    this.db.run`UPDATE steps SET status = 'waiting', waiting_for = 'replan',
      next_attempt_at = ${until}, error = ${JSON.stringify(error)},
      http_status = ${error.status ?? null}, data = COALESCE(${data}, data) WHERE idx = ${index}`;
    this.changed(index);
  }

  /** When the step's repair is next due (its planner call; null: a person may answer now). */
  repairDue(index: number, until: number | null): void {
    this.db.run`UPDATE steps SET next_attempt_at = ${until} WHERE idx = ${index}`;
    this.changed(index);
  }

  /**
   * A repair redefined the step (SPEC 9.2): it is pending again under its new definition (its
   * `tool`); its attempts stay in history and the retry policy counts from here, as after a redrive.
   */
  redefined(index: number, tool: string): void {
    this.db.run`UPDATE steps SET tool = ${tool}, status = 'pending', reason = NULL,
      started_at = NULL, ended_at = NULL, next_attempt_at = NULL, waiting_for = NULL, data = NULL,
      error = NULL, http_status = NULL, execution_ms = NULL, retry_base = attempts
      WHERE idx = ${index}`;
    this.changed(index);
  }

  retrying(index: number, error: StepError, at: number): void {
    this.db
      .run`UPDATE steps SET status = 'retrying', next_attempt_at = ${at}, error = ${JSON.stringify(error)},
      http_status = ${error.status ?? null} WHERE idx = ${index}`;
    this.changed(index);
  }

  /** The attempt suspends durably until `until` (the row is the timer; the alarm points at it). */
  waiting(index: number, waitingFor: WaitingFor, until: number | null): void {
    this.db
      .run`UPDATE steps SET status = 'waiting', waiting_for = ${waitingFor}, next_attempt_at = ${until}
      WHERE idx = ${index}`;
    this.changed(index);
  }

  /**
   * Every call waiting for a slot is due now: it asks its destination again (asking is
   * idempotent: a place in the queue is kept). A paused run gives back the slots granted to
   * it, so on resume its calls must ask rather than wait for their next re-ask.
   */
  quotaWaitsDue(now: number): void {
    this.db.run`UPDATE steps SET next_attempt_at = ${now}
      WHERE status = 'waiting' AND waiting_for = 'quota'`;
    this.changed(null);
  }

  ended(
    index: number,
    status: Extract<StepStatus, "skipped" | "cancelled">,
    reason: SkipReason | null,
    now: number,
  ): void {
    this.db.run`UPDATE steps SET status = ${status}, reason = ${reason}, ended_at = ${now},
      next_attempt_at = NULL WHERE idx = ${index}`;
    this.changed(index);
  }

  /** The risk gate's `skipSteps`: skipped by the user before the run starts. */
  skippedByUser(id: string, now: number): void {
    this.db
      .run`UPDATE steps SET status = 'skipped', reason = 'skipped_by_user', ended_at = ${now} WHERE id = ${id}`;
    this.changed(null);
  }

  /** Redrive: steps `indices` (engine/redrive.ts) become pending, their attempts kept. */
  redrive(indices: readonly number[]): void {
    this.db
      .run`UPDATE steps SET status = 'pending', reason = NULL, started_at = NULL, ended_at = NULL,
      next_attempt_at = NULL, waiting_for = NULL, error = NULL, http_status = NULL, retry_base = attempts
      WHERE idx IN (SELECT value FROM json_each(${JSON.stringify(indices)}))`;
    this.changed(null);
  }

  /** Every step that has not finished is cancelled. */
  cancelUnfinished(now: number): void {
    this.db.run`UPDATE steps SET status = 'cancelled', ended_at = ${now}, next_attempt_at = NULL
      WHERE status NOT IN ('succeeded', 'failed', 'skipped', 'cancelled')`;
    this.changed(null);
  }
}
