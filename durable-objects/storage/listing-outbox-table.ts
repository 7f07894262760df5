/**
 * ListingOutboxTable (owns `listing_outbox`): the outbox of the run's entry in its owner's
 * RunIndex (SPEC 8.2). One row: the listing state the index last acknowledged, when, and
 * when the next update may be sent (a failure's backoff, or the claim of one in flight).
 * What is due follows from this row and the run row (src/engine/listing.ts).
 */
import { NOTHING_ACKED, type ListingOutboxState } from "../../src/engine/listing";
import type { Sql } from "./sql";

export class ListingOutboxTable {
  constructor(private readonly db: Sql) {}

  read(): ListingOutboxState {
    return (
      this.db.one<ListingOutboxState>`SELECT acked_state AS ackedState,
        acked_status AS ackedStatus, sent_at AS sentAt, retry_at AS retryAt, failures
        FROM listing_outbox WHERE id = 1` ?? NOTHING_ACKED
    );
  }

  /** An update is being sent: if it never gets acknowledged, it is due again at `until`. */
  claim(until: number): void {
    this.db.run`INSERT INTO listing_outbox (id, retry_at) VALUES (1, ${until})
      ON CONFLICT (id) DO UPDATE SET retry_at = excluded.retry_at`;
  }

  /** The index acknowledged the update carrying `state`. */
  acked(state: string, status: string, now: number): void {
    this.db.run`INSERT INTO listing_outbox (id, acked_state, acked_status, sent_at)
      VALUES (1, ${state}, ${status}, ${now})
      ON CONFLICT (id) DO UPDATE SET acked_state = excluded.acked_state,
      acked_status = excluded.acked_status, sent_at = excluded.sent_at, retry_at = NULL,
      failures = 0`;
  }

  /** The index could not be reached: the update is due again at `retryAt`. */
  failed(retryAt: number): void {
    this.db.run`INSERT INTO listing_outbox (id, retry_at, failures) VALUES (1, ${retryAt}, 1)
      ON CONFLICT (id) DO UPDATE SET retry_at = excluded.retry_at, failures = failures + 1`;
  }
}
