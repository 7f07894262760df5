/**
 * DESTINATIONS of the workers tests' Worker (vitest.config.ts), SPEC 10. Every test of flow
 * control limits destinations of its own (hosts under `upstream.test` reach the loopback
 * upstream: test/support/loopback-hosts.ts), so no test waits for another's slots.
 */
export const TEST_DESTINATIONS = {
  "concurrency.upstream.test": { concurrency: 2 },
  "fifo.upstream.test": { concurrency: 1 },
  "cancel.upstream.test": { concurrency: 1 },
  "crash.upstream.test": { concurrency: 1 },
  "items.upstream.test": { concurrency: 2 },
  // a token every 20 s: the tests move its clock, so real time adds next to nothing
  "rate.upstream.test": { ratePerSecond: 0.05, burst: 2 },
  "*.wild.upstream.test": { concurrency: 1 },
  "unlimited.upstream.test": {},
  "paused.upstream.test": { concurrency: 5 },
  "undo.upstream.test": { concurrency: 1 },
  "stop.upstream.test": { concurrency: 1 },
  "bounded.upstream.test": { concurrency: 1 },
  // reached only through a redirect (test/destinations-redirects.test.ts)
  "redirect-target.upstream.test": { concurrency: 1 },
  // a registry tool (test/tools-registry.ts), limited by its name
  limited_work: { concurrency: 1 },
};
