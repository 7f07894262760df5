/** PauseTable (owns `pauses`, the pause board's): destinations paused, until when. */
import type { Sql } from "../sql";

export interface PauseRow {
  destination: string;
  until: number;
}

export class PauseTable {
  constructor(private readonly db: Sql) {}

  /** Extends (never shortens) the destination's pause to `until`. */
  extend(destination: string, until: number): void {
    this.db.run`INSERT INTO pauses (destination, until) VALUES (${destination}, ${until})
      ON CONFLICT (destination) DO UPDATE SET until = MAX(until, excluded.until)`;
  }

  /** Pauses ending after `since`, latest first. */
  endingAfter(since: number): PauseRow[] {
    return this.db.all<PauseRow>`SELECT destination, until FROM pauses WHERE until > ${since}
      ORDER BY until DESC, destination`;
  }

  /** Forgets pauses that ended before `before`. */
  prune(before: number): void {
    this.db.run`DELETE FROM pauses WHERE until <= ${before}`;
  }
}
