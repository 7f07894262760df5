/** WaiterTable (owns `waiters`): the calls waiting for a slot, in the order they asked (FIFO). */
import type { Sql } from "../sql";

export interface Waiter {
  seq: number;
  runId: string;
  ticket: string;
}

export class WaiterTable {
  constructor(private readonly db: Sql) {}

  count(): number {
    return this.db.one<{ n: number }>`SELECT COUNT(*) AS n FROM waiters`!.n;
  }

  /** The call's place in the queue (1: next), or null when it is not waiting. */
  position(runId: string, ticket: string): number | null {
    const row = this.db.one<{ seq: number }>`SELECT seq FROM waiters
      WHERE run_id = ${runId} AND ticket = ${ticket}`;
    if (!row) return null;
    return this.db.one<{ n: number }>`SELECT COUNT(*) AS n FROM waiters WHERE seq <= ${row.seq}`!.n;
  }

  /** Queues the call last; returns its place. */
  enqueue(runId: string, ticket: string, now: number): number {
    this.db.run`INSERT OR IGNORE INTO waiters (run_id, ticket, asked_at)
      VALUES (${runId}, ${ticket}, ${now})`;
    return this.position(runId, ticket)!;
  }

  head(): Waiter | undefined {
    return this.db
      .one<Waiter>`SELECT seq, run_id AS runId, ticket FROM waiters ORDER BY seq LIMIT 1`;
  }

  remove(seq: number): void {
    this.db.run`DELETE FROM waiters WHERE seq = ${seq}`;
  }

  removeRun(runId: string): void {
    this.db.run`DELETE FROM waiters WHERE run_id = ${runId}`;
  }
}
