/**
 * Error categories and the retry policy (SPEC 5.2). Pure: `now` and `rand` are arguments.
 */
import { MAX_DELAY_MS } from "./time-limits";

export const ERROR_CATEGORIES = [
  "rate_limited",
  "server_error",
  "timeout",
  "network",
  "interrupted",
  "client_error",
  "egress_denied",
  "invalid_data",
  "template_unresolved",
  "tool_not_found",
  "approval_denied",
  "callback_failed",
  "output_too_large",
  "cancelled",
  // SPEC 9: a step's output failed its `verify`, and how a repair of a failed step failed
  "verification_failed",
  "replan_invalid",
  "replan_declined",
  "replan_unavailable",
  "replan_limit_reached",
] as const;
export type ErrorCategory = (typeof ERROR_CATEGORIES)[number];

const RETRYABLE: ReadonlySet<ErrorCategory> = new Set([
  "rate_limited",
  "server_error",
  "timeout",
  "network",
  "interrupted",
]);

export function isRetryable(category: ErrorCategory): boolean {
  return RETRYABLE.has(category);
}

export interface RetryPolicy {
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  jitter: "full" | "none";
}

export const DEFAULT_RETRY: RetryPolicy = {
  maxRetries: 3,
  baseDelayMs: 1000,
  maxDelayMs: 60_000,
  jitter: "full",
};

/** The category of a non-2xx HTTP status, or null for a success. */
export function categorizeStatus(status: number): ErrorCategory | null {
  if (status >= 200 && status < 300) return null;
  if (status === 429) return "rate_limited";
  if (status === 408 || status >= 500) return "server_error";
  return "client_error";
}

/** `Retry-After` as milliseconds from `now`: delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | null | undefined, now: number): number | undefined {
  if (value == null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  // Every HTTP date form names its month: "1.5" or "-5", which Date.parse would read as a
  // year long past, is no Retry-After at all (RFC 9110 says to ignore it), so pauses nothing.
  if (!/[a-z]/i.test(trimmed)) return undefined;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/**
 * Delay before retry `k` (1-based): `min(maxDelayMs, baseDelayMs * 2^(k-1))`, jittered, never
 * below Retry-After, and never above MAX_DELAY_MS (365 days).
 */
export function retryDelay(
  policy: RetryPolicy,
  k: number,
  rand: () => number,
  retryAfterMs?: number,
): number {
  const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (k - 1));
  const delay = policy.jitter === "full" ? Math.floor(rand() * (cap + 1)) : cap;
  // A Retry-After of years (or one past what a number holds) is capped: no timer is further ahead.
  return Math.min(Math.max(delay, retryAfterMs ?? 0), MAX_DELAY_MS);
}

/**
 * When the next attempt of a step may start after its attempt number `attempt` failed,
 * or null when the step has failed for good.
 */
export function nextAttemptAt(
  policy: RetryPolicy,
  attempt: number,
  category: ErrorCategory,
  now: number,
  rand: () => number,
  retryAfterMs?: number,
): number | null {
  if (!isRetryable(category)) return null;
  const retriesUsed = attempt - 1;
  if (retriesUsed >= policy.maxRetries) return null;
  return now + retryDelay(policy, retriesUsed + 1, rand, retryAfterMs);
}
