/**
 * How far ahead edgestep schedules anything. A `wait` lasts at most 365 days (as
 * Cloudflare Workflows' `step.sleep` and a Step Functions execution), a honoured
 * `Retry-After` is capped at the same, and the Durable Object's alarm is never handed a time
 * it refuses (workerd throws on NaN and on dates after 2189, which would leave a run
 * without an alarm). Pure: `now` is an argument.
 */

import { z } from "zod";

export const MAX_DELAY_MS = 365 * 86_400_000;
const LIMIT = `at most 365 days (${MAX_DELAY_MS} ms)`;

/**
 * A time the alarm can be set to: `at`, or at most MAX_DELAY_MS after `now` (NaN: `now`).
 * An alarm set earlier than a row's due time is harmless: it finds nothing due and re-aims.
 */
export function alarmTime(at: number, now: number): number {
  if (Number.isNaN(at)) return now;
  return Math.max(0, Math.min(at, now + MAX_DELAY_MS));
}

/** An ISO-8601 date and time with its zone; seconds may be left out (`09:00Z`), as ISO-8601 allows. */
export const ISO_TIME = z.union([
  z.iso.datetime({ offset: true }),
  z.iso.datetime({ offset: true, precision: -1 }),
]);

function shown(value: string): string {
  return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}...` : value);
}

/** Why a `wait` cannot last `ms` milliseconds (a number, or a string holding one), or null. */
export function waitMsProblem(ms: number | string): string | null {
  const n = typeof ms === "number" ? ms : ms.trim() === "" ? NaN : Number(ms);
  if (!Number.isFinite(n) || n < 0) {
    return `${typeof ms === "string" ? shown(ms) : ms} is not a number of milliseconds (0 or more)`;
  }
  return n > MAX_DELAY_MS ? `${ms} ms is too long: a wait lasts ${LIMIT}` : null;
}

/** Why a `wait` started at `now` cannot last until `until` (not a time, or too far ahead), or null. */
export function waitUntilProblem(until: string, now: number): string | null {
  const at = Date.parse(until);
  // Date.parse reads almost anything ("1" is the year 2001, a time without a zone is local):
  // only an ISO-8601 date and time with its zone says one instant.
  if (!ISO_TIME.safeParse(until).success || Number.isNaN(at))
    return `${shown(until)} is not a time: write an ISO-8601 date and time with its zone (e.g. 2026-12-01T09:00:00Z or 2026-12-01T10:00:00+01:00)`;
  return at - now > MAX_DELAY_MS ? `${shown(until)} is too far ahead: a wait lasts ${LIMIT}` : null;
}

/** When a `wait` of `ms`, or until `until`, started at `now` ends; or why it cannot be waited for. */
export function waitEnd(
  wait: { ms?: number | string; until?: string },
  now: number,
): { at: number } | { problem: string } {
  if (wait.until !== undefined) {
    const problem = waitUntilProblem(wait.until, now);
    return problem ? { problem } : { at: Date.parse(wait.until) };
  }
  const ms = wait.ms ?? 0;
  const problem = waitMsProblem(ms);
  return problem ? { problem } : { at: now + Number(ms) };
}
