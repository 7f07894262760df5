/** The Worker: the Hono API, and the RunObject Durable Object class it hands runs to. */
import { createApp } from "./api/app";

export { RateLimiter } from "../durable-objects/rate-limiter";
export { RunIndex } from "../durable-objects/run-index/run-index";
export { RunObject } from "../durable-objects/run-object";

export default createApp();
