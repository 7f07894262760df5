/**
 * The run's webhook outbox (SPEC 5.7). A run reaching a final status, `paused` or
 * `waiting` enqueues one event; each delivery attempt is a row, due at a time, sent by
 * the alarm. Non-2xx or a network failure schedules the next attempt (1 s, 2 s, 4 s, ...)
 * until `maxAttempts`. Delivery is at least once: receivers dedupe on `eventId`.
 */
import { checkUrl, type AllowedHosts } from "../../src/engine/egress";
import type { Fetcher } from "../../src/tools/http-client";
import { signatureHeader } from "../../src/webhooks/signature";
import type { DeliveryRow, DeliveryTable } from "../storage/delivery-table";

export const DEFAULT_WEBHOOK_ATTEMPTS = 6;
const TIMEOUT_MS = 10_000;
/** How long a delivery attempt is claimed: past its timeout, it can no longer be in flight. */
const CLAIM_MS = TIMEOUT_MS + 5_000;

export interface WebhookTarget {
  url: string;
  secret: string | undefined;
}

export interface WebhookDeps {
  fetcher: Fetcher;
  allowedHosts: AllowedHosts;
  maxAttempts: number;
  now(): number;
  /** Records `webhook_delivered` / `webhook_failed` in the run's event log. */
  event(type: "webhook_delivered" | "webhook_failed", now: number, data: unknown): void;
}

export class WebhookOutbox {
  constructor(
    private readonly deliveries: DeliveryTable,
    private readonly deps: WebhookDeps,
  ) {}

  enqueue(type: string, payload: Record<string, unknown>, now: number): string {
    const eventId = `evt_${crypto.randomUUID().replaceAll("-", "")}`;
    const body = JSON.stringify({ type, eventId, ...payload });
    this.deliveries.schedule(eventId, 1, type, body, now);
    return eventId;
  }

  /**
   * Sends every due attempt, each marked as made before the next is scheduled. Each is
   * claimed first, due again only once the attempt could no longer be in flight: the run
   * goes on meanwhile (its alarm never waits for a receiver), a second call finds nothing
   * to send twice, and an attempt lost with the object is sent again (at least once).
   */
  async deliverDue(target: WebhookTarget, now: number): Promise<void> {
    const due = this.deliveries.due(now);
    for (const row of due) this.deliveries.claim(row.eventId, row.attempt, now + CLAIM_MS);
    await Promise.all(due.map((row) => this.attempt(target, row)));
  }

  private async attempt(target: WebhookTarget, row: DeliveryRow): Promise<void> {
    const outcome = await this.send(target, row);
    const at = this.deps.now();
    this.deliveries.made(
      row.eventId,
      row.attempt,
      at,
      outcome.status ?? null,
      outcome.error ?? null,
    );
    const info = { eventId: row.eventId, type: row.type, attempt: row.attempt, ...outcome };
    if (outcome.ok) {
      this.deps.event("webhook_delivered", at, info);
    } else if (row.attempt < this.deps.maxAttempts) {
      const dueAt = at + 1000 * 2 ** (row.attempt - 1);
      this.deliveries.schedule(row.eventId, row.attempt + 1, row.type, row.body, dueAt);
    } else {
      this.deps.event("webhook_failed", at, info);
    }
  }

  private async send(
    target: WebhookTarget,
    row: DeliveryRow,
  ): Promise<{ ok: boolean; status?: number; error?: string }> {
    const problem = checkUrl(target.url, this.deps.allowedHosts);
    if (problem) return { ok: false, error: problem.message };
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "user-agent": "edgestep-webhooks",
      "x-edgestep-event-id": row.eventId,
    };
    if (target.secret) {
      headers["x-edgestep-signature"] = await signatureHeader(
        target.secret,
        row.body,
        Math.floor(Date.now() / 1000),
      );
    }
    try {
      const res = await this.deps.fetcher(
        // Redirects are not followed: a redirect could lead the signed event past ALLOWED_HOSTS.
        new Request(target.url, {
          method: "POST",
          headers,
          body: row.body,
          signal: AbortSignal.timeout(TIMEOUT_MS),
          redirect: "manual",
        }),
      );
      await res.body?.cancel();
      if (res.ok) return { ok: true, status: res.status };
      const redirected =
        res.status >= 300 && res.status < 400 ? " (a redirect: webhooks are not redirected)" : "";
      return { ok: false, status: res.status, error: `HTTP ${res.status}${redirected}` };
    } catch (err) {
      return { ok: false, error: `request failed: ${(err as Error).message}` };
    }
  }

  /** `{ url, state, deliveries }` for the run's status (SPEC 6). */
  view(url: string) {
    const rows = this.deliveries.all();
    const deliveries = rows
      .filter((r) => r.at !== null)
      .map((r) => ({
        eventId: r.eventId,
        type: r.type,
        attempt: r.attempt,
        at: new Date(r.at!).toISOString(),
        ...(r.httpStatus !== null && { status: r.httpStatus }),
        ...(r.error !== null && { error: r.error }),
      }));
    return { url, state: this.state(rows), deliveries };
  }

  /**
   * The state of the latest event (the last whose first attempt was scheduled: an earlier
   * event's retries may come after it): delivered, failed (attempts exhausted), or pending.
   */
  private state(rows: Omit<DeliveryRow, "body">[]): "pending" | "delivered" | "failed" {
    const latest = rows.findLast((r) => r.attempt === 1)?.eventId;
    const attempts = rows.filter((r) => r.eventId === latest && r.at !== null);
    if (attempts.some((r) => r.httpStatus !== null && r.httpStatus < 300 && r.error === null))
      return "delivered";
    return attempts.some((r) => r.attempt >= this.deps.maxAttempts) ? "failed" : "pending";
  }
}
