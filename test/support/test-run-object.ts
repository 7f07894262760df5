/**
 * TestRunObject: the RunObject the workers tests run, with its clock and alarm substituted
 * through RunObject's two seams (`now()`, `alarms`) and typed RPC methods for the tests.
 *
 * - The alarm is virtual: a value in the object's own storage (it survives a crash and
 *   eviction, like a real alarm) that workerd never fires. Only a test fires it, so nothing
 *   races a test: a run moves exactly when the test says so.
 * - The clock is `Date.now()` plus an offset kept in storage: a test moves it forward to make
 *   a retry, a timer or a webhook redelivery due, instead of rewriting due times in SQL.
 *
 * The read-only seams at the end are for what the public API does not show; all the SQL the
 * tests need lives here, so a change of the checkpoint's tables is fixed in one place.
 */
import { RunObject, type AlarmPort } from "../../durable-objects/run-object";
import type { PauseNotice } from "../../durable-objects/destinations/pause-board";
import type { Env } from "../../src/env";
import { clockOffset, fireVirtualAlarm, moveClock, virtualAlarm } from "./virtual-time";

const TICKING_KEY = "test:clock-ticks";

export type Row = Record<string, SqlStorageValue>;

export class TestRunObject extends RunObject {
  /** The clock's offset from `Date.now()`, read from storage once per instance. */
  private clockOffset: number | undefined;
  /** Whether `tickClock()` was called, read from storage once per instance. */
  private ticking: boolean | undefined;
  /** With `tickClock()`: the last reading, which the next one passes by at least 1 ms. */
  private lastReading: number | undefined;

  protected override now(): number {
    const { kv } = this.ctx.storage;
    this.clockOffset ??= clockOffset(this.ctx.storage);
    this.ticking ??= kv.get<boolean>(TICKING_KEY) ?? false;
    const t = Date.now() + this.clockOffset;
    if (!this.ticking) return t;
    this.lastReading = Math.max(t, (this.lastReading ?? t - 1) + 1);
    return this.lastReading;
  }

  /** Nothing starts on its own: only a test moves a run (fireAlarm). */
  protected override wake(): void {}

  protected override get alarms(): AlarmPort {
    return virtualAlarm(this.ctx.storage);
  }

  /** No pause board: every run of the test Worker shares one isolate, whose cache they all see at once. */
  protected override get pauseBoard(): (() => Promise<PauseNotice[]>) | null {
    return null;
  }

  /**
   * Fires the alarm now, whatever its time, as workerd would deliver it: cleared, then
   * `alarm()` runs (and may set it again); when `alarm()` fails the alarm stays set, as
   * workerd retries it. Then waits for the webhook deliveries it started beside the run
   * (unless `deliveries: false`). False, and nothing runs, when no alarm is set.
   */
  async fireAlarm({ deliveries = true } = {}): Promise<boolean> {
    if (!(await fireVirtualAlarm(this.alarms, () => this.alarm()))) return false;
    if (deliveries) await this.drained();
    return true;
  }

  /** Runs `alarm()` whether or not an alarm is set, as a duplicate or stale delivery would. */
  async runAlarm(): Promise<void> {
    await this.alarm();
  }

  /** When the alarm is set for, in the run's clock; null when none is set. */
  async alarmAt(): Promise<number | null> {
    return this.alarms.get();
  }

  /** Moves the run's clock `ms` forward; returns the new time. */
  async advanceClock(ms: number): Promise<number> {
    this.clockOffset = moveClock(this.ctx.storage, ms);
    return this.now();
  }

  /** Moves the clock to the alarm's time, so what it points at is due; returns that time (null: no alarm). */
  async advanceToAlarm(): Promise<number | null> {
    const at = await this.alarms.get();
    if (at !== null) await this.advanceClock(Math.max(0, at - this.now()));
    return at;
  }

  /**
   * From now on every reading of the clock is at least 1 ms after the one before, as on a
   * busy machine: code that reads the clock twice and expects the same time shows itself.
   */
  async tickClock(): Promise<void> {
    this.ticking = true;
    this.ctx.storage.kv.put(TICKING_KEY, true);
  }

  /** Ends this instance as a crash would: memory is lost, storage (and the alarm) stay. */
  async crash(reason = "test: simulated restart"): Promise<void> {
    this.ctx.abort(reason);
  }

  /** Every table of the checkpoint with its rows, by name (read-only; SQLite's and workerd's own tables left out). */
  async tables(): Promise<Record<string, Row[]>> {
    const { sql } = this.ctx.storage;
    const names = sql
      .exec<{ name: string }>(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
      )
      .toArray()
      .map((t) => t.name);
    return Object.fromEntries(
      names.map((name) => [name, sql.exec<Row>(`SELECT * FROM "${name}"`).toArray()]),
    );
  }

  /** The forEach items' rows (every forEach step's, in item order): their status and stored data. */
  async itemRows(): Promise<{ status: string; data: string | null }[]> {
    return this.ctx.storage.sql
      .exec<{
        status: string;
        data: string | null;
      }>("SELECT status, data FROM items ORDER BY step_idx, item_index")
      .toArray();
  }

  /** How many parts the stored plan was split into. */
  async planParts(): Promise<number> {
    return this.ctx.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM plan_parts").one().n;
  }

  /**
   * Writes into a step's row what an earlier version could have stored and no path of this
   * one writes any more (an output nested past every limit, a due time past year 2189), to
   * check that such rows stay readable and runnable.
   */
  async storeAsEarlierVersion(
    stepId: string,
    row: { data?: string; nextAttemptAt?: number },
  ): Promise<void> {
    const { sql } = this.ctx.storage;
    if (row.data !== undefined)
      sql.exec("UPDATE steps SET data = ? WHERE id = ?", row.data, stepId);
    if (row.nextAttemptAt !== undefined)
      sql.exec("UPDATE steps SET next_attempt_at = ? WHERE id = ?", row.nextAttemptAt, stepId);
  }

  /**
   * Makes the storage look as schema version 3 left it (no `replans` table, none of v5's views),
   * so that the next instance migrates it; the caller crashes the object to get one.
   */
  async storeAsSchemaVersion3(): Promise<void> {
    const { sql } = this.ctx.storage;
    for (const op of ["insert", "update", "delete"])
      sql.exec(`DROP TRIGGER IF EXISTS replans_${op}_changed`);
    sql.exec("DROP TABLE IF EXISTS replans");
    // and the views of v5 (their triggers go with them)
    sql.exec("DROP VIEW IF EXISTS step_starts");
    sql.exec("DROP VIEW IF EXISTS step_successes");
    sql.exec("UPDATE meta SET value = '3' WHERE key = 'schema_version'");
  }

  /** Own keys of `Object.prototype` and `Array.prototype` as this object sees them (pollution adds some). */
  async prototypeKeys(): Promise<string[][]> {
    return [
      Object.getOwnPropertyNames(Object.prototype).sort(),
      Object.getOwnPropertyNames(Array.prototype).sort(),
    ];
  }

  /** Starts counting the updates of each step row (a trigger), for `stepRowUpdates()`. */
  async countStepRowUpdates(): Promise<void> {
    const { sql } = this.ctx.storage;
    sql.exec("CREATE TABLE test_step_updates (idx INTEGER)");
    sql.exec(
      "CREATE TRIGGER test_count_step_updates AFTER UPDATE ON steps BEGIN INSERT INTO test_step_updates VALUES (NEW.idx); END",
    );
  }

  /** Updates of each step row since `countStepRowUpdates()`, by step index. */
  async stepRowUpdates(): Promise<number[]> {
    const { sql } = this.ctx.storage;
    const steps = sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM steps").one().n;
    return Array.from(
      { length: steps },
      (_, i) =>
        sql
          .exec<{ c: number }>("SELECT COUNT(*) AS c FROM test_step_updates WHERE idx = ?", i)
          .one().c,
    );
  }
}

/** A RunObject in a Worker without WEBHOOK_SECRET (its own binding): for unsigned webhooks. */
export class RunObjectWithoutWebhookSecret extends TestRunObject {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, { ...env, WEBHOOK_SECRET: undefined });
  }
}
