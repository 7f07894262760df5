/**
 * The per-key run quota (RUNS_PER_MINUTE) without a round trip on most submissions. The
 * key's RateLimiter object holds the count. Each isolate keeps what it last heard of it:
 * while that leaves room (under half the limit), a submission goes ahead at once and the
 * limiter is told beside the request; near the limit, or after a refusal, a submission
 * waits for the limiter's answer. So submissions never queue behind the key's one object
 * while far from the limit; near it, concurrent isolates may let a few more through than
 * the limit before they hear of each other (README: Configuration).
 */
import type { Context } from "hono";
import { RateLimitedError } from "../errors";
import type { AppEnv } from "./types";

/** What this isolate last heard of a key's window, plus what it let through since. */
export interface KnownWindow {
  count: number;
  resetAt: number;
}

const known = new Map<string, KnownWindow>();

/** Whether a submission may go ahead without waiting for the limiter. Pure. */
export function mayGoAhead(window: KnownWindow | undefined, limit: number, now: number): boolean {
  return window !== undefined && now < window.resetAt && window.count < limit / 2;
}

export async function takeRunQuota(c: Context<AppEnv>, owner: string, limit: number) {
  const limiter = c.env.LIMITS.get(c.env.LIMITS.idFromName(owner));
  const now = Date.now();
  const window = known.get(owner);
  const heard = (outcome: Awaited<ReturnType<typeof limiter.take>>) => {
    const same = window !== undefined && window.resetAt === outcome.resetAt;
    known.set(owner, {
      count: Math.max(outcome.count, same ? (known.get(owner)?.count ?? 0) : 0),
      resetAt: outcome.resetAt,
    });
    return outcome;
  };
  if (mayGoAhead(window, limit, now)) {
    window!.count++;
    besideRequest(c, limiter.take(limit).then(heard));
    return;
  }
  const outcome = heard(await limiter.take(limit));
  if (!outcome.ok) {
    throw new RateLimitedError(
      `more than ${limit} runs created this minute (RUNS_PER_MINUTE)`,
      Math.max(1, Math.ceil((outcome.resetAt - now) / 1000)),
    );
  }
}

/** Runs `work` after the response when the request has an execution context, else now. */
function besideRequest(c: Context<AppEnv>, work: Promise<unknown>): void {
  const settled = work.catch((err: unknown) => console.error("edgestep: run quota", err));
  try {
    c.executionCtx.waitUntil(settled);
  } catch {
    // (a test calling app.fetch without an execution context: `settled` runs on its own)
  }
}
