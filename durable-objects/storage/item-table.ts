/**
 * ItemTable (owns `items`): one row per item of a forEach step, so a step with 1,000 items
 * never holds them all in memory. Item attempts are rows of AttemptTable.
 */
import type { ItemSnapshot } from "../../src/engine/fan-out";
import type { StepError } from "../../src/engine/records";
import type { Sql } from "./sql";

export type ItemCounts = {
  total: number;
  succeeded: number;
  failed: number;
  /** Items the run's stop (a cancel, failFast) cut off or never started. */
  cancelled: number;
  running: number;
};
export type ItemLoad = ItemSnapshot & { attempts: number; retryBase: number };

export class ItemTable {
  constructor(
    private readonly db: Sql,
    /** Told which step's items changed (null: possibly any): a step's view shows their counts. */
    private readonly changed: (step: number | null) => void = () => {},
  ) {}

  load(step: number): ItemLoad[] {
    return this.db.all<ItemLoad>`SELECT status, next_attempt_at AS nextAttemptAt, attempts,
      retry_base AS retryBase FROM items WHERE step_idx = ${step} ORDER BY item_index`;
  }

  /** `after`: attempts items of the step made before a repair (SPEC 9.2); numbering goes on from there. */
  insert(step: number, items: readonly unknown[], after = 0): void {
    items.forEach((item, k) => {
      this.db.run`INSERT INTO items (step_idx, item_index, item, status, attempts, retry_base)
        VALUES (${step}, ${k}, ${JSON.stringify(item ?? null)}, 'pending', ${after}, ${after})`;
    });
    this.changed(step);
  }

  /** A repair redefined the step: its items are resolved again from its new `forEach`. */
  forget(step: number): void {
    this.db.run`DELETE FROM items WHERE step_idx = ${step}`;
    this.changed(step);
  }

  /** Item `k`'s value. */
  item(step: number, k: number): unknown {
    const row = this.db.one<{
      item: string;
    }>`SELECT item FROM items WHERE step_idx = ${step} AND item_index = ${k}`!;
    return JSON.parse(row.item) as unknown;
  }

  /** Marks item `k` running its attempt `attempt`. */
  attemptStarted(step: number, k: number, attempt: number): void {
    this.db.run`UPDATE items SET status = 'running', attempts = ${attempt}, next_attempt_at = NULL
      WHERE step_idx = ${step} AND item_index = ${k}`;
    this.changed(step);
  }

  succeeded(step: number, k: number, data: string): void {
    this.db.run`UPDATE items SET status = 'succeeded', data = ${data}
      WHERE step_idx = ${step} AND item_index = ${k}`;
    this.changed(step);
  }

  retrying(step: number, k: number, at: number, error: StepError): void {
    this.db
      .run`UPDATE items SET status = 'retrying', next_attempt_at = ${at}, error = ${JSON.stringify(error)}
      WHERE step_idx = ${step} AND item_index = ${k}`;
    this.changed(step);
  }

  ended(step: number, k: number, status: "failed" | "cancelled", error: StepError): void {
    this.db.run`UPDATE items SET status = ${status}, error = ${JSON.stringify(error)}
      WHERE step_idx = ${step} AND item_index = ${k}`;
    this.changed(step);
  }

  /** The run halted: a step's items that never finished are cancelled. */
  cancelRemaining(step: number): void {
    this.db.run`UPDATE items SET status = 'cancelled', next_attempt_at = NULL
      WHERE step_idx = ${step} AND status IN ('pending', 'retrying', 'running')`;
    this.changed(step);
  }

  /** How many items a step has, and the bytes of their stored outputs (null counted as `null`). */
  outputSize(step: number): { n: number; bytes: number } {
    const row = this.db.one<{ n: number; bytes: number | null }>`SELECT COUNT(*) AS n,
      SUM(COALESCE(LENGTH(CAST(data AS BLOB)), 4)) AS bytes FROM items WHERE step_idx = ${step}`;
    return { n: row?.n ?? 0, bytes: row?.bytes ?? 0 };
  }

  /** Item outputs in order (check `outputSize` first). */
  data(step: number): unknown[] {
    return this.db.all<{
      data: string | null;
    }>`SELECT data FROM items WHERE step_idx = ${step} ORDER BY item_index`.map((r) =>
      r.data === null ? null : (JSON.parse(r.data) as unknown),
    );
  }

  /** The first failed item's error, else the first cancelled one's. */
  firstError(step: number): StepError | undefined {
    const row = this.db.one<{
      error: string;
    }>`SELECT error FROM items WHERE step_idx = ${step}
      AND status IN ('failed', 'cancelled') ORDER BY status = 'failed' DESC, item_index LIMIT 1`;
    return row ? (JSON.parse(row.error) as StepError) : undefined;
  }

  /** Item progress of forEach steps (one step, or all), by step index. */
  counts(step?: number): Map<number, ItemCounts> {
    const rows = this.db.all<ItemCounts & { i: number }>`SELECT
      step_idx AS i, COUNT(*) AS total, SUM(status = 'succeeded') AS succeeded,
      SUM(status = 'failed') AS failed, SUM(status = 'cancelled') AS cancelled,
      SUM(status = 'running') AS running
      FROM items WHERE ${step ?? null} IS NULL OR step_idx = ${step ?? null} GROUP BY step_idx`;
    return new Map(rows.map(({ i, ...counts }) => [i, counts]));
  }

  /** Steps with at least one succeeded item (rollback compensates them even when they failed). */
  stepsWithSuccesses(): Set<number> {
    return new Set(
      this.db.all<{
        step: number;
      }>`SELECT DISTINCT step_idx AS step FROM items WHERE status = 'succeeded'`.map((r) => r.step),
    );
  }

  /** Redrive: failed and cancelled items run again (their steps are redriven); succeeded ones are kept. */
  redrive(): void {
    this.db
      .run`UPDATE items SET status = 'pending', next_attempt_at = NULL, error = NULL, retry_base = attempts
      WHERE status IN ('failed', 'cancelled')`;
    this.changed(null);
  }

  /** The run was cancelled: items that never finished are cancelled. */
  cancelUnfinished(): void {
    this.db.run`UPDATE items SET status = 'cancelled', next_attempt_at = NULL
      WHERE status IN ('pending', 'running', 'retrying')`;
    this.changed(null);
  }
}
