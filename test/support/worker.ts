/**
 * The Worker the workers tests run (vitest.config.ts `main`): the real app and rate limiter,
 * with TestRunObject in RunObject's place (wrangler.toml's RUNS binding names "RunObject") and
 * TestRunIndex in RunIndex's (faults the tests inject). The e2e tests run the real Worker,
 * with workerd's own alarms.
 */
export { default } from "../../src/index";
export { RateLimiter } from "../../durable-objects/rate-limiter";
export { TestRunIndex as RunIndex } from "./test-run-index";
export { TestRunObject as RunObject, RunObjectWithoutWebhookSecret } from "./test-run-object";
