/**
 * The Worker the workers tests run (vitest.config.ts `main`): the real app and rate limiter,
 * with the test subclasses in the places wrangler.toml's bindings name: TestRunObject (a
 * clock the tests move) and TestRunIndex (faults the tests inject). The e2e tests run the
 * real Worker.
 */
export { default } from "../../src/index";
export { RateLimiter } from "../../durable-objects/rate-limiter";
export { TestRunIndex as RunIndex } from "./test-run-index";
export { TestRunObject as RunObject } from "./test-run-object";
