/** LeaseTable (owns `leases`): the slots granted, one per call (a run's ticket), each with its expiry. */
import type { Sql } from "../sql";

export class LeaseTable {
  constructor(private readonly db: Sql) {}

  count(): number {
    return this.db.one<{ n: number }>`SELECT COUNT(*) AS n FROM leases`!.n;
  }

  has(runId: string, ticket: string): boolean {
    return (
      this.db.one`SELECT 1 AS found FROM leases WHERE run_id = ${runId} AND ticket = ${ticket}` !==
      undefined
    );
  }

  grant(runId: string, ticket: string, now: number, expiresAt: number): void {
    this.db.run`INSERT OR REPLACE INTO leases (run_id, ticket, granted_at, expires_at)
      VALUES (${runId}, ${ticket}, ${now}, ${expiresAt})`;
  }

  /** Extends the leases of `tickets` that are still held; returns how many were. */
  renew(runId: string, tickets: readonly string[], expiresAt: number): number {
    let held = 0;
    for (const ticket of tickets) {
      if (!this.has(runId, ticket)) continue;
      this.db
        .run`UPDATE leases SET expires_at = ${expiresAt} WHERE run_id = ${runId} AND ticket = ${ticket}`;
      held++;
    }
    return held;
  }

  release(runId: string, tickets: readonly string[]): void {
    for (const ticket of tickets)
      this.db.run`DELETE FROM leases WHERE run_id = ${runId} AND ticket = ${ticket}`;
  }

  releaseRun(runId: string): void {
    this.db.run`DELETE FROM leases WHERE run_id = ${runId}`;
  }

  /** Drops the leases expired by `now` (their runs stopped renewing them). */
  expire(now: number): void {
    this.db.run`DELETE FROM leases WHERE expires_at <= ${now}`;
  }

  earliestExpiry(): number | null {
    return this.db.one<{ at: number | null }>`SELECT MIN(expires_at) AS at FROM leases`!.at;
  }
}
