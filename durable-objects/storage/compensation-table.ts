/**
 * CompensationTable (owns `compensations`): the rollback queue (SPEC 5.6), one row per
 * compensation in the order they run, each with its attempts and retry time.
 */
import type { StepError } from "../../src/engine/records";
import type { Sql } from "./sql";

export interface CompensationRow {
  seq: number;
  stepIndex: number;
  status: "pending" | "running" | "retrying" | "succeeded" | "failed";
  attempts: number;
  nextAttemptAt: number | null;
  startedAt: number | null;
  endedAt: number | null;
  error: string | null;
}

export class CompensationTable {
  constructor(private readonly db: Sql) {}

  /** Queues compensations of `steps`, in that order, after any queued before (a redriven run can fail again). */
  enqueue(steps: readonly number[]): void {
    const base = this.db.one<{
      next: number;
    }>`SELECT COALESCE(MAX(seq) + 1, 0) AS next FROM compensations`!.next;
    steps.forEach((step, k) => {
      this.db
        .run`INSERT INTO compensations (seq, step_idx, status) VALUES (${base + k}, ${step}, 'pending')`;
    });
  }

  /** The first compensation not finished, if any (shared until the next write: frozen). */
  next(): Readonly<CompensationRow> | undefined {
    return this.db.memo("compensations.next", "compensations", () => {
      const row = this.db
        .one<CompensationRow>`SELECT seq, step_idx AS stepIndex, status, attempts, next_attempt_at AS nextAttemptAt,
        started_at AS startedAt, ended_at AS endedAt, error FROM compensations
        WHERE status NOT IN ('succeeded', 'failed') ORDER BY seq LIMIT 1`;
      return row && Object.freeze(row);
    });
  }

  /** When the next compensation is due (now, or its retry time), or null when none is left. */
  earliestDue(now: number): number | null {
    const next = this.next();
    if (!next) return null;
    return next.status === "retrying" ? next.nextAttemptAt : now;
  }

  all(): CompensationRow[] {
    return this.db
      .all<CompensationRow>`SELECT seq, step_idx AS stepIndex, status, attempts, next_attempt_at AS nextAttemptAt,
      started_at AS startedAt, ended_at AS endedAt, error FROM compensations ORDER BY seq`;
  }

  any(): boolean {
    return this.db.one<{ n: number }>`SELECT COUNT(*) AS n FROM compensations`!.n > 0;
  }

  attemptStarted(seq: number, attempt: number, now: number): void {
    this.db.run`UPDATE compensations SET status = 'running', attempts = ${attempt},
      started_at = COALESCE(started_at, ${now}) WHERE seq = ${seq}`;
  }

  succeeded(seq: number, now: number): void {
    this.db
      .run`UPDATE compensations SET status = 'succeeded', ended_at = ${now}, error = NULL WHERE seq = ${seq}`;
  }

  retrying(seq: number, at: number, error: StepError): void {
    this.db.run`UPDATE compensations SET status = 'retrying', next_attempt_at = ${at},
      error = ${JSON.stringify(error)} WHERE seq = ${seq}`;
  }

  failed(seq: number, now: number, error: StepError): void {
    this.db
      .run`UPDATE compensations SET status = 'failed', ended_at = ${now}, next_attempt_at = NULL,
      error = ${JSON.stringify(error)} WHERE seq = ${seq}`;
  }
}
