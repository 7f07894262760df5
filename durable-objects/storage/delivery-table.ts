/**
 * DeliveryTable (owns `webhook_deliveries`): the webhook outbox (SPEC 5.7), one row per
 * delivery attempt of an event, due at a time; `at` is set once the attempt was made.
 */
import type { Sql } from "./sql";

export interface DeliveryRow {
  eventId: string;
  attempt: number;
  type: string;
  body: string;
  dueAt: number;
  at: number | null;
  httpStatus: number | null;
  error: string | null;
}

export class DeliveryTable {
  constructor(private readonly db: Sql) {}

  schedule(eventId: string, attempt: number, type: string, body: string, dueAt: number): void {
    this.db.run`INSERT INTO webhook_deliveries (event_id, attempt, type, body, due_at)
      VALUES (${eventId}, ${attempt}, ${type}, ${body}, ${dueAt})`;
  }

  earliestDue(): number | null {
    return this.db.memo(
      "webhook_deliveries.earliestDue",
      "webhook_deliveries",
      () =>
        this.db.one<{
          at: number | null;
        }>`SELECT MIN(due_at) AS at FROM webhook_deliveries WHERE at IS NULL`!.at,
    );
  }

  due(now: number): DeliveryRow[] {
    return this.db
      .all<DeliveryRow>`SELECT event_id AS eventId, attempt, type, body, due_at AS dueAt,
      at, http_status AS httpStatus, error FROM webhook_deliveries
      WHERE at IS NULL AND due_at <= ${now} ORDER BY due_at`;
  }

  /** An attempt is being sent: it is due again at `until` only if it never got its answer recorded. */
  claim(eventId: string, attempt: number, until: number): void {
    this.db.run`UPDATE webhook_deliveries SET due_at = ${until}
      WHERE event_id = ${eventId} AND attempt = ${attempt}`;
  }

  /** Records that the attempt was made, and how it went. */
  made(
    eventId: string,
    attempt: number,
    at: number,
    httpStatus: number | null,
    error: string | null,
  ): void {
    this.db.run`UPDATE webhook_deliveries SET at = ${at}, http_status = ${httpStatus},
      error = ${error} WHERE event_id = ${eventId} AND attempt = ${attempt}`;
  }

  /** Every attempt, in the order they were scheduled (without bodies). */
  all(): Omit<DeliveryRow, "body">[] {
    return this.db.all<DeliveryRow>`SELECT event_id AS eventId, attempt, type, due_at AS dueAt, at,
      http_status AS httpStatus, error FROM webhook_deliveries ORDER BY rowid`;
  }
}
