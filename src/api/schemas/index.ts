/**
 * The API's zod schemas, the one source of truth for request validation, the OpenAPI
 * document (src/api/openapi.ts) and the typed client's types (src/client/types.ts).
 *  - core.ts: the v1 routes (SPEC 6);
 *  - reads.ts: cheap status reads (SPEC 6.1);
 *  - listing.ts: listing, stats and deletion (SPEC 8);
 *  - destinations.ts: flow control per destination (SPEC 10).
 */
export * from "./core.ts";
export * from "./destinations.ts";
export * from "./listing.ts";
export * from "./reads.ts";
