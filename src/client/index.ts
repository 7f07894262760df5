/**
 * The typed edgestep client: `import { EdgestepClient } from "edgestep/client"`.
 * Plain `fetch`, so it runs in Node 22, browsers and Workers. Types are derived from the zod
 * schemas the Worker validates with (./types.ts).
 */
export { EdgestepClient, isFinal, type Signal, type WaitOptions } from "./client.ts";
export { EdgestepApiError } from "./errors.ts";
export type { EventStreamOptions } from "./events.ts";
export type { RetryOptions } from "./retry.ts";
export { DEFAULT_URL, type ClientOptions } from "./transport.ts";
export type * from "./types.ts";
