/** Retrying a request that is safe to repeat: no answer, 408, 429 or 5xx, with backoff and Retry-After. */
import { EdgestepApiError } from "./errors.ts";

export interface RetryOptions {
  /** Attempts after the first. Default 4. */
  retries?: number;
  /** First delay; doubled each time, with full jitter, capped at `maxDelayMs`. Default 500. */
  baseDelayMs?: number;
  /** The cap of the backoff (a Retry-After is honoured whatever it says). Default 30 s. */
  maxDelayMs?: number;
  /** No attempt starts after this time (ms since the epoch): the last failure is thrown. */
  deadline?: number;
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
  const { retries = 4, baseDelayMs = 500, maxDelayMs = 30_000, deadline = Infinity } = options;
  for (let k = 0; ; k++) {
    try {
      return await attempt();
    } catch (err) {
      if (!(err instanceof EdgestepApiError) || !err.retryable || k >= retries) throw err;
      const left = deadline - Date.now();
      if (left <= 0) throw err;
      const backoff = Math.random() * Math.min(maxDelayMs, baseDelayMs * 2 ** k);
      const wait = Math.max(backoff, (err.retryAfterSeconds ?? 0) * 1000);
      await delay(Math.min(wait, left), options.signal);
    }
  }
}
