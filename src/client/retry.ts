/** Retrying a request that is safe to repeat: no answer, 408, 429 or 5xx, with backoff and Retry-After. */
import { EdgestepApiError } from "./errors.ts";

export interface RetryOptions {
  /** Attempts after the first. Default 4. */
  retries?: number;
  /** First delay; doubled each time, with full jitter, capped at 30 s. Default 500. */
  baseDelayMs?: number;
  signal?: AbortSignal;
}

export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

export async function withRetries<T>(
  attempt: () => Promise<T>,
  options: RetryOptions = {},
): Promise<T> {
  const { retries = 4, baseDelayMs = 500, signal } = options;
  for (let k = 0; ; k++) {
    try {
      return await attempt();
    } catch (err) {
      if (!(err instanceof EdgestepApiError) || !err.retryable || k >= retries) throw err;
      const backoff = Math.random() * Math.min(30_000, baseDelayMs * 2 ** k);
      await delay(Math.max(backoff, (err.retryAfterSeconds ?? 0) * 1000), signal);
    }
  }
}
