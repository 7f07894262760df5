/**
 * ListingOutboxTable (owns `listing_outbox`): the outbox of the run's entry in its owner's
 * RunIndex (SPEC 8.2). One row: the listing state the index last acknowledged, when, and
 * when the next update may be sent (a failure's backoff). What is due follows from this row
 * and the run row (src/engine/listing.ts).
 *
 * Two things are kept in memory only, because losing them costs no more than an update sent
 * again (the index ignores what it already has) and writing them would cost a commit each:
 * the claim of an update in flight, and the acknowledgement of progress alone (the same
 * status with other counts). An acknowledged status change is written: it is what the alarm
 * points at, and a run's final status must reach the index whatever crashes.
 */
import { NOTHING_ACKED, type ListingOutboxState } from "../../src/engine/listing";
import type { Sql } from "./sql";

/** The memo of the row as written (Sql.memo). */
const WRITTEN = "listing_outbox";

export class ListingOutboxTable {
  /** Until when the update in flight is claimed (in memory: a crash forgets the claim). */
  private claimedUntil: number | null = null;
  /** Progress the index acknowledged since the row was written. */
  private progressAck: { state: string; status: string; at: number } | null = null;

  constructor(private readonly db: Sql) {}

  read(): ListingOutboxState {
    const row = this.written();
    const ack = this.progressAck;
    const state =
      ack && ack.status === row.ackedStatus
        ? { ...row, ackedState: ack.state, sentAt: ack.at }
        : row;
    if (this.claimedUntil === null) return state;
    return { ...state, retryAt: Math.max(state.retryAt ?? 0, this.claimedUntil) };
  }

  /** An update is being sent: if it never gets acknowledged, it is due again at `until`. */
  claim(until: number): void {
    this.claimedUntil = until;
  }

  /** The index acknowledged the update carrying `state` (a new status is written). */
  acked(state: string, status: string, now: number): void {
    this.claimedUntil = null;
    const row = this.written();
    // Progress alone (the written status, nothing to clear) stays in memory.
    if (row.ackedStatus === status && row.failures === 0 && row.retryAt === null) {
      this.progressAck = { state, status, at: now };
      return;
    }
    this.progressAck = null;
    this.db.run`INSERT INTO listing_outbox (id, acked_state, acked_status, sent_at)
      VALUES (1, ${state}, ${status}, ${now})
      ON CONFLICT (id) DO UPDATE SET acked_state = excluded.acked_state,
      acked_status = excluded.acked_status, sent_at = excluded.sent_at, retry_at = NULL,
      failures = 0`;
    this.db.remember(
      WRITTEN,
      "listing_outbox",
      Object.freeze({
        ackedState: state,
        ackedStatus: status,
        sentAt: now,
        retryAt: null,
        failures: 0,
      }),
    );
  }

  /** The run was deleted: nothing in memory outlives its row. */
  forget(): void {
    this.claimedUntil = null;
    this.progressAck = null;
  }

  /** The row as written (no claim, no progress kept in memory). */
  private written(): ListingOutboxState {
    return this.db.memo(WRITTEN, "listing_outbox", () =>
      Object.freeze(
        this.db.one<ListingOutboxState>`SELECT acked_state AS ackedState,
          acked_status AS ackedStatus, sent_at AS sentAt, retry_at AS retryAt, failures
          FROM listing_outbox WHERE id = 1` ?? NOTHING_ACKED,
      ),
    );
  }

  /** The index could not be reached: the update is due again at `retryAt`. */
  failed(retryAt: number): void {
    this.claimedUntil = null;
    this.db.run`INSERT INTO listing_outbox (id, retry_at, failures) VALUES (1, ${retryAt}, 1)
      ON CONFLICT (id) DO UPDATE SET retry_at = excluded.retry_at, failures = failures + 1`;
  }
}
