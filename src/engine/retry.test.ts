import { describe, expect, it } from "vitest";
import {
  DEFAULT_RETRY,
  ERROR_CATEGORIES,
  categorizeStatus,
  isRetryable,
  nextAttemptAt,
  parseRetryAfter,
  retryDelay,
  type ErrorCategory,
  type RetryPolicy,
} from "./retry";
import { MAX_DELAY_MS } from "./time-limits";

const noJitter: RetryPolicy = {
  maxRetries: 3,
  baseDelayMs: 1000,
  maxDelayMs: 60_000,
  jitter: "none",
};
const fullJitter: RetryPolicy = { ...noJitter, jitter: "full" };
const never = (): number => {
  throw new Error("rand must not be called without jitter");
};

describe("categorizeStatus (SPEC 5.2)", () => {
  it.each([
    [429, "rate_limited"],
    [500, "server_error"],
    [502, "server_error"],
    [503, "server_error"],
    [504, "server_error"],
    [408, "server_error"],
    [400, "client_error"],
    [401, "client_error"],
    [403, "client_error"],
    [404, "client_error"],
    [422, "client_error"],
  ])("%i -> %s", (status, category) => {
    expect(categorizeStatus(status)).toBe(category);
  });

  it.each([200, 201, 204, 299])("%i is a success", (status) => {
    expect(categorizeStatus(status)).toBeNull();
  });
});

describe("isRetryable", () => {
  const retried: ErrorCategory[] = [
    "rate_limited",
    "server_error",
    "timeout",
    "network",
    "interrupted",
  ];

  it.each(retried)("%s is retried", (category) => {
    expect(isRetryable(category)).toBe(true);
  });

  it.each(ERROR_CATEGORIES.filter((c) => !retried.includes(c)))("%s is not retried", (category) => {
    expect(isRetryable(category)).toBe(false);
  });

  it("the SPEC's non-retryable categories are all known", () => {
    for (const c of [
      "client_error",
      "egress_denied",
      "invalid_data",
      "template_unresolved",
      "tool_not_found",
      "approval_denied",
      "output_too_large",
    ]) {
      expect(ERROR_CATEGORIES).toContain(c);
    }
  });
});

describe("parseRetryAfter", () => {
  const now = Date.parse("2025-01-01T00:00:00Z");

  it("reads delta-seconds", () => {
    expect(parseRetryAfter("120", now)).toBe(120_000);
  });

  it("tolerates surrounding whitespace", () => {
    expect(parseRetryAfter(" 5 ", now)).toBe(5000);
  });

  it("zero seconds is zero", () => {
    expect(parseRetryAfter("0", now)).toBe(0);
  });

  it("reads an HTTP date relative to now", () => {
    expect(parseRetryAfter("Wed, 01 Jan 2025 00:00:30 GMT", now)).toBe(30_000);
  });

  it("an HTTP date in the past means no wait", () => {
    expect(parseRetryAfter("Tue, 31 Dec 2024 23:59:00 GMT", now)).toBe(0);
  });

  it("the date result depends on the injected now", () => {
    expect(parseRetryAfter("Wed, 01 Jan 2025 00:00:30 GMT", now + 10_000)).toBe(20_000);
  });

  it.each([null, undefined])("%s gives undefined", (value) => {
    expect(parseRetryAfter(value, now)).toBeUndefined();
  });

  it.each(["soon", "", "in a minute"])("garbage %j gives undefined", (value) => {
    expect(parseRetryAfter(value, now)).toBeUndefined();
  });

  // Date.parse would read these as dates long past; RFC 9110 says to ignore them.
  it.each(["-5", "1.5", "2.5"])("malformed %j is no Retry-After", (value) => {
    expect(parseRetryAfter(value, now)).toBeUndefined();
  });
});

describe("retryDelay without jitter", () => {
  it.each([
    [1, 1000],
    [2, 2000],
    [3, 4000],
    [4, 8000],
    [5, 16000],
  ])("retry %i waits %i ms", (k, ms) => {
    expect(retryDelay(noJitter, k, never)).toBe(ms);
  });

  it("is capped by maxDelayMs", () => {
    const p = { ...noJitter, maxDelayMs: 5000 };
    expect(retryDelay(p, 3, never)).toBe(4000);
    expect(retryDelay(p, 4, never)).toBe(5000);
    expect(retryDelay(p, 20, never)).toBe(5000);
  });

  it("follows baseDelayMs", () => {
    expect(retryDelay({ ...noJitter, baseDelayMs: 250 }, 3, never)).toBe(1000);
  });

  it("a zero base never waits", () => {
    expect(retryDelay({ ...noJitter, baseDelayMs: 0 }, 20, never)).toBe(0);
  });
});

describe("retryDelay with full jitter", () => {
  it("rand 0 gives 0", () => {
    expect(retryDelay(fullJitter, 3, () => 0)).toBe(0);
  });

  it("rand just below 1 gives the cap", () => {
    expect(retryDelay(fullJitter, 3, () => 0.999_999_9)).toBe(4000);
  });

  it("scales rand over [0, cap]", () => {
    expect(retryDelay(fullJitter, 2, () => 0.5)).toBe(1000);
  });

  it("stays within [0, cap] for random draws", () => {
    const p = { ...fullJitter, maxDelayMs: 10_000 };
    for (let k = 1; k <= 20; k++) {
      const cap = Math.min(p.maxDelayMs, p.baseDelayMs * 2 ** (k - 1));
      for (let j = 0; j < 50; j++) {
        const d = retryDelay(p, k, Math.random);
        expect(d).toBeGreaterThanOrEqual(0);
        expect(d).toBeLessThanOrEqual(cap);
        expect(Number.isInteger(d)).toBe(true);
      }
    }
  });
});

describe("retryDelay honours Retry-After", () => {
  it("waits Retry-After when it is longer than the backoff", () => {
    expect(retryDelay(noJitter, 1, never, 30_000)).toBe(30_000);
  });

  it("keeps the backoff when it is longer than Retry-After", () => {
    expect(retryDelay(noJitter, 3, never, 500)).toBe(4000);
  });

  it("jitter never goes below Retry-After", () => {
    expect(retryDelay(fullJitter, 3, () => 0, 1500)).toBe(1500);
  });

  it("Retry-After may exceed maxDelayMs", () => {
    expect(retryDelay({ ...noJitter, maxDelayMs: 2000 }, 1, never, 90_000)).toBe(90_000);
  });

  it("is capped at 365 days, even for years or more than a number holds", () => {
    const years = parseRetryAfter(String(300 * 365 * 86_400), 0);
    expect(retryDelay(noJitter, 1, never, years)).toBe(MAX_DELAY_MS);
    expect(retryDelay(noJitter, 1, never, parseRetryAfter("9".repeat(400), 0))).toBe(MAX_DELAY_MS);
    expect(retryDelay(noJitter, 1, never, MAX_DELAY_MS - 1)).toBe(MAX_DELAY_MS - 1);
  });
});

describe("nextAttemptAt", () => {
  const now = 1_000_000;

  it("schedules retry k = attempt after attempt k failed", () => {
    expect(nextAttemptAt(noJitter, 1, "server_error", now, never)).toBe(now + 1000);
    expect(nextAttemptAt(noJitter, 2, "server_error", now, never)).toBe(now + 2000);
    expect(nextAttemptAt(noJitter, 3, "server_error", now, never)).toBe(now + 4000);
  });

  it("gives up after maxRetries retries", () => {
    expect(nextAttemptAt(noJitter, 4, "server_error", now, never)).toBeNull();
    expect(nextAttemptAt(noJitter, 5, "server_error", now, never)).toBeNull();
  });

  it("maxRetries 0 never retries", () => {
    expect(nextAttemptAt({ ...noJitter, maxRetries: 0 }, 1, "timeout", now, never)).toBeNull();
  });

  it("an interrupted attempt counts as an attempt", () => {
    expect(nextAttemptAt(noJitter, 3, "interrupted", now, never)).toBe(now + 4000);
    expect(nextAttemptAt(noJitter, 4, "interrupted", now, never)).toBeNull();
  });

  it.each(["rate_limited", "server_error", "timeout", "network", "interrupted"] as const)(
    "%s is retried",
    (category) => {
      expect(nextAttemptAt(noJitter, 1, category, now, never)).toBe(now + 1000);
    },
  );

  it.each([
    "client_error",
    "egress_denied",
    "invalid_data",
    "template_unresolved",
    "tool_not_found",
    "approval_denied",
    "output_too_large",
    "cancelled",
  ] as const)("%s is never retried", (category) => {
    expect(nextAttemptAt({ ...noJitter, maxRetries: 20 }, 1, category, now, never)).toBeNull();
  });

  it("a 429 waits at least Retry-After", () => {
    expect(nextAttemptAt(fullJitter, 1, "rate_limited", now, () => 0, 7000)).toBe(now + 7000);
  });

  it("uses the injected rand for jitter", () => {
    expect(nextAttemptAt(fullJitter, 2, "network", now, () => 0.5)).toBe(now + 1000);
  });

  it("the default policy is 3 retries, 1 s base, 60 s cap, full jitter", () => {
    expect(DEFAULT_RETRY).toEqual({
      maxRetries: 3,
      baseDelayMs: 1000,
      maxDelayMs: 60_000,
      jitter: "full",
    });
  });
});
