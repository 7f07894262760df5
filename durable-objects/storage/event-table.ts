/**
 * EventTable (owns `events`): the run's append-only event log, read by
 * `GET /v1/runs/:id/events`. It is capped at MAX_EVENTS_PER_RUN by dropping the oldest
 * events; the number dropped is reported (`dropped`) and kept on the run row, so a reader
 * can tell the log has a gap. Events appended in one turn are inserted with the turn's other
 * held rows, in one statement (Sql.later): before the next statement that could see them and
 * before the turn ends, so they commit with the change they describe.
 */
import type { EventRecord } from "../../src/engine/records";
import { heldRowsTrigger, type Sql } from "./sql";

/** Writes the events held back (Sql.later): `[type, at, stepId, attempt]`, and `data` as text. */
export const EVENTS_HELD = heldRowsTrigger(
  "events",
  `INSERT INTO events (type, at, step_id, attempt, data)
    VALUES (NEW.f0, NEW.f1, NEW.f2, NEW.f3, NEW.text)`,
);

export class EventTable {
  /** Events written since the log was last trimmed to `cap`. */
  private sinceTrim = 0;
  /** How many events the log holds at most, once a trim counted them: until it exceeds the
   * cap, a trim needs no statement. */
  private atMost: number | null = null;

  constructor(
    private readonly db: Sql,
    /** Told how many old events a trim dropped. */
    private readonly dropped: (n: number) => void,
    /** MAX_EVENTS_PER_RUN: the log is trimmed back to it at every commit point (trim), and
     * while a long iteration writes, each time a tenth of it was written again. */
    private readonly cap: number = Number.POSITIVE_INFINITY,
  ) {}

  append(
    type: string,
    now: number,
    stepId: string | null = null,
    attempt: number | null = null,
    data?: unknown,
  ): void {
    // Held back and written with the turn's other rows, in one statement (Sql.later).
    const text = data === undefined ? null : JSON.stringify(data);
    this.db.later("events", [type, now, stepId, attempt], text);
    if (this.atMost !== null) this.atMost++;
    // A long iteration may write many events before its next commit point: trim on the way too.
    if (++this.sinceTrim >= Math.max(1, Math.floor(this.cap / 10))) this.trim();
  }

  /** The storage was wiped: the log's size is not known any more. */
  forget(): void {
    this.atMost = null;
  }

  /** Up to `limit` events with a sequence number above `after`, oldest first. */
  after(after: number, limit: number): EventRecord[] {
    return this.db
      .all<EventRecord>`SELECT seq, type, at, step_id AS stepId, attempt, data FROM events
      WHERE seq > ${after} ORDER BY seq LIMIT ${limit}`;
  }

  /** Keeps at most `cap` events, dropping the oldest; the count dropped is kept on the run. */
  trim(cap = this.cap): void {
    this.db.flushHeld();
    this.sinceTrim = 0;
    if (!Number.isFinite(cap) || (this.atMost !== null && this.atMost <= cap)) return;
    const row = this.db.one<{
      first: number | null;
      last: number | null;
    }>`SELECT MIN(seq) AS first, MAX(seq) AS last FROM events`!;
    const held = row.first === null || row.last === null ? 0 : row.last - row.first + 1;
    this.atMost = Math.min(held, cap);
    if (held <= cap) return;
    const below = row.last! - cap + 1;
    const dropped = this.db.one<{
      n: number;
    }>`SELECT COUNT(*) AS n FROM events WHERE seq < ${below}`!.n;
    this.db.run`DELETE FROM events WHERE seq < ${below}`;
    this.dropped(dropped);
  }
}
