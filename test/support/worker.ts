/**
 * The Worker the workers tests run (vitest.config.ts `main`): the real app and rate limiter,
 * with TestRunObject in RunObject's place (wrangler.toml's RUNS binding names "RunObject").
 * The e2e tests run the real Worker, with workerd's own alarms.
 */
export { default } from "../../src/index";
export { RateLimiter } from "../../durable-objects/rate-limiter";
export { TestRunObject as RunObject, RunObjectWithoutWebhookSecret } from "./test-run-object";
