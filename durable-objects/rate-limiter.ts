/**
 * RateLimiter: one Durable Object per API key, counting runs created per minute
 * (`RUNS_PER_MINUTE`). A fixed one-minute window held in memory: an eviction forgets
 * the count, which errs on the side of letting a client through. Each answer says the
 * window's count and when it resets, so the Worker can let later submissions through
 * without asking while far from the limit (src/api/run-quota.ts).
 */
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../src/env";

const WINDOW_MS = 60_000;

/** `count`: runs counted in the window after this one; `resetAt`: when the window ends. */
export type TakeOutcome = { ok: boolean; count: number; resetAt: number };

export class RateLimiter extends DurableObject<Env> {
  private windowStart = 0;
  private count = 0;

  async take(limit: number, now = Date.now()): Promise<TakeOutcome> {
    if (now - this.windowStart >= WINDOW_MS) {
      this.windowStart = now;
      this.count = 0;
    }
    const resetAt = this.windowStart + WINDOW_MS;
    if (this.count >= limit) return { ok: false, count: this.count, resetAt };
    this.count++;
    return { ok: true, count: this.count, resetAt };
  }
}
