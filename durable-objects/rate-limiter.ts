/**
 * RateLimiter: one Durable Object per API key, counting runs created per minute
 * (`RUNS_PER_MINUTE`). A fixed one-minute window held in memory: an eviction forgets
 * the count, which errs on the side of letting a client through.
 */
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../src/env";

const WINDOW_MS = 60_000;

export type TakeOutcome = { ok: true } | { ok: false; retryAfterSeconds: number };

export class RateLimiter extends DurableObject<Env> {
  private windowStart = 0;
  private count = 0;

  async take(limit: number, now = Date.now()): Promise<TakeOutcome> {
    if (now - this.windowStart >= WINDOW_MS) {
      this.windowStart = now;
      this.count = 0;
    }
    if (this.count >= limit) {
      return {
        ok: false,
        retryAfterSeconds: Math.max(1, Math.ceil((this.windowStart + WINDOW_MS - now) / 1000)),
      };
    }
    this.count++;
    return { ok: true };
  }
}
