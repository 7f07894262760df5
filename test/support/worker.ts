/**
 * The Worker the workers tests run (vitest.config.ts `main`): the real app, rate limiter and
 * pause board, with TestRunObject in RunObject's place (wrangler.toml's RUNS binding names
 * "RunObject"), TestRunIndex in RunIndex's (faults the tests inject) and TestDestinationObject
 * in DestinationObject's; hosts under `upstream.test` reach the loopback upstream
 * (loopback-hosts.ts). The e2e tests run the real Worker, with workerd's own alarms.
 */
import "./loopback-hosts";
export { default } from "../../src/index";
export { RateLimiter } from "../../durable-objects/rate-limiter";
export { TestRunIndex as RunIndex } from "./test-run-index";
export { PauseBoard } from "../../durable-objects/destinations/pause-board";
export { TestDestinationObject as DestinationObject } from "./test-destination-object";
export { TestRunObject as RunObject, RunObjectWithoutWebhookSecret } from "./test-run-object";
