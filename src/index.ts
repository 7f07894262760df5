/** The Worker: the Hono API, the RunObject Durable Object class it hands runs to, and the objects of flow control per destination. */
import { createApp } from "./api/app";

export { RateLimiter } from "../durable-objects/rate-limiter";
export { RunIndex } from "../durable-objects/run-index/run-index";
export { DestinationObject } from "../durable-objects/destinations/destination-object";
export { PauseBoard } from "../durable-objects/destinations/pause-board";
export { RunObject } from "../durable-objects/run-object";

export default createApp();
