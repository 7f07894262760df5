/**
 * A destination's flow control (SPEC 10), decided as plain functions: whether a slot may be
 * granted now (concurrency, a token bucket for ratePerSecond/burst, a pause), when to look
 * again, how long a lease lives, and how a pause is extended. The destination's Durable
 * Object (durable-objects/destinations/) keeps the state and carries the decisions out.
 */
import type { Limits } from "./destinations";

/** A lease lives this long unless renewed: a crashed run's slot comes back within it (SPEC 10: 30 s). */
export const LEASE_TTL_MS = 25_000;
/** A run renews the leases of its calls in flight this often (three renewals per lifetime). */
export const LEASE_RENEW_MS = 8_000;
/** A pause lasts at least this long (SPEC 10) ... */
export const MIN_PAUSE_MS = 1_000;
/** ... and at most this long: an upstream naming a later time pauses again when asked again. */
export const MAX_PAUSE_MS = 3_600_000;

export interface FlowState {
  /** Leases held (granted, not yet released or expired). */
  inFlight: number;
  /** Tokens in the bucket when last refilled (fractions accumulate). */
  tokens: number;
  refilledAt: number;
  /** No grant before this time (0: not paused). */
  pausedUntil: number;
}

/** The bucket's size: `burst`, else 1 (calls spaced 1/rate apart). */
export function bucketSize(limits: Limits): number {
  return limits.burst ?? 1;
}

/** A fresh destination: a full bucket, nothing in flight, not paused. */
export function initialState(limits: Limits, now: number): FlowState {
  return { inFlight: 0, tokens: bucketSize(limits), refilledAt: now, pausedUntil: 0 };
}

/** The bucket as it is at `now` (limits without a rate keep it as it is). */
export function refill(state: FlowState, limits: Limits, now: number): FlowState {
  const rate = limits.ratePerSecond;
  if (rate === undefined || now <= state.refilledAt) return state;
  const tokens = Math.min(
    bucketSize(limits),
    state.tokens + ((now - state.refilledAt) * rate) / 1000,
  );
  return { ...state, tokens, refilledAt: now };
}

/** Whether one more call may start at `now` (`state` refilled to `now`). */
export function canGrant(state: FlowState, limits: Limits, now: number): boolean {
  if (now < state.pausedUntil) return false;
  if (limits.concurrency !== undefined && state.inFlight >= limits.concurrency) return false;
  return limits.ratePerSecond === undefined || state.tokens >= 1;
}

/** One call starts: a slot taken, a token spent. */
export function take(state: FlowState, limits: Limits): FlowState {
  const tokens = limits.ratePerSecond === undefined ? state.tokens : state.tokens - 1;
  return { ...state, inFlight: state.inFlight + 1, tokens };
}

/**
 * When a queued call could next be granted, if nothing is released before: the pause's end, or
 * the next token. Null when only a release can help (concurrency is full), or nothing waits.
 */
export function nextGrantAt(
  state: FlowState,
  limits: Limits,
  now: number,
  waiting: number,
): number | null {
  if (waiting === 0) return null;
  if (now < state.pausedUntil) return state.pausedUntil;
  if (limits.concurrency !== undefined && state.inFlight >= limits.concurrency) return null;
  if (limits.ratePerSecond === undefined || state.tokens >= 1) return now;
  return state.refilledAt + Math.ceil(((1 - state.tokens) * 1000) / limits.ratePerSecond);
}

/** A pause of `ms` reported at `now` extends the current one (never shortens it), within its bounds. */
export function extendPause(pausedUntil: number, now: number, ms: number): number {
  const length = Math.min(Math.max(ms, MIN_PAUSE_MS), MAX_PAUSE_MS);
  return Math.max(pausedUntil, now + length);
}
